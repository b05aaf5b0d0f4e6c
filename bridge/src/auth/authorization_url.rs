//! The authorization URL of a sign-in: made from the authorization server's
//! `authorization_endpoint` and the request's parameters, and checked before the
//! bridge writes it or lets anything open it. The endpoint comes from a server,
//! and the URL reaches a browser, VS Code's URL elicitation and the Output
//! channel: it must be a plain https URL (or http to a loopback host), nothing a
//! shell, a terminal or a browser could read as anything else.

use crate::rules::input::url_is_safe;
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
}

/// The authorization URL for `request` at `endpoint` (the parameters of the
/// endpoint itself stay, RFC 6749 §3.1), checked by [`check`].
pub fn build(endpoint: &str, request: &AuthorizationRequest<'_>) -> Result<Url, UnsafeUrl> {
    check_text(endpoint)?;
    let mut url = Url::parse(endpoint).map_err(|_| UnsafeUrl::Scheme)?;
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
/// scheme and host, a `state`, and the redirect URI of the bridge.
pub fn check(text: &str, redirect_uri: &str) -> Result<(), UnsafeUrl> {
    check_text(text)?;
    let url = Url::parse(text).map_err(|_| UnsafeUrl::Scheme)?;
    let mut state = false;
    let mut redirect = None;
    for (name, value) in url.query_pairs() {
        match name.as_ref() {
            "state" => state |= !value.is_empty(),
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

/// The rules on the text alone, and on scheme, host and fragment.
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
    if !url_is_safe(text) {
        return Err(UnsafeUrl::Scheme);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIRECT: &str = "http://127.0.0.1:41894/callback";

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
        let url = build("https://as.example.com/authorize?tenant=a", &request()).unwrap();
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
        let url = build("http://127.0.0.1:9/authorize", &without_scope).unwrap();
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
            assert_eq!(build(endpoint, &request()).err(), Some(error), "{endpoint}");
        }
        let long = format!(
            "https://as.example.com/{}",
            "a".repeat(MAX_AUTHORIZATION_URL_BYTES)
        );
        assert_eq!(build(&long, &request()).err(), Some(UnsafeUrl::TooLong));
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
