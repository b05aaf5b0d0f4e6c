//! Finds the executables of this workspace.
//!
//! Tests and the conformance runner start the real executables (`mcp-bridge-vscode`,
//! `bridge-fixture-server`, `harness-sim`) as child processes. Cargo only tells a test
//! where the binaries of its *own* package are, so this crate looks next to the running
//! executable (`target/<profile>/`) and, when a binary is missing, asks Cargo to build
//! it with the same profile.
//!
//! Every build here is one `cargo build` for all the executables it needs, with the
//! `workspace-hack` package selected too, so that third-party crates get the features
//! they have in `cargo build --workspace` and `cargo test --workspace`: nothing that
//! those built is compiled again. Cargo's progress goes to stderr, after a line that
//! says what is built and why.
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

/// An executable of the workspace: its package and the name of its binary target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Executable {
    pub package: &'static str,
    pub bin: &'static str,
}

impl Executable {
    pub const fn new(package: &'static str, bin: &'static str) -> Self {
        Self { package, bin }
    }

    /// Its file in the folder of the running profile.
    pub fn file(&self) -> Result<PathBuf, BinError> {
        Ok(profile_dir()?.join(format!("{}{}", self.bin, std::env::consts::EXE_SUFFIX)))
    }
}

/// One build at a time: parallel tests asking for the same binary would
/// otherwise start several Cargo processes that wait on each other's lock.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// The path of the executable `bin` of the workspace package `package`,
/// built with the profile of the running executable when it is missing.
pub fn path(package: &'static str, bin: &'static str) -> Result<PathBuf, BinError> {
    let executable = Executable::new(package, bin);
    let exe = executable.file()?;
    if exe.is_file() {
        return Ok(exe);
    }
    let _guard = BUILD_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if exe.is_file() {
        return Ok(exe);
    }
    run_cargo_build(&[executable], "missing")?;
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(BinError(format!(
            "cargo built {package} but {} does not exist",
            exe.display()
        )))
    }
}

/// Brings `executables` up to date with one `cargo build` in the profile of the
/// running executable, unless each is newer than every source file it is built
/// from. The conformance runner calls it before each run, so that it never starts
/// a stale bridge.
///
/// The build names all of them, fresh or not, so that a package they share (the
/// bridge, whose feature `rmcp` the embedded server turns on) has the features it
/// has in `cargo build --workspace`. The source times spare the start of cargo when
/// nothing changed.
pub fn build(executables: &[Executable]) -> Result<(), BinError> {
    let manifest = workspace_manifest();
    let mut stale = false;
    for executable in executables {
        stale |= !fresh::is_fresh(&manifest, executable.package, &executable.file()?);
    }
    if !stale {
        return Ok(());
    }
    let _guard = BUILD_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    run_cargo_build(executables, "one is older than its sources, or missing")
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

/// The manifest of the workspace of this crate, whatever the current folder.
fn workspace_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")
}

/// The arguments of the one `cargo build` of `executables` into `dir`, the folder of
/// a profile (`debug` is the profile `dev`).
fn cargo_build_args(executables: &[Executable], dir: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec!["build".into()];
    match dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") | None => {}
        Some(profile) => args.extend(["--profile".into(), profile.into()]),
    }
    let mut packages: Vec<&str> = Vec::new();
    for package in executables
        .iter()
        .map(|e| e.package)
        .chain(["workspace-hack"])
    {
        if !packages.contains(&package) {
            packages.push(package);
        }
    }
    for package in packages {
        args.extend(["-p".into(), package.into()]);
    }
    for executable in executables {
        args.extend(["--bin".into(), executable.bin.into()]);
    }
    args
}

fn run_cargo_build(executables: &[Executable], why: &str) -> Result<(), BinError> {
    let dir = profile_dir()?;
    let args = cargo_build_args(executables, &dir);
    let names: Vec<&str> = executables.iter().map(|e| e.bin).collect();
    eprintln!(
        "workspace-bin: building {} ({why}): cargo {}",
        names.join(", "),
        args.join(" ")
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(&args);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_set_by_cargo_for_its_program) {
            command.env_remove(name);
        }
    }
    let manifest = workspace_manifest();
    if manifest.is_file() {
        command.arg("--manifest-path").arg(&manifest);
    }
    // Build into the same target directory as the running executable.
    if let Some(target) = dir.parent() {
        command.arg("--target-dir").arg(target);
    }
    let status = command.status().map_err(|e| {
        BinError(format!(
            "cannot run cargo to build {}: {e}",
            names.join(", ")
        ))
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(BinError(format!(
            "cargo {} failed ({status})",
            args.join(" ")
        )))
    }
}

/// The variables that cargo sets for the program it runs (`cargo run`, a test), which
/// are no settings of cargo. Build scripts watch some of them (ring's watches
/// `CARGO_MANIFEST_DIR`): a build that inherited them would run those scripts again and
/// compile their crates a second time.
fn is_set_by_cargo_for_its_program(name: &str) -> bool {
    matches!(
        name,
        "CARGO_MANIFEST_DIR"
            | "CARGO_MANIFEST_PATH"
            | "CARGO_CRATE_NAME"
            | "CARGO_BIN_NAME"
            | "CARGO_PRIMARY_PACKAGE"
            | "CARGO_TARGET_TMPDIR"
            | "CARGO_RUSTC_CURRENT_DIR"
            | "OUT_DIR"
    ) || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_BIN_EXE_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRIDGE: Executable = Executable::new("mcp-bridge-vscode", "mcp-bridge-vscode");
    const FIXTURE: Executable = Executable::new("bridge-fixture-server", "bridge-fixture-server");

    #[test]
    fn the_build_leaves_out_what_cargo_set_for_this_program_and_keeps_cargo_settings() {
        for name in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_BIN_EXE_mcp-conformance",
            "OUT_DIR",
        ] {
            assert!(is_set_by_cargo_for_its_program(name), "{name}");
        }
        for name in [
            "CARGO",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_INCREMENTAL",
            "CARGO_BUILD_JOBS",
        ] {
            assert!(!is_set_by_cargo_for_its_program(name), "{name}");
        }
    }

    #[test]
    fn one_build_names_every_executable_and_the_workspace_hack_in_the_running_profile() {
        assert_eq!(
            cargo_build_args(&[BRIDGE, FIXTURE], Path::new("/t/debug")).join(" "),
            "build -p mcp-bridge-vscode -p bridge-fixture-server -p workspace-hack \
             --bin mcp-bridge-vscode --bin bridge-fixture-server"
        );
        assert_eq!(
            cargo_build_args(&[BRIDGE], Path::new("/t/release")).join(" "),
            "build --profile release -p mcp-bridge-vscode -p workspace-hack --bin mcp-bridge-vscode"
        );
        assert_eq!(
            cargo_build_args(&[BRIDGE], Path::new("/t/dist")).join(" "),
            "build --profile dist -p mcp-bridge-vscode -p workspace-hack --bin mcp-bridge-vscode"
        );
    }
}
