//! Finds the executables of this workspace.
//!
//! Tests and the conformance runner start the real executables (`mcp-bridge-vscode`,
//! `bridge-fixture-server`, `harness-sim`) as child processes. Cargo only tells a test
//! where the binaries of its *own* package are, so this crate looks next to the running
//! executable (`target/<profile>/`) and, when a binary is missing, asks Cargo to build
//! it with the same profile.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

mod fresh;

/// Why a binary could not be found or built.
#[derive(Debug)]
pub struct BinError(String);

impl std::fmt::Display for BinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BinError {}

/// One build at a time: parallel tests asking for the same binary would
/// otherwise start several Cargo processes that wait on each other's lock.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// The path of the executable `bin` of the workspace package `package`,
/// built with the profile of the running executable when it is missing.
pub fn path(package: &str, bin: &str) -> Result<PathBuf, BinError> {
    let dir = profile_dir()?;
    let exe = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        return Ok(exe);
    }
    let _guard = BUILD_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if exe.is_file() {
        return Ok(exe);
    }
    build_in(package, bin, &dir)?;
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(BinError(format!(
            "cargo built {package} but {} does not exist",
            exe.display()
        )))
    }
}

/// The directory of the running profile: `target/debug` or `target/release`
/// (the parent of `deps/` for a test executable).
pub fn profile_dir() -> Result<PathBuf, BinError> {
    let exe = std::env::current_exe()
        .map_err(|e| BinError(format!("cannot find the running executable: {e}")))?;
    let mut dir = exe
        .parent()
        .ok_or_else(|| BinError("the running executable has no directory".into()))?
        .to_path_buf();
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.pop();
    }
    Ok(dir)
}

/// Brings the executable `bin` of `package` up to date: `cargo build` with the
/// profile of the running executable, into its target folder, unless the
/// executable is newer than every source file it is built from. The conformance
/// runner calls it before each run, so that it never starts a stale bridge.
///
/// Cargo alone would be wrong here under `cargo test --workspace`: that build
/// unifies the features of every package of the workspace, and `cargo build -p`
/// of one package would build it again with its own features, dependencies and
/// all, for minutes, to replace an executable that was fresh.
pub fn build(package: &str, bin: &str) -> Result<(), BinError> {
    let dir = profile_dir()?;
    let exe = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    if fresh::is_fresh(&workspace_manifest(), package, &exe) {
        return Ok(());
    }
    build_in(package, bin, &dir)
}

/// The manifest of the workspace of this crate, whatever the current folder.
fn workspace_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")
}

fn build_in(package: &str, bin: &str, dir: &Path) -> Result<(), BinError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet", "-p", package, "--bin", bin]);
    let manifest = workspace_manifest();
    if manifest.is_file() {
        command.arg("--manifest-path").arg(&manifest);
    }
    if dir.file_name().is_some_and(|name| name == "release") {
        command.arg("--release");
    }
    // Build into the same target directory as the running executable.
    if let Some(target) = dir.parent() {
        command.arg("--target-dir").arg(target);
    }
    let status = command
        .status()
        .map_err(|e| BinError(format!("cannot run cargo to build {bin}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(BinError(format!(
            "cargo build -p {package} --bin {bin} failed ({status})"
        )))
    }
}
