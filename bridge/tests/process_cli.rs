//! The command line of the executable: exit code 2 with the error line and the usage,
//! `--help` and `--version` on stdout.

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn an_unknown_option_exits_two_with_the_line_and_the_usage() {
    for option in [
        "--allow-http",
        "--insecure",
        "--headless",
        "--client-secret=process-test-marker-3b7f",
    ] {
        let (code, stdout, stderr) = run(&[option, "--", "server"]);
        assert_eq!(code, Some(2), "{option}");
        assert!(stdout.is_empty());
        let name = option.split('=').next().unwrap();
        assert_eq!(
            stderr,
            format!(
                "mcp-bridge-vscode: vscode: error: the option {name} is not known\nUsage: mcp-bridge-vscode [options] -- <command> [args...]\n       mcp-bridge-vscode [options] <url>\nRun mcp-bridge-vscode --help for the options.\n"
            )
        );
        assert!(
            !stderr.contains("process-test-marker-3b7f"),
            "a value reached stderr"
        );
    }
}

#[test]
fn a_missing_command_or_value_exits_two_and_names_it() {
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("mcp-bridge-vscode: vscode: error: the upstream command is missing")
    );
    let (code, _, stderr) = run(&["--name"]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with("mcp-bridge-vscode: vscode: error: the option --name has no value"));
    let (code, _, stderr) = run(&["http://mcp.example.com/mcp"]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with(
        "mcp-bridge-vscode: vscode: error: the URL of the upstream server uses http to a host that is not a loopback host: use https\nUsage: "
    ));
    let (code, _, stderr) = run(&[
        "--header-env",
        "Authorization=MCP_BRIDGE_TEST_UNSET_7f",
        "https://mcp.example.com/mcp",
    ]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with(
        "mcp-bridge-vscode: vscode: error: the variable MCP_BRIDGE_TEST_UNSET_7f of --header-env is not set\nUsage: "
    ));
}

#[test]
fn help_and_version_go_to_stdout_and_exit_zero() {
    let (code, stdout, stderr) = run(&["--help"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert!(stdout.contains("Usage: mcp-bridge-vscode [options] -- <command> [args...]"));
    let (code, stdout, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        format!("mcp-bridge-vscode {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_ca_file_that_cannot_be_used_exits_two_with_its_line_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ca.pem");
    std::fs::write(&path, "no certificate here").unwrap();
    let path = path.to_string_lossy().into_owned();
    let (code, stdout, stderr) = run(&["--ca-file", &path, "https://mcp.example.com/mcp"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        format!(
            "mcp-bridge-vscode: vscode: error: cannot use the CA certificates of --ca-file: {path} has no PEM certificate\n"
        )
    );
}

#[test]
fn a_secret_header_on_the_command_line_gets_its_warning_and_its_value_never_shows() {
    // The bridge starts (no upstream is contacted before initialize) and stops at
    // the end of its input.
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .args([
            "--header",
            "X-Api-Key: marker-5d1e",
            "https://mcp.example.com/mcp",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr.starts_with(
        "mcp-bridge-vscode: vscode: warning: the value of the header X-Api-Key is on the command line. "
    ), "{stderr}");
    assert!(!stderr.contains("marker-5d1e"), "{stderr}");
}
