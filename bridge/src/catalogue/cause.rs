//! The errors of the bridge as VS Code sees them: one cause per failure, with its
//! JSON-RPC code and its fixed message (the cause table of the contract and of the
//! reference study, 3.4). This is the one place that maps a deep cause to what VS
//! Code shows. The contract fixes these texts, so they sit in the catalogue rather
//! than in `wire` (which knows JSON-RPC, not MCP): each layer maps its own failures
//! to a cause here.

use serde_json::{Map, Value, json};

/// Why the bridge failed a request. `data.cause` carries the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    ParseError,
    NotInitialized,
    AlreadyInitialized,
    LineTooLong,
    TooDeep,
    InvalidRequestShape,
    DuplicateId,
    MethodNotFound,
    InvalidParams,
    InvalidMeta,
    InvalidRequest,
    Rpc,
    Canceled,
    Timeout,
    Closed,
    TransportFailed,
    InvalidResponse,
    TooManyRounds,
    OutOfMemory,
    UndeclaredInputRequest,
    HookFailed,
    NotConnected,
    SpawnFailed,
    DiscoverFailed,
    UpstreamExited,
    TooManyRequests,
    InvalidInputRequest,
    TooManyInputRequests,
    InputTimeout,
    InvalidClientAnswer,
    // The sign-in of the URL form (M4, M6).
    SignInFailed,
    SignInSandbox,
    SignInNotPossible,
    SignInDeclined,
    SignInTimeout,
    SignInStartReused,
    RedirectPortInUse,
    InvalidAuthorizationUrl,
    NoClientRegistration,
    RegistrationRefused,
    ClientIdNotForIssuer,
    InvalidClientMetadataUrl,
    SignInDenied,
    AuthorizationError,
    RefusedAfterSignIn,
}

impl Cause {
    /// Every cause, in the order of the table of docs/troubleshooting.md.
    pub const ALL: [Cause; 45] = [
        Self::ParseError,
        Self::NotInitialized,
        Self::AlreadyInitialized,
        Self::LineTooLong,
        Self::TooDeep,
        Self::InvalidRequestShape,
        Self::DuplicateId,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::InvalidMeta,
        Self::InvalidRequest,
        Self::Rpc,
        Self::Canceled,
        Self::Timeout,
        Self::Closed,
        Self::TransportFailed,
        Self::InvalidResponse,
        Self::TooManyRounds,
        Self::OutOfMemory,
        Self::UndeclaredInputRequest,
        Self::HookFailed,
        Self::NotConnected,
        Self::SpawnFailed,
        Self::DiscoverFailed,
        Self::UpstreamExited,
        Self::TooManyRequests,
        Self::InvalidInputRequest,
        Self::TooManyInputRequests,
        Self::InputTimeout,
        Self::InvalidClientAnswer,
        Self::SignInFailed,
        Self::SignInSandbox,
        Self::SignInNotPossible,
        Self::SignInDeclined,
        Self::SignInTimeout,
        Self::SignInStartReused,
        Self::RedirectPortInUse,
        Self::InvalidAuthorizationUrl,
        Self::NoClientRegistration,
        Self::RegistrationRefused,
        Self::ClientIdNotForIssuer,
        Self::InvalidClientMetadataUrl,
        Self::SignInDenied,
        Self::AuthorizationError,
        Self::RefusedAfterSignIn,
    ];

    /// The name in `data.cause`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ParseError => "parse_error",
            Self::NotInitialized => "not_initialized",
            Self::AlreadyInitialized => "already_initialized",
            Self::LineTooLong => "line_too_long",
            Self::TooDeep => "too_deep",
            Self::InvalidRequestShape => "invalid_request_shape",
            Self::DuplicateId => "duplicate_id",
            Self::MethodNotFound => "method_not_found",
            Self::InvalidParams => "invalid_params",
            Self::InvalidMeta => "invalid_meta",
            Self::InvalidRequest => "invalid_request",
            Self::Rpc => "rpc",
            Self::Canceled => "canceled",
            Self::Timeout => "timeout",
            Self::Closed => "closed",
            Self::TransportFailed => "transport_failed",
            Self::InvalidResponse => "invalid_response",
            Self::TooManyRounds => "too_many_rounds",
            Self::OutOfMemory => "out_of_memory",
            Self::UndeclaredInputRequest => "undeclared_input_request",
            Self::HookFailed => "hook_failed",
            Self::NotConnected => "not_connected",
            Self::SpawnFailed => "spawn_failed",
            Self::DiscoverFailed => "discover_failed",
            Self::UpstreamExited => "upstream_exited",
            Self::TooManyRequests => "too_many_requests",
            Self::InvalidInputRequest => "invalid_input_request",
            Self::TooManyInputRequests => "too_many_input_requests",
            Self::InputTimeout => "input_timeout",
            Self::InvalidClientAnswer => "invalid_client_answer",
            Self::SignInFailed => "sign_in_failed",
            Self::SignInSandbox => "sign_in_sandbox",
            Self::SignInNotPossible => "sign_in_not_possible",
            Self::SignInDeclined => "sign_in_declined",
            Self::SignInTimeout => "sign_in_timeout",
            Self::SignInStartReused => "sign_in_start_reused",
            Self::RedirectPortInUse => "redirect_port_in_use",
            Self::InvalidAuthorizationUrl => "invalid_authorization_url",
            Self::NoClientRegistration => "no_client_registration",
            Self::RegistrationRefused => "registration_refused",
            Self::ClientIdNotForIssuer => "client_id_not_for_issuer",
            Self::InvalidClientMetadataUrl => "invalid_client_metadata_url",
            Self::SignInDenied => "sign_in_denied",
            Self::AuthorizationError => "authorization_error",
            Self::RefusedAfterSignIn => "refused_after_sign_in",
        }
    }

    /// The JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::NotInitialized
            | Self::AlreadyInitialized
            | Self::LineTooLong
            | Self::TooDeep
            | Self::InvalidRequestShape
            | Self::DuplicateId => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams | Self::InvalidMeta | Self::InvalidRequest => -32602,
            _ => -32603,
        }
    }

    /// The fixed message that VS Code shows as `MPC <code>: <message>`.
    pub fn message(self) -> &'static str {
        match self {
            Self::Rpc => "The upstream server sent an error. See the Output channel of the server.",
            Self::Canceled => "The client canceled the request.",
            Self::Timeout => {
                "The upstream server did not answer in time. See the Output channel of the server."
            }
            Self::Closed | Self::UpstreamExited => {
                "The upstream server process stopped. See the Output channel of the server."
            }
            Self::TransportFailed => {
                "The connection to the upstream server failed. See the Output channel of the server."
            }
            Self::InvalidResponse => {
                "The upstream server sent a response that is not valid. See the Output channel of the server."
            }
            Self::TooManyRounds => {
                "The upstream server asked for input too many times. See the Output channel of the server."
            }
            Self::OutOfMemory => "The bridge does not have sufficient memory for the request.",
            Self::UndeclaredInputRequest => {
                "The upstream server asked for input that the client did not declare."
            }
            Self::HookFailed => {
                "The bridge cannot give the input that the upstream server asked for."
            }
            Self::NotConnected => {
                "The bridge has no connection to the upstream server. See the Output channel of the server."
            }
            Self::InvalidRequest => {
                "The bridge cannot send the parameters of the request to the upstream server."
            }
            Self::InvalidMeta => {
                "The request has a _meta key that the bridge cannot send to the upstream server."
            }
            Self::SpawnFailed => {
                "The bridge cannot start the upstream server. Examine the command in the configuration of the server. See the Output channel of the server."
            }
            Self::DiscoverFailed => {
                "The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server."
            }
            Self::NotInitialized => {
                "The client did not initialize the connection. Send initialize first."
            }
            Self::AlreadyInitialized => "The client already sent initialize on this connection.",
            Self::TooManyRequests => "The connection has too many requests in flight.",
            Self::LineTooLong => "The request is longer than the line limit of the bridge.",
            Self::TooDeep => "The request has more levels of nesting than the limit of the bridge.",
            Self::ParseError => "The request is not valid JSON.",
            Self::InvalidRequestShape => "The message is not a valid JSON-RPC 2.0 request.",
            Self::DuplicateId => {
                "The request has the id of a request that is still in flight on this connection."
            }
            Self::MethodNotFound => "The server does not have this method.",
            Self::InvalidParams => "The parameters of the request are not valid.",
            Self::InvalidInputRequest => {
                "The upstream server sent an input request that is not valid for the client. See the Output channel of the server."
            }
            Self::TooManyInputRequests => {
                "The upstream server asked for more inputs at one time than the limit of the bridge."
            }
            Self::InputTimeout => {
                "The client did not answer the input request of the upstream server in time."
            }
            Self::InvalidClientAnswer => {
                "The client sent an answer that is not valid for the input request of the upstream server."
            }
            Self::SignInFailed => {
                "The sign-in at the authorization server of the upstream server failed. See the Output channel of the server."
            }
            Self::SignInSandbox => {
                "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server."
            }
            Self::SignInNotPossible => {
                "The upstream server needs a new sign-in, and the client cannot open the URL of a sign-in. Restart the server to sign in again."
            }
            Self::SignInDeclined => {
                "The upstream server needs a new sign-in, and the client did not open the URL of the sign-in. Send the request again in a minute to sign in."
            }
            Self::SignInTimeout => {
                "The sign-in did not complete in time. Open the URL of the sign-in line in the Output channel of the server, or send the request again. When the sign-in page shows an error, run mcp-bridge-vscode logout with the URL of the server, and restart the server."
            }
            Self::SignInStartReused => {
                "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Restart the server to sign in again."
            }
            Self::RedirectPortInUse => {
                "The bridge cannot listen on the redirect port. Another program uses it: set a different --redirect-port. See the Output channel of the server."
            }
            Self::InvalidAuthorizationUrl => {
                "The authorization server sent an authorization URL that is not valid. See the Output channel of the server."
            }
            Self::NoClientRegistration => {
                "The authorization server has no client registration that the bridge can use. Register a client with the redirect URI of the bridge, and give its ID with --client-id."
            }
            Self::RegistrationRefused => {
                "The authorization server refused the registration of the client. See the Output channel of the server."
            }
            Self::ClientIdNotForIssuer => {
                "The client ID of --client-id is not for the authorization server of the upstream server. Examine --client-issuer."
            }
            Self::InvalidClientMetadataUrl => {
                "The URL of --client-metadata-url is not valid for a client ID metadata document. See the Output channel of the server."
            }
            Self::SignInDenied => {
                "The authorization server refused the access. Sign in with an account that has access, or ask the administrator of the server."
            }
            Self::AuthorizationError => {
                "The authorization server sent an error for the sign-in. See the Output channel of the server."
            }
            Self::RefusedAfterSignIn => {
                "The upstream server refused the access after the sign-in. See the Output channel of the server."
            }
        }
    }
}

/// A failure of the bridge, as it goes to VS Code.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeError {
    pub cause: Cause,
    /// A short text for `data.detail`: never a header value, a token or frame content.
    pub detail: Option<String>,
    /// A code other than the cause's own (discover_failed takes the upstream's code).
    pub code: Option<i64>,
}

impl BridgeError {
    pub fn new(cause: Cause) -> Self {
        Self {
            cause,
            detail: None,
            code: None,
        }
    }

    pub fn with_detail(cause: Cause, detail: impl Into<String>) -> Self {
        Self {
            cause,
            detail: Some(detail.into()),
            code: None,
        }
    }

    /// The JSON-RPC error object: `{code, message, data: {cause, detail?}}`.
    pub fn to_object(&self) -> Value {
        let mut data = Map::new();
        data.insert("cause".into(), self.cause.name().into());
        if let Some(detail) = &self.detail {
            data.insert("detail".into(), detail.clone().into());
        }
        json!({
            "code": self.code.unwrap_or(self.cause.code()),
            "message": self.cause.message(),
            "data": data,
        })
    }
}

impl std::fmt::Display for BridgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(detail) => write!(f, "{} ({detail})", self.cause.name()),
            None => f.write_str(self.cause.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_cause_table() {
        assert_eq!(Cause::ParseError.code(), -32700);
        assert_eq!(Cause::LineTooLong.code(), -32600);
        assert_eq!(Cause::NotInitialized.code(), -32600);
        assert_eq!(Cause::MethodNotFound.code(), -32601);
        assert_eq!(Cause::InvalidMeta.code(), -32602);
        assert_eq!(Cause::UpstreamExited.code(), -32603);
        assert_eq!(Cause::TooManyRequests.code(), -32603);
    }

    #[test]
    fn the_error_object_names_its_cause() {
        let error = BridgeError::with_detail(Cause::Timeout, "no response in 120 s");
        assert_eq!(
            error.to_object(),
            json!({
                "code": -32603,
                "message": "The upstream server did not answer in time. See the Output channel of the server.",
                "data": {"cause": "timeout", "detail": "no response in 120 s"}
            })
        );
    }
}
