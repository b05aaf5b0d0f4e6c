//! The requests of VS Code and what the upstream answers (docs/troubleshooting.md,
//! "Requests").

use std::fmt::Display;

lines! {
    group REQUESTS;

    /// A request that takes its time, and the repairs of the rules.
    pub enum RequestInfo<'a>: Bridge Info {
        StillWaiting { method: &'a str, id: &'a dyn Display, n: u64 }
            => "still waiting for the upstream server: {method} (request {id}, {n} s)",
        /// R6: an array schema without `items` gets `items: {}`.
        ItemsAdded { name: &'a str, pointer: &'a str }
            => "tool '{name}': added an items schema at '{pointer}' of the input schema",
        SchemaTooDeep { name: &'a str, pointer: &'a str }
            => "tool '{name}': the input schema at '{pointer}' is too deep to examine",
    }

    /// A request that fails.
    pub enum RequestWarning<'a>: Bridge Warning {
        NoResponse { id: &'a dyn Display, method: &'a str, limit: &'a str }
            => "request {id} ({method}): no response in {limit}",
        Rejected { id: &'a dyn Display, method: &'a str }
            => "rejected request {id} ({method}): too many requests in flight",
        /// A response that is not valid, or a kept request that cannot be read back.
        Failed { id: &'a dyn Display, method: &'a str, detail: &'a dyn Display }
            => "request {id} ({method}): {detail}",
        UpstreamRequestFailed { id: &'a dyn Display, method: &'a str, failure: &'a dyn Display }
            => "request {id} ({method}): the upstream request failed: {failure}",
        /// A URL upstream: the tool's `x-mcp-header` annotations are not valid.
        ToolLeftOut { name: &'a str, error: &'a dyn Display }
            => "tool '{name}': the bridge left the tool out of the list: {error}",
    }

    /// Frames of the upstream that the bridge drops.
    pub enum RouterWarning<'a>: McpRouter Warning {
        Dropped { frame: &'a dyn Display, reason: &'a dyn Display } => "dropped {frame}: {reason}",
        DroppedAndRequestFails { frame: &'a dyn Display, reason: &'a dyn Display, id: &'a dyn Display }
            => "dropped {frame}: {reason}, and the request {id} of the client fails",
        DroppedAndDiscoverFails { frame: &'a dyn Display, reason: &'a dyn Display }
            => "dropped {frame}: {reason}, and server/discover fails",
        DroppedRequest { method: &'a str }
            => "dropped a request ({method}) of the upstream server: a server of revision 2026-07-28 sends no requests",
        DroppedResponse { id: &'a dyn Display }
            => "dropped a response with the id {id}: the bridge sent no request with this id",
    }
}
