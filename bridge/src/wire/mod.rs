//! The JSON-RPC layer: frames as `serde_json::Value`, ids, the line reader and the
//! line writer. Nothing here knows MCP; the rules and the session do.

pub mod frame;
pub mod id;
pub mod line_reader;
pub mod line_writer;
pub mod pieces;
pub mod raw;
pub mod shallow;
pub mod text;
pub(crate) mod write_through;
