//! The HTTP client of the URL form: rustls with the system's CA certificates and
//! those of `--ca-file` (the file's first: [`FileRootsFirst`]), HTTP/2 where the
//! server offers it, the proxy of the environment by the contract's rules (Q10), and
//! loopback names answered without a DNS server ([`super::resolve`]).

use super::resolve::LoopbackNamesHere;
use super::trust::FileRootsFirst;
use super::url::is_loopback;
use rustls::client::danger::ServerCertVerifier;
use rustls_pki_types::CertificateDer;
use std::sync::Arc;
use std::time::Duration;

/// How long the TCP and TLS connection to a host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The proxy variables, as the process got them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnvironment {
    /// `HTTPS_PROXY`, else `ALL_PROXY` (either case).
    pub proxy: Option<String>,
    /// `NO_PROXY` (either case).
    pub no_proxy: Option<String>,
}

impl ProxyEnvironment {
    /// Reads the variables of this process.
    pub fn of_process() -> Self {
        // An empty variable counts as unset: it does not hide the next one.
        let variable = |names: &[&str]| {
            names.iter().find_map(|name| {
                std::env::var(name)
                    .ok()
                    .filter(|value| !value.trim().is_empty())
            })
        };
        Self {
            proxy: variable(&["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]),
            no_proxy: variable(&["NO_PROXY", "no_proxy"]),
        }
    }
}

/// Why the client cannot be made: a proxy URL that is not valid, or CA
/// certificates that rustls cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigurationError(pub String);

/// Makes the client.
pub fn build(
    extra_roots: &[CertificateDer<'static>],
    proxies: &ProxyEnvironment,
) -> Result<reqwest::Client, ConfigurationError> {
    builder(extra_roots, proxies)?
        .build()
        .map_err(|error| ConfigurationError(describe(error)))
}

/// The builder of [`build`], for a caller that adds to the client of the URL form
/// without changing it (`doctor` asks for the server's certificate).
pub fn builder(
    extra_roots: &[CertificateDer<'static>],
    proxies: &ProxyEnvironment,
) -> Result<reqwest::ClientBuilder, ConfigurationError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ca_error =
        |error: rustls::Error| ConfigurationError(format!("the CA certificates: {error}"));
    let verifier: Arc<dyn ServerCertVerifier> = if extra_roots.is_empty() {
        Arc::new(rustls_platform_verifier::Verifier::new(provider.clone()).map_err(ca_error)?)
    } else {
        Arc::new(FileRootsFirst::new(extra_roots, provider.clone()).map_err(ca_error)?)
    };
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| ConfigurationError(format!("TLS: {error}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        // Only the proxy of the contract's variables, never one found elsewhere.
        .no_proxy()
        // A redirect of an MCP request could carry its headers to another host.
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        // A loopback name never reaches a DNS server (RFC 6761 §6.3).
        .dns_resolver(LoopbackNamesHere)
        .user_agent(concat!("mcp-bridge-vscode/", env!("CARGO_PKG_VERSION")));
    if let Some(proxy) = &proxies.proxy {
        builder = builder.proxy(proxy_of(proxy, proxies.no_proxy.as_deref())?);
    }
    Ok(builder)
}

/// The proxy for every request but those to a loopback host or a NO_PROXY host;
/// its user and password come from its URL.
fn proxy_of(proxy: &str, no_proxy: Option<&str>) -> Result<reqwest::Proxy, ConfigurationError> {
    let url = url::Url::parse(proxy)
        .map_err(|_| ConfigurationError("the proxy variable is not a URL".into()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigurationError(format!(
            "the proxy variable has the scheme {}: use http or https",
            url.scheme()
        )));
    }
    // Checked here, where the error can say so: a custom proxy takes any URL.
    reqwest::Proxy::all(url.clone())
        .map_err(|_| ConfigurationError("the proxy variable is not valid".into()))?;
    let route = ProxyRoute::new(url, no_proxy);
    Ok(reqwest::Proxy::custom(move |target| {
        route.proxy_for(target)
    }))
}

/// Which requests go through the proxy: every one but those to a loopback host (by
/// [`is_loopback`], the one definition of the URL rule and of the sign-in, whatever
/// its spelling: `localhost.`, `X.LOCALHOST`, `127.0.0.2`) and those that `NO_PROXY`
/// exempts. The client and [`uses_proxy`] ask the same route.
struct ProxyRoute {
    proxy: url::Url,
    /// A matcher of the proxy and `NO_PROXY` alone: hyper-util's, as reqwest builds
    /// it for a proxy of the environment.
    no_proxy: hyper_util::client::proxy::matcher::Matcher,
}

impl ProxyRoute {
    fn new(proxy: url::Url, no_proxy: Option<&str>) -> Self {
        let matcher = hyper_util::client::proxy::matcher::Matcher::builder()
            .all(proxy.to_string())
            .no(no_proxy.unwrap_or_default().to_owned())
            .build();
        Self {
            proxy,
            no_proxy: matcher,
        }
    }

    /// The proxy for a request to `target`; `None` for a direct connection.
    fn proxy_for(&self, target: &url::Url) -> Option<url::Url> {
        if is_loopback(target) {
            return None;
        }
        let uri = target.as_str().parse::<http::Uri>().ok()?;
        self.no_proxy.intercept(&uri)?;
        Some(self.proxy.clone())
    }
}

/// Whether a request to `url` goes through the proxy of `proxies`: the route of the
/// client itself ([`ProxyRoute`]), so that the answer is the client's.
pub fn uses_proxy(proxies: &ProxyEnvironment, url: &url::Url) -> bool {
    let Some(proxy) = &proxies.proxy else {
        return false;
    };
    let Ok(proxy) = url::Url::parse(proxy) else {
        return false;
    };
    ProxyRoute::new(proxy, proxies.no_proxy.as_deref())
        .proxy_for(url)
        .is_some()
}

/// The text of a client error and its causes, without its URL: the URL of a
/// sign-in may carry a query that is nobody's business, and the upstream's URL is
/// known anyway.
pub fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    // The HTTP client says only "tunnel error" when a proxy refuses the CONNECT.
    if text.contains("tunnel error") {
        text.push_str(PROXY_REFUSED);
    }
    text
}

/// What the user can do when the proxy refused the tunnel.
pub const PROXY_REFUSED: &str = " (the proxy refused the connection to the upstream server: examine the user and the password in HTTPS_PROXY or ALL_PROXY)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::url::{LOOPBACK_SPELLINGS, NOT_LOOPBACK};

    #[test]
    fn a_proxy_that_is_not_an_http_url_is_a_configuration_error() {
        let cases = [
            ("not a url", "the proxy variable is not a URL"),
            (
                "socks5://127.0.0.1:1080",
                "the proxy variable has the scheme socks5: use http or https",
            ),
        ];
        for (proxy, text) in cases {
            let environment = ProxyEnvironment {
                proxy: Some(proxy.into()),
                no_proxy: None,
            };
            match build(&[], &environment) {
                Err(ConfigurationError(error)) => assert_eq!(error, text),
                other => panic!("{proxy}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_request_uses_the_proxy_unless_no_proxy_or_a_loopback_host_exempts_its_host() {
        let url = |text: &str| url::Url::parse(text).unwrap();
        let environment = ProxyEnvironment {
            proxy: Some("http://user:pass@proxy.example:3128".into()),
            no_proxy: Some("intranet.example, 10.0.0.0/8".into()),
        };
        assert!(uses_proxy(
            &environment,
            &url("https://mcp.example.com/mcp")
        ));
        for exempt in [
            "https://intranet.example/mcp",
            "https://tools.intranet.example/mcp",
            "https://10.1.2.3/mcp",
        ] {
            assert!(!uses_proxy(&environment, &url(exempt)), "{exempt}");
        }
        for host in LOOPBACK_SPELLINGS {
            for scheme in ["http", "https"] {
                let exempt = format!("{scheme}://{host}:3000/mcp");
                assert!(!uses_proxy(&environment, &url(&exempt)), "{exempt}");
            }
        }
        for host in NOT_LOOPBACK {
            let proxied = format!("https://{host}:3000/mcp");
            assert!(uses_proxy(&environment, &url(&proxied)), "{proxied}");
        }
        assert!(!uses_proxy(
            &ProxyEnvironment::default(),
            &url("https://mcp.example.com/mcp")
        ));
    }

    #[test]
    fn a_client_builds_with_and_without_a_proxy() {
        assert!(build(&[], &ProxyEnvironment::default()).is_ok());
        let environment = ProxyEnvironment {
            proxy: Some("http://user:pass@127.0.0.1:3128".into()),
            no_proxy: Some("internal.example".into()),
        };
        assert!(build(&[], &environment).is_ok());
    }
}
