//! The bridge inside an rmcp server (M5; docs/troubleshooting.md, "The bridge
//! inside a server").

// Only the embedding (the feature `rmcp`) writes these lines.
#![cfg_attr(not(feature = "rmcp"), allow(dead_code))]

use std::fmt::Display;

lines! {
    group EMBED;

    /// Frames of the first line and of the server in the process that the bridge drops.
    pub enum EmbedRouterWarning<'a>: McpRouter Warning {
        FirstLineTooLong { n: usize }
            => "dropped a first line of more than {n} bytes: it is longer than max_line_bytes",
        FrameUnreadable { error: &'a dyn Display }
            => "dropped a frame of the in-process server: {error}",
    }

    /// The end of stdin on the modern path.
    pub enum EmbedInfo: Bridge Info {
        RequestsLeft { n: u128 } => "requests are left {n} ms after the end of stdin: they are cancelled",
    }

    /// The end of stdin, when the client reads no more of stdout.
    pub enum EmbedWarning: Bridge Warning {
        OutputLeft { n: u128 }
            => "the output did not drain {n} ms after the end of stdin: the frames the client did not read are dropped",
    }
}
