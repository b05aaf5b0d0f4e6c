//! The loopback receiver of a sign-in: `http://127.0.0.1:<port>/callback` gets the
//! redirect of the authorization server, and `/start/<token>`, the one-time start
//! URL (M6), sends the browser to the authorization URL once.
//!
//! It listens before any browser opens (contract, "Sign-in and accounts", step 1).
//! What each request gets is decided by [`Gate`], a pure state machine; the
//! server around it reads one small request per connection and closes it.

use super::errors::SignInError;
use super::pkce::Secret;
use super::secret_string::SecretString;
use crate::catalogue::SignInWarning;
use crate::log::emit;
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};
use tokio::time::Instant;
use zeroize::Zeroizing;

/// The most a request head may have.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a connection may take to send its head; a browser that only
/// pre-connects does not hold the receiver.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The most connections whose head the receiver waits for at once. A browser
/// opens a few; another program of the host could open thousands and hold each
/// for [`HEAD_TIMEOUT`]. Beyond this, the oldest waiting connection closes: a
/// browser sends its request at once, so the one that waits longest is the idle one.
const MAX_WAITING_CONNECTIONS: usize = 32;

/// The redirect URI for `port`: a literal address, never `localhost`.
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}/callback")
}

/// The listening socket of a sign-in.
#[derive(Debug)]
pub struct Receiver {
    listener: TcpListener,
    port: u16,
}

impl Receiver {
    /// Listens on 127.0.0.1:`port`. A port that another program listens on is
    /// its, and the sign-in says so. On POSIX, SO_REUSEADDR lets a second sign-in
    /// listen while the connections of the first are in TIME_WAIT; it never lets
    /// two sockets listen on one port there (on Windows it would, so it stays off).
    pub fn bind(port: u16) -> Result<Self, SignInError> {
        let in_use = |_| SignInError::RedirectPortInUse(port);
        let socket = TcpSocket::new_v4().map_err(in_use)?;
        #[cfg(unix)]
        socket.set_reuseaddr(true).map_err(in_use)?;
        socket
            .bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .map_err(in_use)?;
        let listener = socket.listen(16).map_err(in_use)?;
        let port = listener.local_addr().map_err(in_use)?.port();
        Ok(Self { listener, port })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves `gate` until it has the redirect of the sign-in (or a failure).
    /// Heads are read side by side: a browser that only pre-connects holds no
    /// other request.
    pub async fn serve(&self, gate: &mut Gate) -> Result<Redirect, SignInError> {
        let mut heads = JoinSet::new();
        let mut waiting: VecDeque<AbortHandle> = VecDeque::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    if let Ok((stream, _)) = accepted {
                        waiting.retain(|head| !head.is_finished());
                        if waiting.len() >= MAX_WAITING_CONNECTIONS
                            && let Some(oldest) = waiting.pop_front()
                        {
                            oldest.abort();
                        }
                        waiting.push_back(heads.spawn(read_head_in_time(stream)));
                    }
                }
                Some(joined) = heads.join_next() => {
                    // An aborted wait ends without a head: nothing to answer.
                    if let Ok((mut stream, head)) = joined
                        && let Some(outcome) = answer(&mut stream, head, gate).await
                    {
                        return outcome;
                    }
                }
            }
        }
    }

    /// Serves `gate` after the sign-in has its redirect, while the tokens are
    /// fetched: a second request of the start URL still gets its warning.
    pub async fn serve_after(&self, gate: &mut Gate) {
        let _ = self.serve(gate).await;
        std::future::pending::<()>().await;
    }
}

/// The receiver of the last sign-in with a start URL, which serves on after its
/// redirect until the sign-in's time limit: a later request of the start URL (the
/// user's browser, after another program signed in first) then gets the warning
/// that suggests logout instead of a refused connection. One per upstream URL,
/// shared by the links of its connects; the next sign-in stops it to take the port.
#[derive(Debug, Clone, Default)]
pub struct Lingering(Arc<Mutex<Option<JoinHandle<()>>>>);

impl Lingering {
    /// Serves `gate` on `receiver` until `deadline`, in its own task; a receiver
    /// that lingered before stops.
    pub fn start(&self, receiver: Receiver, mut gate: Gate, deadline: Instant) {
        let task = tokio::spawn(async move {
            let _ = tokio::time::timeout_at(deadline, receiver.serve_after(&mut gate)).await;
        });
        if let Some(before) = self.slot().replace(task) {
            before.abort();
        }
    }

    /// Stops the receiver that lingers, and waits until its port is free.
    pub async fn stop(&self) {
        let task = self.slot().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<JoinHandle<()>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

async fn read_head_in_time(
    mut stream: TcpStream,
) -> (TcpStream, Result<Zeroizing<String>, HeadError>) {
    let head = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut stream))
        .await
        .unwrap_or(Err(HeadError::Closed));
    (stream, head)
}

/// Answers one request from the gate, and closes the connection.
async fn answer(
    stream: &mut TcpStream,
    head: Result<Zeroizing<String>, HeadError>,
    gate: &mut Gate,
) -> Option<Result<Redirect, SignInError>> {
    let head = match head {
        Ok(head) => head,
        Err(HeadError::TooLarge) => {
            write(
                stream,
                &Page::status(431, "Request Header Fields Too Large"),
            )
            .await;
            return None;
        }
        Err(HeadError::Closed) => return None,
    };
    let (page, outcome) = gate.on_request(&head);
    write(stream, &page).await;
    outcome
}

enum HeadError {
    TooLarge,
    Closed,
}

/// The request line of a head (up to its first line end), once the whole head
/// (up to the empty line) has come. It carries the code of a redirect: every
/// buffer of it is zeroized.
async fn read_head(stream: &mut TcpStream) -> Result<Zeroizing<String>, HeadError> {
    let mut head = Zeroizing::new(Vec::with_capacity(MAX_HEAD_BYTES + 2048));
    let mut buffer = Zeroizing::new([0u8; 2048]);
    loop {
        let read = stream
            .read(buffer.as_mut_slice())
            .await
            .map_err(|_| HeadError::Closed)?;
        if read == 0 {
            return Err(HeadError::Closed);
        }
        head.extend_from_slice(buffer.get(..read).unwrap_or_default());
        if head.len() > MAX_HEAD_BYTES {
            return Err(HeadError::TooLarge);
        }
        if head.windows(4).any(|window| window == b"\r\n\r\n") {
            break;
        }
    }
    let line_end = head
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(head.len());
    let line = head.get(..line_end).unwrap_or_default();
    Ok(Zeroizing::new(String::from_utf8_lossy(line).into_owned()))
}

async fn write(stream: &mut TcpStream, page: &Page) {
    let mut response = format!(
        "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n",
        page.status,
        page.reason,
        page.body.len()
    );
    if let Some(location) = &page.location {
        response.push_str(&format!("Location: {location}\r\n"));
    }
    if !page.body.is_empty() {
        response.push_str("Content-Type: text/html; charset=utf-8\r\n");
    }
    response.push_str("\r\n");
    response.push_str(&page.body);
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The redirect of the authorization server, with the expected state: a code,
/// or the error the server sent instead, and its `iss`, which the sign-in checks
/// for both (RFC 9207 §2.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub code: Result<SecretString, SignInError>,
    /// `iss` (RFC 9207), where the server sent it.
    pub iss: Option<String>,
}

/// What the browser gets. No page ever shows a code, a state or a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub status: u16,
    pub reason: &'static str,
    pub location: Option<String>,
    pub body: String,
}

impl Page {
    fn status(status: u16, reason: &'static str) -> Self {
        Self {
            status,
            reason,
            location: None,
            body: html(reason, reason),
        }
    }

    fn html(status: u16, reason: &'static str, title: &str, text: &str) -> Self {
        Self {
            status,
            reason,
            location: None,
            body: html(title, text),
        }
    }
}

fn html(title: &str, text: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>"
    )
}

/// The one-time start URL of a sign-in that opens the browser (M6).
#[derive(Debug)]
pub struct StartUrl {
    token: Secret,
    /// The authorization URL that the first request is sent to.
    target: String,
}

impl StartUrl {
    pub fn new(token: Secret, target: String) -> Self {
        Self { token, target }
    }

    /// `http://127.0.0.1:<port>/start/<token>`: the only URL that reaches the
    /// command line of the browser opener.
    pub fn url(&self, port: u16) -> String {
        format!("http://127.0.0.1:{port}/start/{}", self.token.expose())
    }
}

/// What the receiver answers, request by request.
#[derive(Debug)]
pub struct Gate {
    state: Secret,
    start: Option<StartUrl>,
    start_used: bool,
    redirected: bool,
    /// The URL of the upstream, for the warning that suggests logout.
    server_url: String,
}

impl Gate {
    pub fn new(state: Secret, start: Option<StartUrl>, server_url: &str) -> Self {
        Self {
            state,
            start,
            start_used: false,
            redirected: false,
            server_url: server_url.to_owned(),
        }
    }

    /// Whether the browser got a start URL of this sign-in.
    pub fn has_start_url(&self) -> bool {
        self.start.is_some()
    }

    /// The answer to one request line (`GET /callback?... HTTP/1.1`), and the end
    /// of the wait when the request ends it.
    pub fn on_request(&mut self, line: &str) -> (Page, Option<Result<Redirect, SignInError>>) {
        let mut parts = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return (Page::status(400, "Bad Request"), None);
        };
        if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
            return (Page::status(400, "Bad Request"), None);
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if let Some(token) = path.strip_prefix("/start/") {
            if method != "GET" {
                return (Page::status(400, "Bad Request"), None);
            }
            return self.on_start(token);
        }
        match (method, path) {
            ("GET", "/callback") => self.on_callback(query),
            (_, "/callback") => (Page::status(400, "Bad Request"), None),
            ("GET", _) => (Page::status(404, "Not Found"), None),
            _ => (Page::status(400, "Bad Request"), None),
        }
    }

    fn on_start(&mut self, token: &str) -> (Page, Option<Result<Redirect, SignInError>>) {
        let Some(start) = self
            .start
            .as_ref()
            .filter(|start| start.token.matches(token))
        else {
            return (Page::status(404, "Not Found"), None);
        };
        if self.redirected {
            emit!(SignInWarning::StartUrlAfterRedirect {
                url: &self.server_url
            });
            return (Page::status(404, "Not Found"), None);
        }
        if std::mem::replace(&mut self.start_used, true) {
            emit!(SignInWarning::StartUrlReused);
            self.redirected = true;
            let page = Page::html(
                410,
                "Gone",
                "The sign-in stopped",
                "This start URL of the sign-in was opened a second time, so the sign-in stopped. \
                 Start the sign-in again: restart the server in VS Code. On a host that other users \
                 share, give the bridge --no-browser and open the URL of the sign-in line yourself.",
            );
            return (page, Some(Err(SignInError::StartReused)));
        }
        let page = Page {
            status: 303,
            reason: "See Other",
            location: Some(start.target.clone()),
            body: String::new(),
        };
        (page, None)
    }

    fn on_callback(&mut self, query: &str) -> (Page, Option<Result<Redirect, SignInError>>) {
        let mut state = None;
        let mut code = None;
        let mut error = None;
        let mut iss = None;
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match name.as_ref() {
                "state" => &mut state,
                "code" => &mut code,
                "error" => &mut error,
                "iss" => &mut iss,
                _ => continue,
            };
            slot.get_or_insert(value.into_owned());
        }
        if self.redirected || !state.is_some_and(|state| self.state.matches(&state)) {
            return (Page::status(400, "Bad Request"), None);
        }
        let code = match (code, error) {
            (_, Some(error)) if error == "access_denied" => Err(SignInError::AccessDenied),
            (_, Some(error)) => Err(SignInError::AuthorizationError(plain_code(&error))),
            (Some(code), None) if !code.is_empty() => Ok(SecretString::from(code)),
            _ => return (Page::status(400, "Bad Request"), None),
        };
        self.redirected = true;
        let page = match &code {
            Ok(_) => Page::html(
                200,
                "OK",
                "Signed in",
                "The bridge received the sign-in. You can close this page and go back to VS Code.",
            ),
            Err(_) => Page::html(
                200,
                "OK",
                "The sign-in did not complete",
                "The authorization server did not give the access. The Output channel of the server in VS Code tells more.",
            ),
        };
        (page, Some(Ok(Redirect { code, iss })))
    }
}

/// An `error` of a redirect, for a line: only a plain code, else a placeholder.
fn plain_code(error: &str) -> String {
    if !error.is_empty()
        && error.len() <= 64
        && error
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        error.to_owned()
    } else {
        "an error that is not a plain code".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_of_the_receiver_is_html_with_its_title_and_text() {
        let page = Page::status(404, "Not Found");
        assert!(page.body.starts_with("<!doctype html>"));
        assert!(page.body.contains("<title>Not Found</title>"));
        assert!(page.body.contains("<h1>Not Found</h1><p>Not Found</p>"));
    }

    fn secret(text: &str) -> Secret {
        Secret::for_tests(text)
    }

    fn gate(with_start: bool) -> Gate {
        let start =
            with_start.then(|| StartUrl::new(secret("tok"), "https://as/authorize?x=1".into()));
        Gate::new(secret("st"), start, "https://mcp.example/mcp")
    }

    fn get(gate: &mut Gate, target: &str) -> (u16, Option<Result<Redirect, SignInError>>) {
        let (page, outcome) = gate.on_request(&format!("GET {target} HTTP/1.1"));
        (page.status, outcome)
    }

    #[test]
    fn m6_the_start_url_redirects_once_and_a_second_request_stops_the_sign_in() {
        let mut gate = gate(true);
        let (page, outcome) = gate.on_request("GET /start/tok HTTP/1.1");
        assert_eq!(
            (page.status, page.location.as_deref()),
            (303, Some("https://as/authorize?x=1"))
        );
        assert!(page.body.is_empty() && outcome.is_none());
        let (page, outcome) = gate.on_request("GET /start/tok HTTP/1.1");
        assert_eq!(page.status, 410);
        assert!(page.body.contains("Start the sign-in again"));
        assert!(page.body.contains("--no-browser"));
        assert_eq!(outcome, Some(Err(SignInError::StartReused)));
        // The sign-in is over: the redirect that comes now is refused.
        assert_eq!(get(&mut gate, "/callback?state=st&code=c").0, 400);
    }

    #[test]
    fn m6_a_wrong_token_gets_404_and_the_sign_in_goes_on() {
        let mut gate = gate(true);
        for target in [
            "/start/toK",
            "/start/to",
            "/start/tokk",
            "/start/",
            "/start",
            "/start/tok/x",
        ] {
            assert_eq!(get(&mut gate, target), (404, None), "{target}");
        }
        assert_eq!(get(&mut gate, "/start/tok").0, 303);
        let (status, outcome) = get(&mut gate, "/callback?code=c1&state=st&iss=https%3A%2F%2Fas");
        assert_eq!(status, 200);
        assert_eq!(
            outcome,
            Some(Ok(Redirect {
                code: Ok("c1".into()),
                iss: Some("https://as".into())
            }))
        );
        // After the redirect, the start URL gets 404 (and the warning).
        assert_eq!(get(&mut gate, "/start/tok"), (404, None));
    }

    #[test]
    fn without_a_start_url_no_start_path_is_served() {
        let mut gate = gate(false);
        assert_eq!(get(&mut gate, "/start/tok"), (404, None));
    }

    #[test]
    fn only_a_get_of_the_callback_with_the_expected_state_ends_the_wait() {
        let mut gate = gate(true);
        for target in [
            "/callback",
            "/callback?code=c",
            "/callback?state=other&code=c",
            "/callback?state=st",
            "/callback?state=st&code=",
        ] {
            assert_eq!(get(&mut gate, target), (400, None), "{target}");
        }
        for line in [
            "POST /callback?state=st&code=c HTTP/1.1",
            "HEAD /start/tok HTTP/1.1",
            "GET /callback HTTP/2.0",
            "garbage",
            "GET  HTTP/1.1 x",
        ] {
            assert_eq!(gate.on_request(line).0.status, 400, "{line}");
        }
        assert_eq!(get(&mut gate, "/favicon.ico"), (404, None));
        let (status, outcome) = get(&mut gate, "/callback?state=st&code=abc");
        assert_eq!(status, 200);
        assert_eq!(
            outcome,
            Some(Ok(Redirect {
                code: Ok("abc".into()),
                iss: None
            }))
        );
        assert_eq!(
            get(&mut gate, "/callback?state=st&code=abc"),
            (400, None),
            "a second redirect"
        );
    }

    #[test]
    fn an_error_redirect_ends_the_wait_with_its_kind_and_no_page_shows_a_secret() {
        let mut denied = gate(false);
        let (page, outcome) = denied
            .on_request("GET /callback?state=st&error=access_denied&iss=https%3A%2F%2Fas HTTP/1.1");
        let error = |error: SignInError, iss: Option<&str>| {
            Some(Ok(Redirect {
                code: Err(error),
                iss: iss.map(str::to_owned),
            }))
        };
        assert_eq!(
            outcome,
            error(SignInError::AccessDenied, Some("https://as"))
        );
        assert!(!page.body.contains("st") || !page.body.contains("state=st"));
        let mut failed = gate(false);
        let (_, outcome) = get(&mut failed, "/callback?state=st&error=server_error");
        assert_eq!(
            outcome,
            error(SignInError::AuthorizationError("server_error".into()), None)
        );
        let mut odd = gate(false);
        let (_, outcome) = get(&mut odd, "/callback?state=st&error=%3Cscript%3E");
        assert_eq!(
            outcome,
            error(
                SignInError::AuthorizationError("an error that is not a plain code".into()),
                None
            )
        );
        let mut ok = gate(false);
        let (page, _) = ok.on_request("GET /callback?state=st&code=secretcode HTTP/1.1");
        assert!(!page.body.contains("secretcode"));
    }

    #[tokio::test]
    async fn idle_connections_beyond_the_cap_close_the_oldest_and_the_redirect_still_comes() {
        let receiver = Receiver::bind(0).unwrap();
        let port = receiver.port();
        let mut gate = gate(false);
        let client = tokio::spawn(async move {
            let mut idle = Vec::new();
            for _ in 0..100 {
                idle.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
            }
            // The oldest idle connection is closed long before the head time limit.
            let mut byte = [0u8; 1];
            let closed =
                tokio::time::timeout(Duration::from_secs(3), idle[0].read(&mut byte)).await;
            let redirect = async {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                stream
                    .write_all(b"GET /callback?state=st&code=c7 HTTP/1.1\r\n\r\n")
                    .await
                    .unwrap();
                let mut reply = String::new();
                stream.read_to_string(&mut reply).await.unwrap();
                reply
            };
            (closed, redirect.await)
        });
        let redirect = receiver.serve(&mut gate).await.unwrap();
        assert_eq!(redirect.code, Ok("c7".into()));
        let (closed, reply) = client.await.unwrap();
        assert!(
            matches!(closed, Ok(Ok(0) | Err(_))),
            "the oldest idle connection is still held: {closed:?}"
        );
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    }

    #[tokio::test]
    async fn a_head_of_exactly_the_limit_is_read_and_one_byte_more_is_too_large() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        for (extra, fits) in [(0, true), (1, false)] {
            let (start, end) = ("GET /callback HTTP/1.1\r\nBig: ", "\r\n\r\n");
            let filler = "a".repeat(MAX_HEAD_BYTES + extra - start.len() - end.len());
            let head = format!("{start}{filler}{end}");
            let mut client = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            client.write_all(head.as_bytes()).await.unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            assert_eq!(read_head(&mut server).await.is_ok(), fits, "{extra} more");
        }
    }

    #[tokio::test]
    async fn the_receiver_answers_over_tcp_and_a_busy_port_is_named() {
        let receiver = Receiver::bind(0).unwrap();
        let port = receiver.port();
        assert!(
            matches!(Receiver::bind(port), Err(SignInError::RedirectPortInUse(p)) if p == port)
        );
        let mut gate = gate(true);
        let client = tokio::spawn(async move {
            let mut replies = Vec::new();
            for request in [
                "GET /start/tok HTTP/1.1\r\nHost: x\r\n\r\n".to_owned(),
                format!(
                    "GET /x HTTP/1.1\r\nBig: {}\r\n\r\n",
                    "a".repeat(MAX_HEAD_BYTES)
                ),
                "GET /callback?state=st&code=c9 HTTP/1.1\r\nHost: x\r\n\r\n".to_owned(),
            ] {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                // A first piece of 100 bytes, so that the head grows past its
                // limit without ever being exactly that long (the receiver reads
                // 2048 bytes at a time).
                let (first, rest) = request.as_bytes().split_at(100.min(request.len()));
                stream.write_all(first).await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                stream.write_all(rest).await.unwrap();
                let mut reply = String::new();
                stream.read_to_string(&mut reply).await.unwrap();
                replies.push(reply);
            }
            replies
        });
        let redirect = receiver.serve(&mut gate).await.unwrap();
        assert_eq!(redirect.code, Ok("c9".into()));
        let replies = client.await.unwrap();
        assert!(
            replies[0].starts_with("HTTP/1.1 303 See Other\r\n"),
            "{}",
            replies[0]
        );
        assert!(replies[0].contains("Location: https://as/authorize?x=1\r\n"));
        assert!(replies[0].contains("Cache-Control: no-store\r\n"));
        assert!(replies[1].starts_with("HTTP/1.1 431 "), "{}", replies[1]);
        assert!(replies[2].starts_with("HTTP/1.1 200 OK\r\n"));
        // A page says what it is; the redirect, without a body, names no type.
        let html = "Content-Type: text/html; charset=utf-8\r\n";
        assert!(replies[1].contains(html), "{}", replies[1]);
        assert!(replies[2].contains(html), "{}", replies[2]);
        assert!(!replies[0].contains("Content-Type"), "{}", replies[0]);
    }
}
