//! Whether an executable is newer than the sources it is built from: the files of
//! its package and of every package of the workspace it depends on by path, with
//! the manifests and the lock file of the workspace. `cargo metadata` names them.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// `false` whenever it cannot tell (no executable, no metadata, a file it cannot
/// read): the caller then asks Cargo, which decides for itself.
pub fn is_fresh(workspace_manifest: &Path, package: &str, exe: &Path) -> bool {
    let Some(built) = modified(exe) else {
        return false;
    };
    let Some(sources) = source_dirs(workspace_manifest, package) else {
        return false;
    };
    let Some(root) = workspace_manifest.parent() else {
        return false;
    };
    let mut files = vec![workspace_manifest.to_path_buf(), root.join("Cargo.lock")];
    for dir in &sources {
        files.push(dir.join("Cargo.toml"));
        files.push(dir.join("build.rs"));
    }
    let mut newest = files.iter().filter_map(|file| modified(file)).max();
    for dir in &sources {
        match newest_in(&dir.join("src")) {
            Ok(time) => newest = newest.max(time),
            Err(()) => return false,
        }
    }
    newest.is_some_and(|newest| newest <= built)
}

/// The folders of `package` and of the workspace packages it depends on (normal
/// and build dependencies with a path), from `cargo metadata --no-deps`.
fn source_dirs(workspace_manifest: &Path, package: &str) -> Option<BTreeSet<PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(workspace_manifest)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).ok()?;
    let packages = metadata["packages"].as_array()?;
    let mut dirs = BTreeSet::new();
    let mut next = vec![package.to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(name) = next.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let found = packages.iter().find(|p| p["name"] == name.as_str())?;
        let manifest = Path::new(found["manifest_path"].as_str()?);
        dirs.insert(manifest.parent()?.to_path_buf());
        for dependency in found["dependencies"].as_array()? {
            let is_dev = dependency["kind"] == "dev";
            if !is_dev && dependency["path"].is_string() {
                next.push(dependency["name"].as_str()?.to_owned());
            }
        }
    }
    Some(dirs)
}

/// The newest modification time under `dir` (none for a folder without files).
fn newest_in(dir: &Path) -> Result<Option<SystemTime>, ()> {
    let mut newest = None;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            // A package without src/ has nothing here; any other error: unknown.
            if dir.exists() {
                return Err(());
            }
            continue;
        };
        for entry in entries {
            let path = entry.map_err(|_| ())?.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                newest = newest.max(modified(&path));
            }
        }
    }
    Ok(newest)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")
    }

    #[test]
    fn the_bridge_is_built_from_its_own_folder_and_the_path_crates_it_uses_not_from_its_test_crates()
     {
        let dirs = source_dirs(&workspace(), "mcp-bridge-vscode").expect("cargo metadata");
        let names: BTreeSet<String> = dirs
            .iter()
            .filter_map(|dir| dir.file_name()?.to_str().map(str::to_owned))
            .collect();
        assert!(names.contains("bridge"), "{names:?}");
        assert!(names.contains("json-shallow"), "{names:?}");
        assert!(
            !names.contains("harness-sim"),
            "a dev-dependency: {names:?}"
        );
        assert!(!names.contains("fixture-server"), "{names:?}");
    }

    #[test]
    fn an_executable_older_than_a_source_is_stale_and_a_missing_one_is_never_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("exe");
        assert!(!is_fresh(&workspace(), "workspace-bin", &exe));
        std::fs::write(&exe, b"").unwrap();
        let past = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(&exe)
            .unwrap()
            .set_modified(past)
            .unwrap();
        assert!(!is_fresh(&workspace(), "workspace-bin", &exe));
        let future = SystemTime::now() + std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&exe)
            .unwrap()
            .set_modified(future)
            .unwrap();
        assert!(is_fresh(&workspace(), "workspace-bin", &exe));
    }
}
