//! The columns of a sweep's tables (`sessions.*`, `configs.*`, a shard's
//! part file, the rows of `sweep --json`), named once: the writer
//! (`tables`) and the readers (`merge`, the report's `data`) name a column
//! by [`Col`] or by the table it comes from ([`Knob`], [`PolicyKnob`],
//! [`Metric`]), never by a string of their own, so renaming a column
//! changes every side together and removing one fails to compile.
//!
//! [`Column`] is one column of either table, and [`sessions_columns`] and
//! [`configs_columns`] the tables' columns in file order, always the same
//! ones whatever the sweep varied; the guide's table of columns (docs/guide.md) is made
//! from them ([`markdown`]) and a test holds the two together.

use crate::policy::PolicyKnob;

use super::figures::Metric;
use super::grid::Knob;

/// The version of the layout of `summary.json`, of the tables and of
/// `sweep --json` (whose configs are rows of `configs.*`): what a reader
/// checks before it trusts a field or a column to be there.
pub const SCHEMA_VERSION: u32 = 5;

/// The columns that are neither a knob nor a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Col {
    Session,
    Path,
    Config,
    ConfigLabel,
    Policy,
    Estimator,
    RatioMode,
    RatioStart,
    RatioEnd,
    OverheadUsed,
    WindowUsed,
    TriggerTokens,
    TargetTokens,
    IsBaseline,
    Sessions,
    ObjectiveDeltaLo,
    ObjectiveDeltaHi,
    LossDeltaLo,
    LossDeltaHi,
    Tied,
    Pareto,
    Rank,
    LinesSkipped,
    Bytes,
    Ordinal,
}

impl Col {
    pub(crate) const ALL: [Col; 25] = [
        Col::Session,
        Col::Path,
        Col::Config,
        Col::ConfigLabel,
        Col::Policy,
        Col::Estimator,
        Col::RatioMode,
        Col::RatioStart,
        Col::RatioEnd,
        Col::OverheadUsed,
        Col::WindowUsed,
        Col::TriggerTokens,
        Col::TargetTokens,
        Col::IsBaseline,
        Col::Sessions,
        Col::ObjectiveDeltaLo,
        Col::ObjectiveDeltaHi,
        Col::LossDeltaLo,
        Col::LossDeltaHi,
        Col::Tied,
        Col::Pareto,
        Col::Rank,
        Col::LinesSkipped,
        Col::Bytes,
        Col::Ordinal,
    ];

    /// The column's name in every file.
    pub const fn name(self) -> &'static str {
        match self {
            Col::Session => "session",
            Col::Path => "path",
            Col::Config => "config",
            Col::ConfigLabel => "config_label",
            Col::Policy => "policy",
            Col::Estimator => "estimator",
            Col::RatioMode => "ratio_mode",
            Col::RatioStart => "ratio_start",
            Col::RatioEnd => "ratio_end",
            Col::OverheadUsed => "overhead_used",
            Col::WindowUsed => "window_used",
            Col::TriggerTokens => "trigger_tokens",
            Col::TargetTokens => "target_tokens",
            Col::IsBaseline => "is_baseline",
            Col::Sessions => "sessions",
            Col::ObjectiveDeltaLo => "objective_delta_lo",
            Col::ObjectiveDeltaHi => "objective_delta_hi",
            Col::LossDeltaLo => "loss_delta_lo",
            Col::LossDeltaHi => "loss_delta_hi",
            Col::Tied => "tied",
            Col::Pareto => "pareto",
            Col::Rank => "rank",
            Col::LinesSkipped => "lines_skipped",
            Col::Bytes => "bytes",
            Col::Ordinal => "ordinal",
        }
    }

    /// What the column holds, for the guide.
    #[cfg(test)]
    pub(crate) const fn doc(self) -> &'static str {
        match self {
            Col::Session => "the session's name or id (else its file name)",
            Col::Path => "its transcript",
            Col::Config => "the config's index in the grid (0: the baseline)",
            Col::ConfigLabel => "the config's label, as the table prints it",
            Col::Policy => "the compaction policy",
            Col::Estimator => "how text becomes tokens (`bytes4`, `o200k`, …)",
            Col::RatioMode => {
                "`fixed` (the config's ratio), `saved` (the session's `context_ratio`) or `learned`"
            }
            Col::RatioStart => "the ratio at the row's first request",
            Col::RatioEnd => "the ratio at its last request",
            Col::OverheadUsed => "the overhead the row replayed under",
            Col::WindowUsed => {
                "the window the row replayed under: the config's, or the session's own where the config's is `own` (0)"
            }
            Col::TriggerTokens => "tokens where the config's policy acts (empty where each session's own window sets it)",
            Col::TargetTokens => "tokens it compacts down to (empty where each session's own window sets it)",
            Col::IsBaseline => "whether the config is the baseline (summary.json's `baseline` says which)",
            Col::Sessions => "sessions replayed",
            Col::ObjectiveDeltaLo => {
                "95% interval of the change against the baseline in the ranking figure's total: low end (null without sessions)"
            }
            Col::ObjectiveDeltaHi => "its high end",
            Col::LossDeltaLo => "the same interval for the loss measure (`still_needed`): low end",
            Col::LossDeltaHi => "its high end",
            Col::Tied => "whether the ranking figure's interval overlaps the best config's",
            Col::Pareto => {
                "on the Pareto front: no config is both cheaper and mangles fewer results"
            }
            Col::Rank => "1 for the best config by the ranking figure",
            Col::LinesSkipped => "bad lines of the transcript skipped",
            Col::Bytes => "bytes of transcript read",
            Col::Ordinal => {
                "in a shard's part file only: the session's position in the whole sweep"
            }
        }
    }
}

impl From<Col> for String {
    fn from(c: Col) -> String {
        c.name().to_string()
    }
}

/// A statistic of a figure over the sessions of a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    Mean,
    Median,
    P95,
}

impl Stat {
    pub(crate) const ALL: [Stat; 3] = [Stat::Mean, Stat::Median, Stat::P95];

    /// The suffix of its column after the figure's name.
    pub(crate) const fn suffix(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::Median => "median",
            Stat::P95 => "p95",
        }
    }
}

/// One column of a sweep's tables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Column {
    Id(Col),
    /// One of smith's knobs, by [`Knob::field`].
    Knob(Knob),
    /// A policy's own knob, null in the rows of other policies.
    PolicyKnob(PolicyKnob),
    /// A figure: per row, or a config's total (sum, or maximum for peaks).
    Figure(Metric),
    /// `<figure>_mean`, `_median`, `_p95` over sessions (configs only).
    Stat(Metric, Stat),
    /// `<figure>_delta`: the change of the total against the baseline.
    Delta(Metric),
    /// `<figure>_delta_pct`: that change in percent of the baseline's.
    DeltaPct(Metric),
}

impl Column {
    /// The column's name in the files.
    pub fn name(self) -> String {
        match self {
            Column::Id(c) => c.name().to_string(),
            Column::Knob(k) => k.field().to_string(),
            Column::PolicyKnob(k) => k.field(),
            Column::Figure(m) => m.name().to_string(),
            Column::Stat(m, s) => format!("{m}_{}", s.suffix()),
            Column::Delta(m) => format!("{m}_delta"),
            Column::DeltaPct(m) => format!("{m}_delta_pct"),
        }
    }
}

/// The columns both tables start with, after the row's own: the policy,
/// the estimator, the policies' knobs, then smith's knobs.
fn setup_columns(out: &mut Vec<Column>) {
    out.push(Column::Id(Col::Policy));
    out.push(Column::Id(Col::Estimator));
    out.extend(PolicyKnob::ALL.map(Column::PolicyKnob));
    out.extend(Knob::ALL.map(Column::Knob));
}

/// A table's columns up to its figures: its own `head`, the setup's, its
/// own `tail`, then every figure.
fn through_figures(head: &[Col], tail: &[Col]) -> Vec<Column> {
    let mut out: Vec<Column> = head.iter().copied().map(Column::Id).collect();
    setup_columns(&mut out);
    out.extend(tail.iter().copied().map(Column::Id));
    out.extend(Metric::ALL.map(Column::Figure));
    out
}

/// The columns of `sessions.*`, in file order: one row per session and
/// config. A shard's part file adds [`Col::Ordinal`].
pub fn sessions_columns() -> Vec<Column> {
    let mut out = through_figures(
        &[Col::Session, Col::Path, Col::Config, Col::ConfigLabel],
        &[
            Col::RatioMode,
            Col::RatioStart,
            Col::RatioEnd,
            Col::OverheadUsed,
            Col::WindowUsed,
            Col::IsBaseline,
        ],
    );
    out.extend([Col::LinesSkipped, Col::Bytes].map(Column::Id));
    out
}

/// The columns of `configs.*` (and of each object of `sweep --json`), in
/// file order: one row per config.
pub fn configs_columns() -> Vec<Column> {
    let mut out = through_figures(
        &[Col::Config, Col::ConfigLabel],
        &[
            Col::RatioMode,
            Col::TriggerTokens,
            Col::TargetTokens,
            Col::IsBaseline,
            Col::Sessions,
        ],
    );
    for m in Metric::ALL.into_iter().filter(|m| m.stats()) {
        out.extend(Stat::ALL.map(|s| Column::Stat(m, s)));
    }
    for m in Metric::rankable() {
        out.push(Column::Delta(m));
        out.push(Column::DeltaPct(m));
    }
    out.extend(ranking().iter().copied().map(Column::Id));
    out
}

/// The columns of the ranking as [`Col::ALL`] orders them: the intervals
/// of the objective and the loss, the tie, the Pareto front, the rank.
fn ranking() -> &'static [Col] {
    let at = |c: Col| Col::ALL.iter().position(|x| *x == c);
    match (at(Col::ObjectiveDeltaLo), at(Col::Rank)) {
        (Some(from), Some(to)) => &Col::ALL[from..=to],
        _ => &[],
    }
}

/// The guide's table of columns: every [`Col`] with the tables it is in,
/// then the families of knob and figure columns.
#[cfg(test)]
fn markdown() -> String {
    use std::fmt::Write as _;
    let sessions = sessions_columns();
    let configs = configs_columns();
    let mut s = String::from("| column | in | what it holds |\n| --- | --- | --- |\n");
    for c in Col::ALL {
        let id = Column::Id(c);
        let tables = match (sessions.contains(&id), configs.contains(&id)) {
            (true, true) => "sessions, configs",
            (true, false) => "sessions",
            (false, true) => "configs",
            (false, false) => "shard parts",
        };
        let _ = writeln!(s, "| `{}` | {tables} | {} |", c.name(), c.doc());
    }
    let knobs: Vec<String> = Knob::ALL
        .iter()
        .map(|k| format!("`{}`", k.field()))
        .collect();
    let policy: Vec<String> = PolicyKnob::ALL
        .iter()
        .map(|k| format!("`{}`", k.field()))
        .collect();
    let _ = writeln!(
        s,
        "| {} | sessions, configs | smith's knobs (for another policy only the window, overhead, ratio and summary size mean something) |",
        knobs.join(", ")
    );
    let _ = writeln!(
        s,
        "| {} | sessions, configs | the policies' own knobs, null in the rows of other policies (a list of names, such as context-editing's tools never cleared, comma-separated, empty) |",
        policy.join(", ")
    );
    let _ = writeln!(
        s,
        "| every figure of the figure table (`price`, `results_mangled`, …) | sessions, configs | per row; in configs the total over sessions (the maximum for peaks); a figure in dollars is null in the rows of a session whose model is in no price table, and its configs' totals are over the priced sessions |"
    );
    let stats: Vec<String> = Metric::ALL
        .into_iter()
        .filter(|m| m.stats())
        .map(|m| format!("`{m}`"))
        .collect();
    let _ = writeln!(
        s,
        "| `<figure>_mean`, `_median`, `_p95` | configs | over sessions, for {} |",
        stats.join(", ")
    );
    let _ = writeln!(
        s,
        "| `<figure>_delta`, `<figure>_delta_pct` | configs | the change of the total against the baseline, and in percent of the baseline's (null from 0), for every figure `--rank-by` takes |"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column name is one column's: no two columns of a table share
    /// a name, so a reader that finds a column by its name finds the one
    /// the writer meant.
    #[test]
    fn names_are_unique_within_each_table() {
        for table in [sessions_columns(), configs_columns()] {
            let mut names: Vec<String> = table.iter().map(|c| c.name()).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), n);
        }
    }

    /// The guide documents the columns as this module lays them out.
    #[test]
    fn the_readme_lists_every_column() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md");
        let readme = std::fs::read_to_string(path).expect("docs/guide.md");
        let table = markdown();
        assert!(
            readme.contains(&table),
            "docs/guide.md's table of columns is not the one the column table makes; put this in its place:\n{table}"
        );
    }
}
