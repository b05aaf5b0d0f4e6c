//! The URL form opens its token store at the start: one line that names it, or
//! exit code 2 with `the token store did not open: <cause>`. Stdin is empty, so
//! the bridge stops right after the start (exit 0).

use std::process::{Command, Stdio};

const URL: &str = "https://127.0.0.1:9/mcp";

fn start(args: &[&str], env: &[(&str, String)]) -> (Option<i32>, Vec<String>, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .args(args)
        .arg(URL)
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        // No session bus: the keychain of the host does not open.
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("MCP_BRIDGE_TOKEN_KEY")
        .envs(env.iter().map(|(name, value)| (*name, value)))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let lines = String::from_utf8(output.stderr)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    (output.status.code(), lines, home)
}

#[test]
fn the_start_line_names_the_store_of_token_store() {
    let (code, lines, _home) = start(&["--token-store", "memory"], &[]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines.first().map(String::as_str),
        Some(
            "mcp-bridge-vscode: bridge: info: the tokens stay in memory (--token-store memory): each start needs a new sign-in"
        )
    );
    let key = ("MCP_BRIDGE_TOKEN_KEY", "ab".repeat(32));
    let (code, lines, home) = start(&["--token-store", "file"], std::slice::from_ref(&key));
    assert_eq!(code, Some(0), "{lines:?}");
    let tokens = home.path().join("state/mcp-bridge-rs/vscode/tokens");
    assert_eq!(
        lines.first(),
        Some(&format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in {}",
            tokens.display()
        ))
    );
    assert!(tokens.is_dir());
    // auto without a keychain: the files, with the key.
    let (_, lines, home) = start(&[], &[key]);
    let tokens = home.path().join("state/mcp-bridge-rs/vscode/tokens");
    assert_eq!(
        lines.first(),
        Some(&format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in {}",
            tokens.display()
        ))
    );
    // auto without a keychain and without a key: memory, and why.
    let (_, lines, _home) = start(&[], &[]);
    let first = lines.first().cloned().unwrap_or_default();
    assert!(
        first.starts_with("mcp-bridge-vscode: bridge: info: the tokens stay in memory (no keychain: ")
            && first.ends_with("; no key of the file store in MCP_BRIDGE_TOKEN_KEY or --token-key-file): each start needs a new sign-in"),
        "{lines:?}"
    );
}

#[test]
fn an_explicit_store_that_does_not_open_exits_two_with_its_cause() {
    let (code, lines, _home) = start(&["--token-store", "file"], &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        lines,
        [
            "mcp-bridge-vscode: vscode: error: the token store did not open: the file store needs a key: set MCP_BRIDGE_TOKEN_KEY to 64 hexadecimal digits, or give --token-key-file"
        ]
    );
    let (code, lines, _home) = start(
        &["--token-store", "auto"],
        &[("MCP_BRIDGE_TOKEN_KEY", "secret-but-short-5e8a".into())],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        lines,
        [
            "mcp-bridge-vscode: vscode: error: the token store did not open: the key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits"
        ]
    );
    let (code, lines, _home) = start(&["--token-store", "keychain"], &[]);
    assert_eq!(code, Some(2));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("mcp-bridge-vscode: vscode: error: the token store did not open: the keychain of the host did not open: "),
        "{lines:?}"
    );
}

#[test]
fn a_static_authorization_header_opens_no_token_store() {
    let (code, lines, _home) = start(
        &["--header-env", "Authorization=API_AUTH"],
        &[("API_AUTH", "Bearer static-3c9d".into())],
    );
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        lines.iter().all(|line| !line.contains("tokens")),
        "{lines:?}"
    );
}
