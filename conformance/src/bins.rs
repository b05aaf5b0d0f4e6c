//! The executables a run needs: the bridge, the fixture server, and the relay
//! (this crate's own binary).
//!
//! They come from `workspace-bin`, which builds a missing one with the profile of
//! the running executable, so `cargo run --release -p mcp-conformance` on a fresh
//! clone builds the bridge and the fixture in release. Under Cargo (when `CARGO`
//! is set) the runner also asks Cargo to bring them up to date first, so a run
//! never uses a stale bridge; Cargo does nothing when they are fresh.
//! `MCP_CONFORMANCE_BRIDGE`, `MCP_CONFORMANCE_FIXTURE` and `MCP_CONFORMANCE_EMBEDDED`
//! name other executables. The embedded server is found only when a transcript
//! needs it: a run without one does not build it.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The paths of the three executables.
#[derive(Debug, Clone)]
pub struct Bins {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    /// `mcp-conformance`, started by the bridge as `mcp-conformance relay PORT TOKEN`.
    pub relay: PathBuf,
    /// `bridge-embedded-server`, found at its first use.
    embedded: Arc<OnceLock<Result<PathBuf, String>>>,
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
            embedded: Arc::default(),
        })
    }

    /// `bridge-embedded-server`, the process under test of the transcripts of M5.
    pub fn embedded(&self) -> Result<PathBuf, String> {
        self.embedded
            .get_or_init(|| {
                one(
                    "MCP_CONFORMANCE_EMBEDDED",
                    "bridge-embedded-server",
                    "bridge-embedded-server",
                )
            })
            .clone()
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
        workspace_bin::build(package, bin).map_err(|error| error.to_string())?;
    }
    workspace_bin::path(package, bin).map_err(|error| error.to_string())
}
