//! The executables a run needs: the bridge, the fixture server, the embedded server
//! (only for the transcripts of M5), and the relay (this crate's own binary).
//!
//! They come from `workspace-bin`, in the profile of the running executable: `cargo run
//! -p mcp-conformance` on a fresh clone builds them in the profile `dev`, the one of
//! `cargo build --workspace` and `cargo test --workspace`, so the three share every
//! compiled crate. Under Cargo (when `CARGO` is set) the runner brings the stale ones
//! up to date first, all in one `cargo build` whose progress shows on stderr, so a run
//! never uses a stale bridge.
//!
//! Another implementation of the contract is tested by naming its executable:
//! `--bridge PATH` (and `--fixture`, `--embedded`) on the command line, or the
//! variables `MCP_CONFORMANCE_BRIDGE`, `MCP_CONFORMANCE_FIXTURE` and
//! `MCP_CONFORMANCE_EMBEDDED`; an option wins over its variable. A named executable
//! is never built, and one that is missing or not executable stops the run before
//! it starts.

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
    #[error("{origin} {}: {problem}", path.display())]
    Named {
        /// The option or the variable that named it (`--bridge`, `MCP_CONFORMANCE_BRIDGE`).
        origin: &'static str,
        path: PathBuf,
        problem: NamedProblem,
    },
    #[error("the run was started without the embedded server (no transcript of M5 was selected)")]
    NoEmbedded,
}

/// What is wrong with a named executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NamedProblem {
    #[error("no such file")]
    Missing,
    #[error("is a folder, not an executable")]
    Folder,
    #[error("is not executable (no execute permission)")]
    NotExecutable,
}

/// The executables named on the command line (`--bridge`, `--fixture`,
/// `--embedded`): each wins over its variable and over the workspace's build.
#[derive(Debug, Clone, Default)]
pub struct Named {
    pub bridge: Option<PathBuf>,
    pub fixture: Option<PathBuf>,
    pub embedded: Option<PathBuf>,
}

/// One executable of a run: the workspace's, unless an option or a variable names another.
struct Wanted {
    executable: Executable,
    option: &'static str,
    variable: &'static str,
    named: Option<PathBuf>,
}

impl Wanted {
    /// The path that the option or else the variable gives, and which of them gave it.
    fn named(&self) -> Option<(&'static str, PathBuf)> {
        match &self.named {
            Some(path) => Some((self.option, path.clone())),
            None => std::env::var_os(self.variable).map(|path| (self.variable, path.into())),
        }
    }

    /// The named path, checked, or the workspace's executable (built when missing).
    fn find(&self) -> Result<PathBuf, BinsError> {
        match self.named() {
            Some((origin, path)) => checked(origin, path),
            None => workspace_bin::path(self.executable.package, self.executable.bin)
                .map_err(BinsError::from),
        }
    }
}

/// `path` made absolute (the bridge may start it from another folder) when it is an
/// executable file.
fn checked(origin: &'static str, path: PathBuf) -> Result<PathBuf, BinsError> {
    let path = std::path::absolute(&path).unwrap_or(path);
    let problem = match std::fs::metadata(&path) {
        Err(_) => Some(NamedProblem::Missing),
        Ok(meta) if meta.is_dir() => Some(NamedProblem::Folder),
        Ok(meta) if !is_executable(&meta) => Some(NamedProblem::NotExecutable),
        Ok(_) => None,
    };
    match problem {
        Some(problem) => Err(BinsError::Named {
            origin,
            path,
            problem,
        }),
        None => Ok(path),
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
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
        Self::locate_named(relay, with_embedded, Named::default())
    }

    /// As [`Bins::locate`], with the executables that `named` gives in place of the
    /// workspace's (or of those of the variables).
    pub fn locate_named(
        relay: PathBuf,
        with_embedded: bool,
        named: Named,
    ) -> Result<Self, BinsError> {
        // Every option is checked, even one that this run does not need.
        for (option, path) in [
            ("--bridge", &named.bridge),
            ("--fixture", &named.fixture),
            ("--embedded", &named.embedded),
        ] {
            if let Some(path) = path {
                checked(option, path.clone())?;
            }
        }
        let bridge = Wanted {
            executable: BRIDGE,
            option: "--bridge",
            variable: "MCP_CONFORMANCE_BRIDGE",
            named: named.bridge,
        };
        let fixture = Wanted {
            executable: FIXTURE,
            option: "--fixture",
            variable: "MCP_CONFORMANCE_FIXTURE",
            named: named.fixture,
        };
        let embedded = with_embedded.then_some(Wanted {
            executable: EMBEDDED,
            option: "--embedded",
            variable: "MCP_CONFORMANCE_EMBEDDED",
            named: named.embedded,
        });
        let wanted: Vec<&Wanted> = [&bridge, &fixture].into_iter().chain(&embedded).collect();
        // A variable's executable that is not there stops the run before any build.
        for one in &wanted {
            if let Some((origin, path)) = one.named() {
                checked(origin, path)?;
            }
        }
        let to_build: Vec<Executable> = wanted
            .iter()
            .filter(|one| one.named().is_none())
            .map(|one| one.executable)
            .collect();
        if std::env::var_os("CARGO").is_some() {
            workspace_bin::build(&to_build)?;
        }
        Ok(Self {
            bridge: bridge.find()?,
            fixture: fixture.find()?,
            relay,
            embedded: embedded.as_ref().map(Wanted::find).transpose()?,
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
    use super::*;

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

    #[cfg(unix)]
    fn problem(path: PathBuf) -> Option<NamedProblem> {
        match checked("--bridge", path) {
            Err(BinsError::Named { problem, .. }) => Some(problem),
            Err(other) => panic!("{other}"),
            Ok(_) => None,
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_named_executable_must_be_an_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bridge");
        assert_eq!(problem(file.clone()), Some(NamedProblem::Missing));
        assert_eq!(problem(dir.path().into()), Some(NamedProblem::Folder));
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(problem(file.clone()), Some(NamedProblem::NotExecutable));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(problem(file), None);
    }

    #[test]
    fn the_error_names_the_option_and_the_path() {
        let error = checked("--fixture", "/no/such/fixture".into()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--fixture /no/such/fixture: no such file"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_relative_path_is_made_absolute() {
        let exe = std::env::current_exe().unwrap();
        let cwd = std::env::current_dir().unwrap();
        // From the current folder up to the root, then down to the executable.
        let mut relative = PathBuf::new();
        for _ in cwd.components().skip(1) {
            relative.push("..");
        }
        relative.push(exe.strip_prefix("/").unwrap());
        let found = checked("--bridge", relative).unwrap();
        assert!(found.is_absolute(), "{}", found.display());
        assert_eq!(found.canonicalize().unwrap(), exe.canonicalize().unwrap());
    }
}
