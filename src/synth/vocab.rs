//! Word lists the content is assembled from. Kept apart so the generators
//! read as grammar rather than as data.

/// Verbs for identifiers and prose.
pub(crate) const VERBS: &[&str] = &[
    "parse",
    "read",
    "write",
    "load",
    "save",
    "build",
    "render",
    "compact",
    "resolve",
    "fetch",
    "merge",
    "split",
    "scan",
    "emit",
    "flush",
    "apply",
    "validate",
    "encode",
    "decode",
    "index",
    "estimate",
    "truncate",
    "replace",
    "collect",
    "handle",
    "dispatch",
    "retry",
    "schedule",
    "format",
    "measure",
    "normalise",
    "restore",
    "prune",
    "summarize",
    "stream",
    "convert",
];

/// Nouns for identifiers, types and prose.
pub(crate) const NOUNS: &[&str] = &[
    "session",
    "message",
    "block",
    "budget",
    "token",
    "config",
    "request",
    "response",
    "cache",
    "window",
    "history",
    "result",
    "stage",
    "marker",
    "index",
    "path",
    "file",
    "buffer",
    "line",
    "entry",
    "record",
    "provider",
    "model",
    "client",
    "server",
    "handler",
    "router",
    "query",
    "schema",
    "report",
    "summary",
    "trace",
    "event",
    "checkpoint",
    "snapshot",
    "worker",
    "queue",
    "batch",
    "span",
    "ratio",
    "limit",
    "offset",
    "cursor",
    "reader",
    "writer",
    "parser",
    "tool",
];

/// Adjectives for prose and identifiers.
pub(crate) const ADJECTIVES: &[&str] = &[
    "stale", "current", "pending", "empty", "large", "small", "raw", "cached", "broken", "valid",
    "nested", "partial", "final", "recent", "unused", "default", "shared", "local", "remote",
];

/// Directory names a project's files live under.
pub(crate) const DIRS: &[&str] = &[
    "core", "engine", "llm", "tools", "ui", "cli", "util", "storage", "net", "config", "report",
    "parser", "server", "worker", "models", "commands", "export", "internal", "api", "db",
];

/// Project names.
pub(crate) const PROJECTS: &[&str] = &[
    "smith",
    "ledger",
    "atlas",
    "pipewire-tui",
    "harbor",
    "quill",
    "tessellate",
    "orbit",
    "kiln",
    "marmot",
    "sprocket",
    "fathom",
    "lumen",
    "brackish",
    "cinder",
    "gantry",
    "halyard",
    "nimbus",
];

/// Unix user names for working directories.
pub(crate) const USERS: &[&str] = &[
    "mathias", "anna", "dev", "kenji", "lea", "sam", "oliver", "priya",
];

/// Fragments of non-ASCII text that real transcripts carry: accented words
/// in comments and prompts, typographic dashes and arrows, check marks from
/// test runners, emoji, CJK. Each holds at least one multi-byte character.
pub(crate) const NON_ASCII: &[&str] = &[
    "Größe",
    "café",
    "naïve",
    "über",
    "résumé",
    "Ärger",
    "façade",
    "—",
    "→",
    "✓",
    "✗",
    "…",
    "🚀",
    "🦀",
    "🔥",
    "日本語",
    "€",
    "±",
    "µs",
    "ñandú",
    "Zürich",
    "Ωmega",
    "☃",
    "•",
];

/// Single multi-byte characters (2, 3 and 4 bytes) used to straddle the
/// 512-byte head smith keeps of a truncated result.
pub(crate) const STRADDLERS: &[&str] = &["é", "ü", "ß", "—", "→", "✓", "…", "日", "🦀", "🚀", "😀"];

/// Words of ordinary prose for comments, thinking and explanations.
pub(crate) const PROSE: &[&str] = &[
    "the", "a", "this", "that", "we", "it", "so", "then", "now", "but", "because", "which", "when",
    "if", "only", "still", "again", "already", "first", "next", "every", "each", "should", "would",
    "can", "must", "does", "is", "was", "keeps", "drops", "returns", "means", "looks", "seems",
    "happens", "fails", "passes", "works", "breaks", "expects", "test", "function", "call",
    "value", "field", "case", "branch", "loop", "error", "check", "change", "fix", "bug", "output",
    "input", "argument", "type", "struct", "method", "module", "before", "after", "instead",
    "without", "around", "inside", "outside", "through", "over",
];

/// Testing and build vocabulary for log lines.
pub(crate) const LOG_COMPONENTS: &[&str] = &[
    "http",
    "db.pool",
    "scheduler",
    "auth",
    "cache",
    "worker[3]",
    "api.v1",
    "migrate",
    "mailer",
    "sse",
    "grpc",
    "metrics",
    "gc",
    "fs.watch",
];

/// Models and the provider each is used through.
/// Weighted by repetition: smith is mostly run against Anthropic.
pub(crate) const MODELS: &[(&str, &str)] = &[
    ("claude-sonnet-4-5", "anthropic"),
    ("claude-sonnet-4-5", "anthropic"),
    ("claude-sonnet-4-5", "anthropic"),
    ("claude-sonnet-4-5", "anthropic"),
    ("claude-opus-4-1", "anthropic"),
    ("claude-opus-4-1", "anthropic"),
    ("claude-haiku-4-5", "anthropic"),
    ("anthropic/claude-sonnet-4", "openrouter"),
    ("gpt-5", "openai"),
    ("qwen3-coder:30b", "ollama"),
];
