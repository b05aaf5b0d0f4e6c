//! The keychain store against a real Secret Service: gnome-keyring in a D-Bus
//! session of its own (`dbus-run-session`), with a fresh login keyring in a
//! temporary home. Each test re-executes itself inside such a session, so that
//! `cargo test` runs them as they are, and checks the items as a user would, with
//! `secret-tool`. Without the tools, a test fails and names them (.ci/run installs
//! them).

use crate::logout::logout_here as logout;
use crate::pipes;
use mcp_bridge_vscode::config::TokenStoreChoice;
use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, FileStore, KeychainStore, NativeKeychain, SERVICE, StoreKind,
    StoredSignIn, TokenKey, TokenStore, open,
};
use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Set inside the session that a test made for itself.
const INSIDE: &str = "MCP_BRIDGE_TEST_INSIDE_SECRET_SERVICE";
const TOOLS: [&str; 4] = [
    "dbus-run-session",
    "gnome-keyring-daemon",
    "secret-tool",
    "dbus-send",
];

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

/// Outside a session: runs the test `name` again inside a new one and asserts that
/// it passed. Inside: `false`, the test goes on.
fn in_own_session(name: &str) -> bool {
    if std::env::var_os(INSIDE).is_some() {
        return false;
    }
    let missing: Vec<&str> = TOOLS
        .iter()
        .copied()
        .filter(|tool| !on_path(tool))
        .collect();
    assert!(
        missing.is_empty(),
        "the keychain tests need a real Secret Service: {} not found. Install the Debian packages dbus, gnome-keyring and libsecret-tools (.ci/run does)",
        missing.join(", ")
    );
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let output = Command::new("dbus-run-session")
        .args([
            "--",
            "sh",
            "-c",
            "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$@\"",
            "sh",
        ])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", &pipes::libtest_name(module_path!(), name)])
        .args(["--nocapture", "--test-threads=1"])
        .env(INSIDE, "1")
        .env("HOME", home.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("GNOME_KEYRING_CONTROL")
        .env_remove("MCP_BRIDGE_TOKEN_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{name} inside its Secret Service: {:?}\n{stdout}\n{stderr}",
        output.status
    );
    true
}

/// The environment of the bridge inside the session, with extra variables.
fn env_with(extra: &[(&str, String)]) -> impl Fn(&str) -> Option<String> + use<> {
    let extra: HashMap<String, String> = extra
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect();
    move |name: &str| {
        extra
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

fn entry(url: &str) -> EntryKey {
    EntryKey::new(
        url,
        "default",
        "http://127.0.0.1:41894/callback",
        ClientOption::Default,
    )
}

fn sign_in(access_token: &str) -> StoredSignIn {
    StoredSignIn {
        issuer: "https://as.example.com".into(),
        resource: "https://127.0.0.1:9/mcp".into(),
        client_id: "client-1".into(),
        client_secret: None,
        access_token: access_token.into(),
        refresh_token: Some("refresh-1".into()),
        expires_at: Some(4_102_444_800),
        scope: Some("mcp".into()),
    }
}

fn secret_tool(args: &[&str]) -> (bool, String) {
    let output = Command::new("secret-tool").args(args).output().unwrap();
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

fn dbus_send(args: &[&str]) -> String {
    let output = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "dbus-send {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Locks the default collection, as a user who locks the keyring.
fn lock_default_collection() {
    let reply = dbus_send(&[
        "/org/freedesktop/secrets",
        "org.freedesktop.Secret.Service.ReadAlias",
        "string:default",
    ]);
    let path = reply
        .split('"')
        .nth(1)
        .filter(|path| path.starts_with("/org/freedesktop/secrets/collection/"))
        .unwrap_or_else(|| panic!("no default collection: {reply}"))
        .to_owned();
    dbus_send(&[
        "/org/freedesktop/secrets",
        "org.freedesktop.Secret.Service.Lock",
        &format!("array:objpath:{path}"),
    ]);
}

/// Collects the log lines of the bridge, as they would go to stderr.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn with_log<T>(lines: &Lines, run: impl FnOnce() -> T) -> T {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let writer = lines.clone();
    // The scopes of the bridge, as the executable's logger has them.
    let scopes = tracing_subscriber::filter::Targets::new().with_targets(
        ["bridge", "vscode"].map(|scope| (scope, tracing::level_filters::LevelFilter::DEBUG)),
    );
    let layer = tracing_subscriber::fmt::layer()
        .event_format(mcp_bridge_vscode::log::LineFormat)
        .with_writer(move || writer.clone())
        .with_filter(scopes);
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, run)
}

fn state_dir() -> PathBuf {
    PathBuf::from(std::env::var("XDG_STATE_HOME").unwrap())
}

#[test]
fn a_sign_in_in_the_keychain_is_an_item_that_secret_tool_finds_and_clears() {
    if in_own_session("a_sign_in_in_the_keychain_is_an_item_that_secret_tool_finds_and_clears") {
        return;
    }
    let env = env_with(&[]);
    let opened = open(TokenStoreChoice::Keychain, None, &env).unwrap();
    assert_eq!(
        opened.line.to_string(),
        "the tokens are in the keychain of the host (service \"mcp-bridge-rs/mcp-bridge-vscode\")"
    );
    assert_eq!(opened.store.kind(), StoreKind::Keychain);
    let key = entry("https://127.0.0.1:9/mcp");
    opened.store.save(&key, &sign_in("access-1")).unwrap();
    assert_eq!(opened.store.load(&key).unwrap(), Some(sign_in("access-1")));
    opened.store.save(&key, &sign_in("access-2")).unwrap();
    assert_eq!(opened.store.keys().unwrap(), vec![key.clone()]);

    let (found, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(found, "{listing}");
    assert_eq!(
        listing
            .matches("attribute.service = mcp-bridge-rs/mcp-bridge-vscode")
            .count(),
        2,
        "one item for the entry and one for the index: {listing}"
    );
    assert!(listing.contains("attribute.username = index"), "{listing}");
    assert!(listing.contains("attribute.username = entry/"), "{listing}");
    assert!(
        !listing.contains("access-1"),
        "the old token is gone: {listing}"
    );

    // A new process (a new store) reads what the first one saved.
    let again = open(TokenStoreChoice::Auto, None, &env).unwrap();
    assert_eq!(again.store.load(&key).unwrap(), Some(sign_in("access-2")));

    let (cleared, output) = secret_tool(&["clear", "service", SERVICE]);
    assert!(cleared, "{output}");
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(!listing.contains("mcp-bridge-rs"), "{listing}");
    assert_eq!(again.store.load(&key).unwrap(), None);
    assert_eq!(again.store.keys().unwrap(), Vec::<EntryKey>::new());
}

#[test]
fn logout_deletes_the_items_of_the_url_and_the_account_in_the_keychain() {
    if in_own_session("logout_deletes_the_items_of_the_url_and_the_account_in_the_keychain") {
        return;
    }
    let env = env_with(&[]);
    let store = open(TokenStoreChoice::Keychain, None, &env).unwrap().store;
    let url = "https://127.0.0.1:9/mcp";
    store.save(&entry(url), &sign_in("a")).unwrap();
    let other = entry("https://127.0.0.2:9/mcp");
    store.save(&other, &sign_in("b")).unwrap();
    let (code, stderr) = logout(&["--token-store", "keychain", url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-bridge-vscode: vscode: info: logout deleted the stored sign-in of the account \"default\". Restart the server in VS Code to sign in again.\n"
    );
    assert_eq!(store.load(&entry(url)).unwrap(), None);
    assert_eq!(store.keys().unwrap(), vec![other.clone()]);
    let (code, stderr) = logout(&["--token-store", "keychain", "--all"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-bridge-vscode: vscode: info: logout --all deleted 1 stored sign-ins in the keychain of the host\n"
    );
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(!listing.contains("mcp-bridge-rs"), "{listing}");
}

#[test]
fn a_locked_keyring_without_a_display_is_not_opened_and_auto_hands_over_losing_nothing() {
    if in_own_session(
        "a_locked_keyring_without_a_display_is_not_opened_and_auto_hands_over_losing_nothing",
    ) {
        return;
    }
    let env = env_with(&[]);
    let lines = Lines::default();
    let store = open(TokenStoreChoice::Auto, None, &env).unwrap().store;
    let first = entry("https://127.0.0.1:9/mcp");
    store.save(&first, &sign_in("first")).unwrap();
    assert_eq!(store.kind(), StoreKind::Keychain);

    lock_default_collection();
    let second = entry("https://127.0.0.3:9/mcp");
    with_log(&lines, || {
        store.save(&second, &sign_in("second")).unwrap();
        assert_eq!(store.load(&second).unwrap(), Some(sign_in("second")));
    });
    assert_eq!(store.kind(), StoreKind::Memory);
    assert_eq!(
        lines.text(),
        "mcp-bridge-vscode: bridge: warning: the keychain stopped to answer (the collection of the Secret Service is locked, and without a display the bridge shows no unlock prompt). For the rest of the process, the tokens stay in memory, and the next start needs a new sign-in\n"
    );

    let error = open(TokenStoreChoice::Keychain, None, &env).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the keychain of the host did not open: the collection of the Secret Service is locked, and without a display the bridge shows no unlock prompt"
    );
    let key = "5a".repeat(32);
    let with_key = env_with(&[("MCP_BRIDGE_TOKEN_KEY", key)]);
    let opened = open(TokenStoreChoice::Auto, None, &with_key).unwrap();
    let tokens = state_dir().join("mcp-bridge-rs/vscode/tokens");
    assert_eq!(
        opened.line.to_string(),
        format!("the tokens are in encrypted files in {}", tokens.display())
    );
    let opened = open(TokenStoreChoice::Auto, None, &env).unwrap();
    assert_eq!(
        opened.line.to_string(),
        "the tokens stay in memory (no keychain: the collection of the Secret Service is locked, and without a display the bridge shows no unlock prompt; no key of the file store in MCP_BRIDGE_TOKEN_KEY or --token-key-file): each start needs a new sign-in"
    );
}

#[test]
fn a_secret_service_that_dies_during_a_run_hands_over_to_the_files_losing_nothing() {
    if in_own_session(
        "a_secret_service_that_dies_during_a_run_hands_over_to_the_files_losing_nothing",
    ) {
        return;
    }
    let key_file = state_dir().parent().unwrap().join("token.key");
    let mut file = std::fs::File::create(&key_file).unwrap();
    writeln!(file, "{}", "c3".repeat(32)).unwrap();
    drop(file);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let env = env_with(&[]);
    let opened = open(TokenStoreChoice::Auto, Some(&key_file), &env).unwrap();
    assert_eq!(opened.store.kind(), StoreKind::Keychain);
    let store = opened.store;
    let first = entry("https://127.0.0.1:9/mcp");
    store.save(&first, &sign_in("first")).unwrap();

    let pid = harness_sim::secret_service::daemon_pid(None)
        .expect("the Secret Service of this session has a process");
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for_exit(pid);

    let lines = Lines::default();
    let second = entry("https://127.0.0.3:9/mcp");
    with_log(&lines, || store.save(&second, &sign_in("second")).unwrap());
    let tokens = state_dir().join("mcp-bridge-rs/vscode/tokens");
    let text = lines.text();
    assert!(
        text.starts_with("mcp-bridge-vscode: bridge: warning: the keychain stopped to answer ("),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "). For the rest of the process, the tokens are in encrypted files in {}\n",
            tokens.display()
        )),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
    assert_eq!(store.kind(), StoreKind::File);
    assert_eq!(store.load(&second).unwrap(), Some(sign_in("second")));
    // The save that met the dead daemon is in the files, for the next start too.
    let files = FileStore::open(&tokens, TokenKey::from_hex(&"c3".repeat(32)).unwrap()).unwrap();
    assert_eq!(files.load(&second).unwrap(), Some(sign_in("second")));
}

fn wait_for_exit(pid: u32) {
    let proc = Path::new("/proc").join(pid.to_string());
    for _ in 0..200 {
        let zombie = std::fs::read_to_string(proc.join("stat"))
            .map(|stat| stat.contains(") Z "))
            .unwrap_or(true);
        if zombie {
            return;
        }
        // Real time on purpose: another process has to stop.
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("the Secret Service {pid} did not stop");
}

/// The store itself, without `open`: the item names the keychain holds.
#[test]
fn the_keychain_store_keeps_one_item_for_each_entry_and_one_index() {
    if in_own_session("the_keychain_store_keeps_one_item_for_each_entry_and_one_index") {
        return;
    }
    let store = KeychainStore::new(Box::new(NativeKeychain::connect(false).unwrap()));
    for n in 0..3 {
        store
            .save(
                &entry(&format!("https://s{n}.example.com/mcp")),
                &sign_in("t"),
            )
            .unwrap();
    }
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert_eq!(
        listing.matches("attribute.username = entry/").count(),
        3,
        "{listing}"
    );
    assert_eq!(
        listing.matches("attribute.username = index").count(),
        1,
        "{listing}"
    );
    assert_eq!(store.keys().unwrap().len(), 3);
    assert_eq!(store.delete_all(), Ok(3));
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(!listing.contains("mcp-bridge-rs"), "{listing}");
}

#[test]
fn an_index_that_does_not_parse_fails_logout_of_a_url_and_logout_all_still_clears_the_service() {
    if in_own_session(
        "an_index_that_does_not_parse_fails_logout_of_a_url_and_logout_all_still_clears_the_service",
    ) {
        return;
    }
    let env = env_with(&[]);
    let store = open(TokenStoreChoice::Keychain, None, &env).unwrap().store;
    let url = "https://127.0.0.1:9/mcp";
    store.save(&entry(url), &sign_in("a")).unwrap();
    // Someone wrote over the index.
    let mut child = Command::new("secret-tool")
        .args([
            "store", "--label", "index", "service", SERVICE, "username", "index",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"not an index")
        .unwrap();
    assert!(child.wait().unwrap().success());
    let (code, stderr) = logout(&["--token-store", "keychain", url]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-bridge-vscode: vscode: error: logout could not delete the stored sign-in of the account \"default\" in the keychain of the host: the keychain item index is not valid (it is not the JSON of an index): run mcp-bridge-vscode logout --all to delete every stored sign-in\n"
    );
    // The entry and the index are as they were.
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(listing.contains("attribute.username = entry/"), "{listing}");
    let (code, stderr) = logout(&["--token-store", "keychain", "--all"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-bridge-vscode: vscode: info: logout --all deleted 1 stored sign-ins in the keychain of the host\n"
    );
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(!listing.contains("mcp-bridge-rs"), "{listing}");
}

/// Writes `value` over the item `username` of the bridge's service, as someone else
/// would.
fn write_item(username: &str, value: &[u8]) {
    let mut child = Command::new("secret-tool")
        .args([
            "store", "--label", username, "service", SERVICE, "username", username,
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(value).unwrap();
    assert!(child.wait().unwrap().success());
}

/// `logout ARGS` that must end within 30 seconds: its exit code and its stderr.
fn logout_in_time(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .arg("logout")
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // 600 looks 50 ms apart: real time on purpose, another process has to end.
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if child.try_wait().unwrap().is_none() {
        child.kill().unwrap();
        panic!("logout {args:?} did not end within 30 seconds");
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn an_item_that_names_billions_of_parts_is_not_the_bridges_and_logout_ends() {
    if in_own_session("an_item_that_names_billions_of_parts_is_not_the_bridges_and_logout_ends") {
        return;
    }
    let env = env_with(&[]);
    let store = open(TokenStoreChoice::Keychain, None, &env).unwrap().store;
    let (one, two) = ("https://127.0.0.1:9/mcp", "https://127.0.0.1:10/mcp");
    store.save(&entry(one), &sign_in("a")).unwrap();
    store.save(&entry(two), &sign_in("b")).unwrap();
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    let names: Vec<&str> = listing
        .lines()
        .filter_map(|line| line.strip_prefix("attribute.username = entry/"))
        .collect();
    assert_eq!(names.len(), 2, "{listing}");
    for hash in names {
        write_item(&format!("entry/{hash}"), b"parts:4000000000");
    }
    // Each is an item that is not the bridge's: read as no sign-in, written over.
    assert_eq!(store.load(&entry(one)), Ok(None));
    store.save(&entry(one), &sign_in("c")).unwrap();
    assert_eq!(store.load(&entry(one)), Ok(Some(sign_in("c"))));
    let (code, stderr) = logout_in_time(&["--token-store", "keychain", "--all"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (_, listing) = secret_tool(&["search", "--all", "service", SERVICE]);
    assert!(!listing.contains("mcp-bridge-rs"), "{listing}");
}
