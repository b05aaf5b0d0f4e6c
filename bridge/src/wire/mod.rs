//! The JSON-RPC layer: frames as `serde_json::Value`, ids, the line codec and the
//! error causes. Nothing here knows MCP; the rules and the session do.

pub mod codec;
pub mod error;
pub mod frame;
pub mod id;
pub mod line_reader;
pub mod pieces;
pub mod raw;
pub mod shallow;
pub mod text;
pub(crate) mod write_through;
