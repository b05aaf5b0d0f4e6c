//! The URL form opens its token store at the start: one line that names it, or
//! exit code 2 with `the token store did not open: <cause>`. Stdin is empty, so
//! the bridge stops right after the start (exit 0).

use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, FileStore, StoredSignIn, TokenKey, TokenStore,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const URL: &str = "https://127.0.0.1:9/mcp";

fn start(args: &[&str], env: &[(&str, String)]) -> (Option<i32>, Vec<String>, tempfile::TempDir) {
    start_in(tempfile::tempdir().unwrap(), args, env)
}

/// [`start`] in a home that the test prepared.
fn start_in(
    home: tempfile::TempDir,
    args: &[&str],
    env: &[(&str, String)],
) -> (Option<i32>, Vec<String>, tempfile::TempDir) {
    let runtime = home.path().join("run");
    let _ = std::fs::create_dir(&runtime);
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

const KEY_A: &str = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0";
const KEY_B: &str = "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b";

/// A home whose token directory holds one sign-in stored with [`KEY_A`], and that
/// directory.
fn home_with_a_sign_in() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let tokens = home.path().join("state/mcp-bridge-rs/vscode/tokens");
    let store = FileStore::open(&tokens, TokenKey::from_hex(KEY_A).unwrap()).unwrap();
    let entry = EntryKey::new(
        URL,
        "default",
        "http://127.0.0.1:41894/callback",
        ClientOption::Default,
    );
    let sign_in = StoredSignIn {
        issuer: "https://as.example.com".into(),
        resource: URL.into(),
        client_id: "client-a".into(),
        client_secret: None,
        access_token: "access-of-key-a".into(),
        refresh_token: Some("refresh-of-key-a".into()),
        expires_at: Some(4_102_444_800),
        scope: None,
    };
    store.save(&entry, &sign_in).unwrap();
    (home, tokens)
}

/// Every file of `dir` and its bytes.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|item| {
            let item = item.unwrap();
            (
                item.file_name().to_string_lossy().into_owned(),
                std::fs::read(item.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_key_that_is_not_the_key_of_the_token_directory_does_not_open_the_file_store() {
    let (home, tokens) = home_with_a_sign_in();
    let before = files_of(&tokens);
    let reason = format!(
        "the key of the file store is not the key of the token directory {}: give the key that stored its sign-ins, or delete them with mcp-bridge-vscode logout --all",
        tokens.display()
    );
    let key_b = ("MCP_BRIDGE_TOKEN_KEY", KEY_B.to_owned());
    let (code, lines, home) = start_in(
        home,
        &["--token-store", "file"],
        std::slice::from_ref(&key_b),
    );
    assert_eq!(code, Some(2), "{lines:?}");
    assert_eq!(
        lines,
        [format!(
            "mcp-bridge-vscode: vscode: error: the token store did not open: {reason}"
        )]
    );
    assert_eq!(files_of(&tokens), before, "the token directory changed");
    // auto: the next store, memory, and why.
    let (code, lines, home) = start_in(home, &[], &[key_b]);
    assert_eq!(code, Some(0), "{lines:?}");
    let first = lines.first().cloned().unwrap_or_default();
    assert!(
        first.starts_with(
            "mcp-bridge-vscode: bridge: info: the tokens stay in memory (no keychain: "
        ) && first.ends_with(&format!(
            "; the file store did not open: {reason}): each start needs a new sign-in"
        )),
        "{lines:?}"
    );
    assert_eq!(files_of(&tokens), before, "the token directory changed");
    // The right key opens it.
    let (code, lines, _home) = start_in(
        home,
        &["--token-store", "file"],
        &[("MCP_BRIDGE_TOKEN_KEY", KEY_A.to_owned())],
    );
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines.first(),
        Some(&format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in {}",
            tokens.display()
        ))
    );
}
