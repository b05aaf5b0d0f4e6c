//! The executable `tls-fixtures`: `generate DIR` writes the files and prints their
//! paths; anything else is a usage error.

use std::process::Command;

fn tls_fixtures() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tls-fixtures"))
}

#[test]
fn generate_writes_every_file_and_prints_each_path() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("certs");
    let output = tls_fixtures()
        .arg("generate")
        .arg(&target)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(printed.len(), 10);
    for path in &printed {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("-----BEGIN "), "{path}");
    }
    assert_eq!(printed[0], target.join("ca.crt").display().to_string());
}

#[test]
fn other_arguments_get_the_usage_and_exit_2() {
    for args in [&[][..], &["generate"][..], &["make", "x"][..]] {
        let output = tls_fixtures().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.contains("Usage: tls-fixtures generate DIR"),
            "{stderr}"
        );
    }
    let help = tls_fixtures().arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(
        String::from_utf8(help.stdout)
            .unwrap()
            .contains("unknown-ca.crt")
    );
}
