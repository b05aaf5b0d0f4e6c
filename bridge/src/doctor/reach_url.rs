//! Reach of a server at a URL, step by step as the HTTP client of the bridge
//! takes them: the proxy of the environment (and `NO_PROXY`), the name, the TCP
//! connection, TLS (the chain, the expiry, the host name), and the HTTP status and
//! content type of a POST of server/discover with the bridge's headers.

use super::Context;
use super::report::{Check, Finding, Report};
use super::texts::{Section, connect_line};
use super::tls::{self, Refusal};
use crate::auth::challenge::Challenge;
use crate::catalogue::Cause;
use crate::config::HttpTarget;
use crate::net::{ProxyEnvironment, client_builder, describe, uses_proxy};
use crate::rules::meta::base_meta;
use crate::upstream::ConnectError;
use crate::upstream::http::{base_headers, static_headers};
use reqwest::header::CONTENT_TYPE;
use serde_json::json;
use std::net::SocketAddr;
use tokio::time::{Duration, Instant, timeout};

/// How long the name and the TCP connection may take (the client's connect limit).
const CONNECT_LIMIT: Duration = Duration::from_secs(30);
/// A certificate that expires sooner than this is worth a warning.
const EXPIRY_WARNING: i64 = 14 * 86_400;

/// What the POST found.
#[derive(Debug, Default)]
pub struct Reached {
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
    /// The `WWW-Authenticate` of a 401 or a 403.
    pub challenge: Challenge,
    /// The HTTP client of the bridge (its proxy, its CA certificates), for the
    /// requests of the sign-in.
    pub client: Option<reqwest::Client>,
}

impl Reached {
    /// The server asks for a sign-in: 401, or 403 with `insufficient_scope`.
    pub fn asks_for_sign_in(&self) -> bool {
        self.status == Some(401)
            || (self.status == Some(403) && self.challenge.is_insufficient_scope())
    }
}

pub async fn check(context: &Context<'_>, target: &HttpTarget, report: &mut Report) -> Reached {
    let proxies = ProxyEnvironment::of_process();
    let client = client_builder(&target.extra_roots, &proxies).and_then(|builder| {
        builder
            .tls_info(true)
            .build()
            .map_err(|error| crate::net::ConfigurationError(describe(error)))
    });
    let client = match client {
        Ok(client) => client,
        Err(crate::net::ConfigurationError(error)) => {
            let error = ConnectError::Configuration(error);
            report.add(
                Finding::fail(Check::Proxy, "the bridge cannot make its HTTP client")
                    .line(connect_line(&error))
                    .cause(error.cause())
                    .advice(
                        Section::Reach,
                        "Correct the proxy variable (HTTPS_PROXY, ALL_PROXY: an http or https URL) or the file of --ca-file.",
                    ),
            );
            for check in [Check::Dns, Check::Tcp, Check::Tls, Check::Post] {
                report.add(Finding::skipped(check, "no HTTP client"));
            }
            return Reached::default();
        }
    };
    let via_proxy = uses_proxy(&proxies, &target.url);
    report.add(proxy_finding(&proxies, &target.url, via_proxy));
    let proxy_url = proxies
        .proxy
        .as_deref()
        .filter(|_| via_proxy)
        .and_then(|proxy| url::Url::parse(proxy).ok());
    let connect_to = proxy_url.as_ref().unwrap_or(&target.url);
    let addresses = dns(connect_to, via_proxy, report).await;
    if !addresses.is_empty() {
        tcp(&addresses, via_proxy, report).await;
    }
    let reached = post(context, target, &client, report).await;
    Reached {
        client: Some(client),
        ..reached
    }
}

/// `scheme://host:port` of a URL, without its user and password.
fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

fn proxy_finding(proxies: &ProxyEnvironment, url: &url::Url, via_proxy: bool) -> Finding {
    let Some(proxy) = &proxies.proxy else {
        return Finding::pass(
            Check::Proxy,
            "no proxy: HTTPS_PROXY and ALL_PROXY are not set",
        );
    };
    let shown = url::Url::parse(proxy).map_or_else(|_| "?".into(), |proxy| origin(&proxy));
    if via_proxy {
        let mut finding = Finding::pass(
            Check::Proxy,
            format!("through the proxy {shown} of HTTPS_PROXY or ALL_PROXY"),
        );
        if let Some(list) = &proxies.no_proxy {
            finding = finding.detail(format!("NO_PROXY ({list}) does not name this host"));
        }
        finding
    } else if crate::net::url::is_loopback(url) {
        Finding::pass(
            Check::Proxy,
            format!("no proxy for a loopback host (the proxy {shown} serves the other hosts)"),
        )
    } else {
        Finding::pass(
            Check::Proxy,
            format!(
                "no proxy for this host: NO_PROXY ({}) names it",
                proxies.no_proxy.as_deref().unwrap_or_default()
            ),
        )
    }
}

/// The addresses of the host (of the proxy, when the request takes one).
async fn dns(url: &url::Url, via_proxy: bool, report: &mut Report) -> Vec<SocketAddr> {
    let what = if via_proxy { "the proxy" } else { "the server" };
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        report.add(Finding::fail(
            Check::Dns,
            format!("the URL of {what} has no host"),
        ));
        return Vec::new();
    };
    let name = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    match timeout(
        CONNECT_LIMIT,
        tokio::net::lookup_host((name.as_str(), port)),
    )
    .await
    {
        Ok(Ok(addresses)) => {
            let addresses: Vec<SocketAddr> = addresses.collect();
            let shown: Vec<String> = addresses.iter().map(|a| a.ip().to_string()).collect();
            report.add(Finding::pass(
                Check::Dns,
                format!("{name} ({what}) has the addresses {}", shown.join(", ")),
            ));
            addresses
        }
        Ok(Err(error)) => {
            report.add(
                Finding::fail(Check::Dns, format!("the name {name} ({what}) does not resolve: {error}"))
                    .advice(
                        Section::Reach,
                        if via_proxy {
                            "Check the host of HTTPS_PROXY or ALL_PROXY."
                        } else {
                            "Check the host of the URL; behind a proxy, set HTTPS_PROXY in the env of the entry."
                        },
                    ),
            );
            report.add(Finding::skipped(Check::Tcp, "the name does not resolve"));
            Vec::new()
        }
        Err(_) => {
            report.add(Finding::fail(
                Check::Dns,
                format!(
                    "the name {name} ({what}) did not resolve in {} s",
                    CONNECT_LIMIT.as_secs()
                ),
            ));
            report.add(Finding::skipped(Check::Tcp, "the name does not resolve"));
            Vec::new()
        }
    }
}

/// A TCP connection to the first address that takes one.
async fn tcp(addresses: &[SocketAddr], via_proxy: bool, report: &mut Report) {
    let what = if via_proxy { "the proxy" } else { "the server" };
    let started = Instant::now();
    let mut last = String::new();
    for address in addresses {
        match timeout(CONNECT_LIMIT, tokio::net::TcpStream::connect(address)).await {
            Ok(Ok(_)) => {
                report.add(Finding::pass(
                    Check::Tcp,
                    format!(
                        "{what} at {address} takes a TCP connection ({} ms)",
                        started.elapsed().as_millis()
                    ),
                ));
                return;
            }
            Ok(Err(error)) => last = format!("{address}: {error}"),
            Err(_) => last = format!("{address}: no answer in {} s", CONNECT_LIMIT.as_secs()),
        }
    }
    report.add(
        Finding::fail(Check::Tcp, format!("{what} takes no TCP connection ({last})")).advice(
            Section::Reach,
            "Check that the server runs and listens on the port of the URL, and that no firewall is in the way.",
        ),
    );
}

/// The POST of server/discover with the bridge's headers, without a token.
async fn post(
    context: &Context<'_>,
    target: &HttpTarget,
    client: &reqwest::Client,
    report: &mut Report,
) -> Reached {
    let https = target.url.scheme() == "https";
    let mut headers = base_headers("server/discover");
    for (name, value) in static_headers(&target.headers) {
        headers.append(name, value);
    }
    let meta = base_meta(
        Some(
            &json!({"name": super::local_harness::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}),
        ),
        serde_json::Map::new(),
    );
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}});
    let started = Instant::now();
    let sent = client
        .post(target.url.clone())
        .headers(headers)
        .body(body.to_string())
        .timeout(context.config.discover_timeout)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(error) => {
            let refusal = tls::refusal_of(&error);
            let text = describe(error);
            match refusal {
                Some(refusal) => {
                    let error = ConnectError::Tls(text);
                    report.add(tls_refused(target, refusal, &error));
                    report.add(Finding::skipped(Check::Post, "no TLS connection"));
                }
                None => {
                    let error = ConnectError::Connect(text.clone());
                    if https && !report.has(Check::Tls) {
                        report.add(Finding::skipped(Check::Tls, "no connection"));
                    }
                    let proxy = text.contains(crate::net::client::PROXY_REFUSED);
                    report.add(
                        Finding::fail(Check::Post, "the POST of server/discover got no answer")
                            .line(connect_line(&error))
                            .cause(Cause::TransportFailed)
                            .advice(
                                Section::Reach,
                                if proxy {
                                    "The proxy refused the connection: examine the user and the password in HTTPS_PROXY or ALL_PROXY."
                                } else {
                                    "Check the URL and that the server runs; the steps above say where the connection stops."
                                },
                            ),
                    );
                }
            }
            return Reached::default();
        }
    };
    if https {
        report.add(tls_accepted(&target.url, &response));
    } else {
        report.add(Finding::skipped(
            Check::Tls,
            "http to a loopback host: no TLS",
        ));
    }
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("(none)")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let challenge = Challenge::of_headers(response.headers());
    let took = started.elapsed().as_millis();
    let static_authorization = target
        .headers
        .iter()
        .any(|header| header.name == "authorization");
    let answered = format!("HTTP status {status}, {kind}, in {took} ms");
    let finding = match status {
        200..=299 if matches!(kind.as_str(), "application/json" | "text/event-stream") => {
            Finding::pass(Check::Post, format!("the POST of server/discover got {answered}"))
        }
        200..=299 => Finding::fail(
            Check::Post,
            format!("the POST of server/discover got {answered}: the bridge reads only application/json or text/event-stream"),
        )
        .cause(Cause::InvalidResponse)
        .advice(Section::Reach, "The URL is not the MCP endpoint of the server (a web page, say): check its path."),
        401 | 403 if static_authorization => Finding::fail(
            Check::Post,
            format!("the server refused the static Authorization header: {answered}"),
        )
        .cause(Cause::TransportFailed)
        .advice(
            Section::Reach,
            "Check the token in the variable of --header-env; without the header, the bridge signs in when the server asks.",
        ),
        401 | 403 if challenge_asks(status, &challenge) => Finding::pass(
            Check::Post,
            format!("the POST of server/discover got {answered}: the server asks for a sign-in"),
        ),
        403 => Finding::fail(
            Check::Post,
            format!("the server refused the POST: {answered}, without asking for a sign-in"),
        )
        .cause(Cause::TransportFailed)
        .advice(Section::Reach, "Ask the administrator of the server for access."),
        300..=399 => Finding::fail(
            Check::Post,
            format!("the server redirects the POST ({answered}): the bridge follows no redirect"),
        )
        .cause(Cause::TransportFailed)
        .advice(Section::Reach, "Give the URL that the redirect names."),
        400..=499 => Finding::warning(
            Check::Post,
            format!("the POST of server/discover got {answered}"),
        )
        .advice(
            Section::Revision,
            "A server of revision 2026-07-28 answers server/discover; the revision check tells what the server speaks.",
        ),
        _ => Finding::fail(Check::Post, format!("the POST of server/discover got {answered}"))
            .cause(Cause::TransportFailed)
            .advice(Section::Reach, "The server or a proxy failed: read the log of the server."),
    };
    report.add(finding);
    Reached {
        status: Some(status),
        challenge,
        client: None,
    }
}

/// A 401 asks for a sign-in; a 403 only with `insufficient_scope`.
fn challenge_asks(status: u16, challenge: &Challenge) -> bool {
    status == 401 || challenge.is_insufficient_scope()
}

fn tls_refused(target: &HttpTarget, refusal: Refusal, error: &ConnectError) -> Finding {
    let host = target.url.host_str().unwrap_or_default();
    let (summary, advice) = match refusal {
        Refusal::UnknownCa if target.extra_roots.is_empty() => (
            "the certificate of the server comes from a CA that the bridge does not trust".to_owned(),
            "Give the CA certificate of the server (a PEM file) with --ca-file <path>; the system's CAs stay trusted.".to_owned(),
        ),
        Refusal::UnknownCa => (
            "the certificate of the server comes from a CA that neither --ca-file nor the system has".to_owned(),
            "Give the CA that issued the certificate of the server with --ca-file.".to_owned(),
        ),
        Refusal::Expired(at) => (
            format!(
                "the certificate of the server expired{}",
                at.map(|at| format!(" at {}", tls::date(i64::try_from(at).unwrap_or(i64::MAX))))
                    .unwrap_or_default()
            ),
            "The administrator of the server must renew its certificate.".to_owned(),
        ),
        Refusal::NotValidYet => (
            "the certificate of the server is not valid yet".to_owned(),
            "Check the clock of this machine, or ask the administrator of the server.".to_owned(),
        ),
        Refusal::WrongHost(names) => (
            format!(
                "the certificate of the server is not for {host}{}",
                if names.is_empty() {
                    String::new()
                } else {
                    format!(" (it names {})", names.join(", "))
                }
            ),
            "Use the host name that the certificate names in the URL.".to_owned(),
        ),
        Refusal::Other(reason) => (
            format!("TLS refused the certificate of the server: {reason}"),
            "Ask the administrator of the server.".to_owned(),
        ),
    };
    Finding::fail(Check::Tls, summary)
        .line(connect_line(error))
        .cause(error.cause())
        .advice(Section::Reach, advice)
}

fn tls_accepted(url: &url::Url, response: &reqwest::Response) -> Finding {
    let host = url.host_str().unwrap_or_default();
    let info = response.extensions().get::<reqwest::tls::TlsInfo>();
    let version = match info.and_then(|info| info.version()) {
        Some(reqwest::tls::Version::TLS_1_3) => "TLS 1.3",
        Some(reqwest::tls::Version::TLS_1_2) => "TLS 1.2",
        _ => "TLS",
    };
    let expiry = info
        .and_then(|info| info.peer_certificate())
        .and_then(tls::not_after);
    let through = |at: i64| format!("valid until {} ({})", tls::date(at), tls::from_now(at));
    match expiry {
        Some(at) if at - tls::now() < EXPIRY_WARNING => Finding::warning(
            Check::Tls,
            format!("{version}: the certificate of {host} passes the chain and the host name, but it is {}", through(at)),
        )
        .advice(Section::Reach, "The certificate expires soon: the administrator of the server must renew it."),
        Some(at) => Finding::pass(
            Check::Tls,
            format!("{version}: the certificate of {host} passes the chain and the host name, {}", through(at)),
        ),
        None => Finding::pass(
            Check::Tls,
            format!("{version}: the certificate of {host} passes the chain and the host name"),
        ),
    }
}
