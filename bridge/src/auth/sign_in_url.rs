//! The one rule for every URL that the sign-in fetches, posts to or opens: the
//! `resource_metadata` of a challenge, the authorization server and its
//! authorization, token and registration endpoints, and a client ID metadata
//! document.
//!
//! Servers name these URLs, so a hostile upstream or a hostile party on the path
//! chooses them. The rule:
//!
//! - https, or http to a loopback host (plain http elsewhere lets anyone on the
//!   path swap the document that chooses the authorization server, or read what
//!   goes to it);
//! - no user information, no fragment, no white space, control character or
//!   backslash (text that a parser could read two ways);
//! - a host of this machine (a loopback host, or an unspecified address, which
//!   reaches this machine too) only when the upstream server is itself on a
//!   loopback host: a remote upstream must not send the bridge, or the browser,
//!   onto the services of the user's machine.
//!
//! It depends on nothing of the link: a URL in, the URL of the upstream server for
//! the context, the parsed URL or the reason out.

use crate::net::url::{has_ambiguous_characters, is_https_or_loopback_http, is_loopback};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// Which URL of the sign-in, for the reason of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The `resource_metadata` of a `WWW-Authenticate` challenge (RFC 9728 §5.1).
    ResourceMetadata,
    /// An authorization server of the protected resource metadata (its issuer).
    AuthorizationServer,
    AuthorizationEndpoint,
    TokenEndpoint,
    RegistrationEndpoint,
    /// A client ID metadata document: `--client-metadata-url`, or the bridge's.
    ClientMetadataDocument,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ResourceMetadata => "the resource_metadata of the challenge",
            Self::AuthorizationServer => "the authorization server",
            Self::AuthorizationEndpoint => "the authorization endpoint",
            Self::TokenEndpoint => "the token endpoint",
            Self::RegistrationEndpoint => "the registration endpoint",
            Self::ClientMetadataDocument => "the client ID metadata document",
        })
    }
}

/// Why a URL of the sign-in is refused. The text names the URL by its origin
/// only: a query is nobody's business in a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RefusedUrl {
    #[error("{0} is not a URL")]
    NotUrl(Role),
    #[error("{0} ({1}) does not use https")]
    NotHttps(Role, String),
    #[error("{0} ({1}) has user information")]
    UserInformation(Role, String),
    #[error("{0} ({1}) has a fragment")]
    Fragment(Role, String),
    #[error("{0} ({1}) is on a loopback host, but the upstream server is not")]
    LoopbackHost(Role, String),
}

/// Checks `text`, a URL of the sign-in in the `role`, for the upstream server at
/// `upstream`; the parsed URL.
pub fn check(text: &str, role: Role, upstream: &Url) -> Result<Url, RefusedUrl> {
    if has_ambiguous_characters(text) {
        return Err(RefusedUrl::NotUrl(role));
    }
    let url = Url::parse(text).map_err(|_| RefusedUrl::NotUrl(role))?;
    let origin = origin_of(&url);
    if !url.username().is_empty() || url.password().is_some() {
        return Err(RefusedUrl::UserInformation(role, origin));
    }
    if url.fragment().is_some() {
        return Err(RefusedUrl::Fragment(role, origin));
    }
    if !is_https_or_loopback_http(&url) {
        return Err(RefusedUrl::NotHttps(role, origin));
    }
    if reaches_this_machine(&url) && !is_loopback(upstream) {
        return Err(RefusedUrl::LoopbackHost(role, origin));
    }
    Ok(url)
}

/// A loopback host, or an unspecified address (`0.0.0.0`, `[::]`), which a
/// connection takes to this machine as well.
fn reaches_this_machine(url: &Url) -> bool {
    let unspecified = match url.host() {
        Some(Host::Ipv4(address)) => address == Ipv4Addr::UNSPECIFIED,
        Some(Host::Ipv6(address)) => {
            address == Ipv6Addr::UNSPECIFIED
                || address.to_ipv4_mapped() == Some(Ipv4Addr::UNSPECIFIED)
        }
        _ => false,
    };
    unspecified || is_loopback(url)
}

/// `scheme://host[:port]`, or `scheme:` for a URL without a host.
fn origin_of(url: &Url) -> String {
    match url.host_str() {
        Some(host) => match url.port() {
            Some(port) => format!("{}://{host}:{port}", url.scheme()),
            None => format!("{}://{host}", url.scheme()),
        },
        None => format!("{}:", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    const LOCAL: &str = "http://127.0.0.1:8080/mcp";
    const REMOTE: &str = "https://mcp.example.com/mcp";

    #[test]
    fn https_passes_for_any_upstream_and_plain_http_only_on_loopback() {
        for role in [Role::ResourceMetadata, Role::TokenEndpoint] {
            for upstream in [LOCAL, REMOTE] {
                assert!(check("https://as.example.com/x?a=1", role, &url(upstream)).is_ok());
            }
            assert_eq!(
                check("http://as.example.com/token", role, &url(LOCAL)),
                Err(RefusedUrl::NotHttps(role, "http://as.example.com".into()))
            );
            assert!(check("http://localhost:9/x", role, &url(LOCAL)).is_ok());
            assert!(check("http://a.localhost/x", role, &url(LOCAL)).is_ok());
            assert!(check("http://[::1]:9/x", role, &url(LOCAL)).is_ok());
            assert!(check("http://127.9.9.9/x", role, &url(LOCAL)).is_ok());
        }
    }

    #[test]
    fn every_spelling_of_a_loopback_host_is_one_of_this_machine() {
        use crate::net::url::{LOOPBACK_SPELLINGS, NOT_LOOPBACK};
        let role = Role::TokenEndpoint;
        for host in LOOPBACK_SPELLINGS {
            let text = format!("http://{host}:9/token");
            assert!(check(&text, role, &url(LOCAL)).is_ok(), "{text}");
            assert!(
                matches!(
                    check(&text, role, &url(REMOTE)),
                    Err(RefusedUrl::LoopbackHost(..))
                ),
                "{text}"
            );
            let upstream = url(&format!("http://{host}:8/mcp"));
            assert!(
                check(&text, role, &upstream).is_ok(),
                "{text} for {upstream}"
            );
        }
        for host in NOT_LOOPBACK.iter().filter(|host| **host != "0.0.0.0") {
            let text = format!("http://{host}:9/token");
            assert!(
                matches!(
                    check(&text, role, &url(LOCAL)),
                    Err(RefusedUrl::NotHttps(..))
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn a_remote_upstream_may_not_name_a_host_of_this_machine() {
        let role = Role::AuthorizationServer;
        for local in [
            "http://127.0.0.1:9",
            "https://127.0.0.1:9",
            "https://localhost",
            "https://x.localhost",
            "https://[::1]",
            "https://[::ffff:127.0.0.1]",
            "https://0.0.0.0:9",
            "https://[::]:9",
        ] {
            let refused = check(local, role, &url(REMOTE));
            assert!(
                matches!(
                    refused,
                    Err(RefusedUrl::LoopbackHost(Role::AuthorizationServer, _))
                ),
                "{local}: {refused:?}"
            );
        }
        assert_eq!(
            check("http://127.0.0.1:9", role, &url(REMOTE))
                .unwrap_err()
                .to_string(),
            "the authorization server (http://127.0.0.1:9) is on a loopback host, but the upstream server is not"
        );
        assert!(check("https://localhost:9", role, &url("https://localhost/mcp")).is_ok());
    }

    #[test]
    fn text_that_a_parser_could_read_two_ways_is_refused() {
        let role = Role::RegistrationEndpoint;
        let upstream = url(REMOTE);
        for (text, expected) in [
            ("not a url", RefusedUrl::NotUrl(role)),
            ("https://as.example.com/a\tb", RefusedUrl::NotUrl(role)),
            (
                "https://as.example.com\\@evil.example",
                RefusedUrl::NotUrl(role),
            ),
            (
                "https://user:pw@as.example.com/r",
                RefusedUrl::UserInformation(role, "https://as.example.com".into()),
            ),
            (
                "https://as.example.com/r#x",
                RefusedUrl::Fragment(role, "https://as.example.com".into()),
            ),
            (
                "javascript:alert(1)",
                RefusedUrl::NotHttps(role, "javascript:".into()),
            ),
            (
                "ftp://as.example.com/r",
                RefusedUrl::NotHttps(role, "ftp://as.example.com".into()),
            ),
        ] {
            assert_eq!(check(text, role, &upstream), Err(expected), "{text}");
        }
    }
}
