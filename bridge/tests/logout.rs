//! `mcp-bridge-vscode logout` as a process, with a file store in a temporary
//! directory: the lines of the Output channel and the exit codes 0, 1 and 2.

use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, FileStore, StoredSignIn, TokenKey, TokenStore,
};
use std::path::{Path, PathBuf};
use std::process::Command;

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const URL: &str = "https://127.0.0.1:9/mcp";

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn tokens(&self) -> PathBuf {
        self.dir.path().join("state/mcp-bridge-rs/vscode/tokens")
    }

    fn store(&self) -> FileStore {
        FileStore::open(&self.tokens(), TokenKey::from_hex(KEY).unwrap()).unwrap()
    }

    /// Runs logout with the key in the environment and no keychain.
    fn logout(&self, args: &[&str]) -> (Option<i32>, String) {
        self.logout_with(args, Some(KEY))
    }

    fn logout_with(&self, args: &[&str], key: Option<&str>) -> (Option<i32>, String) {
        let runtime = self.dir.path().join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"));
        command
            .arg("logout")
            .args(args)
            .env("HOME", self.dir.path())
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            // No session bus: the keychain of the host does not open.
            .env("XDG_RUNTIME_DIR", &runtime)
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("MCP_BRIDGE_TOKEN_KEY");
        if let Some(key) = key {
            command.env("MCP_BRIDGE_TOKEN_KEY", key);
        }
        let output = command.output().unwrap();
        assert!(output.stdout.is_empty());
        (
            output.status.code(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }
}

fn entry(url: &str, account: &str, port: u16, client: ClientOption<'_>) -> EntryKey {
    EntryKey::new(
        url,
        account,
        &format!("http://127.0.0.1:{port}/callback"),
        client,
    )
}

fn sign_in() -> StoredSignIn {
    StoredSignIn {
        issuer: "https://as.example.com".into(),
        resource: URL.into(),
        client_id: "client-1".into(),
        client_secret: None,
        access_token: "access-secret-4f2a".into(),
        refresh_token: Some("refresh-secret-9c1b".into()),
        expires_at: None,
        scope: None,
    }
}

const DELETED: &str = "mcp-bridge-vscode: vscode: info: logout deleted the stored sign-in of the account \"default\". Restart the server in VS Code to sign in again.\n";
const NONE: &str = "mcp-bridge-vscode: vscode: info: logout found no stored sign-in of the account \"default\" for the URL\n";

#[test]
fn logout_deletes_the_entries_of_the_url_and_the_account_and_then_finds_none() {
    let home = Home::new();
    let store = home.store();
    let default = entry(URL, "default", 41894, ClientOption::Default);
    let with_client = entry(URL, "default", 41894, ClientOption::ClientId("c1"));
    let work = entry(URL, "work", 41894, ClientOption::Default);
    let other_port = entry(URL, "default", 41895, ClientOption::Default);
    let other_url = entry(
        "https://127.0.0.2:9/mcp",
        "default",
        41894,
        ClientOption::Default,
    );
    for key in [&default, &with_client, &work, &other_port, &other_url] {
        store.save(key, &sign_in()).unwrap();
    }
    let (code, stderr) = home.logout(&["--token-store", "file", URL]);
    assert_eq!((code, stderr.as_str()), (Some(0), DELETED));
    assert!(!stderr.contains("secret"));
    assert_eq!(store.keys().unwrap(), {
        let mut left = vec![work.clone(), other_port.clone(), other_url.clone()];
        left.sort();
        left
    });
    let (code, stderr) = home.logout(&["--token-store=file", URL]);
    assert_eq!((code, stderr.as_str()), (Some(0), NONE));

    let (code, stderr) = home.logout(&["--token-store", "file", "--account", "work", URL]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(0),
            "mcp-bridge-vscode: vscode: info: logout deleted the stored sign-in of the account \"work\". Restart the server in VS Code to sign in again.\n"
        )
    );
    let (code, stderr) = home.logout(&["--token-store", "file", "--redirect-port", "41895", URL]);
    assert_eq!((code, stderr.as_str()), (Some(0), DELETED));
    assert_eq!(store.keys().unwrap(), vec![other_url]);
}

#[test]
fn logout_with_auto_skips_the_keychain_that_does_not_open() {
    let home = Home::new();
    home.store()
        .save(
            &entry(URL, "default", 41894, ClientOption::Default),
            &sign_in(),
        )
        .unwrap();
    let (code, stderr) = home.logout(&[URL]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(
            "mcp-bridge-vscode: vscode: info: logout skipped the keychain of the host: "
        ),
        "{stderr}"
    );
    assert_eq!(format!("{}\n", lines[1]), DELETED);
    // Without a key, auto skips the files too, and finds nothing.
    let (code, stderr) = home.logout_with(&[URL], None);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "mcp-bridge-vscode: vscode: info: logout skipped the encrypted files: the file store needs a key: set MCP_BRIDGE_TOKEN_KEY to 64 hexadecimal digits, or give --token-key-file",
            NONE.trim_end()
        ],
        "{stderr}"
    );
}

#[test]
fn logout_all_deletes_the_token_directory_without_a_key() {
    let home = Home::new();
    let store = home.store();
    for account in ["default", "work"] {
        store
            .save(
                &entry(URL, account, 41894, ClientOption::Default),
                &sign_in(),
            )
            .unwrap();
    }
    let (code, stderr) = home.logout_with(&["--all", "--token-store", "file"], None);
    assert_eq!(
        (code, stderr),
        (
            Some(0),
            format!(
                "mcp-bridge-vscode: vscode: info: logout --all deleted the token directory {}\n",
                home.tokens().display()
            )
        )
    );
    assert!(!home.tokens().exists());
    let (code, stderr) = home.logout(&["--all", "--token-store", "file"]);
    assert_eq!(
        (code, stderr),
        (
            Some(0),
            format!(
                "mcp-bridge-vscode: vscode: info: logout --all found no token directory {}: the encrypted files hold no sign-in\n",
                home.tokens().display()
            )
        )
    );
}

#[test]
fn logout_exits_one_when_a_deletion_fails() {
    let home = Home::new();
    home.store()
        .save(
            &entry(URL, "default", 41894, ClientOption::Default),
            &sign_in(),
        )
        .unwrap();
    // An entry that cannot be read: a directory in place of a file.
    let blocked = home.tokens().join(format!("{}.entry", "ab".repeat(32)));
    std::fs::create_dir(&blocked).unwrap();
    let (code, stderr) = home.logout(&["--token-store", "file", URL]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "mcp-bridge-vscode: vscode: error: logout could not delete the stored sign-in of the account \"default\" in the encrypted files in {}: cannot read the token file {}: ",
            home.tokens().display(),
            blocked.display()
        )),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // --all, with a file where the token directory should be.
    let home = Home::new();
    std::fs::create_dir_all(home.tokens().parent().unwrap()).unwrap();
    std::fs::write(home.tokens(), "not a directory").unwrap();
    let (code, stderr) = home.logout_with(&["--all", "--token-store", "file"], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "mcp-bridge-vscode: vscode: error: logout --all could not delete the token directory {}: ",
            home.tokens().display()
        )),
        "{stderr}"
    );
}

#[test]
fn logout_exits_two_for_arguments_a_ca_file_or_an_explicit_store_that_do_not_work() {
    let home = Home::new();
    let (code, stderr) = home.logout_with(&["--token-store", "file", URL], None);
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(2),
            "mcp-bridge-vscode: vscode: error: the token store did not open: the file store needs a key: set MCP_BRIDGE_TOKEN_KEY to 64 hexadecimal digits, or give --token-key-file\n"
        )
    );
    let (code, stderr) = home.logout_with(&["--token-store", "file", URL], Some("not-a-key-7d1e"));
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(2),
            "mcp-bridge-vscode: vscode: error: the token store did not open: the key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits\n"
        )
    );
    let (code, stderr) = home.logout(&["--token-store", "keychain", URL]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("mcp-bridge-vscode: vscode: error: the token store did not open: the keychain of the host did not open: "),
        "{stderr}"
    );
    let ca = home.dir.path().join("ca.pem");
    std::fs::write(&ca, "no certificate").unwrap();
    let (code, stderr) = home.logout(&["--ca-file", ca.to_str().unwrap(), URL]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with(
            "mcp-bridge-vscode: vscode: error: cannot use the CA certificates of --ca-file: "
        ),
        "{stderr}"
    );
    let usage = "Usage: mcp-bridge-vscode logout [--account <label>] [options] <url>\n       mcp-bridge-vscode logout --all [options]\nRun mcp-bridge-vscode logout --help for the options.\n";
    for (args, line) in [
        (&[][..], "logout needs the URL of the server, or --all"),
        (&["--all", URL][..], "write either a URL or --all, not both"),
        (
            &["--header", "X: y", URL][..],
            "the option --header is not known",
        ),
        (
            &["--account", "two words", URL][..],
            "the value of the option --account is not valid: use 1 to 64 letters, digits, -, ., _, @ or +",
        ),
    ] {
        let (code, stderr) = home.logout(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(
            stderr,
            format!("mcp-bridge-vscode: vscode: error: {line}\n{usage}"),
            "{args:?}"
        );
    }
    assert!(!Path::new(&home.tokens()).exists());
}

#[test]
fn logout_in_memory_has_nothing_to_delete() {
    let home = Home::new();
    let (code, stderr) = home.logout(&["--token-store", "memory", URL]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(0),
            "mcp-bridge-vscode: vscode: info: logout has nothing to delete in memory (--token-store memory): the tokens of a bridge in memory end with its process\n"
        )
    );
}

/// `mcp-bridge-vscode logout ARGS` in this process's environment (the keychain
/// tests' own session or keychain): its exit code and its stderr.
pub(crate) fn logout_here(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .arg("logout")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
