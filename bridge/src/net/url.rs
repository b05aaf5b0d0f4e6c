//! Which URLs may leave the bridge, by their host and scheme: the one definition of
//! a loopback host, for the URL of the upstream server (the contract's "The URL
//! form"), the URLs of the sign-in, the URLs that VS Code gets to open (the quirk
//! table: VS Code opens a URL of any scheme), and the hosts that never use a proxy.

use url::{Host, Url};

/// `localhost`, a name that ends in `.localhost` (a trailing dot included),
/// 127.0.0.0/8, `[::1]`, and 127.0.0.0/8 as an IPv4-mapped IPv6 address.
pub fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(domain) => {
            let domain = domain.to_ascii_lowercase();
            let domain = domain.trim_end_matches('.');
            domain == "localhost" || domain.ends_with(".localhost")
        }
        Host::Ipv4(address) => address.is_loopback(),
        Host::Ipv6(address) => {
            address.is_loopback() || address.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
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

/// The hosts that never use a proxy, whatever `NO_PROXY` says (Q10), in the form of
/// `NO_PROXY`: the loopback hosts of [`is_loopback_host`].
pub const LOOPBACK_NO_PROXY: &str = "localhost,.localhost,127.0.0.0/8,::1,::ffff:127.0.0.0/104";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_the_names_and_addresses_of_this_machine_only() {
        for url in [
            "http://localhost/",
            "http://LOCALHOST./",
            "http://a.localhost:8/",
            "http://127.0.0.1/",
            "http://127.9.9.9/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://localhost.example/",
            "http://128.0.0.1/",
            "http://[::2]/",
            "http://[::ffff:10.0.0.1]/",
            "http://0.0.0.0/",
            "file:///etc/hosts",
        ] {
            assert!(!is_loopback(&Url::parse(url).unwrap()), "{url}");
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
