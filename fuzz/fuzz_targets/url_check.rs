//! The URL rule of URL elicitations (quirk table): only https, or http to a
//! loopback host, without a backslash, user information, whitespace or control
//! characters. Whatever passes must keep these properties when parsed again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge_vscode::internals::net::url::url_is_safe;

fuzz_target!(|text: &str| {
    for candidate in [
        text.to_owned(),
        format!("https://{text}"),
        format!("http://{text}"),
        format!("http://localhost{text}"),
        format!("http://127.0.0.1{text}"),
    ] {
        if !url_is_safe(&candidate) {
            continue;
        }
        assert!(!candidate.contains('\\'));
        assert!(
            !candidate
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        );
        let url = url::Url::parse(&candidate).expect("a safe URL parses");
        assert!(url.username().is_empty() && url.password().is_none());
        match url.scheme() {
            "https" => assert!(url.host().is_some()),
            "http" => {
                let loopback = match url.host() {
                    Some(url::Host::Domain(domain)) => {
                        let domain = domain.to_ascii_lowercase();
                        domain == "localhost" || domain.ends_with(".localhost")
                    }
                    Some(url::Host::Ipv4(address)) => address.is_loopback(),
                    Some(url::Host::Ipv6(address)) => address.is_loopback(),
                    None => false,
                };
                assert!(
                    loopback,
                    "http to a host that is not a loopback host: {candidate}"
                );
            }
            scheme => panic!("the scheme {scheme} passed: {candidate}"),
        }
        // What VS Code gets parses to the same URL again.
        assert_eq!(url::Url::parse(url.as_str()).ok().as_ref(), Some(&url));
    }
});
