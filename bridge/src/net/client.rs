//! The HTTP client of the URL form: rustls with the system's CA certificates and
//! those of `--ca-file` (the file's first: [`FileRootsFirst`]), HTTP/2 where the
//! server offers it, and the proxy of the environment by the contract's rules (Q10).

use super::trust::FileRootsFirst;
use super::url::LOOPBACK_NO_PROXY;
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
    let proxy = reqwest::Proxy::all(url)
        .map_err(|_| ConfigurationError("the proxy variable is not valid".into()))?;
    Ok(proxy.no_proxy(reqwest::NoProxy::from_string(&exceptions(no_proxy))))
}

/// The hosts without a proxy: those of `NO_PROXY`, and the loopback hosts always.
fn exceptions(no_proxy: Option<&str>) -> String {
    match no_proxy {
        Some(list) => format!("{list},{LOOPBACK_NO_PROXY}"),
        None => LOOPBACK_NO_PROXY.to_owned(),
    }
}

/// Whether a request to `url` goes through the proxy of `proxies`: the matcher of
/// the HTTP client itself (hyper-util's, which reqwest builds from the same proxy
/// and the same exceptions), so that the answer is the client's.
pub fn uses_proxy(proxies: &ProxyEnvironment, url: &url::Url) -> bool {
    let Some(proxy) = &proxies.proxy else {
        return false;
    };
    let Ok(uri) = url.as_str().parse::<http::Uri>() else {
        return false;
    };
    hyper_util::client::proxy::matcher::Matcher::builder()
        .all(proxy.clone())
        .no(exceptions(proxies.no_proxy.as_deref()))
        .build()
        .intercept(&uri)
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
            "http://127.0.0.1:3000/mcp",
            "http://localhost:3000/mcp",
            "http://[::1]:3000/mcp",
        ] {
            assert!(!uses_proxy(&environment, &url(exempt)), "{exempt}");
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
