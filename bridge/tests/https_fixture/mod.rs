//! The fixture over HTTPS for the tests of the URL form: its URL and its CA, and
//! the bridge in front of it.

use crate::pipes::{EXCHANGE, bridge_exe, fixture_exe};
use harness_sim::process::{PeerOptions, StdioPeer};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The fixture over HTTPS: its URL and the CA file a client must trust.
pub struct HttpsFixture {
    pub url: String,
    pub ca_file: String,
    _child: Child,
}

impl HttpsFixture {
    pub async fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(fixture_exe())
            .arg("--https")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the fixture starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut next = async || {
            tokio::time::timeout(EXCHANGE, lines.next_line())
                .await
                .expect("the fixture announces itself")
                .unwrap()
                .expect("a line")
        };
        let url = next().await;
        let ca_file = next()
            .await
            .strip_prefix("ca-file: ")
            .expect("the second line names the CA file")
            .to_owned();
        Self {
            url,
            ca_file,
            _child: child,
        }
    }
}

/// The bridge in the URL form: `args`, then `--ca-file` and the URL.
pub fn bridge(fixture: &HttpsFixture, args: &[&str], env: &[(&str, &str)]) -> StdioPeer {
    let mut command = vec![bridge_exe()];
    command.extend(args.iter().map(|arg| arg.to_string()));
    command.extend([
        "--ca-file".into(),
        fixture.ca_file.clone(),
        fixture.url.clone(),
    ]);
    let options = PeerOptions {
        env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        ..PeerOptions::default()
    };
    StdioPeer::spawn_with(&command, options).expect("the bridge starts")
}
