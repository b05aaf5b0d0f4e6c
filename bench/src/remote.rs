//! mcp-remote: the proxy users put between a stdio client and a URL
//! today, as the third column of the URL form's measurements. It runs as
//! `node proxy.js <url> --protocol auto --transport http-only --silent`: `--protocol
//! auto` is its mode that answers a 2025-11-25 client's `initialize` itself after a
//! `server/discover` upstream and rewrites every later request into 2026-07-28, the
//! same job as the bridge's URL form. It is pinned (exactly 0.15.1) in
//! `interop/package-lock.json`; `npm ci --prefix interop` installs it.
//!
//! Node trusts the fixture's test CA through `NODE_EXTRA_CA_CERTS`. mcp-remote keeps
//! its state (tokens, client registrations, locks) in `~/.mcp-auth` or in
//! `MCP_REMOTE_CONFIG_DIR`: both that and `HOME` point at a directory of the bench's
//! own, removed when the measurement ends, so that a run leaves nothing behind.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::BenchError;

/// The version pinned in `interop/package.json`, for the notes of the report.
pub const VERSION: &str = "0.15.1";

/// The program that runs mcp-remote: Node from `PATH`, as the interop tests find it.
pub const NODE: &str = "node";

/// mcp-remote's executable in the workspace: `interop/node_modules`, relative to the
/// workspace root (where `npm ci --prefix interop` puts it).
pub fn default_proxy() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.parent().unwrap_or(crate_dir);
    root.join("interop/node_modules/mcp-remote/dist/proxy.js")
}

/// mcp-remote ready to start in front of a URL: its script and a state directory
/// that is removed on drop.
#[derive(Debug)]
pub struct McpRemote {
    proxy: PathBuf,
    state: StateDir,
}

impl McpRemote {
    /// Checks that `proxy` exists and makes the state directory.
    pub fn new(proxy: &Path) -> Result<Self, BenchError> {
        if !proxy.is_file() {
            return Err(BenchError::Setup(format!(
                "mcp-remote is not installed: {} does not exist (run npm ci --prefix interop, or give --mcp-remote PATH)",
                proxy.display()
            )));
        }
        Ok(Self {
            proxy: proxy.to_owned(),
            state: StateDir::new()?,
        })
    }

    /// The command of mcp-remote in front of `url`.
    pub fn argv(&self, url: &str) -> Vec<OsString> {
        argv(&self.proxy, url)
    }

    /// What mcp-remote's environment needs on top of the bench's: the CA to trust
    /// and where to keep its state.
    pub fn env(&self, ca_file: &str) -> Vec<(OsString, OsString)> {
        env(ca_file, &self.state.0)
    }
}

/// `node <proxy> <url> --protocol auto --transport http-only --silent`.
fn argv(proxy: &Path, url: &str) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![NODE.into(), proxy.as_os_str().to_owned(), url.into()];
    argv.extend(["--protocol", "auto", "--transport", "http-only", "--silent"].map(OsString::from));
    argv
}

fn env(ca_file: &str, state: &Path) -> Vec<(OsString, OsString)> {
    vec![
        ("NODE_EXTRA_CA_CERTS".into(), ca_file.into()),
        ("MCP_REMOTE_CONFIG_DIR".into(), state.as_os_str().to_owned()),
        ("HOME".into(), state.as_os_str().to_owned()),
    ]
}

/// A directory of this process under the temporary directory, removed on drop.
#[derive(Debug)]
struct StateDir(PathBuf);

impl StateDir {
    fn new() -> Result<Self, BenchError> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "harness-bench-mcp-remote-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|error| {
            BenchError::Setup(format!(
                "the state directory of mcp-remote {}: {error}",
                dir.display()
            ))
        })?;
        Ok(Self(dir))
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_remote_runs_in_its_dual_era_mode_over_http_only() {
        assert_eq!(
            argv(Path::new("/i/proxy.js"), "https://127.0.0.1:1/mcp"),
            [
                "node",
                "/i/proxy.js",
                "https://127.0.0.1:1/mcp",
                "--protocol",
                "auto",
                "--transport",
                "http-only",
                "--silent"
            ]
            .map(OsString::from)
        );
    }

    #[test]
    fn mcp_remote_trusts_the_ca_and_keeps_its_state_in_the_bench_directory() {
        assert_eq!(
            env("/tmp/ca.crt", Path::new("/tmp/state")),
            [
                ("NODE_EXTRA_CA_CERTS", "/tmp/ca.crt"),
                ("MCP_REMOTE_CONFIG_DIR", "/tmp/state"),
                ("HOME", "/tmp/state"),
            ]
            .map(|(key, value)| (OsString::from(key), OsString::from(value)))
        );
    }

    #[test]
    fn the_default_mcp_remote_is_in_the_workspace_interop_folder() {
        let proxy = default_proxy();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(
            proxy,
            root.join("interop/node_modules/mcp-remote/dist/proxy.js")
        );
    }

    #[test]
    fn a_missing_mcp_remote_says_how_to_install_it() {
        let error = McpRemote::new(Path::new("/nonexistent/proxy.js")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "setup: mcp-remote is not installed: /nonexistent/proxy.js does not exist (run npm ci --prefix interop, or give --mcp-remote PATH)"
        );
    }

    #[test]
    fn the_state_directory_is_removed_at_the_end() {
        let dir = StateDir::new().unwrap();
        let path = dir.0.clone();
        std::fs::write(path.join("token.json"), "{}").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
