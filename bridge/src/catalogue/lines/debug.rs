//! The debug lines (docs/troubleshooting.md, "Debug lines"): what happens to each
//! request and frame, never their content.

use std::fmt::Display;

lines! {
    group DEBUG;

    /// The core's debug lines.
    pub enum BridgeDebug<'a>: Bridge Debug {
        /// One upstream exchange.
        UpstreamRound {
            upstream_id as "n": u64,
            method: &'a str,
            round as "n": u32,
            id: &'a dyn Display,
            outcome: &'a str,
            elapsed as "n": u128,
        } => "upstream request {upstream_id} ({method}, round {round} of client request {id}): {outcome} after {elapsed} ms",
        InputRequestSent { id: &'a dyn Display, method: &'a str, input_method: &'a str, bridge_id as "b-n": &'a dyn Display }
            => "request {id} ({method}): sent {input_method} to the client as request \"{bridge_id}\"",
        /// A question of the link itself, such as the URL elicitation of a sign-in.
        LinkQuestionSent { input_method: &'a str, bridge_id as "b-n": &'a dyn Display }
            => "the upstream link: sent {input_method} to the client as request \"{bridge_id}\"",
        LinkQuestionAnswered { bridge_id as "b-n": &'a dyn Display }
            => "the client answered the request \"{bridge_id}\" of the upstream link",
        LateAnswer { id: &'a dyn Display }
            => "dropped an answer of the client with the id {id}: no request of the bridge with this id waits",
        Canceled { id: &'a dyn Display, method: &'a str } => "request {id} ({method}): the client canceled it",
        NotificationDropped { method: &'a str } => "dropped the notification {method} of the client",
        InvalidNotification => "dropped a notification of the client that is not valid JSON-RPC",
        LateCancel { id: &'a dyn Display }
            => "dropped a notifications/cancelled for request {id}, which is not in flight",
        CancelWithoutId => "dropped a notifications/cancelled without a valid requestId",
        LineRefused { error: &'a dyn Display } => "refused a line of the client: {error}",
        NewListenStream { id: &'a dyn Display, change as "subscribe or unsubscribe": &'a str }
            => "request {id} (resources/{change}): a new listen stream",
        /// The detail of [`SignInWarning::BrowserDidNotOpen`](super::SignInWarning::BrowserDidNotOpen).
        OpenerDidNotStart { error_kind: &'a dyn Display } => "the browser opener did not start: {error_kind}",
        NotSentOverHttp { method: &'a str } => "the upstream link does not send {method} over HTTP",
        FailedAfterEnd { upstream_id as "n": u64, failure: &'a dyn Display }
            => "the upstream request {upstream_id} failed after its end: {failure}",
    }

    /// The routing's debug lines.
    pub enum RouterDebug<'a>: McpRouter Debug {
        LateResponse { upstream_id as "n": &'a dyn Display }
            => "dropped a response with the id {upstream_id}: the request is no longer in flight",
        NotificationDropped { method: &'a str }
            => "dropped the notification {method} of the upstream server",
        ProgressDropped => "dropped a progress notification for no request in flight",
    }
}
