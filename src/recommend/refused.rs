//! Why the verdict did not take a config it weighed: the rule's own
//! reasons, in the order the rule applies them, so the terminal and the
//! report say the same thing of the same config.

use super::{Evidence, Verdict};

impl Verdict {
    /// The config the verdict weighed and did not take with the lowest
    /// objective: among the evidence's configs smith accepts, else among
    /// all of them (ties: the evidence's order). `None` when the evidence
    /// holds no config but the baseline and the chosen one.
    pub(crate) fn best_refused(&self) -> Option<&Evidence> {
        let refused = |accepted: bool| {
            self.evidence
                .iter()
                .filter(move |e| !e.baseline && !e.chosen && (e.accepted || !accepted))
                .min_by(|a, b| a.objective.total_cmp(&b.objective))
        };
        refused(true).or_else(|| refused(false))
    }

    /// Why the verdict did not take `e`: smith would not accept it, its
    /// loss is outside `--max-loss`, its objective is not lower beyond its
    /// interval, or, where it passed all three, the verdict's own reason
    /// for keeping the baseline.
    pub(crate) fn refused_because(&self, e: &Evidence) -> String {
        let obj = self.objective;
        if !e.accepted {
            return "smith would not accept its [context] values".to_string();
        }
        if e.loss_interval.is_none() {
            return "it has no 95% interval of its change to weigh".to_string();
        }
        if !e.loss_ok {
            return format!(
                "its change in {} ({}) is outside --max-loss {}",
                self.loss_measure,
                e.loss_interval_text(),
                self.max_loss
            );
        }
        match e.objective_interval_pct {
            None => return format!("its change in {obj} has no 95% interval"),
            Some(iv) if iv.lo == 0.0 && iv.hi == 0.0 => {
                return format!(
                    "its {obj} is the baseline's in every resample (95% interval of the change =)"
                )
            }
            Some(iv) if iv.hi >= 0.0 => {
                return format!(
                    "its 95% interval of the change in {obj} ({}) reaches zero",
                    e.objective_interval_text()
                )
            }
            Some(_) => {}
        }
        match &self.reason {
            Some(why) => why.clone(),
            None => "the verdict chose another config".to_string(),
        }
    }
}
