//! `bridge-fixture-server --browse URL [--ca-file PATH]`: the test browser of the
//! contract's manual check. It GETs the URL, follows 3xx redirects and
//! `<meta http-equiv="refresh">` (the consent page of `--auth`) up to [`MAX_HOPS`]
//! times, and stops at the first answer that is neither. Each hop gives one stderr line
//! `bridge-fixture-server: info(browse): <status> <URL without its query>` (the query
//! of a sign-in holds the state, the code and the challenge); the final body goes to
//! stdout; the exit code is 0 for a final 2xx, else 1.
//!
//! With `--no-follow` it GETs the URL once and follows nothing: stdout gets
//! `<status> <body>`, and the exit code is 0 for any answer (the tests' browser that
//! requests a start URL and reads what the bridge answers).
//!
//! With `--forged-redirects`, before it follows a redirect to a loopback
//! `/callback` (the authorization server's answer to the bridge's receiver), it
//! GETs that URL as an attacker would forge it: with another state, without a
//! state, with an empty code. Each must get 400 and leave the sign-in waiting; an
//! answer other than 400 is an error, and the exit code is 1.
//!
//! It trusts `--ca-file`, or else the CA of every fixture server running on this host
//! (the `ca.crt` in each `bridge-fixture-server-*` folder of the temporary directory).
//! An `http` URL must have a loopback host.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use hyper::StatusCode;
use rustls::RootCertStore;
use tokio_rustls::TlsConnector;
use url::Url;

use crate::auth::clients::is_loopback_http;
use crate::fetch::{self, Fetched};
use crate::{error, info};

/// The most redirects and refreshes that one run follows.
pub const MAX_HOPS: usize = 10;
/// The largest body of one answer.
const MAX_BODY: usize = 16 << 20;
/// How long one answer may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The options of `--browse`. `Debug` leaves the query out: a sign-in URL carries the
/// state and the code challenge, a callback URL the code.
#[derive(Clone, PartialEq, Eq)]
pub struct BrowseOptions {
    pub url: String,
    pub ca_file: Option<PathBuf>,
    /// Follow redirects and refreshes; `false` with `--no-follow`.
    pub follow: bool,
    /// `--resolve NAME:ADDR`: the address of the host NAME.
    pub resolve: Option<(String, std::net::IpAddr)>,
    /// `--forged-redirects`: forged redirects to the receiver first, each must get 400.
    pub forged_redirects: bool,
}

impl std::fmt::Debug for BrowseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = match self.url.split_once('?') {
            Some((base, _)) => format!("{base}?[REDACTED]"),
            None => self.url.clone(),
        };
        f.debug_struct("BrowseOptions")
            .field("url", &url)
            .field("ca_file", &self.ca_file)
            .field("follow", &self.follow)
            .field("resolve", &self.resolve)
            .field("forged_redirects", &self.forged_redirects)
            .finish()
    }
}

/// Runs the test browser; returns the exit code.
pub async fn run(options: BrowseOptions) -> i32 {
    let trusted = match &options.ca_file {
        Some(path) => fetch::connector(std::slice::from_ref(path)),
        None => fetch::connector_with(running_fixture_roots()),
    };
    let tls = match trusted {
        Ok(tls) => tls,
        Err(e) => {
            error!("browse", "{e}");
            return 1;
        }
    };
    let mut url = match Url::parse(&options.url) {
        Ok(url) => url,
        Err(e) => {
            error!("browse", "the URL is not valid: {e}");
            return 1;
        }
    };
    let mut hops = 0;
    loop {
        if !(url.scheme() == "https" || is_loopback_http(&url)) {
            error!(
                "browse",
                "refused {}: only https, or http to a loopback host",
                without_query(&url)
            );
            return 1;
        }
        let resolve = options.resolve.as_ref();
        let fetched = match fetch::get_resolved(&url, &tls, MAX_BODY, TIMEOUT, resolve).await {
            Ok(fetched) => fetched,
            Err(e) => {
                error!("browse", "GET {} failed: {e}", without_query(&url));
                return 1;
            }
        };
        info!(
            "browse",
            "{} {}",
            fetched.status.as_u16(),
            without_query(&url)
        );
        if !options.follow {
            return print_answer(&fetched);
        }
        let Some(next) = next_url(&url, &fetched) else {
            // The page a browser stops at is shown to the user: it must say it is
            // HTML, as a browser that does not sniff needs (the bridge's pages
            // after the sign-in).
            if !fetched.body.is_empty() && !is_html(&fetched) {
                error!(
                    "browse",
                    "the page of {} is not HTML: Content-Type {}",
                    without_query(&url),
                    fetched.content_type.as_deref().unwrap_or("(none)")
                );
                return 1;
            }
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(&fetched.body)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return 1;
            }
            return if fetched.status.is_success() { 0 } else { 1 };
        };
        if options.forged_redirects
            && is_loopback_http(&next)
            && next.path() == "/callback"
            && !forged_redirects_refused(&next, &tls, resolve).await
        {
            return 1;
        }
        hops += 1;
        if hops > MAX_HOPS {
            error!(
                "browse",
                "more than {MAX_HOPS} redirects: stopped at {}",
                without_query(&next)
            );
            return 1;
        }
        url = next;
    }
}

/// GETs the forged forms of a redirect to the receiver; whether each got 400.
async fn forged_redirects_refused(
    callback: &Url,
    tls: &TlsConnector,
    resolve: Option<&(String, std::net::IpAddr)>,
) -> bool {
    for (what, forged) in forged_redirects(callback) {
        let status = match fetch::get_resolved(&forged, tls, MAX_BODY, TIMEOUT, resolve).await {
            Ok(fetched) => fetched.status,
            Err(e) => {
                error!("browse", "GET {} failed: {e}", without_query(&forged));
                return false;
            }
        };
        info!(
            "browse",
            "{} {} (a forged redirect: {what})",
            status.as_u16(),
            without_query(&forged)
        );
        if status != StatusCode::BAD_REQUEST {
            error!(
                "browse",
                "a redirect {what} got {} in place of 400 at {}",
                status.as_u16(),
                without_query(&forged)
            );
            return false;
        }
    }
    true
}

/// A redirect to the receiver as an attacker forges it: with another state,
/// without one, with an empty code (each only where the real one has it).
fn forged_redirects(callback: &Url) -> Vec<(&'static str, Url)> {
    let pairs: Vec<(String, String)> = callback.query_pairs().into_owned().collect();
    let value_of = |name: &str| {
        pairs
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value.as_str()))
    };
    // The callback with the parameter `name` set to `new`, or left out for `None`.
    let changed = |name: &str, new: Option<&str>| {
        let mut url = callback.clone();
        url.query_pairs_mut()
            .clear()
            .extend_pairs(pairs.iter().filter_map(|(key, value)| {
                if key == name {
                    new.map(|new| (key.as_str(), new))
                } else {
                    Some((key.as_str(), value.as_str()))
                }
            }));
        url
    };
    let mut forged = Vec::new();
    if let Some(state) = value_of("state") {
        let another = format!("{state}x");
        forged.push(("with another state", changed("state", Some(&another))));
        forged.push(("without a state", changed("state", None)));
    }
    if value_of("code").is_some() {
        forged.push(("with an empty code", changed("code", Some(""))));
    }
    forged
}

/// `<status> <body>` on stdout, for `--no-follow`: 0, or 1 when stdout fails.
fn print_answer(fetched: &Fetched) -> i32 {
    let mut answer = format!("{} ", fetched.status.as_u16()).into_bytes();
    answer.extend_from_slice(&fetched.body);
    if answer.last() != Some(&b'\n') {
        answer.push(b'\n');
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&answer).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// The URL with neither its query nor its fragment.
pub fn without_query(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// Where an answer sends the browser: `Location` of a redirect, or the URL of a meta
/// refresh of a 2xx HTML page.
fn next_url(base: &Url, fetched: &Fetched) -> Option<Url> {
    let redirect = matches!(
        fetched.status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    if redirect {
        return base.join(fetched.location.as_deref()?).ok();
    }
    if fetched.status.is_success() && is_html(fetched) {
        let page = String::from_utf8_lossy(&fetched.body);
        return base.join(&meta_refresh(&page)?).ok();
    }
    None
}

/// Whether the answer says it is an HTML page.
fn is_html(fetched: &Fetched) -> bool {
    fetched
        .content_type
        .as_deref()
        .is_some_and(|kind| kind.to_ascii_lowercase().starts_with("text/html"))
}

/// The URL of the first `<meta http-equiv="refresh" content="N;url=...">` of a page.
pub fn meta_refresh(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let mut from = 0;
    while let Some(start) = lower[from..].find("<meta") {
        let start = from + start;
        let end = start + lower[start..].find('>')?;
        let tag = &lower[start..end];
        from = end;
        let refresh = [
            "http-equiv=\"refresh\"",
            "http-equiv='refresh'",
            "http-equiv=refresh",
        ]
        .iter()
        .any(|attribute| tag.contains(attribute));
        if !refresh {
            continue;
        }
        let content = attribute(&page[start..end], tag, "content")?;
        let lower_content = content.to_ascii_lowercase();
        let at = lower_content.find("url=")?;
        let target = content[at + 4..]
            .trim()
            .trim_matches(|c| c == '\'' || c == '"');
        return Some(unescape(target));
    }
    None
}

/// The value of a quoted attribute of a tag (`tag` is its lowercase copy).
fn attribute<'a>(original: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!("{name}="))? + name.len() + 1;
    let quote = original[at..].chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let rest = &original[at + 1..];
    Some(&rest[..rest.find(quote)?])
}

/// The entities that an attribute holding a URL may use.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The CA certificates of the fixture servers running on this host (see
/// `https::tls`), each file read once: a server that stops removes its folder, and
/// a second read of a file that was there a moment before would fail the browser.
fn running_fixture_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return roots;
    };
    let certificates = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("bridge-fixture-server-")
        })
        // A folder of a server that is starting or stopping may hold no usable CA.
        .filter_map(|entry| {
            fetch::ca_certificates(&entry.path().join(tls_fixtures::files::CA_CERT)).ok()
        })
        .flatten();
    roots.add_parsable_certificates(certificates);
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meta_refresh_of_a_page_gives_its_url() {
        let page = "<html><head><meta charset=\"utf-8\">\n<META HTTP-EQUIV=\"refresh\" content=\"0;url=https://127.0.0.1:9/authorize/approve?request=a&amp;b=c\"></head></html>";
        assert_eq!(
            meta_refresh(page).as_deref(),
            Some("https://127.0.0.1:9/authorize/approve?request=a&b=c")
        );
        assert_eq!(
            meta_refresh("<meta http-equiv='refresh' content='5; URL=/next'>").as_deref(),
            Some("/next")
        );
        assert_eq!(meta_refresh("<meta charset=\"utf-8\"><p>no</p>"), None);
    }

    #[test]
    fn the_debug_of_the_options_hides_the_query() {
        let options = BrowseOptions {
            url: "https://127.0.0.1:1/authorize?state=secret-state".into(),
            ca_file: None,
            follow: true,
            resolve: None,
            forged_redirects: false,
        };
        assert_eq!(
            format!("{options:?}"),
            "BrowseOptions { url: \"https://127.0.0.1:1/authorize?[REDACTED]\", ca_file: None, follow: true, resolve: None, forged_redirects: false }"
        );
    }

    #[test]
    fn a_redirect_is_forged_with_another_state_without_one_and_with_an_empty_code() {
        let callback =
            Url::parse("http://127.0.0.1:5/callback?code=c1&state=s1&iss=https%3A%2F%2Fa").unwrap();
        let forged: Vec<_> = forged_redirects(&callback)
            .into_iter()
            .map(|(what, url)| (what, url.query().unwrap_or_default().to_owned()))
            .collect();
        assert_eq!(
            forged,
            [
                (
                    "with another state",
                    "code=c1&state=s1x&iss=https%3A%2F%2Fa".into()
                ),
                ("without a state", "code=c1&iss=https%3A%2F%2Fa".into()),
                (
                    "with an empty code",
                    "code=&state=s1&iss=https%3A%2F%2Fa".into()
                ),
            ]
        );
        let denied = Url::parse("http://127.0.0.1:5/callback?error=access_denied").unwrap();
        assert!(forged_redirects(&denied).is_empty());
    }

    #[test]
    fn a_logged_url_has_no_query() {
        let url = Url::parse("http://127.0.0.1:5/callback?code=secret&state=s#f").unwrap();
        assert_eq!(without_query(&url), "http://127.0.0.1:5/callback");
    }
}
