//! Why a sign-in failed: each kind maps in one place to the cause and message
//! that VS Code gets and to the line of the Output channel.

use super::authorization_url::UnsafeUrl;
use crate::catalogue::{BridgeError, Cause, SignInWarning};
use std::time::Duration;

/// A sign-in that did not give a token. No text here holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignInError {
    /// The metadata of the resource or of its authorization server is missing or
    /// not usable.
    Discovery(String),
    /// `SANDBOX_RUNTIME=1`: the sandbox of VS Code blocks the browser and the port.
    Sandbox,
    /// After `notifications/initialized`, a client without URL elicitation.
    NoUrlElicitation,
    /// The user declined the URL elicitation, now or less than 60 s ago.
    Declined,
    /// Nobody completed the sign-in in `--sign-in-timeout`.
    Timeout(Duration),
    /// The start URL got a second request before the redirect (M6).
    StartReused,
    /// Another program listens on the redirect port.
    RedirectPortInUse(u16),
    /// The authorization URL is not safe to write or to open.
    UnsafeAuthorizationUrl(UnsafeUrl),
    /// No client ID: no `--client-id`, no usable document, no registration endpoint.
    NoClientRegistration,
    /// The registration endpoint refused the bridge.
    RegistrationRefused(String),
    /// `--client-id` with `--client-issuer` of another authorization server.
    ClientIdNotForIssuer,
    /// `--client-metadata-url` cannot be the client ID of this server.
    ClientMetadataUrl(String),
    /// The redirect said `error=access_denied`.
    AccessDenied,
    /// The redirect or the token endpoint sent another error.
    AuthorizationError(String),
    /// The upstream still answers 401 or 403 with the new token.
    RefusedAfterSignIn(u16),
    /// The token request failed for another reason.
    Failed(String),
    /// The bridge stops (the end of stdin): the request gets no answer.
    Canceled,
}

impl SignInError {
    pub fn cause(&self) -> Cause {
        match self {
            Self::Discovery(_) | Self::Failed(_) => Cause::SignInFailed,
            Self::Sandbox => Cause::SignInSandbox,
            Self::NoUrlElicitation => Cause::SignInNotPossible,
            Self::Declined => Cause::SignInDeclined,
            Self::Timeout(_) => Cause::SignInTimeout,
            Self::StartReused => Cause::SignInStartReused,
            Self::RedirectPortInUse(_) => Cause::RedirectPortInUse,
            Self::UnsafeAuthorizationUrl(_) => Cause::InvalidAuthorizationUrl,
            Self::NoClientRegistration => Cause::NoClientRegistration,
            Self::RegistrationRefused(_) => Cause::RegistrationRefused,
            Self::ClientIdNotForIssuer => Cause::ClientIdNotForIssuer,
            Self::ClientMetadataUrl(_) => Cause::InvalidClientMetadataUrl,
            Self::AccessDenied => Cause::SignInDenied,
            Self::AuthorizationError(_) => Cause::AuthorizationError,
            Self::RefusedAfterSignIn(_) => Cause::RefusedAfterSignIn,
            Self::Canceled => Cause::Canceled,
        }
    }

    /// The `data.detail` of the error.
    pub fn detail(&self) -> Option<String> {
        match self {
            Self::Discovery(detail)
            | Self::Failed(detail)
            | Self::RegistrationRefused(detail)
            | Self::ClientMetadataUrl(detail)
            | Self::AuthorizationError(detail) => Some(detail.clone()),
            Self::Timeout(limit) => Some(format!("no sign-in in {} s", limit.as_secs())),
            Self::RedirectPortInUse(port) => Some(format!("port {port}")),
            Self::UnsafeAuthorizationUrl(error) => Some(error.to_string()),
            Self::RefusedAfterSignIn(status) => Some(format!("HTTP status {status}")),
            _ => None,
        }
    }

    /// The error that VS Code gets.
    pub fn to_error(&self) -> BridgeError {
        match self.detail() {
            Some(detail) => BridgeError::with_detail(self.cause(), detail),
            None => BridgeError::new(self.cause()),
        }
    }

    /// The warning line of the Output channel, for the failures that have no line
    /// of their own where they happen.
    pub fn log_line(&self) -> Option<SignInWarning<'_>> {
        Some(match self {
            Self::Discovery(detail) | Self::Failed(detail) => SignInWarning::Failed { detail },
            Self::RegistrationRefused(detail) => SignInWarning::RegistrationRefused { detail },
            Self::NoClientRegistration => SignInWarning::NoClientRegistration,
            Self::ClientIdNotForIssuer => SignInWarning::ClientIdNotForIssuer,
            Self::ClientMetadataUrl(detail) => SignInWarning::ClientMetadataUrlNotValid { detail },
            Self::AccessDenied => SignInWarning::AccessRefused,
            Self::AuthorizationError(detail) => SignInWarning::AuthorizationServerError { detail },
            Self::RefusedAfterSignIn(status) => SignInWarning::RefusedAfterSignIn { n: *status },
            _ => return None,
        })
    }
}

/// A short text for the lines of the request that needed the sign-in.
impl std::fmt::Display for SignInError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self {
            Self::Discovery(_) | Self::Failed(_) => "the sign-in failed",
            Self::Sandbox => "the bridge runs in the sandbox of VS Code",
            Self::NoUrlElicitation => "the client cannot open the URL of a sign-in",
            Self::Declined => "the user declined the sign-in",
            Self::Timeout(_) => "the sign-in did not complete in time",
            Self::StartReused => "the start URL of the sign-in received a second request",
            Self::RedirectPortInUse(_) => "another program uses the redirect port",
            Self::UnsafeAuthorizationUrl(_) => "the authorization URL is not valid",
            Self::NoClientRegistration => "no client registration",
            Self::RegistrationRefused(_) => "the registration of the client was refused",
            Self::ClientIdNotForIssuer => "the client ID is for another authorization server",
            Self::ClientMetadataUrl(_) => "the client ID metadata document is not valid",
            Self::AccessDenied => "the authorization server refused the access",
            Self::AuthorizationError(_) => "the authorization server sent an error",
            Self::RefusedAfterSignIn(_) => {
                "the upstream server refused the access after the sign-in"
            }
            Self::Canceled => "the sign-in was canceled",
        };
        match self.detail() {
            Some(detail) => write!(f, "{what}: {detail}"),
            None => f.write_str(what),
        }
    }
}
