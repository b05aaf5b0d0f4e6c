//! The authorization URL of a sign-in: made from the authorization server's
//! `authorization_endpoint` and the request's parameters, and checked before the
//! bridge writes it or lets anything open it. The endpoint comes from a server,
//! and the URL reaches a browser, VS Code's URL elicitation and the Output
//! channel: it must be a plain https URL (or http to a loopback host) under the
//! rule of every URL of the sign-in ([`sign_in_url`]), that a terminal or a
//! browser cannot read as anything else, and whose parameters are the bridge's
//! alone: an endpoint that brings its own `client_id`, `redirect_uri` or `state`
//! would have a browser or a server read one of two values.

use super::sign_in_url::{self, RefusedUrl, Role};
use url::Url;

/// The most a URL may have.
pub const MAX_AUTHORIZATION_URL_BYTES: usize = 8 * 1024;

/// What one authorization request asks for.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub code_challenge: &'a str,
    pub state: &'a str,
    /// The canonical URI of the MCP server (RFC 8707).
    pub resource: &'a str,
    pub scope: Option<&'a str>,
}

/// Why an authorization URL is refused. The text goes into the line
/// "the authorization URL is not valid (<error>), thus the bridge does not open it".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsafeUrl {
    #[error("it is longer than 8 KiB")]
    TooLong,
    #[error("it has a character that a URL does not have")]
    Character,
    #[error("it has a % that is not followed by two hexadecimal digits")]
    Percent,
    #[error("it is not an https URL, or an http URL of a loopback host")]
    Scheme,
    #[error("it has a fragment")]
    Fragment,
    #[error("it has user information before the host")]
    UserInformation,
    #[error("it has no state")]
    NoState,
    #[error("its redirect URI is not the redirect URI of the bridge")]
    RedirectUri,
    #[error("it is on a loopback host, but the upstream server is not")]
    LoopbackHost,
    #[error("the authorization endpoint already has the parameter {0}")]
    EndpointParameter(&'static str),
    #[error("it has the parameter {0} more than once")]
    RepeatedParameter(&'static str),
    #[error("its query has a semicolon, which a server may read as a separator of parameters")]
    Semicolon,
}

/// The parameters that the bridge sets, each exactly once (`scope` at most once),
/// compared without case: a server may read `REDIRECT_URI` as `redirect_uri`.
const PARAMETERS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

/// The authorization URL for `request` at `endpoint` of the authorization server
/// of the upstream server at `upstream`: the parameters of the endpoint itself
/// stay (RFC 6749 §3.1), unless one of them is a parameter that the bridge sets.
/// Checked by [`check`].
pub fn build(
    endpoint: &str,
    request: &AuthorizationRequest<'_>,
    upstream: &Url,
) -> Result<Url, UnsafeUrl> {
    check_text(endpoint)?;
    let mut url =
        sign_in_url::check(endpoint, Role::AuthorizationEndpoint, upstream).map_err(|refused| {
            match refused {
                RefusedUrl::LoopbackHost(..) => UnsafeUrl::LoopbackHost,
                RefusedUrl::UserInformation(..) => UnsafeUrl::UserInformation,
                RefusedUrl::Fragment(..) => UnsafeUrl::Fragment,
                _ => UnsafeUrl::Scheme,
            }
        })?;
    check_separators(&url)?;
    for (name, _) in url.query_pairs() {
        if let Some(parameter) = parameter_of(&name) {
            return Err(UnsafeUrl::EndpointParameter(parameter));
        }
    }
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", request.client_id)
            .append_pair("redirect_uri", request.redirect_uri)
            .append_pair("code_challenge", request.code_challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", request.state)
            .append_pair("resource", request.resource);
        if let Some(scope) = request.scope {
            query.append_pair("scope", scope);
        }
    }
    check(url.as_str(), request.redirect_uri)?;
    Ok(url)
}

/// Checks an authorization URL before it is written or opened: its text, its
/// scheme and host, each parameter of the bridge at most once, a `state`, and the
/// redirect URI of the bridge.
pub fn check(text: &str, redirect_uri: &str) -> Result<(), UnsafeUrl> {
    check_text(text)?;
    let url = Url::parse(text).map_err(|_| UnsafeUrl::Scheme)?;
    check_separators(&url)?;
    let mut seen = [0usize; PARAMETERS.len()];
    let mut state = false;
    let mut redirect = None;
    for (name, value) in url.query_pairs() {
        let Some(parameter) = parameter_of(&name) else {
            continue;
        };
        if let Some(count) = PARAMETERS
            .iter()
            .position(|known| *known == parameter)
            .and_then(|index| seen.get_mut(index))
        {
            *count += 1;
            if *count > 1 {
                return Err(UnsafeUrl::RepeatedParameter(parameter));
            }
        }
        match parameter {
            "state" => state = !value.is_empty(),
            "redirect_uri" => redirect = Some(value.into_owned()),
            _ => {}
        }
    }
    if !state {
        return Err(UnsafeUrl::NoState);
    }
    if redirect.as_deref() != Some(redirect_uri) {
        return Err(UnsafeUrl::RedirectUri);
    }
    Ok(())
}

/// The parameter of the bridge that `name` names, in any case.
fn parameter_of(name: &str) -> Option<&'static str> {
    PARAMETERS
        .iter()
        .copied()
        .find(|parameter| parameter.eq_ignore_ascii_case(name))
}

/// A query separated by `&` alone: some servers also split on `;` (the HTML 4
/// recommendation), so `?t=1;redirect_uri=...` would carry a second redirect URI
/// past a check that splits on `&`. The bridge's own values never have a bare `;`
/// (it encodes them).
fn check_separators(url: &Url) -> Result<(), UnsafeUrl> {
    if url.query().is_some_and(|query| query.contains(';')) {
        return Err(UnsafeUrl::Semicolon);
    }
    Ok(())
}

/// What this check guarantees of `text`, and nothing more: at most 8 KiB; only
/// printable ASCII without the space and without the characters
/// `"` `<` `>` `\` `^` `{` `|` `}` and the backtick; each `%` followed by two
/// hexadecimal digits; a URL without a fragment and without user information,
/// with https, or http to a loopback host. So the text is one token to a
/// terminal, to a browser and to VS Code, and cannot end a line of the Output
/// channel. It is not made safe for a shell, and need not be: no shell ever
/// reads it (the browser opener gets only the start URL, as one argument of a
/// process started without a shell).
fn check_text(text: &str) -> Result<(), UnsafeUrl> {
    if text.len() > MAX_AUTHORIZATION_URL_BYTES {
        return Err(UnsafeUrl::TooLong);
    }
    let bytes = text.as_bytes();
    if bytes.is_empty()
        || bytes
            .iter()
            .any(|&b| !(0x21..=0x7e).contains(&b) || b"\"<>\\^`{|}".contains(&b))
    {
        return Err(UnsafeUrl::Character);
    }
    let mut rest = bytes;
    while let Some(position) = rest.iter().position(|&b| b == b'%') {
        let digits = rest.get(position + 1..position + 3);
        if !digits.is_some_and(|d| d.iter().all(u8::is_ascii_hexdigit)) {
            return Err(UnsafeUrl::Percent);
        }
        rest = rest.get(position + 3..).unwrap_or_default();
    }
    if text.contains('#') {
        return Err(UnsafeUrl::Fragment);
    }
    let url = Url::parse(text).map_err(|_| UnsafeUrl::Scheme)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UnsafeUrl::UserInformation);
    }
    if !crate::net::url::is_https_or_loopback_http(&url) {
        return Err(UnsafeUrl::Scheme);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIRECT: &str = "http://127.0.0.1:41894/callback";

    fn upstream() -> Url {
        Url::parse("https://mcp.example.com/mcp").unwrap()
    }

    fn request() -> AuthorizationRequest<'static> {
        AuthorizationRequest {
            client_id: "client 1",
            redirect_uri: REDIRECT,
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            state: "s1",
            resource: "https://mcp.example.com/mcp",
            scope: Some("mcp:read mcp:write"),
        }
    }

    #[test]
    fn the_url_has_every_parameter_of_the_code_flow_with_pkce() {
        let url = build(
            "https://as.example.com/authorize?tenant=a",
            &request(),
            &upstream(),
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://as.example.com/authorize?tenant=a&response_type=code&client_id=client+1\
             &redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback\
             &code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256\
             &state=s1&resource=https%3A%2F%2Fmcp.example.com%2Fmcp&scope=mcp%3Aread+mcp%3Awrite"
        );
        let without_scope = AuthorizationRequest {
            scope: None,
            ..request()
        };
        let local = Url::parse("http://127.0.0.1:8/mcp").unwrap();
        let url = build("http://127.0.0.1:9/authorize", &without_scope, &local).unwrap();
        assert!(!url.as_str().contains("scope="));
    }

    #[test]
    fn endpoints_that_a_browser_or_a_shell_could_misread_are_refused() {
        let cases = [
            ("", UnsafeUrl::Character),
            ("https://as.example.com/a b", UnsafeUrl::Character),
            (
                "https://as.example.com/a;$(rm -rf ~)`x`",
                UnsafeUrl::Character,
            ),
            ("https://as.example.com/a|b", UnsafeUrl::Character),
            ("https://as.example.com/a\"b", UnsafeUrl::Character),
            ("https://as.example.com/é", UnsafeUrl::Character),
            ("https://as.example.com/%zz", UnsafeUrl::Percent),
            ("https://as.example.com/%4", UnsafeUrl::Percent),
            ("javascript:alert(1)", UnsafeUrl::Scheme),
            ("file:///etc/passwd", UnsafeUrl::Scheme),
            ("vscode://x/y", UnsafeUrl::Scheme),
            ("http://as.example.com/authorize", UnsafeUrl::Scheme),
            ("https://as.example.com/authorize#x", UnsafeUrl::Fragment),
            (
                "https://user@as.example.com/authorize",
                UnsafeUrl::UserInformation,
            ),
            ("https://as.example.com:99999/authorize", UnsafeUrl::Scheme),
        ];
        for (endpoint, error) in cases {
            assert_eq!(
                build(endpoint, &request(), &upstream()).err(),
                Some(error),
                "{endpoint}"
            );
        }
        let long = format!(
            "https://as.example.com/{}",
            "a".repeat(MAX_AUTHORIZATION_URL_BYTES)
        );
        assert_eq!(
            build(&long, &request(), &upstream()).err(),
            Some(UnsafeUrl::TooLong)
        );
        assert_eq!(
            build("http://127.0.0.1:9/authorize", &request(), &upstream()).err(),
            Some(UnsafeUrl::LoopbackHost)
        );
    }

    #[test]
    fn a_url_of_exactly_8_kib_is_not_too_long() {
        let start = "https://as.example.com/";
        let at_the_limit = format!(
            "{start}{}",
            "a".repeat(MAX_AUTHORIZATION_URL_BYTES - start.len())
        );
        assert_eq!(check_text(&at_the_limit), Ok(()));
        assert_eq!(
            check_text(&format!("{at_the_limit}a")),
            Err(UnsafeUrl::TooLong)
        );
    }

    #[test]
    fn an_endpoint_with_a_parameter_of_the_bridge_is_refused() {
        for parameter in PARAMETERS {
            let endpoint = format!("https://as.example.com/authorize?tenant=a&{parameter}=x");
            assert_eq!(
                build(&endpoint, &request(), &upstream()).err(),
                Some(UnsafeUrl::EndpointParameter(parameter)),
                "{endpoint}"
            );
        }
    }

    #[test]
    fn an_endpoint_parameter_of_the_bridge_in_another_case_or_after_a_semicolon_is_refused() {
        for parameter in ["REDIRECT_URI", "Client_Id", "STATE", "Scope"] {
            let endpoint = format!("https://as.example.com/authorize?{parameter}=x");
            let expected = parameter_of(parameter).unwrap();
            assert_eq!(
                build(&endpoint, &request(), &upstream()).err(),
                Some(UnsafeUrl::EndpointParameter(expected)),
                "{endpoint}"
            );
        }
        for endpoint in [
            "https://as.example.com/authorize?t=1;redirect_uri=http%3A%2F%2Fevil.example",
            "https://as.example.com/authorize?t=1;x=2",
            "https://as.example.com/authorize?;",
        ] {
            assert_eq!(
                build(endpoint, &request(), &upstream()).err(),
                Some(UnsafeUrl::Semicolon),
                "{endpoint}"
            );
        }
        // A semicolon in the path is no separator of the query.
        assert!(
            build(
                "https://as.example.com/a;b/authorize",
                &request(),
                &upstream()
            )
            .is_ok()
        );
        assert_eq!(
            check(
                "https://as.example.com/a?state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback&REDIRECT_URI=http%3A%2F%2Fevil.example",
                REDIRECT
            ),
            Err(UnsafeUrl::RepeatedParameter("redirect_uri"))
        );
        assert_eq!(
            check(
                "https://as.example.com/a?state=x;redirect_uri=y&redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback",
                REDIRECT
            ),
            Err(UnsafeUrl::Semicolon)
        );
    }

    #[test]
    fn a_url_with_a_parameter_of_the_bridge_twice_is_refused() {
        assert_eq!(
            check(
                "https://as.example.com/a?state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback&state=y",
                REDIRECT
            ),
            Err(UnsafeUrl::RepeatedParameter("state"))
        );
        assert_eq!(
            check(
                "https://as.example.com/a?client_id=a&state=x&client_id=b&redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback",
                REDIRECT
            ),
            Err(UnsafeUrl::RepeatedParameter("client_id"))
        );
    }

    #[test]
    fn a_url_without_state_or_with_another_redirect_uri_is_refused() {
        assert_eq!(
            check(
                "https://as.example.com/a?redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback",
                REDIRECT
            ),
            Err(UnsafeUrl::NoState)
        );
        assert_eq!(
            check(
                "https://as.example.com/a?state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback",
                REDIRECT
            ),
            Err(UnsafeUrl::RedirectUri)
        );
        assert_eq!(
            check(
                "https://as.example.com/a?state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A41894%2Fcallback",
                REDIRECT
            ),
            Ok(())
        );
    }
}
