//! A Secret Service of a transcript's own, for the keychain store of the URL form
//! (LOG-KEYCHAIN-STOPPED): a D-Bus session bus (`dbus-daemon --session`) and a
//! gnome-keyring in it with a fresh login keyring in a temporary home, unlocked
//! with a password as a desktop session unlocks it. The bridge gets the bus's
//! address; the step `stop_secret_service` kills the keyring's daemon, as a
//! keychain that stops to answer while the bridge runs. On a machine without the
//! tools the transcript does not run, and its cells say `skip`.

use std::path::Path;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::{Duration, Instant};

/// The programs a Secret Service of its own needs (Debian: dbus, gnome-keyring).
pub const TOOLS: [&str; 3] = ["dbus-daemon", "gnome-keyring-daemon", "dbus-send"];

/// How long the bus and the daemon may take to start.
const START: Duration = Duration::from_secs(10);

/// Why the Secret Service did not start or stop.
#[derive(Debug, thiserror::Error)]
pub enum SecretServiceError {
    #[error("cannot make the home of the Secret Service: {0}")]
    Home(std::io::Error),
    #[error("cannot start {0}: {1}")]
    Start(&'static str, std::io::Error),
    #[error("the D-Bus session bus did not tell its address")]
    NoAddress,
    #[error("the keyring's daemon did not take the name org.freedesktop.secrets in time")]
    NoDaemon,
    #[error("cannot stop the keyring's daemon: {0}")]
    Stop(String),
}

/// The tools that this machine lacks.
pub fn missing_tools() -> Vec<&'static str> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    TOOLS
        .iter()
        .copied()
        .filter(|tool| !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
        .collect()
}

/// A running bus with its keyring; both stop when it drops.
pub struct SecretService {
    address: String,
    bus: Child,
    daemon: Option<u32>,
    _home: tempfile::TempDir,
}

impl SecretService {
    pub async fn start() -> Result<Self, SecretServiceError> {
        let home = tempfile::tempdir().map_err(SecretServiceError::Home)?;
        let runtime = home.path().join("run");
        std::fs::create_dir(&runtime).map_err(SecretServiceError::Home)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
                .map_err(SecretServiceError::Home)?;
        }
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| SecretServiceError::Start("dbus-daemon", e))?;
        let stdout = bus.stdout.take().ok_or(SecretServiceError::NoAddress)?;
        let address = tokio::time::timeout(START, BufReader::new(stdout).lines().next_line())
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .filter(|address| !address.is_empty())
            .ok_or(SecretServiceError::NoAddress)?;
        let mut keyring = Command::new("sh")
            .args([
                "-c",
                "printf pw | exec gnome-keyring-daemon --unlock --components=secrets",
            ])
            .envs(daemon_env(home.path(), &runtime, &address))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| SecretServiceError::Start("gnome-keyring-daemon", e))?;
        // The daemon forks: the process started here ends once it serves.
        let _ = tokio::time::timeout(START, keyring.wait()).await;
        let mut service = Self {
            address,
            bus,
            daemon: None,
            _home: home,
        };
        let deadline = Instant::now() + START;
        while service.daemon.is_none() {
            service.daemon = service.daemon_pid().await;
            if service.daemon.is_none() {
                if Instant::now() >= deadline {
                    return Err(SecretServiceError::NoDaemon);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Ok(service)
    }

    /// The variables of a bridge that uses this Secret Service.
    pub fn bridge_env(&self) -> Vec<(String, String)> {
        vec![("DBUS_SESSION_BUS_ADDRESS".to_owned(), self.address.clone())]
    }

    /// The process that owns `org.freedesktop.secrets` on the bus.
    async fn daemon_pid(&self) -> Option<u32> {
        let address = self.address.clone();
        tokio::task::spawn_blocking(move || harness_sim::secret_service::daemon_pid(Some(&address)))
            .await
            .ok()
            .flatten()
    }

    /// Kills the keyring's daemon (the keychain stops to answer) and waits until the
    /// bus no longer names it.
    pub async fn stop_daemon(&mut self) -> Result<(), SecretServiceError> {
        let pid = self
            .daemon
            .take()
            .ok_or_else(|| SecretServiceError::Stop("it is not running".into()))?;
        kill(pid).map_err(SecretServiceError::Stop)?;
        let deadline = Instant::now() + START;
        while self.daemon_pid().await.is_some() {
            if Instant::now() >= deadline {
                return Err(SecretServiceError::Stop("the bus still names it".into()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon.take() {
            let _ = kill(pid);
        }
        let _ = self.bus.start_kill();
    }
}

/// The environment of the keyring's daemon: its own home and runtime folder.
fn daemon_env(home: &Path, runtime: &Path, address: &str) -> Vec<(String, String)> {
    let text = |path: &Path| path.to_string_lossy().into_owned();
    vec![
        ("HOME".into(), text(home)),
        ("XDG_RUNTIME_DIR".into(), text(runtime)),
        ("XDG_DATA_HOME".into(), text(&home.join("data"))),
        ("DBUS_SESSION_BUS_ADDRESS".into(), address.to_owned()),
    ]
}

fn kill(pid: u32) -> Result<(), String> {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill -9 {pid} failed"))
    }
}
