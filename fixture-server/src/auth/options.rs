//! The options of the authorization server of `--auth` (alias `--oauth`), as the command
//! line gives them.

use std::path::PathBuf;
use std::time::Duration;

/// The lifetime of an access token without `--token-lifetime` (study §1.5).
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(900);
/// The longest `--token-lifetime`: one year.
pub const MAX_TOKEN_LIFETIME: u64 = 365 * 86_400;

/// The options of the authorization server; `enabled: false` is the plain server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthOptions {
    /// `--auth` / `--oauth`: POST /mcp needs an access token of this server.
    pub enabled: bool,
    /// Dynamic client registration (RFC 7591); `--no-registration` turns it off.
    pub registration: bool,
    /// `--cimd`: client IDs that are https URLs of client ID metadata documents.
    pub cimd: bool,
    /// `--auth-ca-file PATH`: one more CA to trust when a document is fetched.
    pub ca_file: Option<PathBuf>,
    /// `--deny`: every authorization is denied (`error=access_denied`).
    pub deny: bool,
    /// `--deny-with ERROR`: every authorization is denied with `error=ERROR` (as
    /// sent, URL-encoded): a code other than access_denied, or a text that is not a
    /// plain code.
    pub deny_with: Option<String>,
    /// The `iss` parameter of RFC 9207 in every redirect; `--no-iss` leaves it out.
    pub iss: bool,
    /// `--forget-clients`: the dynamically registered clients are forgotten each time
    /// the server issues the tokens of a code (a server that forgot a client: the
    /// first sign-in works, its refresh gets `invalid_client`, the next `/authorize`
    /// an error page).
    pub forget_clients: bool,
    /// `--token-lifetime S`: the lifetime of an access token.
    pub token_lifetime: Duration,
    /// Refresh tokens are issued; `--no-refresh-tokens` turns them off.
    pub refresh_tokens: bool,
    /// `--invalid-grant`: every refresh gets `invalid_grant`.
    pub invalid_grant: bool,
    /// `--refresh-error ERROR`: every refresh gets 400 with `error=ERROR`, an error
    /// that does not say that the refresh token or the client is gone.
    pub refresh_error: Option<String>,
    /// `--token-type TYPE`: the `token_type` of every token response (`Bearer`
    /// unless given); a token of another type is none that a client of MCP may
    /// send as a bearer token.
    pub token_type: String,
    /// `--hostile-authorization-endpoint KIND`: the metadata names an
    /// `authorization_endpoint` that no client may open.
    pub hostile_endpoint: Option<HostileEndpoint>,
    /// `--hostile-redirect KIND`: the approval sends a redirect that a client must
    /// refuse.
    pub hostile_redirect: Option<HostileRedirect>,
    /// `--prm-authorization-server URL`: the protected resource metadata names URL
    /// as the authorization server, in place of this server (a resource that sends
    /// its clients elsewhere).
    pub prm_authorization_server: Option<String>,
    /// `--prm-resource-host HOST`: the resource of the protected resource metadata
    /// is the MCP URL on HOST (the metadata of a server on another host, which a
    /// client must not use for this one).
    pub prm_resource_host: Option<String>,
    /// `--prm-resource-port PORT`: the resource of the protected resource metadata
    /// is the MCP URL on PORT (the metadata of another server of the same host,
    /// which a client must not use for this one).
    pub prm_resource_port: Option<u16>,
    /// `--prm-elsewhere`: the protected resource metadata is only at a path of its
    /// own, which the challenges name (RFC 9728 §5.1), not at the well-known URLs:
    /// a client must follow the challenge's `resource_metadata`.
    pub prm_elsewhere: bool,
    /// `--quoted-description`: the 401's challenge starts with an
    /// `error_description` that holds an escaped quote (`\"`), which a client
    /// must unescape to read the parameters after it.
    pub quoted_description: bool,
    /// `--cimd-document URL=PATH`: the client ID metadata document of the client ID
    /// URL is the file PATH, read in place of a fetch (a document that a test keeps
    /// in a file, such as the one a project publishes, without any network).
    pub cimd_documents: Vec<(String, PathBuf)>,
    /// `--separate-authorization-server`: the authorization server listens on a second
    /// port of its own (another origin, another issuer); the origin of `/mcp` serves
    /// only the protected resource metadata besides it. A client that sends its access
    /// token anywhere but the MCP URL shows in the requests of that origin.
    pub separate_origin: bool,
    /// `--step-up-new-scope-only`: the challenge of the step-up names only `mcp:write`,
    /// not the scopes the client has already: a client must ask for the union.
    pub step_up_new_scope_only: bool,
    /// `--challenge-without-scope`: the 401 names no scope, so that a client asks for
    /// the `scopes_supported` of the protected resource metadata.
    pub challenge_without_scope: bool,
    /// `--resource-query QUERY`: the resource (and the audience of every token) is
    /// the MCP URL with this query, a server that tells its tenants apart by the
    /// query: a client must use the URL with the query.
    pub resource_query: Option<String>,
    /// `--authorization-query QUERY`: the `authorization_endpoint` carries this query
    /// of its own (a tenant, say), which `/authorize` requires back: a client must
    /// keep it when it adds its parameters (RFC 6749 §3.1).
    pub authorization_query: Option<String>,
    /// `--client-secret-post-only`: the token endpoint takes a client secret only in
    /// the form body (`client_secret_post`), and its metadata names that method
    /// alone; HTTP Basic gets `invalid_client`.
    pub client_secret_post_only: bool,
    /// `--listen-needs-write`: a `subscriptions/listen` needs `mcp:write` too (403
    /// `insufficient_scope`, as the tool `guarded`): a listen stream that waits for a
    /// step-up.
    pub listen_needs_write: bool,
    /// `--refuse-registration`: `/register` answers every registration with
    /// `invalid_client_metadata`.
    pub refuse_registration: bool,
    /// `--refuse-registration-with ERROR`: `/register` answers every registration
    /// with 400 and the `error` ERROR (a text that is not a plain code, say).
    pub refuse_registration_with: Option<String>,
    /// `--refuse-access-tokens`: `/mcp` answers 401 `invalid_token` also to the access
    /// tokens this server issued (a resource that refuses what its server signed).
    pub refuse_access_tokens: bool,
    /// `--metadata-bytes N`: the authorization server metadata is N bytes of JSON,
    /// padded with a member `x_padding` (at least its shortest length): a client's
    /// limit on the documents of a sign-in, at its edge.
    pub metadata_bytes: Option<usize>,
    /// `--code-bytes N`: each authorization code is N characters long (random, then
    /// `x`s), as the long codes of some identity providers: the redirect to a
    /// client's callback carries a request head of that size.
    pub code_bytes: Option<usize>,
    /// `--registration-secret`: `/register` gives every client a `client_secret`,
    /// also one that asked for `token_endpoint_auth_method` `none` (a server that
    /// makes each client confidential); its token endpoint then requires it.
    pub registration_secret: bool,
    /// `--loopback-url ROLE`: the URL of ROLE is on `127.0.0.1` (this server, by its
    /// address) in place of the server's own host: a client must refuse it when it
    /// reached the server by a name that is not loopback (`--host`).
    pub loopback_urls: Vec<LoopbackRole>,
    /// `--moved PATH`: a request of PATH gets 307 with `Location: /moved<PATH>`,
    /// which serves what PATH would: a client of the sign-in must not follow it.
    pub moved: Vec<String>,
    /// `--hostile-redirect-after N`: the first N approvals redirect as they should,
    /// and only the later ones as `--hostile-redirect` says (a step-up after a
    /// sign-in).
    pub hostile_redirect_after: u64,
}

/// The URLs that `--loopback-url` moves to `127.0.0.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopbackRole {
    /// `resource-metadata`: the `resource_metadata` of each challenge.
    ResourceMetadata,
    /// `authorization-server`: the authorization server of the protected resource
    /// metadata (the issuer of this server, by its address).
    AuthorizationServer,
    /// `token-endpoint`: the `token_endpoint` of the metadata.
    TokenEndpoint,
    /// `refresh-token-endpoint`: the `token_endpoint` of the metadata once a code
    /// was redeemed, so that only a refresh sees it.
    RefreshTokenEndpoint,
    /// `registration-endpoint`: the `registration_endpoint` of the metadata.
    RegistrationEndpoint,
}

/// The prefix of the paths of `--moved`.
pub const MOVED_PREFIX: &str = "/moved";

/// The `authorization_endpoint`s of a hostile server: each would run a command, or
/// open something else than a web page, in an opener that trusts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostileEndpoint {
    /// `shell`: shell metacharacters that create the marker file
    /// [`HostileEndpoint::marker`] when a shell reads the URL.
    Shell,
    /// `javascript`: `javascript:alert(1)`.
    Javascript,
    /// `file`: `file:///etc/passwd`.
    File,
    /// `too-long`: an https endpoint of 8 KiB and one byte, longer than a client
    /// may write to a terminal or a log line as one token.
    TooLong,
    /// `fragment`: `https://127.0.0.1:PORT/authorize#top`: a fragment, which no
    /// authorization endpoint may have (RFC 6749 §3.1).
    Fragment,
    /// `bad-percent`: a query with a valid escape and then `%zz`, which is none.
    BadPercent,
    /// `loopback`: `https://127.0.0.1:PORT/authorize`, which a client must refuse
    /// for a server that is not itself on a loopback host (one reached by name
    /// through a proxy): it would send the browser to whatever listens on that
    /// port of the user's own machine.
    Loopback,
}

/// The largest `--metadata-bytes`: 16 MiB, well past any client's limit.
pub const MAX_METADATA_BYTES: u64 = 16 << 20;

/// The largest `--code-bytes`: 64 KiB, past the head that a client's callback reads.
pub const MAX_CODE_BYTES: u64 = 64 << 10;

/// The length of the endpoint of `too-long`: one byte over 8 KiB.
pub const TOO_LONG_ENDPOINT_BYTES: usize = 8 * 1024 + 1;

impl HostileEndpoint {
    /// The file that the shell payload of a server at `port` creates: a test
    /// asserts that it does not exist.
    pub fn marker(port: u16) -> String {
        format!("/tmp/bridge-fixture-pwned-{port}")
    }

    /// The endpoint of a server at `port`.
    pub fn url(self, port: u16) -> String {
        match self {
            Self::Shell => {
                let marker = Self::marker(port);
                format!(
                    "https://127.0.0.1:{port}/authorize;touch${{IFS}}{marker};$(touch${{IFS}}{marker})"
                )
            }
            Self::Javascript => "javascript:alert(1)".into(),
            Self::File => "file:///etc/passwd".into(),
            Self::TooLong => {
                let start = format!("https://127.0.0.1:{port}/authorize?pad=");
                let pad = TOO_LONG_ENDPOINT_BYTES.saturating_sub(start.len());
                format!("{start}{}", "a".repeat(pad))
            }
            Self::Loopback => format!("https://127.0.0.1:{port}/authorize"),
            Self::Fragment => format!("https://127.0.0.1:{port}/authorize#top"),
            Self::BadPercent => format!("https://127.0.0.1:{port}/authorize?tenant=a%41%zz"),
        }
    }
}

/// The redirects of a hostile (or broken) server after the approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostileRedirect {
    /// `wrong-iss`: an `iss` (RFC 9207) of another issuer.
    WrongIss,
    /// `no-iss`: no `iss`, though the metadata announces it (RFC 9207 §2.4: the
    /// redirect may come from another server).
    NoIss,
    /// `slash-iss`: the issuer with a slash more, which RFC 9207 §2.4 compares as
    /// another issuer.
    SlashIss,
    /// `wrong-state`: a `state` other than the request's.
    WrongState,
    /// `replayed-code`: a code that was already redeemed (as by another program
    /// that got it first), which `/token` refuses with `invalid_grant`.
    ReplayedCode,
}

/// The issuer that `wrong-iss` names (also with `--no-iss`: a server that sends
/// an `iss` that its metadata does not announce).
pub const WRONG_ISSUER: &str = "https://issuer.invalid";

impl Default for AuthOptions {
    fn default() -> AuthOptions {
        AuthOptions {
            enabled: false,
            registration: true,
            cimd: false,
            ca_file: None,
            deny: false,
            deny_with: None,
            iss: true,
            forget_clients: false,
            token_lifetime: DEFAULT_TOKEN_LIFETIME,
            refresh_tokens: true,
            invalid_grant: false,
            refresh_error: None,
            token_type: "Bearer".into(),
            hostile_endpoint: None,
            hostile_redirect: None,
            prm_authorization_server: None,
            prm_resource_host: None,
            prm_resource_port: None,
            prm_elsewhere: false,
            quoted_description: false,
            cimd_documents: Vec::new(),
            separate_origin: false,
            step_up_new_scope_only: false,
            challenge_without_scope: false,
            resource_query: None,
            authorization_query: None,
            client_secret_post_only: false,
            listen_needs_write: false,
            refuse_registration: false,
            refuse_registration_with: None,
            refuse_access_tokens: false,
            metadata_bytes: None,
            code_bytes: None,
            registration_secret: false,
            loopback_urls: Vec::new(),
            moved: Vec::new(),
            hostile_redirect_after: 0,
        }
    }
}

impl AuthOptions {
    /// Whether an option other than `--auth` was given.
    pub fn has_sub_options(&self) -> bool {
        AuthOptions {
            enabled: false,
            ..self.clone()
        } != AuthOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_endpoint_would_create_its_marker_in_a_shell() {
        assert_eq!(
            HostileEndpoint::Shell.url(8443),
            "https://127.0.0.1:8443/authorize;touch${IFS}/tmp/bridge-fixture-pwned-8443;$(touch${IFS}/tmp/bridge-fixture-pwned-8443)"
        );
        assert_eq!(HostileEndpoint::File.url(1), "file:///etc/passwd");
        assert_eq!(
            HostileEndpoint::Loopback.url(8443),
            "https://127.0.0.1:8443/authorize"
        );
        assert_eq!(
            HostileEndpoint::TooLong.url(8443).len(),
            TOO_LONG_ENDPOINT_BYTES
        );
    }
}
