//! The upstream of a transcript of the URL form (M4): a real
//! `bridge-fixture-server --https` with the transcript's arguments, which the
//! bridge reaches at its URL with `--ca-file`. The runner sees the VS Code side
//! and the lines of both processes; the HTTP exchanges stay between the two.
//!
//! `$FIXTURE_BROWSER` in the transcript's environment names a browser for the
//! sign-in: a script that runs the fixture's test browser (`--browse`) on the URL
//! the bridge opens.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::Duration;

/// The placeholder of the browser script in `env` values.
pub const BROWSER_PLACEHOLDER: &str = "$FIXTURE_BROWSER";

/// A running fixture over HTTPS.
pub struct HttpsUpstream {
    pub url: String,
    pub ca_file: String,
    /// The browser script, in a folder that lives as long as the fixture.
    pub browser: PathBuf,
    stderr: Arc<Mutex<Vec<String>>>,
    _dir: tempfile::TempDir,
    _child: Child,
}

impl HttpsUpstream {
    /// Starts the fixture with `args` and `env` (the transcript's environment,
    /// which a fixture option such as `--bearer-env` reads too).
    pub async fn start(
        fixture: &std::path::Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<Self, String> {
        let mut child = Command::new(fixture)
            .arg("--https")
            .args(args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the fixture over HTTPS: {e}"))?;
        let stdout = child.stdout.take().ok_or("the fixture has no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut next = async || {
            tokio::time::timeout(Duration::from_secs(20), lines.next_line())
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .ok_or_else(|| "the fixture did not announce its URL".to_owned())
        };
        let url = next().await?;
        let ca_file = next()
            .await?
            .strip_prefix("ca-file: ")
            .ok_or("the second line of the fixture names no CA file")?
            .to_owned();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = child.stderr.take() {
            let lines = stderr.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if let Ok(mut lines) = lines.lock() {
                        lines.push(line);
                    }
                }
            });
        }
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder: {e}"))?;
        let browser = dir.path().join("browser");
        write_browser(&browser, fixture, &ca_file)?;
        Ok(Self {
            url,
            ca_file,
            browser,
            stderr,
            _dir: dir,
            _child: child,
        })
    }

    /// The arguments after the transcript's `bridge_args`.
    pub fn bridge_args(&self) -> [String; 3] {
        ["--ca-file".into(), self.ca_file.clone(), self.url.clone()]
    }

    /// A value of the transcript's environment, with the browser script in place
    /// of [`BROWSER_PLACEHOLDER`].
    pub fn resolve(&self, value: &str) -> String {
        value.replace(BROWSER_PLACEHOLDER, &self.browser.to_string_lossy())
    }

    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

fn write_browser(path: &std::path::Path, fixture: &std::path::Path, ca_file: &str) -> Result<(), String> {
    let script = format!(
        "#!/bin/sh\nexec '{}' --browse \"$1\" --ca-file '{ca_file}' >/dev/null 2>&1\n",
        fixture.display()
    );
    std::fs::write(path, script).map_err(|e| format!("cannot write the browser script: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make the browser script executable: {e}"))?;
    }
    Ok(())
}
