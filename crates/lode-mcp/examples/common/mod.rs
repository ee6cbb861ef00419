//! What the MCP benchmarks share: the calls an agent would make of tokio.

/// Identifier and sentence queries, as an agent would send them.
pub const QUERIES: &[&str] = &[
    "spawn_blocking",
    "JoinHandle",
    "TcpListener accept",
    "Runtime block_on",
    "how are timers scheduled",
    "bounded channel send waits for capacity",
    "cooperative scheduling budget",
    "read into a buffer until EOF",
    "Semaphore acquire",
    "shutdown of the runtime",
];

pub const PATTERNS: &[&str] = &["fn spawn_blocking", r"impl\s+Drop\s+for", "TODO"];
