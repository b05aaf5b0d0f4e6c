//! The fixture server over HTTPS and the bridge in its URL form in front of it: the
//! real executables, as VS Code starts the bridge, for every test of the URL form.
#![allow(dead_code)]

use crate::pipes::{EXCHANGE, bridge_exe, fixture_exe};
use harness_sim::process::{PROXY_VARIABLES, PeerOptions, StdioPeer};
use harness_sim::url_fixture;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use std::process::Stdio;
use std::sync::Arc;
use tokio::process::{Child, Command};

/// The fixture over HTTPS: its URL, its port and the CA file a client must trust.
pub struct HttpsFixture {
    pub url: String,
    pub port: u16,
    pub ca_file: String,
    pub child: Child,
}

impl HttpsFixture {
    /// Starts `bridge-fixture-server --https` with `args` and waits for its two lines.
    pub async fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(fixture_exe());
        command
            .arg("--https")
            .args(args)
            .envs(env.iter().copied())
            .stderr(Stdio::null());
        let announced = url_fixture::start(command, EXCHANGE)
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        let (url, child) = (announced.url, announced.child);
        let ca_file = announced.ca_file.expect("the fixture names its CA file");
        let port = url::Url::parse(&url)
            .expect("the fixture prints a URL")
            .port()
            .expect("the URL has a port");
        Self {
            url,
            port,
            ca_file,
            child,
        }
    }

    /// The file that the fixture's shell payload of
    /// `--hostile-authorization-endpoint shell` would create: it must never exist.
    pub fn payload_marker(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(format!("/tmp/bridge-fixture-pwned-{}", self.port))
    }

    /// The process id of the fixture.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the fixture runs")
    }
}

/// The bridge in the URL form: `args`, then `--ca-file` and `url`; no proxy variable
/// of this process, only those of `env`.
/// The kinds of `--hostile-authorization-endpoint` that the bridge refuses
/// before it writes or opens anything, each with the reason the refusal names.
pub const HOSTILE_AUTHORIZATION_ENDPOINTS: [(&str, &str); 3] = [
    ("shell", "it has a character that a URL does not have"),
    (
        "javascript",
        "it is not an https URL, or an http URL of a loopback host",
    ),
    (
        "file",
        "it is not an https URL, or an http URL of a loopback host",
    ),
];

pub fn bridge_to(url: &str, ca_file: &str, args: &[&str], env: &[(&str, &str)]) -> StdioPeer {
    spawn_bridge(&bridge_argv(url, ca_file, args), env)
}

/// The command line of the bridge at `url`, trusting `ca_file`.
pub fn bridge_argv(url: &str, ca_file: &str, args: &[&str]) -> Vec<String> {
    let mut command = vec![bridge_exe()];
    command.extend(args.iter().map(|arg| arg.to_string()));
    command.extend(["--ca-file".into(), ca_file.to_owned(), url.to_owned()]);
    command
}

/// Starts `command` with `env` and without the proxy variables of this process.
pub fn spawn_bridge(command: &[String], env: &[(&str, &str)]) -> StdioPeer {
    let options = PeerOptions {
        env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        env_remove: PROXY_VARIABLES.iter().map(Into::into).collect(),
        ..PeerOptions::default()
    };
    StdioPeer::spawn_with(command, options).expect("the bridge starts")
}

/// The bridge in front of `fixture` at the URL it printed.
pub fn bridge(fixture: &HttpsFixture, args: &[&str], env: &[(&str, &str)]) -> StdioPeer {
    bridge_to(&fixture.url, &fixture.ca_file, args, env)
}

/// A port that nothing listens on now, outside the ephemeral range
/// ([`harness_sim::ports`]).
pub fn free_port() -> u16 {
    harness_sim::ports::free_port()
}

/// `$BROWSER` as the fixture's test browser: it appends each URL it gets to
/// `dir/browser.log.urls` first, then writes the lines of the test browser to
/// `dir/browser.log`.
pub fn test_browser(dir: &std::path::Path, fixture: &HttpsFixture) -> std::path::PathBuf {
    let log = dir.join("browser.log");
    script(
        dir,
        "browser",
        &format!(
            "printf '%s\\n' \"$1\" >> '{log}.urls'\nexec '{exe}' --browse \"$1\" --ca-file '{ca}' >> '{log}' 2>&1",
            log = log.display(),
            exe = fixture_exe(),
            ca = fixture.ca_file,
        ),
    )
}

/// An HTTPS client of the fixture's own endpoints (`/fixture/...`), which trusts
/// only its CA and takes no proxy.
pub fn fixture_client(fixture: &HttpsFixture) -> reqwest::Client {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&fixture.ca_file).expect("the CA file") {
        roots.add(cert.expect("a certificate")).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        .build()
        .unwrap()
}

/// The URL of the fixture's own endpoint `path` (`/fixture/expire-tokens`).
pub fn fixture_endpoint(fixture: &HttpsFixture, path: &str) -> String {
    format!("{}{path}", fixture.url.trim_end_matches("/mcp"))
}

/// `POST <origin><path>` to a switch of the fixture (`/fixture/expire-tokens`).
pub async fn fixture_switch(fixture: &HttpsFixture, path: &str) {
    let response = fixture_client(fixture)
        .post(fixture_endpoint(fixture, path))
        .send()
        .await
        .unwrap_or_else(|error| panic!("POST {path}: {error}"));
    assert_eq!(response.status().as_u16(), 204, "POST {path}");
}

/// An executable script at `dir/name` (a `$BROWSER`): a shell script, as the
/// tests that use it run on Linux.
pub fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// A CA file of tls-fixtures in `dir`, for a bridge whose upstream speaks plain
/// http on loopback (the bridge needs a CA with `--ca-file` all the same).
pub fn test_ca_file(dir: &std::path::Path) -> String {
    let fixtures = tls_fixtures::generate().unwrap();
    let paths = tls_fixtures::files::write_to(dir, &fixtures).unwrap();
    paths[0].display().to_string()
}

/// The URL of the sign-in line, once the bridge wrote it.
pub async fn sign_in_url(peer: &mut StdioPeer) -> String {
    let line = peer
        .wait_stderr(crate::pipes::EXCHANGE, |line| {
            line.starts_with("mcp-bridge-vscode: sign in at ")
        })
        .await
        .expect("the sign-in line");
    line.trim_start_matches("mcp-bridge-vscode: sign in at ")
        .to_owned()
}
