//! Pure translation rules between revision 2025-11-25 (VS Code) and revision
//! 2026-07-28 (the upstream server).
//!
//! Every function here maps frames to frames without I/O or clocks, and its doc
//! comment names the items of the contract it implements: grep for `R6`, `C2`, `O4`.

pub mod capabilities;
pub mod errors;
pub mod icons;
pub mod initialize;
pub mod input;
pub mod meta;
pub mod progress;
pub mod results;
pub mod schema_repair;
pub mod tools_list;

/// The revision that the bridge speaks to VS Code.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";

/// The revision that the bridge speaks to the upstream server.
pub const UPSTREAM_PROTOCOL_VERSION: &str = "2026-07-28";

/// The extension of revision 2026-07-28 for tasks, which the bridge never passes on (O11).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key of revision 2026-07-28 that carries the server's identity.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The requests of VS Code that go upstream (O8: completion/complete always).
pub const FORWARDED_METHODS: [&str; 8] = mcp_names::FEATURE_REQUESTS;
