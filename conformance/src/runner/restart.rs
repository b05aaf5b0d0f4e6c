//! The steps of a server that VS Code starts again, and of the browser of the
//! sign-in: `restart_bridge` (the bridge stops at the end of its stdin, and a new
//! one starts with other options against the same fixture and token store: another
//! account, the sandbox, a stored sign-in) and `expect_browser_runs`.

use super::{Client, Run, at, recv_kept, shown};
use crate::outcome::Failure;
use harness_sim::record::Entry;
use tokio::time::{Duration, Instant};

/// How long a bridge may take to stop at the end of its stdin before a restart.
const STOP: Duration = Duration::from_secs(5);
/// How long the fixture's lines of a stopped bridge may take to reach the runner.
const SETTLE: Duration = Duration::from_millis(300);

/// A bridge process that a restart stopped: what its final checks need.
pub(super) struct EarlierBridge {
    pub entries: Vec<Entry>,
    pub stderr: Vec<String>,
}

impl Run<'_> {
    /// `restart_bridge`: the bridge gets the end of its stdin and must exit with 0;
    /// then a new one starts.
    pub(super) async fn restart_bridge(
        &mut self,
        line: usize,
        args: &[String],
        more_env: &[(String, String)],
    ) -> Result<(), Failure> {
        let exited = self.exited;
        let ignore = self.transcript.header.ignore_notifications.clone();
        let peer = self.peer().map_err(at(line))?;
        if !exited {
            peer.close_stdin().await;
            match peer.wait_exit(STOP).await {
                Some((status, _)) if status.code() == Some(0) => {}
                Some((status, _)) => {
                    return Err(Failure::at(
                        line,
                        format!("before the restart the bridge exited with {status}, not 0"),
                    ));
                }
                None => {
                    return Err(Failure::at(
                        line,
                        format!("the bridge did not stop within {} s", STOP.as_secs()),
                    ));
                }
            }
        }
        let _ = peer.wait_stderr_closed(Duration::from_secs(2)).await;
        let mut unexpected = Vec::new();
        while let Some(received) =
            recv_kept(peer, Instant::now() + Duration::from_millis(200), &ignore).await
        {
            unexpected.push(shown(&received));
        }
        if !unexpected.is_empty() {
            return Err(Failure::at(
                line,
                format!(
                    "the bridge wrote {} frame(s) that no step expected before the restart",
                    unexpected.len()
                ),
            )
            .with_detail(unexpected.join("\n")));
        }
        let stopped = EarlierBridge {
            entries: peer.entries(),
            stderr: peer.stderr_lines(),
        };
        self.earlier.push(stopped);
        tokio::time::sleep(SETTLE).await;
        // The field alone, not `https_at`: the static headers change while it is held.
        let https = self
            .https
            .as_ref()
            .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))?;
        https.next_bridge();
        let resolved: Vec<String> = args.iter().map(|arg| https.resolve(arg)).collect();
        let variables = crate::launch::restarted_environment(
            self.env,
            &self.transcript.header,
            https,
            more_env,
        );
        self.static_headers
            .push(crate::static_headers::static_headers(&resolved, &variables));
        let mut more_env = more_env.to_vec();
        if let Some(service) = &self.secret_service {
            more_env.extend(service.bridge_env());
        }
        let peer = crate::launch::restart_url_bridge(
            self.env,
            &self.transcript.header,
            https,
            args,
            &more_env,
        )
        .map_err(at(line))?;
        self.client = Client::Raw(Box::new(peer));
        self.exited = false;
        self.stderr_pos = 0;
        Ok(())
    }

    /// `expect_browser_runs`: exactly `count` browser scripts started so far.
    pub(super) async fn expect_browser_runs(
        &mut self,
        line: usize,
        count: usize,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let https = self.https_at(line)?;
        loop {
            let runs = https.browser_runs();
            let shown = || {
                runs.iter()
                    .map(|run| format!("{} {}", run.script, run.url))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            if runs.len() > count {
                return Err(Failure::at(
                    line,
                    format!("{} browser runs, expected {count}", runs.len()),
                )
                .with_detail(shown()));
            }
            if runs.len() == count {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Failure::at(
                    line,
                    format!("{} browser runs in time, expected {count}", runs.len()),
                )
                .with_detail(shown()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
