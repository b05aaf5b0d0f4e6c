//! The sign-in of the URL form (M4, M6; docs/troubleshooting.md, "The URL form:
//! sign-in").

use std::fmt::Display;

lines! {
    group SIGN_IN;

    /// The sign-in line: the authorization URL, at every `--log-level`.
    pub enum SignInLine<'a>: SignIn Info {
        At { url: &'a dyn Display } => "sign in at {url}",
    }

    /// A sign-in that cannot go on, or fails.
    pub enum SignInWarning<'a>: Bridge Warning {
        BrowserDidNotOpen => "the browser did not open: open the URL of the sign-in line in a browser",
        NoRandomData
            => "the bridge has no random data for the start URL, thus it does not open the browser",
        StartUrlReused
            => "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Another program on this host possibly opened it. Restart the server to sign in again. When this occurs again on a host that other users share, use --no-browser.",
        StartUrlAfterRedirect { url: &'a dyn Display }
            => "the start URL of the sign-in received a second request after the redirect. Another program possibly signed in with a different account. To be sure, run mcp-bridge-vscode logout {url}, and restart the server to sign in again.",
        AuthorizationUrlNotValid { error: &'a dyn Display }
            => "the authorization URL is not valid ({error}), thus the bridge does not open it",
        RedirectPortInUse { n: u16 }
            => "Another program uses the redirect port {n}. It can be a second server with a sign-in: set a different --redirect-port for one of them.",
        Timeout { n: u64 } => "The sign-in did not complete in {n} s.",
        /// Before `notifications/initialized`: `initialize` fails.
        SandboxAtStart
            => "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. The sandbox blocks the browser and the redirect port. Disable the sandbox for this server.",
        SandboxLater
            => "The bridge runs in the sandbox of VS Code, thus it cannot sign in: the sandbox blocks the browser and the redirect port. Disable the sandbox for this server.",
        Failed { detail: &'a dyn Display } => "the sign-in failed: {detail}",
        RegistrationRefused { detail: &'a dyn Display }
            => "the authorization server refused the registration of the client: {detail}",
        NoClientRegistration
            => "the authorization server has no client registration that the bridge can use: give --client-id",
        ClientIdNotForIssuer
            => "the client ID of --client-id is for the authorization server of --client-issuer, not for the authorization server of the upstream server",
        ClientMetadataUrlNotValid { detail: &'a dyn Display }
            => "the URL of --client-metadata-url is not valid for a client ID metadata document: {detail}",
        AccessRefused => "the authorization server refused the access",
        AuthorizationServerError { detail: &'a dyn Display }
            => "the authorization server sent an error for the sign-in: {detail}",
        RefusedAfterSignIn { n: u16 }
            => "the upstream server refused the access after the sign-in (HTTP status {n})",
        RefreshFailed { detail: &'a dyn Display } => "the refresh of the tokens failed: {detail}",
    }

    /// The steps of a sign-in that the user may want to know of.
    pub enum SignInInfo<'a>: Bridge Info {
        Declined => "The user declined the sign-in.",
        NoUrlElicitation
            => "the client did not declare URL elicitation: a later sign-in fails, and a restart of the server signs in again",
        ClientMetadataUrlUnreadable { error: &'a dyn Display }
            => "the bridge cannot read the client ID metadata document of --client-metadata-url ({error}): the authorization server reads it",
        NoClientIdMetadataDocuments
            => "the authorization server does not use client ID metadata documents: the bridge uses dynamic client registration",
        /// The document of the bridge lists only the default redirect URI.
        OwnDocumentOnlyDefaultPort { n: u16 }
            => "the client metadata document of the bridge has only the redirect port 41894. With --redirect-port {n}, the bridge uses dynamic client registration",
        OwnDocumentUnreadable { error: &'a dyn Display }
            => "the bridge cannot read its client ID metadata document ({error}): the authorization server reads it",
        OwnDocumentNotUsable { detail: &'a dyn Display }
            => "the client ID metadata document of the bridge is not usable ({detail}): the bridge uses dynamic client registration",
        RefreshRefused
            => "the authorization server refused the refresh token: the bridge signs in again",
    }
}
