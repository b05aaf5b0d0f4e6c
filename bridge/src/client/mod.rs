//! VS Code's side of the bridge, as [`crate::upstream`] is the upstream's: the
//! reader of its lines, the writer of the frames for it, and its stdin and stdout.

pub(crate) mod reader;
pub mod stdio;
pub(crate) mod writer;

pub(crate) use reader::{ClientEvent, ForwardedRequest, read_client};
pub(crate) use writer::ClientSink;
