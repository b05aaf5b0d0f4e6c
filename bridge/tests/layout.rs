//! Every test file of a package with autotests off is a module of one of its test
//! executables: a file that no executable declares would never run, and nothing
//! would say so.

use std::collections::BTreeSet;
use std::path::Path;

/// The files and folders in `package/tests` that no `[[test]]` root declares.
fn orphans(package: &Path, manifest: &str) -> Vec<String> {
    let roots: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("path = \"tests/"))
        .filter_map(|rest| rest.strip_suffix(".rs\""))
        .collect();
    assert!(!roots.is_empty(), "{}: no [[test]]", package.display());
    let tests = package.join("tests");
    let mut declared = BTreeSet::new();
    for root in &roots {
        let text = std::fs::read_to_string(tests.join(format!("{root}.rs"))).unwrap();
        declared.extend(
            text.lines()
                .filter_map(|line| line.strip_prefix("mod "))
                .filter_map(|rest| rest.strip_suffix(';'))
                .map(str::to_owned),
        );
    }
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        let is_module =
            path.extension().is_some_and(|ext| ext == "rs") || path.join("mod.rs").is_file();
        if is_module && !roots.contains(&stem) && !declared.contains(stem) {
            orphans.push(format!("{}", path.display()));
        }
    }
    orphans
}

/// The package folders that the root manifest's `members` names (the products at
/// the top, the helper crates under `support/`).
fn members(workspace: &Path) -> Vec<std::path::PathBuf> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let (_, rest) = manifest
        .split_once("members = [")
        .expect("a members list in the root Cargo.toml");
    let (list, _) = rest.split_once(']').expect("the end of the members list");
    list.split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .map(|member| workspace.join(member))
        .collect()
}

#[test]
fn every_member_of_the_workspace_is_a_folder_with_a_manifest() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let members = members(&workspace);
    let missing: Vec<_> = members
        .iter()
        .filter(|package| !package.join("Cargo.toml").is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "members without a manifest: {missing:?}"
    );
    assert!(
        members.contains(&workspace.join("support/json-shallow"))
            && members.contains(&workspace.join("support/workspace-bin")),
        "the helper crates live under support/: {members:?}"
    );
}

#[test]
fn every_test_file_belongs_to_a_test_executable() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    let mut found = Vec::new();
    for package in members(&workspace) {
        let Ok(manifest) = std::fs::read_to_string(package.join("Cargo.toml")) else {
            continue;
        };
        if manifest
            .lines()
            .any(|line| line.trim() == "autotests = false")
        {
            checked += 1;
            found.extend(orphans(&package, &manifest));
        }
    }
    assert!(checked >= 3, "the packages with autotests off: {checked}");
    assert!(
        found.is_empty(),
        "test files that no test executable declares (add `mod <name>;` to a test root): {found:?}"
    );
}

/// The example consumer lives outside the workspace with a Cargo.lock of its own, which
/// .ci/run uses with `--locked`: a dependency that the bridge gains must reach that
/// lock too, or CI fails after the whole test command.
#[test]
fn the_lock_of_the_example_consumer_is_current() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/consumer/Cargo.toml");
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "examples/consumer/Cargo.lock is out of date: run `cargo update --manifest-path examples/consumer/Cargo.toml --workspace`\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
