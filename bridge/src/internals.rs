//! What only the fuzz targets (`fuzz/fuzz_targets/`) and the tests of the bridge
//! reach: the catalogue of texts, the pure rules, the line reading, the events of the upstream link and its
//! in-process implementation, the token stores. No part of the crate's API (hidden
//! from its documentation; any commit may change it): a user of the library needs
//! only `embed`, `Serve` and the entry points of the executable.
//!
//! The paths mirror the private modules, so that `internals::rules::input` is
//! `src/rules/input.rs`.

/// The catalogue of what the user sees, in the template form that the pages show,
/// and the lines of a link's end that a test's link sends.
pub mod catalogue {
    pub use crate::catalogue::cli::{LOGOUT_USAGE, USAGE, ValueRule};
    pub use crate::catalogue::{
        Cause, GROUPS, Level, Scope, Template, UpstreamLost, UpstreamStopped, templates,
    };
}

/// The token stores of the sign-in.
pub mod auth {
    pub use crate::auth::store;
}

/// The rules for a URL by its host and scheme.
pub mod net {
    pub use crate::net::url;
}

/// The listen stream's notifications.
pub mod notify {
    pub use crate::notify::events;
}

/// The pure translation rules.
pub mod rules {
    pub use crate::rules::{
        FORWARDED_METHODS, SERVER_INFO_KEY, capabilities, errors, initialize, input, meta,
        progress, results, schema_repair, tools_list,
    };
}

/// The upstream link's events, the in-process upstream and the stdio child's exit.
pub mod upstream {
    pub use crate::upstream::{
        ClientQuestion, ClientState, ConnectError, LinkEnd, Outgoing, RequestFailure,
        UpstreamEvent, memory, stdio,
    };
}

/// Frames, ids, the line reader and the one-level reading of lines.
pub mod wire {
    pub use crate::wire::{frame, id, line_reader, raw, shallow};
}
