//! Every test file is a module of one of the test executables: with autotests off,
//! a file that no executable declares would never run, and nothing would say so.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_test_file_belongs_to_a_test_executable() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let roots: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("path = \"tests/"))
        .filter_map(|rest| rest.strip_suffix(".rs\""))
        .collect();
    assert!(!roots.is_empty(), "no [[test]] in Cargo.toml");
    let mut declared = BTreeSet::new();
    for root in &roots {
        let text = std::fs::read_to_string(dir.join("tests").join(format!("{root}.rs"))).unwrap();
        declared.extend(
            text.lines()
                .filter_map(|line| line.strip_prefix("mod "))
                .filter_map(|rest| rest.strip_suffix(';'))
                .map(str::to_owned),
        );
    }
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        let is_module =
            path.extension().is_some_and(|ext| ext == "rs") || path.join("mod.rs").is_file();
        if is_module && !roots.contains(&stem) && !declared.contains(stem) {
            orphans.push(stem.to_owned());
        }
    }
    assert!(
        orphans.is_empty(),
        "test files that no test executable declares (add `mod <name>;` to a root in bridge/tests): {orphans:?}"
    );
}
