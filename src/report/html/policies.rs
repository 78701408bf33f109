//! The page's parts about the policies of a sweep of several: what each
//! models with the values its knobs took, and the "Policies compared"
//! section (the headline, each policy's best config, the same per window).

use super::*;

impl Page<'_> {
    /// The policies of the sweep, what each models, and the values their
    /// own knobs took (the description names them too).
    pub(super) fn swept_policies(&self, h: &mut String) {
        let d = self.data;
        let s = &d.summary;
        h.push_str("<dt>Policies</dt><dd><ul class=\"stages\">");
        for p in d.policies() {
            let _ = write!(h, "<li>{}</li>", policy_name(p));
        }
        h.push_str("</ul>");
        if !d.smith_swept() {
            h.push_str(
                "smith was not in <code>--policy</code>: only its defaults ran, as the baseline. ",
            );
        }
        h.push_str("smith's knobs above vary only for smith; the others run under every window, overhead, ratio \
                    and summary size of the grid and their own knobs below.</dd>\n");
        // Each other policy: what is modelled, then its knobs' values.
        for p in d.policies().into_iter().filter(|&p| p != Policy::Smith) {
            let knobs: Vec<String> = PolicyKnob::ALL
                .into_iter()
                .filter(|k| k.policy() == p)
                .filter_map(|k| {
                    let field = k.field();
                    let values = s.grid.policy_axes.get(&field)?;
                    let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                    Some(format!(
                        "<code>{}</code> {}",
                        escape_html(&field),
                        escape_html(&values.join(", "))
                    ))
                })
                .collect();
            let _ = writeln!(
                h,
                "<dt>{}</dt><dd>{}{}</dd>",
                policy_name(p),
                escape_html(&p.describe(&|k| swept_values(s, k))),
                if knobs.is_empty() {
                    String::new()
                } else {
                    format!("<br>{}", knobs.join("; "))
                }
            );
        }
    }

    /// The "Policies compared" section: the headline, each policy's best
    /// config, the same per window, and the chart.
    pub(super) fn policies(
        &self,
        h: &mut String,
        comparison: &Comparison,
        chart: &Figure,
        rank_by: &str,
    ) {
        let d = self.data;
        let _ = write!(
            h,
            "<section id=\"policies\">\n<h2>Policies compared</h2>\n<p>Each policy's best config by the ranking ({}), \
             replayed over the same {}: totals over all sessions, and under each the change against {}, green \
             where it is lower. Results mangled counts only results cut to a head or replaced by a stub; a policy that \
             summarises removes results without mangling them, so results lost (shortened or removed by any means), needed \
             again (lost results whose identifiers, paths or numbers a later message used while they were visible nowhere \
             else) and re-fetched (results whose call was made again) stand beside it. The last two are a proxy: the session \
             after each compaction was recorded under the policy smith actually ran.{}</p>\n",
            escape_html(rank_by),
            plural(d.sessions.len(), "session"),
            escape_html(&d.baseline_name()),
            if d.smith_swept() {
                ""
            } else {
                " smith was not in <code>--policy</code>: its row is its defaults, the baseline."
            }
        );
        self.headline(h, &comparison.best);
        h.push_str("<div class=\"scroll\">\n");
        self.policy_table(h, "policy-best", &[(None, &comparison.best)]);
        h.push_str("</div>\n");
        if !comparison.by_window.is_empty() {
            h.push_str(
                "<h3>By window</h3>\n<p>A smaller window is cheaper and loses more whatever the policy, so here each \
                 policy's best config at each window (<code>max_tokens</code>) the sweep ran, like against like.</p>\n\
                 <div class=\"scroll\">\n",
            );
            let groups: Vec<(Option<String>, &[PolicyRow])> = comparison
                .by_window
                .iter()
                .map(|(w, rows)| (Some(format!("{} window", window(*w))), rows.as_slice()))
                .collect();
            self.policy_table(h, "policy-windows", &groups);
            h.push_str("</div>\n");
        }
        figure(h, chart);
        h.push_str("</section>\n");
    }

    /// One sentence: the cheapest policy and the one that loses least, each
    /// with its price and loss.
    fn headline(&self, h: &mut String, rows: &[PolicyRow]) {
        let d = self.data;
        let loss = self.loss.figure();
        let price = |r: &PolicyRow| d.configs[r.config].total(figures::Metric::Price);
        let lost = |r: &PolicyRow| d.configs[r.config].total(loss);
        let cheapest = rows.iter().min_by(|a, b| {
            price(a)
                .total_cmp(&price(b))
                .then(lost(a).total_cmp(&lost(b)))
        });
        let safest = rows.iter().min_by(|a, b| {
            lost(a)
                .total_cmp(&lost(b))
                .then(price(a).total_cmp(&price(b)))
        });
        let (Some(cheapest), Some(safest)) = (cheapest, safest) else {
            return;
        };
        let says = |r: &PolicyRow| {
            format!(
                "<strong>{}</strong> ({}: {}, {} {})",
                escape_html(r.policy.as_str()),
                escape_html(&d.configs[r.config].setup.knobs_label()),
                money(price(r)),
                count(lost(r)),
                escape_html(self.loss.short())
            )
        };
        if cheapest.config == safest.config {
            let _ = writeln!(
                h,
                "<p>Cheapest, and fewest {} too: {}.</p>",
                escape_html(self.loss.short()),
                says(cheapest)
            );
        } else {
            let _ = writeln!(
                h,
                "<p>Cheapest: {}. Fewest {}: {}.</p>",
                says(cheapest),
                escape_html(self.loss.short()),
                says(safest)
            );
        }
    }

    /// A table of policy rows, in groups under a heading row when named.
    fn policy_table(&self, h: &mut String, id: &str, groups: &[(Option<String>, &[PolicyRow])]) {
        let d = self.data;
        let base = &d.configs[d.configs.iter().position(|c| c.is_baseline).unwrap_or(0)];
        let _ = write!(
            h,
            "<div class=\"scroll\"><table id=\"{}\">\n<thead><tr><th class=\"l\">policy</th><th class=\"l\">config</th><th>#</th>",
            escape_html(id)
        );
        for figure in COLUMNS {
            let _ = write!(h, "<th>{}</th>", figure.label());
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for (title, rows) in groups {
            if let Some(title) = title {
                let _ = writeln!(
                    h,
                    "<tr class=\"group\"><th colspan=\"{}\">{}</th></tr>",
                    COLUMNS.len() + 3,
                    escape_html(title)
                );
            }
            for r in rows.iter() {
                let c = &d.configs[r.config];
                let mut class = vec!["policy"];
                let mut marks = String::new();
                if c.is_baseline {
                    class.push("baseline");
                    marks.push_str("<span class=\"mark\">baseline</span>");
                }
                if r.config == self.chosen {
                    class.push("chosen");
                    marks.push_str("<span class=\"mark\">chosen</span>");
                }
                let _ = write!(
                    h,
                    "<tr class=\"{}\" data-policy=\"{}\"><td class=\"l\">{}</td><td class=\"l\"><span class=\"cfg\">{}</span>{marks}</td><td>{}</td>",
                    class.join(" "),
                    r.policy,
                    policy_name(r.policy),
                    escape_html(&c.setup.knobs_label()),
                    c.rank
                );
                for figure in COLUMNS {
                    h.push_str(&value_cell(
                        c.total(figure),
                        base.total(figure),
                        figure.unit().format(),
                    ));
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</tbody></table></div>\n");
    }
}

/// The values the sweep gave a policy knob, for its policy's description.
fn swept_values(s: &crate::sweep::summary::Summary, k: PolicyKnob) -> Vec<f64> {
    let values = s.grid.policy_axes.get(&k.field());
    values
        .into_iter()
        .flatten()
        .filter_map(|v| match *v {
            crate::sweep::summary::AxisValue::Int(i) => Some(i as f64),
            crate::sweep::summary::AxisValue::Float(f) => Some(f),
            crate::sweep::summary::AxisValue::Names(_)
            | crate::sweep::summary::AxisValue::Word(_) => None,
        })
        .collect()
}
