//! Which URLs may leave the bridge, by their host and scheme: the one definition of
//! a loopback host, for the URL of the upstream server (the contract's "The URL
//! form"), the URLs of the sign-in, the URLs that VS Code gets to open (the quirk
//! table: VS Code opens a URL of any scheme), and the hosts that never use a proxy.

use url::{Host, Url};

/// `localhost`, a name that ends in `.localhost` (each with one trailing dot or
/// none, in any case), 127.0.0.0/8, `[::1]`, and 127.0.0.0/8 as an IPv4-mapped
/// IPv6 address. The URL rule of the upstream, the rule of the sign-in's URLs and
/// the proxy's exceptions all ask this one function.
pub fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(domain) => is_loopback_name(domain),
        Host::Ipv4(address) => address.is_loopback(),
        Host::Ipv6(address) => {
            address.is_loopback() || address.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// `localhost` or a name under it (RFC 6761 §6.3), with one trailing dot or none,
/// in any case: the names that the bridge answers itself with loopback addresses
/// and never asks a resolver for.
pub fn is_loopback_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    name == "localhost"
        || name
            .strip_suffix(".localhost")
            .is_some_and(|labels| labels.split('.').all(|label| !label.is_empty()))
}

/// Whether the host of `url` is a loopback host.
pub fn is_loopback(url: &Url) -> bool {
    url.host().as_ref().is_some_and(is_loopback_host)
}

/// https to any host, or http to a loopback host: what may cross a network.
pub fn is_https_or_loopback_http(url: &Url) -> bool {
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => is_loopback(url),
        _ => false,
    }
}

/// Text that a parser could read two ways: a backslash, white space or a control
/// character.
pub fn has_ambiguous_characters(text: &str) -> bool {
    text.contains('\\') || text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A URL that VS Code may get to open (the quirk table): https, or http to a
/// loopback host, without user information and without [ambiguous
/// characters](has_ambiguous_characters).
pub fn url_is_safe(text: &str) -> bool {
    if has_ambiguous_characters(text) {
        return false;
    }
    let Ok(url) = Url::parse(text) else {
        return false;
    };
    url.username().is_empty() && url.password().is_none() && is_https_or_loopback_http(&url)
}

/// Every spelling of a loopback host that a URL may have, for the tests of each
/// rule that asks [`is_loopback_host`]: the upstream's URL, the sign-in's URLs and
/// the proxy's exceptions.
#[cfg(test)]
pub(crate) const LOOPBACK_SPELLINGS: [&str; 14] = [
    "localhost",
    "localhost.",
    "LOCALHOST",
    "LocalHost.",
    "mcp.localhost",
    "mcp.localhost.",
    "X.LOCALHOST",
    "a.b.localhost.",
    "127.0.0.1",
    "127.9.9.9",
    "127.1",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "[::ffff:127.0.0.1]",
];

/// Hosts that look like a loopback host, and are not.
#[cfg(test)]
pub(crate) const NOT_LOOPBACK: [&str; 7] = [
    "localhost.example",
    "localhost..",
    "notlocalhost",
    "128.0.0.1",
    "[::2]",
    "[::ffff:10.0.0.1]",
    "0.0.0.0",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_the_names_and_addresses_of_this_machine_only() {
        for host in LOOPBACK_SPELLINGS {
            let url = format!("http://{host}:8/");
            assert!(is_loopback(&Url::parse(&url).unwrap()), "{url}");
        }
        for host in NOT_LOOPBACK {
            let url = format!("http://{host}/");
            assert!(!is_loopback(&Url::parse(&url).unwrap()), "{url}");
        }
        assert!(!is_loopback(&Url::parse("file:///etc/hosts").unwrap()));
        for name in [".localhost", "a..localhost", "localhost..", ""] {
            assert!(!is_loopback_name(name), "{name}");
        }
    }

    #[test]
    fn a_url_for_vs_code_is_https_or_loopback_http_without_user_information_or_odd_characters() {
        for url in [
            "https://example.com/a?b=c",
            "http://127.0.0.1:8/x",
            "http://localhost/",
        ] {
            assert!(url_is_safe(url), "{url}");
        }
        for url in [
            "http://example.com/",
            "file:///etc/passwd",
            "vscode://x",
            "command:workbench.action.quit",
            "https://user:pw@example.com/",
            "https://example.com/a b",
            "https://example.com\\@evil.example/",
            "https://example.com/\u{7}",
            "not a url",
        ] {
            assert!(!url_is_safe(url), "{url}");
        }
    }
}
