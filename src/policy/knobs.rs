//! The policies' knobs: one entry each, from which their flags (one value
//! for `replay` and `transcript show`, lists for `sweep`), the help
//! defaults, the label tags, the data files' columns and `summary.json`'s
//! axes are made (see [`crate::knob`]). Their defaults are
//! [`Knobs::default`]'s, the policies' documented ones.

use serde::Serialize;

use super::Policy;
pub use crate::knob::Value;
use crate::knob::{any, knob_table, whole, Kind, Label, ValueError};

/// Each policy's documented defaults, as its own sources give them.
pub(crate) mod defaults {
    /// Observation masking's.
    pub(crate) mod masking {
        /// SWE-agent's default in the configurations the paper evaluates: the
        /// number of most recent observations kept whole.
        pub(crate) const MASK_WINDOW: usize = 10;
    }

    /// Claude Code's.
    pub(crate) mod claude_code {
        /// Tokens below the window where auto-compact fires: 20000 reserved for
        /// the summary's output plus a 13000-token buffer.
        pub(crate) const RESERVE_TOKENS: u64 = SUMMARY_OUTPUT_TOKENS + BUFFER_TOKENS;
        /// Reserved for the summary the compaction call writes.
        pub(crate) const SUMMARY_OUTPUT_TOKENS: u64 = 20_000;
        /// Room left below the effective window before compacting.
        pub(crate) const BUFFER_TOKENS: u64 = 13_000;

        /// Clearable results kept whole, the most recent ones.
        pub(crate) const KEEP_RESULTS: usize = 5;
    }

    /// Codex CLI's.
    pub(crate) mod codex {
        /// Bytes of a tool result sent to the model.
        pub(crate) const CAP_BYTES: usize = 10 * 1024;
        /// Lines of a tool result sent to the model: half from the head, half from
        /// the tail.
        pub(crate) const CAP_LINES: usize = 256;
        /// Fraction of the window at which auto-compaction runs.
        pub(crate) const COMPACT_AT: f64 = 0.9;
        /// Tokens of recent user messages carried beside the summary.
        pub(crate) const USER_MESSAGE_TOKENS: u64 = 20_000;
    }

    /// opencode's.
    pub(crate) mod opencode {
        /// Tokens below the window where opencode summarises.
        pub(crate) const RESERVE_TOKENS: u64 = 20_000;
        /// Tokens of the most recent tool output pruning never touches.
        pub(crate) const PRUNE_PROTECT_TOKENS: u64 = 40_000;
        /// Pruning acts only if it reclaims more than this many tokens: a small
        /// gain is not worth a cache rewrite.
        pub(crate) const PRUNE_MINIMUM_TOKENS: u64 = 20_000;
        /// User turns at the end of the history pruning skips (the default of
        /// `--prune-turns`): the turn being answered and the one before it, whose
        /// outputs the model is most likely still working from.
        pub(crate) const PROTECTED_TURNS: usize = 2;
    }

    /// Anthropic context editing's.
    pub(crate) mod context_editing {
        /// Input tokens above which clearing activates.
        pub(crate) const TRIGGER_TOKENS: u64 = 100_000;
        /// Most recent tool uses kept.
        pub(crate) const KEEP_TOOL_USES: usize = 3;
        /// The least a clearing must reclaim; 0: any amount.
        pub(crate) const CLEAR_AT_LEAST_TOKENS: u64 = 0;
    }
}

/// The knobs of the policies other than smith (smith's are in
/// [`crate::engine::Config`]). [`Knobs::default`] is each policy's documented default.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Knobs {
    /// masking: results kept whole, the most recent ones.
    pub mask_window: usize,
    /// claude-code: clearable results kept whole, the most recent ones.
    pub claude_code_keep: usize,
    /// claude-code: tokens below the window where it compacts.
    pub claude_code_reserve: u64,
    /// codex: bytes and lines a result keeps on arrival.
    pub codex_cap_bytes: usize,
    pub codex_cap_lines: usize,
    /// codex: fraction of the window where it compacts.
    pub codex_compact_at: f64,
    /// codex: tokens of recent user messages kept beside the summary.
    pub codex_user_tokens: u64,
    /// opencode: tokens below the window where it summarises.
    pub opencode_reserve: u64,
    /// opencode: tokens of the most recent tool output pruning protects.
    pub prune_protect: u64,
    /// opencode: tokens pruning must reclaim to act at all.
    pub prune_minimum: u64,
    /// opencode: user turns at the end of the history pruning skips.
    pub prune_turns: usize,
    /// context-editing: input tokens above which it clears.
    pub context_editing_trigger: u64,
    /// context-editing: most recent tool results kept.
    pub clear_keep: usize,
    /// context-editing: tokens a clearing must reclaim to happen.
    pub clear_at_least: u64,
    /// context-editing: tools whose results are never cleared.
    pub exclude_tools: Vec<String>,
    /// smith: at a request that finds the cache cold (its gap over the
    /// cache lifetime), compact from this fraction of the window
    /// (`crate::policy::cold`); 0 is off, smith's engine unchanged.
    pub cold_compact_at: f64,
}

impl Default for Knobs {
    fn default() -> Knobs {
        Knobs {
            mask_window: defaults::masking::MASK_WINDOW,
            claude_code_keep: defaults::claude_code::KEEP_RESULTS,
            claude_code_reserve: defaults::claude_code::RESERVE_TOKENS,
            codex_cap_bytes: defaults::codex::CAP_BYTES,
            codex_cap_lines: defaults::codex::CAP_LINES,
            codex_compact_at: defaults::codex::COMPACT_AT,
            codex_user_tokens: defaults::codex::USER_MESSAGE_TOKENS,
            opencode_reserve: defaults::opencode::RESERVE_TOKENS,
            prune_protect: defaults::opencode::PRUNE_PROTECT_TOKENS,
            prune_minimum: defaults::opencode::PRUNE_MINIMUM_TOKENS,
            prune_turns: defaults::opencode::PROTECTED_TURNS,
            context_editing_trigger: defaults::context_editing::TRIGGER_TOKENS,
            clear_keep: defaults::context_editing::KEEP_TOOL_USES,
            clear_at_least: defaults::context_editing::CLEAR_AT_LEAST_TOKENS,
            exclude_tools: Vec::new(),
            cold_compact_at: 0.0,
        }
    }
}

/// A count of a policy's: whole, and within smith's `Int32`s.
fn count(v: f64) -> Result<(), ValueError> {
    whole(v, 0.0, i32::MAX as f64)
}

/// A cap on a result: it must leave a head and a tail.
fn cap(v: f64) -> Result<(), ValueError> {
    whole(v, 2.0, i32::MAX as f64)
}

/// codex's threshold: a fraction of the window it can reach.
fn threshold(v: f64) -> Result<(), ValueError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ValueError::Threshold(v))
    }
}

/// smith's cold-cache threshold: 0 is off, 1 would never act.
fn cold(v: f64) -> Result<(), ValueError> {
    if (0.0..1.0).contains(&v) {
        Ok(())
    } else {
        Err(ValueError::Cold(v))
    }
}

knob_table! {
    /// A knob of a policy: what the command line takes (one value for
    /// `replay`, a list for `sweep`) and what the output files name.
    pub enum PolicyKnob: Def<Knobs, Policy, Value>;
    MaskWindow(mask_window: usize) {
        flag: "mask-window",
        value_name: "M",
        help: "masking: tool results kept whole, the most recent",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("M"),
        applies: Policy::Masking,
        check: count,
    }
    ClaudeCodeKeep(claude_code_keep: usize) {
        flag: "claude-code-keep",
        value_name: "N",
        help: "claude-code: clearable results kept whole, the most recent",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("keep"),
        applies: Policy::ClaudeCode,
        check: count,
    }
    ClaudeCodeReserve(claude_code_reserve: u64) {
        flag: "claude-code-reserve",
        value_name: "TOKENS",
        help: "claude-code: compact at the window minus this many tokens (20000 summary output + 13000 buffer)",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("reserve"),
        applies: Policy::ClaudeCode,
        check: count,
    }
    CodexCapBytes(codex_cap_bytes: usize) {
        flag: "codex-cap-bytes",
        value_name: "BYTES",
        help: "codex: bytes a tool result keeps on arrival",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("capB"),
        applies: Policy::Codex,
        check: cap,
    }
    CodexCapLines(codex_cap_lines: usize) {
        flag: "codex-cap-lines",
        value_name: "LINES",
        help: "codex: lines a tool result keeps on arrival, half from each end",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("capL"),
        applies: Policy::Codex,
        check: cap,
    }
    CodexCompactAt(codex_compact_at: f64) {
        flag: "codex-compact-at",
        value_name: "F",
        help: "codex: compact at this fraction of the window",
        list_help: "",
        kind: Kind::Fraction,
        label: Label::Changed("at"),
        applies: Policy::Codex,
        check: threshold,
    }
    CodexUserTokens(codex_user_tokens: u64) {
        flag: "codex-user-tokens",
        value_name: "TOKENS",
        help: "codex: tokens of recent user messages kept beside the summary",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("users"),
        applies: Policy::Codex,
        check: count,
    }
    OpencodeReserve(opencode_reserve: u64) {
        flag: "opencode-reserve",
        value_name: "TOKENS",
        help: "opencode: summarise at the window minus this many tokens",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("reserve"),
        applies: Policy::Opencode,
        check: count,
    }
    PruneProtect(prune_protect: u64) {
        flag: "prune-protect",
        value_name: "TOKENS",
        help: "opencode: tokens of the newest tool output pruning protects",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("protect"),
        applies: Policy::Opencode,
        check: count,
    }
    PruneMinimum(prune_minimum: u64) {
        flag: "prune-minimum",
        value_name: "TOKENS",
        help: "opencode: prune only if that reclaims more than this many tokens",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("min"),
        applies: Policy::Opencode,
        check: count,
    }
    PruneTurns(prune_turns: usize) {
        flag: "prune-turns",
        value_name: "TURNS",
        help: "opencode: user turns at the end of the history pruning leaves alone",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("turns"),
        applies: Policy::Opencode,
        check: count,
    }
    ContextEditingTrigger(context_editing_trigger: u64) {
        flag: "context-editing-trigger",
        value_name: "TOKENS",
        help: "context-editing: clear above this many input tokens",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("trigger"),
        applies: Policy::ContextEditing,
        check: count,
    }
    ClearKeep(clear_keep: usize) {
        flag: "clear-keep",
        value_name: "N",
        help: "context-editing: most recent tool results kept",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("keep"),
        applies: Policy::ContextEditing,
        check: count,
    }
    ClearAtLeast(clear_at_least: u64) {
        flag: "clear-at-least",
        value_name: "TOKENS",
        help: "context-editing: clear only if that reclaims at least this many tokens",
        list_help: "",
        kind: Kind::Count,
        label: Label::Changed("least"),
        applies: Policy::ContextEditing,
        check: count,
    }
    ColdCompactAt(cold_compact_at: f64) {
        flag: "cold-compact-at",
        value_name: "F",
        help: "smith: at a request whose gap since the previous one exceeds the cache lifetime (the cache is cold, the prompt is written again anyway), compact from this fraction of the window; needs the records' times (imported sessions), 0 is off, e.g. --cold-compact-at 0.55",
        list_help: "",
        kind: Kind::Fraction,
        label: Label::Changed("cold"),
        applies: Policy::Smith,
        check: cold,
    }
    ExcludeTools(exclude_tools: Vec<String>) {
        flag: "exclude-tools",
        value_name: "TOOLS",
        help: "context-editing: tools whose results are never cleared, comma-separated (any case)",
        list_help: "",
        kind: Kind::Names,
        label: Label::Changed("excl:"),
        applies: Policy::ContextEditing,
        check: any,
    }
}

/// The values a policy's description names, knob by knob, and how it
/// writes them.
pub(crate) struct Described<'a> {
    values: &'a dyn Fn(PolicyKnob) -> Vec<f64>,
}

impl<'a> Described<'a> {
    pub(crate) fn new(values: &'a dyn Fn(PolicyKnob) -> Vec<f64>) -> Described<'a> {
        Described { values }
    }

    /// The values `k` took; its default when none is given.
    pub(crate) fn values(&self, k: PolicyKnob) -> Vec<f64> {
        let v = (self.values)(k);
        if v.is_empty() {
            k.def().default_value().number().into_iter().collect()
        } else {
            v
        }
    }

    /// The values of `k` written by `write`, joined by "or".
    pub(crate) fn show(&self, k: PolicyKnob, write: impl Fn(f64) -> String) -> String {
        let texts: Vec<String> = self.values(k).into_iter().map(write).collect();
        texts.join(" or ")
    }

    /// The values of `k` as numbers.
    pub(crate) fn text(&self, k: PolicyKnob) -> String {
        self.show(k, Described::number)
    }

    /// A count or a fraction as Rust writes it (`20000`, `0.5`).
    pub(crate) fn number(v: f64) -> String {
        format!("{v}")
    }

    /// Bytes in KiB when whole KiB (`10 KiB`), else in bytes.
    pub(crate) fn bytes(v: f64) -> String {
        if v >= 1024.0 && v % 1024.0 == 0.0 {
            format!("{} KiB", v / 1024.0)
        } else {
            format!("{v} bytes")
        }
    }

    /// A fraction as a percentage (`90%`), free of the float's last digit.
    pub(crate) fn percent(v: f64) -> String {
        format!("{}%", (v * 1e8).round() / 1e6)
    }
}

impl PolicyKnob {
    /// The policy the knob belongs to.
    pub fn policy(self) -> Policy {
        self.def().applies
    }

    /// The command-line flag, without `--`.
    pub fn flag(self) -> &'static str {
        self.def().flag
    }

    /// The column name in the output files.
    pub fn field(self) -> String {
        self.def().field.to_string()
    }

    /// The short tag a config label writes before a non-default value.
    pub(crate) fn tag(self) -> &'static str {
        match self.def().label {
            Label::Changed(tag) | Label::Always(tag) => tag,
            Label::Window | Label::Fraction => "",
        }
    }

    /// Whether it takes only whole numbers.
    pub fn is_integer(self) -> bool {
        self.def().kind.is_integer()
    }

    /// What values it takes.
    pub(crate) fn kind(self) -> Kind {
        self.def().kind
    }

    /// Its value in `knobs`.
    pub fn get(self, k: &Knobs) -> Value {
        (self.def().get)(k)
    }

    /// Sets it in `knobs` to a value [`PolicyKnob::check`] accepted.
    pub(crate) fn set(self, k: &mut Knobs, v: Value) {
        (self.def().set)(k, v)
    }

    /// One value of the knob (`replay`, `show --at`), checked. `None`
    /// when `text` is a list or a range of numbers, which only `sweep`
    /// takes; names are one value, comma-separated.
    pub(crate) fn parse_one(self, text: &str) -> Option<Result<Value, ValueError>> {
        if self.kind() == Kind::Names {
            return Some(Ok(Value::Names(crate::knob::names(text))));
        }
        let text = text.trim();
        if text.contains(',') || text.contains("..") {
            return None;
        }
        let v = match text.parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            _ => return Some(Err(ValueError::NotNumber(text.to_string()))),
        };
        Some(self.check(&Value::Number(v)).map(|()| Value::Number(v)))
    }

    /// Rejects a value the knob cannot take, saying what it takes.
    pub fn check(self, v: &Value) -> Result<(), ValueError> {
        match (v, self.kind()) {
            (Value::Names(_), Kind::Names) => Ok(()),
            (Value::Number(v), kind) if kind != Kind::Names => {
                if !v.is_finite() {
                    return Err(ValueError::NotFinite(*v));
                }
                (self.def().check)(*v)
            }
            (v, _) => Err(ValueError::WrongKind {
                value: format!("{v:?}"),
                field: self.field(),
            }),
        }
    }
}
