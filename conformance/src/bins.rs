//! The executables a run needs: the bridge, the fixture server, and the relay
//! (this crate's own binary).
//!
//! They come from `workspace-bin`, which builds a missing one with the profile of
//! the running executable, so `cargo run --release -p mcp-conformance` on a fresh
//! clone builds the bridge and the fixture in release. Under Cargo (when `CARGO`
//! is set) the runner also asks Cargo to bring them up to date first, so a run
//! never uses a stale bridge; Cargo does nothing when they are fresh.
//! `MCP_CONFORMANCE_BRIDGE` and `MCP_CONFORMANCE_FIXTURE` name other executables.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The paths of the three executables.
#[derive(Debug, Clone)]
pub struct Bins {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    /// `mcp-conformance`, started by the bridge as `mcp-conformance relay PORT TOKEN`.
    pub relay: PathBuf,
}

impl Bins {
    /// Finds (and builds when needed) the bridge and the fixture; `relay` is the
    /// path of the `mcp-conformance` executable.
    pub fn locate(relay: PathBuf) -> Result<Self, String> {
        Ok(Self {
            bridge: one(
                "MCP_CONFORMANCE_BRIDGE",
                "mcp-bridge-vscode",
                "mcp-bridge-vscode",
            )?,
            fixture: one(
                "MCP_CONFORMANCE_FIXTURE",
                "bridge-fixture-server",
                "bridge-fixture-server",
            )?,
            relay,
        })
    }
}

impl Bins {
    /// Whether the bridge is a debug build, which has `MCP_BRIDGE_TEST_FAULT`
    /// (a bridge in `target/release` has not).
    pub fn bridge_has_test_faults(&self) -> bool {
        self.bridge
            .parent()
            .is_none_or(|dir| dir.file_name().is_none_or(|name| name != "release"))
    }
}

fn one(variable: &str, package: &str, bin: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(variable) {
        return Ok(PathBuf::from(path));
    }
    if std::env::var_os("CARGO").is_some() {
        refresh(package, bin)?;
    }
    workspace_bin::path(package, bin).map_err(|error| error.to_string())
}

/// `cargo build` of one binary in the profile and target folder of the running
/// executable: a no-op when it is fresh.
fn refresh(package: &str, bin: &str) -> Result<(), String> {
    let dir = workspace_bin::profile_dir().map_err(|e| e.to_string())?;
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    if !manifest.is_file() {
        return Ok(());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--quiet",
            "-p",
            package,
            "--bin",
            bin,
            "--manifest-path",
        ])
        .arg(&manifest);
    if dir.file_name().is_some_and(|name| name == "release") {
        command.arg("--release");
    }
    if let Some(target) = dir.parent() {
        command.arg("--target-dir").arg(target);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo to build {bin}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "cargo build -p {package} --bin {bin} failed ({status})"
        ))
    }
}
