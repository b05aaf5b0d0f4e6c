//! The encrypted file store: any sign-in round-trips, any changed byte of a file
//! is seen (absent, with a warning), a kill -9 during writes leaves each entry whole,
//! and two processes that write at once corrupt nothing. The writers are this test
//! executable again, started as a child with the environment of a writer.

use crate::pipes;
use mcp_bridge_vscode::internals::auth::store::{
    ClientOption, EntryKey, FileStore, StoredSignIn, TokenKey, TokenStore,
};
use proptest::prelude::*;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

const KEY: &str = "7e1d0c9b8a79685746352413021f0e1d2c3b4a5968778695a4b3c2d1e0f00102";

fn key() -> TokenKey {
    TokenKey::from_hex(KEY).unwrap()
}

fn entry(url: &str, account: &str) -> EntryKey {
    EntryKey::new(
        url,
        account,
        "http://127.0.0.1:41894/callback",
        ClientOption::Default,
    )
}

fn sign_in(access_token: &str) -> StoredSignIn {
    StoredSignIn {
        issuer: "https://as.example.com".into(),
        resource: "https://mcp.example.com/mcp".into(),
        client_id: "client-1".into(),
        client_secret: Some("secret-1".into()),
        access_token: access_token.into(),
        refresh_token: Some(format!("refresh-{access_token}").into()),
        expires_at: Some(4_102_444_800),
        scope: Some("mcp:read mcp:write".into()),
    }
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

fn logged<T>(run: impl FnOnce() -> T) -> (T, String) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let lines = Lines::default();
    let writer = lines.clone();
    let layer = tracing_subscriber::fmt::layer()
        .event_format(mcp_bridge_vscode::log::LineFormat)
        .with_writer(move || writer.clone())
        .with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target("bridge", tracing::level_filters::LevelFilter::DEBUG),
        );
    let result = tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), run);
    let text = String::from_utf8_lossy(&lines.0.lock().unwrap()).into_owned();
    (result, text)
}

/// The one entry file of `dir`.
fn the_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|item| item.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "entry"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,40}", "\\PC{0,200}", Just(String::new())]
}

fn any_sign_in() -> impl Strategy<Value = StoredSignIn> {
    (
        (any_text(), any_text(), any_text()),
        proptest::option::of(any_text()),
        "[ -~]{0,3000}",
        proptest::option::of(any_text()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any_text()),
    )
        .prop_map(
            |(
                (issuer, resource, client_id),
                client_secret,
                access_token,
                refresh_token,
                expires_at,
                scope,
            )| {
                StoredSignIn {
                    issuer,
                    resource,
                    client_id,
                    client_secret: client_secret.map(Into::into),
                    access_token: access_token.into(),
                    refresh_token: refresh_token.map(Into::into),
                    expires_at,
                    scope,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_sign_in_of_any_entry_round_trips(
        sign_in in any_sign_in(),
        url in "https://[a-z]{1,12}\\.example/[ -~]{0,40}",
        account in "[A-Za-z0-9._@+-]{1,64}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let key = entry(&url, &account);
        store.save(&key, &sign_in).unwrap();
        prop_assert_eq!(store.load(&key).unwrap(), Some(sign_in.clone()));
        prop_assert_eq!(store.keys().unwrap(), vec![key.clone()]);
        let reopened = FileStore::open(dir.path(), self::key()).unwrap();
        prop_assert_eq!(reopened.load(&key).unwrap(), Some(sign_in));
        prop_assert_eq!(reopened.delete(&key), Ok(true));
        prop_assert_eq!(reopened.load(&key).unwrap(), None);
    }

    #[test]
    fn any_changed_byte_of_a_file_makes_the_entry_absent_with_a_warning(
        position in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let key = entry("https://mcp.example.com/mcp", "default");
        store.save(&key, &sign_in("access-1")).unwrap();
        let path = the_file(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        let index = position.index(bytes.len());
        bytes[index] ^= 1 << bit;
        std::fs::write(&path, &bytes).unwrap();
        let (loaded, lines) = logged(|| store.load(&key));
        prop_assert_eq!(loaded, Ok(None));
        let expected_start = format!(
            "mcp-bridge-vscode: bridge: warning: the token file {} is not valid (",
            path.display()
        );
        prop_assert!(lines.starts_with(&expected_start), "{}", lines);
        prop_assert!(lines.ends_with(" and counts it as absent\n"), "{}", lines);
        prop_assert!(lines.contains("): the bridge moved it to "), "{}", lines);
        prop_assert_eq!(lines.lines().count(), 1);
        let (keys, _) = logged(|| store.keys());
        // A change in the second box leaves the identity readable: keys() may name
        // the entry, but it never loads.
        prop_assert!(keys.unwrap().iter().all(|listed| *listed == key));
    }
}

/// The one file of `dir` whose name starts with that of `path` and goes on with
/// `.damaged-`.
fn moved_aside(path: &Path) -> PathBuf {
    let prefix = format!("{}.damaged-", path.file_name().unwrap().to_string_lossy());
    let moved: Vec<PathBuf> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|item| item.unwrap().path())
        .filter(|moved| {
            moved
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    moved.into_iter().next().unwrap()
}

#[test]
fn a_cut_file_and_a_file_of_another_key_are_absent_with_their_reason() {
    let key = entry("https://mcp.example.com/mcp", "default");
    // An entry of another key, in a directory of this key.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = FileStore::open(
        elsewhere.path(),
        TokenKey::from_hex(&"01".repeat(32)).unwrap(),
    )
    .unwrap();
    other.save(&key, &sign_in("access-0")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), self::key()).unwrap();
    store
        .save(
            &entry("https://other.example.com/mcp", "default"),
            &sign_in("x"),
        )
        .unwrap();
    let foreign = the_file(elsewhere.path());
    let path = dir.path().join(foreign.file_name().unwrap());
    std::fs::copy(&foreign, &path).unwrap();
    let (loaded, lines) = logged(|| store.load(&key));
    assert_eq!(loaded, Ok(None));
    assert_eq!(
        lines,
        format!(
            "mcp-bridge-vscode: bridge: warning: the token file {} is not valid (it does not decrypt with the key): the bridge moved it to {} and counts it as absent\n",
            path.display(),
            moved_aside(&path).display()
        )
    );
    std::fs::remove_file(moved_aside(&path)).unwrap();
    store.save(&key, &sign_in("access-1")).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..10]).unwrap();
    let (loaded, lines) = logged(|| store.load(&key));
    assert_eq!(loaded, Ok(None));
    assert_eq!(
        lines,
        format!(
            "mcp-bridge-vscode: bridge: warning: the token file {} is not valid (its format is not known): the bridge moved it to {} and counts it as absent\n",
            path.display(),
            moved_aside(&path).display()
        )
    );
}

/// The files of `dir` that hold exactly `bytes`.
fn files_holding(dir: &Path, bytes: &[u8]) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|item| item.unwrap().path())
        .filter(|path| std::fs::read(path).is_ok_and(|held| held == bytes))
        .collect()
}

/// Flips one bit in the middle of the file at `path`; its new bytes.
fn damage(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn a_damaged_entry_is_moved_aside_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), key()).unwrap();
    let key = entry("https://mcp.example.com/mcp", "default");
    store.save(&key, &sign_in("access-1")).unwrap();
    let path = the_file(dir.path());
    let damaged = damage(&path);
    let (loaded, lines) = logged(|| store.load(&key));
    assert_eq!(loaded, Ok(None));
    let kept = files_holding(dir.path(), &damaged);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_ne!(kept[0], path, "the damaged file is still the entry");
    assert_eq!(
        lines,
        format!(
            "mcp-bridge-vscode: bridge: warning: the token file {} is not valid (it does not decrypt with the key): the bridge moved it to {} and counts it as absent\n",
            path.display(),
            kept[0].display()
        )
    );
    store.save(&key, &sign_in("access-2")).unwrap();
    assert_eq!(store.load(&key).unwrap(), Some(sign_in("access-2")));
    assert_eq!(files_holding(dir.path(), &damaged), kept);
    // A save that comes without a load first keeps the damaged file too.
    let damaged_again = damage(&path);
    store.save(&key, &sign_in("access-3")).unwrap();
    assert_eq!(store.load(&key).unwrap(), Some(sign_in("access-3")));
    assert_eq!(files_holding(dir.path(), &damaged_again).len(), 1);
    assert_eq!(files_holding(dir.path(), &damaged), kept);
    assert_eq!(store.keys().unwrap(), vec![key]);
}

// The writer child: `WRITER_DIR`, `WRITER_LABEL`, `WRITER_ENTRIES` (URLs separated
// by spaces) and `WRITER_ROUNDS` (0: until killed). It saves
// `<label>-<round>` to each entry, round after round, and prints each round.
const WRITER: &str = "MCP_BRIDGE_TEST_FILE_WRITER";

fn writer_if_asked() {
    let Ok(dir) = std::env::var(WRITER) else {
        return;
    };
    let label = std::env::var("WRITER_LABEL").unwrap();
    let urls = std::env::var("WRITER_ENTRIES").unwrap();
    let rounds: u64 = std::env::var("WRITER_ROUNDS").unwrap().parse().unwrap();
    let store = FileStore::open(Path::new(&dir), key()).unwrap();
    let mut round = 0;
    while rounds == 0 || round < rounds {
        for url in urls.split(' ') {
            store
                .save(
                    &entry(url, "default"),
                    &sign_in(&format!("{label}-{round}")),
                )
                .unwrap();
        }
        println!("round {round}");
        round += 1;
    }
    std::process::exit(0);
}

fn writer(test: &str, dir: &Path, label: &str, urls: &[&str], rounds: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &pipes::libtest_name(module_path!(), test)])
        .args(["--nocapture", "--test-threads=1"])
        .env(WRITER, dir)
        .env("WRITER_LABEL", label)
        .env("WRITER_ENTRIES", urls.join(" "))
        .env("WRITER_ROUNDS", rounds.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The round of a token `<label>-<round>`, when the label is one of `labels`.
fn round_of(sign_in: &StoredSignIn, labels: &[&str]) -> Option<u64> {
    let (label, round) = sign_in.access_token.expose().split_once('-')?;
    let round: u64 = round.parse().ok()?;
    (labels.contains(&label) && *sign_in == self::sign_in(sign_in.access_token.expose()))
        .then_some(round)
}

#[test]
fn a_kill_during_writes_leaves_every_entry_whole() {
    writer_if_asked();
    let dir = tempfile::tempdir().unwrap();
    let urls = [
        "https://a.example.com/mcp",
        "https://b.example.com/mcp",
        "https://c.example.com/mcp",
    ];
    let store = FileStore::open(dir.path(), key()).unwrap();
    for url in urls {
        store
            .save(&entry(url, "default"), &sign_in("old-0"))
            .unwrap();
    }
    for (kill, wait_rounds) in [3usize, 17, 40, 1, 25].into_iter().enumerate() {
        let mut child = writer(
            "a_kill_during_writes_leaves_every_entry_whole",
            dir.path(),
            "new",
            &urls,
            0,
        );
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for _ in 0..wait_rounds {
            lines.next().unwrap().unwrap();
        }
        // SIGKILL, in the middle of some write.
        child.kill().unwrap();
        child.wait().unwrap();
        let (keys, warnings) = logged(|| store.keys().unwrap());
        assert_eq!(warnings, "", "kill {kill}");
        assert_eq!(keys.len(), 3, "kill {kill}: {keys:?}");
        for url in urls {
            let loaded = store.load(&entry(url, "default")).unwrap();
            let loaded = loaded.unwrap_or_else(|| panic!("kill {kill}: {url} is gone"));
            assert!(
                round_of(&loaded, &["old", "new"]).is_some(),
                "kill {kill}: {url} holds {loaded:?}"
            );
        }
    }
}

#[test]
fn two_processes_writing_the_same_and_different_entries_corrupt_nothing() {
    writer_if_asked();
    let dir = tempfile::tempdir().unwrap();
    let shared = "https://shared.example.com/mcp";
    let rounds = 150;
    let test = "two_processes_writing_the_same_and_different_entries_corrupt_nothing";
    let mut first = writer(
        test,
        dir.path(),
        "first",
        &[shared, "https://first.example.com/mcp"],
        rounds,
    );
    let mut second = writer(
        test,
        dir.path(),
        "second",
        &["https://second.example.com/mcp", shared],
        rounds,
    );
    // A reader meanwhile: the shared entry is always whole, or not yet there.
    let store = FileStore::open(dir.path(), key()).unwrap();
    let mut reads = 0;
    while first.try_wait().unwrap().is_none() || second.try_wait().unwrap().is_none() {
        let (loaded, warnings) = logged(|| store.load(&entry(shared, "default")).unwrap());
        assert_eq!(warnings, "");
        if let Some(loaded) = loaded {
            assert!(
                round_of(&loaded, &["first", "second"]).is_some(),
                "{loaded:?}"
            );
            reads += 1;
        }
    }
    assert!(first.wait().unwrap().success() && second.wait().unwrap().success());
    assert!(reads > 0);
    let last = format!("{}", rounds - 1);
    assert_eq!(
        store
            .load(&entry("https://first.example.com/mcp", "default"))
            .unwrap(),
        Some(sign_in(&format!("first-{last}")))
    );
    assert_eq!(
        store
            .load(&entry("https://second.example.com/mcp", "default"))
            .unwrap(),
        Some(sign_in(&format!("second-{last}")))
    );
    let shared_now = store.load(&entry(shared, "default")).unwrap().unwrap();
    assert!(
        shared_now == sign_in(&format!("first-{last}"))
            || shared_now == sign_in(&format!("second-{last}")),
        "{shared_now:?}"
    );
    assert_eq!(store.keys().unwrap().len(), 3);
    // No temporary file is left behind by writers that completed: the three
    // entries and the key check.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.contains(&"key-check".to_owned()), "{names:?}");
}
