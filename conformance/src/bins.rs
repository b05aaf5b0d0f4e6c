//! The executables a run needs: the bridge, the fixture server, the embedded server
//! (only for the transcripts of M5), and the relay (this crate's own binary).
//!
//! They come from `workspace-bin`, in the profile of the running executable: `cargo run
//! -p mcp-conformance` on a fresh clone builds them in the profile `dev`, the one of
//! `cargo build --workspace` and `cargo test --workspace`, so the three share every
//! compiled crate. Under Cargo (when `CARGO` is set) the runner brings the stale ones
//! up to date first, all in one `cargo build` whose progress shows on stderr, so a run
//! never uses a stale bridge. `MCP_CONFORMANCE_BRIDGE`, `MCP_CONFORMANCE_FIXTURE` and
//! `MCP_CONFORMANCE_EMBEDDED` name other executables.

use std::path::PathBuf;
use workspace_bin::Executable;

const BRIDGE: Executable = Executable::new("mcp-bridge-vscode", "mcp-bridge-vscode");
const FIXTURE: Executable = Executable::new("bridge-fixture-server", "bridge-fixture-server");
const EMBEDDED: Executable = Executable::new("bridge-embedded-server", "bridge-embedded-server");

/// Why an executable of the run is missing.
#[derive(Debug, thiserror::Error)]
pub enum BinsError {
    #[error(transparent)]
    Build(#[from] workspace_bin::BinError),
    #[error("the run was started without the embedded server (no transcript of M5 was selected)")]
    NoEmbedded,
}

/// The paths of the executables.
#[derive(Debug, Clone)]
pub struct Bins {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    /// `mcp-conformance`, started by the bridge as `mcp-conformance relay PORT TOKEN`.
    pub relay: PathBuf,
    /// `bridge-embedded-server`, when the run has a transcript of M5.
    embedded: Option<PathBuf>,
}

impl Bins {
    /// Finds (and builds when needed, in one cargo build) the bridge, the fixture and,
    /// `with_embedded`, the embedded server; `relay` is the path of the
    /// `mcp-conformance` executable.
    pub fn locate(relay: PathBuf, with_embedded: bool) -> Result<Self, BinsError> {
        let mut wanted = vec![
            ("MCP_CONFORMANCE_BRIDGE", BRIDGE),
            ("MCP_CONFORMANCE_FIXTURE", FIXTURE),
        ];
        if with_embedded {
            wanted.push(("MCP_CONFORMANCE_EMBEDDED", EMBEDDED));
        }
        let to_build: Vec<Executable> = wanted
            .iter()
            .filter(|(variable, _)| std::env::var_os(variable).is_none())
            .map(|(_, executable)| *executable)
            .collect();
        if std::env::var_os("CARGO").is_some() {
            workspace_bin::build(&to_build)?;
        }
        let find = |variable: &str, executable: Executable| match std::env::var_os(variable) {
            Some(path) => Ok(PathBuf::from(path)),
            None => {
                workspace_bin::path(executable.package, executable.bin).map_err(BinsError::from)
            }
        };
        Ok(Self {
            bridge: find("MCP_CONFORMANCE_BRIDGE", BRIDGE)?,
            fixture: find("MCP_CONFORMANCE_FIXTURE", FIXTURE)?,
            relay,
            embedded: if with_embedded {
                Some(find("MCP_CONFORMANCE_EMBEDDED", EMBEDDED)?)
            } else {
                None
            },
        })
    }

    /// `bridge-embedded-server`, the process under test of the transcripts of M5.
    pub fn embedded(&self) -> Result<PathBuf, BinsError> {
        self.embedded.clone().ok_or(BinsError::NoEmbedded)
    }

    /// Whether the bridge is a build with `MCP_BRIDGE_TEST_FAULT`.
    pub fn bridge_has_test_faults(&self) -> bool {
        let folder = self
            .bridge
            .parent()
            .and_then(|dir| dir.file_name())
            .and_then(|name| name.to_str());
        has_test_faults(folder, cfg!(debug_assertions))
    }
}

/// Whether a bridge in the folder `folder` has the test faults (debug assertions on):
/// not in the folders of the profiles `release` and `dist`, which turn them off; in
/// the folder of any other profile of a workspace build; elsewhere (`cargo install`
/// puts the bridge and this runner in one folder, built alike) as this runner does,
/// `runner_debug`.
fn has_test_faults(folder: Option<&str>, runner_debug: bool) -> bool {
    match folder {
        Some("release" | "dist") => false,
        Some("bin") | None => runner_debug,
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::has_test_faults;

    #[test]
    fn a_bridge_has_test_faults_in_the_folders_of_the_debug_profiles() {
        assert!(has_test_faults(Some("debug"), false));
        assert!(!has_test_faults(Some("release"), true));
        assert!(!has_test_faults(Some("dist"), true));
    }

    /// `cargo install mcp-conformance mcp-bridge-vscode`: both release builds in
    /// ~/.cargo/bin, and the transcripts that need the faults are not run.
    #[test]
    fn an_installed_bridge_is_built_as_the_installed_runner() {
        assert!(!has_test_faults(Some("bin"), false));
        assert!(has_test_faults(Some("bin"), true));
    }
}
