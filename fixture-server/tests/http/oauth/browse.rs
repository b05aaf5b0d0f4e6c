//! `bridge-fixture-server --browse`: the test browser completes a sign-in from the
//! bridge's one-time start URL (a 303 to the authorization URL) or from the
//! authorization URL itself, to a loopback receiver that the test runs.

use std::convert::Infallible;
use std::process::Stdio;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::super::client::{Server, WAIT};
use super::*;

/// A loopback receiver: `GET /start/tok` answers 303 to `authorization`, `GET
/// /callback?...` answers 200 "signed in" and hands over the query.
fn receiver(
    listener: TcpListener,
    authorization: Option<String>,
) -> mpsc::UnboundedReceiver<String> {
    let (queries, received) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let queries = queries.clone();
            let authorization = authorization.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let queries = queries.clone();
                    let authorization = authorization.clone();
                    async move {
                        let mut response = Response::new(Full::new(Bytes::new()));
                        match (request.uri().path(), authorization) {
                            ("/start/tok", Some(authorization)) => {
                                *response.status_mut() = StatusCode::SEE_OTHER;
                                response
                                    .headers_mut()
                                    .insert("location", authorization.parse().unwrap());
                            }
                            ("/callback", _) => {
                                let _ =
                                    queries.send(request.uri().query().unwrap_or("").to_owned());
                                // The page a browser stops at says it is HTML.
                                response.headers_mut().insert(
                                    "content-type",
                                    "text/html; charset=utf-8".parse().unwrap(),
                                );
                                *response.body_mut() =
                                    Full::new(Bytes::from_static(b"signed in\n"));
                            }
                            _ => *response.status_mut() = StatusCode::NOT_FOUND,
                        }
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    received
}

fn fixture() -> std::path::PathBuf {
    std::env::var_os("FIXTURE_SERVER_EXE").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_BIN_EXE_bridge-fixture-server")),
        std::path::PathBuf::from,
    )
}

/// Runs `--browse` with `args`; returns the exit code, stdout and stderr.
async fn browse(args: &[&str]) -> (Option<i32>, String, String) {
    let output = tokio::process::Command::new(fixture())
        .arg("--browse")
        .args(args)
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(WAIT, output).await.unwrap().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The callback's parameters, and the proof that its code works at `/token`.
async fn redeem(server: &Server, query_of_callback: &str, redirect: &str, verifier: &str) {
    let callback: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(query_of_callback.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(callback["state"], STATE);
    assert_eq!(callback["iss"], issuer(server));
    let (status, body) = token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &callback["code"]),
            ("redirect_uri", redirect),
            ("code_verifier", verifier),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn browse_follows_the_start_url_and_the_consent_page_to_the_receiver() {
    let server = Server::start(&["--https", "--auth"]).await;
    let origin = issuer(&server);
    let ca = server
        .ca_file
        .as_ref()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    for start in [false, true] {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let (verifier, challenge) = pkce(&format!("browse {start}"));
        let mut params = authorize_params(&server.url, PUBLIC, &challenge, "mcp:read");
        params[2] = ("redirect_uri", &redirect);
        let authorization = format!("{origin}/authorize?{}", query(&params));
        let mut received = receiver(listener, start.then(|| authorization.clone()));
        let (url, first) = if start {
            let url = format!("http://127.0.0.1:{port}/start/tok");
            let line = format!("bridge-fixture-server: info(browse): 303 {url}\n");
            (url, line)
        } else {
            (authorization.clone(), String::new())
        };
        let (code, stdout, stderr) = browse(&[&url, "--ca-file", &ca]).await;
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, "signed in\n");
        assert_eq!(
            stderr,
            format!(
                "{first}bridge-fixture-server: info(browse): 200 {origin}/authorize\n\
                 bridge-fixture-server: info(browse): 302 {origin}/authorize/approve\n\
                 bridge-fixture-server: info(browse): 200 {redirect}\n"
            )
        );
        let query_of_callback = received.recv().await.unwrap();
        redeem(&server, &query_of_callback, &redirect, &verifier).await;
    }
}

#[tokio::test]
async fn browse_refuses_http_to_other_hosts_and_fails_on_an_error_status() {
    let (code, stdout, stderr) = browse(&["http://example.com/authorize?state=s"]).await;
    assert_eq!(code, Some(1));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "bridge-fixture-server: error(browse): refused http://example.com/authorize: only https, or http to a loopback host\n"
    );
    let server = Server::start(&["--https", "--auth"]).await;
    let ca = server
        .ca_file
        .as_ref()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let origin = issuer(&server);
    let (code, stdout, stderr) = browse(&[
        &format!("{origin}/authorize?client_id=nobody&redirect_uri=x"),
        "--ca-file",
        &ca,
    ])
    .await;
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("The client nobody is not known"),
        "{stdout}"
    );
    assert_eq!(
        stderr,
        format!("bridge-fixture-server: info(browse): 400 {origin}/authorize\n")
    );
}

#[tokio::test]
async fn browse_fails_on_a_last_page_that_does_not_say_it_is_html() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut head = [0u8; 1024];
        let _ = tokio::io::AsyncReadExt::read(&mut tcp, &mut head).await;
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nsigned in\n";
        let _ = tokio::io::AsyncWriteExt::write_all(&mut tcp, answer.as_bytes()).await;
    });
    let url = format!("http://127.0.0.1:{port}/callback");
    let (code, _, stderr) = browse(&[&url]).await;
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!(
            "bridge-fixture-server: info(browse): 200 {url}\n\
             bridge-fixture-server: error(browse): the page of {url} is not HTML: Content-Type (none)\n"
        )
    );
}
