//! `--token-store keychain`: the keychain of the host, one item for each entry.
//!
//! Under the service `mcp-bridge-rs/mcp-bridge-vscode`, the item `entry/<hash>`
//! holds one entry (its key and sign-in as JSON; the hash of the identity names
//! it), and the item `index` holds the keys of every entry, which `keys()` and
//! `logout` read. A value longer than the backend's limit (a Windows credential
//! holds 2560 bytes) is split: the item `<name>` then holds `parts:<n>`, and the
//! items `<name>/1` ... `<name>/<n>` hold the parts.
//!
//! The index keeps every key, however many. An index that does not parse is an
//! error of every operation that needs it, and is never written over: the
//! entries it named would be lost to `logout <url>`. `logout --all` does not need
//! it where the backend lists the items of the service (every system the bridge
//! knows: keyring-core's `search`).
//!
//! The system calls are behind [`KeychainBackend`]; the native one is
//! [`super::NativeKeychain`].

use super::{EntryKey, StoreError, StoreKind, StoredEntry, StoredSignIn, TokenStore};
use crate::catalogue::TokenStoreWarning;
use crate::log::emit;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use zeroize::Zeroizing;

/// The name of the index item.
const INDEX: &str = "index";
const PARTS: &str = "parts:";
/// The largest value that the store writes: an entry holds at most the answers of
/// a token endpoint and of a registration (1 MiB each), escaped as JSON.
const MAX_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// The items of one keychain service: a name and a value.
pub trait KeychainBackend: Send + Sync + std::fmt::Debug {
    /// The value of the item `name`; `None` when there is none.
    fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError>;
    /// Writes the item `name`, in place of the one before.
    fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError>;
    /// Deletes the item `name`; `true` when there was one.
    fn delete(&self, name: &str) -> Result<bool, StoreError>;
    /// The largest value of one item, when the keychain has a limit.
    fn part_limit(&self) -> Option<usize> {
        None
    }
    /// Deletes every item of the service, also those of no index (`logout --all`):
    /// the number of entries among them (`entry/<hash>`, not their parts or the
    /// index); `None` when this keychain cannot list the items of a service.
    fn delete_service(&self) -> Result<Option<usize>, StoreError> {
        Ok(None)
    }
}

/// Whether the item `name` holds an entry (not a part of one, not the index).
pub fn is_entry_name(name: &str) -> bool {
    name.strip_prefix("entry/")
        .is_some_and(|hash| hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[derive(Debug)]
pub struct KeychainStore {
    backend: Box<dyn KeychainBackend>,
    /// One change of the index at a time in this process.
    index_lock: Mutex<()>,
}

#[derive(Default, Serialize, Deserialize)]
struct Index {
    version: u32,
    entries: Vec<EntryKey>,
}

/// The error of an index that does not parse.
fn invalid_index() -> StoreError {
    StoreError::Failed(format!(
        "the keychain item {INDEX} is not valid (it is not the JSON of an index): run mcp-bridge-vscode logout --all to delete every stored sign-in"
    ))
}

impl KeychainStore {
    pub fn new(backend: Box<dyn KeychainBackend>) -> Self {
        Self {
            backend,
            index_lock: Mutex::new(()),
        }
    }

    /// Reads the index: the probe of `open`, which fails when the keychain does
    /// not answer.
    pub fn probe(&self) -> Result<(), StoreError> {
        self.read_value(INDEX).map(|_| ())
    }

    fn entry_name(key: &EntryKey) -> String {
        format!("entry/{}", super::identity_hash(key))
    }

    /// The number of parts that `value` names: 0 for a value in one item, and 0
    /// too for a count that the store never writes (more parts than
    /// [`MAX_VALUE_BYTES`] needs, or any parts where the keychain has no limit).
    /// Such a value is read as it is, as the value of an item that is not the
    /// bridge's (not the JSON of an entry, an index that does not parse), and no
    /// loop over its parts runs.
    fn parts_of(&self, value: &[u8]) -> usize {
        let most = self
            .backend
            .part_limit()
            .map_or(0, |limit| MAX_VALUE_BYTES.div_ceil(limit.max(1)));
        parts_of(value).filter(|count| *count <= most).unwrap_or(0)
    }

    fn read_value(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
        let Some(value) = self.backend.get(name)? else {
            return Ok(None);
        };
        let count = self.parts_of(&value);
        if count == 0 {
            return Ok(Some(value));
        }
        let mut whole = Zeroizing::new(Vec::new());
        for part in 1..=count {
            match self.backend.get(&format!("{name}/{part}"))? {
                Some(bytes) => whole.extend_from_slice(&bytes),
                None => {
                    self.warn_invalid(name, "a part of it is missing");
                    return Ok(None);
                }
            }
        }
        Ok(Some(whole))
    }

    fn write_value(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        if value.len() > MAX_VALUE_BYTES {
            return Err(StoreError::Failed(format!(
                "the keychain item {name} would be longer than 16 MiB, the most that the bridge writes"
            )));
        }
        let old_parts = match self.backend.get(name)? {
            Some(old) => self.parts_of(&old),
            None => 0,
        };
        let count = match self.backend.part_limit() {
            Some(limit) if value.len() > limit => {
                let parts: Vec<&[u8]> = value.chunks(limit.max(1)).collect();
                for (index, part) in parts.iter().enumerate() {
                    self.backend.set(&format!("{name}/{}", index + 1), part)?;
                }
                self.backend
                    .set(name, format!("{PARTS}{}", parts.len()).as_bytes())?;
                parts.len()
            }
            _ => {
                self.backend.set(name, value)?;
                0
            }
        };
        for stale in count + 1..=old_parts {
            self.backend.delete(&format!("{name}/{stale}"))?;
        }
        Ok(())
    }

    fn delete_value(&self, name: &str) -> Result<bool, StoreError> {
        let Some(value) = self.backend.get(name)? else {
            return Ok(false);
        };
        for part in 1..=self.parts_of(&value) {
            self.backend.delete(&format!("{name}/{part}"))?;
        }
        self.backend.delete(name)
    }

    /// The index; an error when it does not parse.
    fn read_index(&self) -> Result<Index, StoreError> {
        let Some(bytes) = self.read_value(INDEX)? else {
            return Ok(Index::default());
        };
        serde_json::from_slice::<Index>(&bytes).map_err(|_| invalid_index())
    }

    fn write_index(&self, index: &mut Index) -> Result<(), StoreError> {
        if index.entries.is_empty() {
            self.delete_value(INDEX)?;
            return Ok(());
        }
        index.version = 1;
        let bytes = serde_json::to_vec(&index).map_err(|e| StoreError::Failed(e.to_string()))?;
        self.write_value(INDEX, &bytes)
    }

    /// One change of the index (and of the items it names) at a time in this process.
    fn lock_index(&self) -> std::sync::MutexGuard<'_, ()> {
        self.index_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn warn_invalid(&self, name: &str, why: &str) {
        emit!(TokenStoreWarning::KeychainItemNotValid {
            name: &name,
            why: &why
        });
    }
}

/// `parts:<n>` → `n`.
fn parts_of(value: &[u8]) -> Option<usize> {
    std::str::from_utf8(value)
        .ok()?
        .strip_prefix(PARTS)?
        .parse()
        .ok()
}

impl TokenStore for KeychainStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Keychain
    }

    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
        let name = Self::entry_name(key);
        let Some(bytes) = self.read_value(&name)? else {
            return Ok(None);
        };
        match serde_json::from_slice::<StoredEntry>(&bytes) {
            Ok(entry) if entry.key == *key => Ok(Some(entry.sign_in)),
            Ok(_) => {
                self.warn_invalid(&name, "it belongs to a different entry");
                Ok(None)
            }
            Err(_) => {
                self.warn_invalid(&name, "it is not the JSON of an entry");
                Ok(None)
            }
        }
    }

    /// Writes the entry and names it in the index; with an index that does not
    /// parse, nothing is written (an entry that no index names is lost to logout).
    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError> {
        let entry = StoredEntry {
            key: key.clone(),
            sign_in: sign_in.clone(),
        };
        let bytes = Zeroizing::new(
            serde_json::to_vec(&entry).map_err(|e| StoreError::Failed(e.to_string()))?,
        );
        let _guard = self.lock_index();
        let mut index = self.read_index()?;
        self.write_value(&Self::entry_name(key), &bytes)?;
        if index.entries.contains(key) {
            return Ok(());
        }
        index.entries.push(key.clone());
        self.write_index(&mut index)
    }

    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError> {
        let _guard = self.lock_index();
        let mut index = self.read_index()?;
        let deleted = self.delete_value(&Self::entry_name(key))?;
        let before = index.entries.len();
        index.entries.retain(|other| other != key);
        if index.entries.len() != before {
            self.write_index(&mut index)?;
        }
        Ok(deleted)
    }

    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        let mut keys = self.read_index()?.entries;
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// The entries of the index, then every item of the service where the backend
    /// lists them (items that no index names, an index that does not parse). A
    /// backend that cannot list them needs an index that parses.
    fn delete_all(&self) -> Result<usize, StoreError> {
        let _guard = self.lock_index();
        let index = self.read_index();
        let mut deleted = 0;
        if let Ok(index) = &index {
            for key in &index.entries {
                if self.delete_value(&Self::entry_name(key))? {
                    deleted += 1;
                }
            }
            self.delete_value(INDEX)?;
        }
        match self.backend.delete_service()? {
            Some(left) => Ok(deleted + left),
            None => index.map(|_| deleted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::ClientOption;
    use std::collections::BTreeMap;

    /// A keychain in memory, its items shared with the test: with a limit on the
    /// size of an item (`Some`), or without (`None`), and able to list the items
    /// of its service, as every native keychain is, or not.
    #[derive(Debug, Default, Clone)]
    struct InMemory {
        items: std::sync::Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
        part_limit: Option<usize>,
        lists_its_service: bool,
        /// The calls so far: a store that loops over items fails the test in
        /// place of hanging it.
        calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    /// More calls than any test here needs.
    const MOST_CALLS: usize = 1_000_000;

    impl InMemory {
        fn items(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
            let calls = self
                .calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            assert!(calls < MOST_CALLS, "the store loops over the keychain");
            self.items.lock().unwrap()
        }

        fn calls(&self) -> usize {
            self.calls.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    impl KeychainBackend for InMemory {
        fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
            Ok(self.items().get(name).cloned().map(Zeroizing::new))
        }
        fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
            if let Some(limit) = self.part_limit {
                assert!(value.len() <= limit, "{name}: {} bytes", value.len());
            }
            self.items().insert(name.into(), value.to_vec());
            Ok(())
        }
        fn delete(&self, name: &str) -> Result<bool, StoreError> {
            Ok(self.items().remove(name).is_some())
        }
        fn part_limit(&self) -> Option<usize> {
            self.part_limit
        }
        fn delete_service(&self) -> Result<Option<usize>, StoreError> {
            if !self.lists_its_service {
                return Ok(None);
            }
            let mut items = self.items();
            let entries = items.keys().filter(|name| is_entry_name(name)).count();
            items.clear();
            Ok(Some(entries))
        }
    }

    fn key_of(n: usize) -> EntryKey {
        EntryKey::new(
            &format!("https://s{n}.example.com/mcp"),
            "default",
            "http://127.0.0.1:41894/callback",
            ClientOption::Default,
        )
    }

    fn small_sign_in() -> StoredSignIn {
        StoredSignIn::for_tests("https://x/mcp", "a")
    }

    #[test]
    fn the_index_keeps_every_entry_however_many() {
        let store = KeychainStore::new(Box::new(InMemory::default()));
        for n in 0..300 {
            store.save(&key_of(n), &small_sign_in()).unwrap();
        }
        let keys = store.keys().unwrap();
        assert_eq!(keys.len(), 300);
        assert!(keys.contains(&key_of(0)));
    }

    #[test]
    fn an_index_that_does_not_parse_is_an_error_and_stays_as_it_is() {
        let unlisting = InMemory::default();
        let items = unlisting.items.clone();
        let store = KeychainStore::new(Box::new(unlisting));
        store.save(&key_of(1), &small_sign_in()).unwrap();
        items
            .lock()
            .unwrap()
            .insert(INDEX.into(), b"not an index".to_vec());
        assert_eq!(
            store.keys().unwrap_err().to_string(),
            "the keychain item index is not valid (it is not the JSON of an index): run mcp-bridge-vscode logout --all to delete every stored sign-in"
        );
        assert!(store.save(&key_of(2), &small_sign_in()).is_err());
        assert!(store.delete(&key_of(1)).is_err());
        assert_eq!(
            items.lock().unwrap().get(INDEX).map(Vec::as_slice),
            Some(&b"not an index"[..])
        );
    }

    #[test]
    fn delete_all_lists_the_service_where_it_can_and_needs_the_index_where_it_cannot() {
        let listing = InMemory {
            lists_its_service: true,
            ..InMemory::default()
        };
        let items = listing.items.clone();
        let store = KeychainStore::new(Box::new(listing));
        for n in 0..3 {
            store.save(&key_of(n), &small_sign_in()).unwrap();
        }
        // An entry that no index names (an index write that failed).
        let stray = format!("entry/{}", "ab".repeat(32));
        items.lock().unwrap().insert(stray, b"{}".to_vec());
        assert_eq!(store.delete_all(), Ok(4));
        assert!(items.lock().unwrap().is_empty());

        // An index that does not parse: the listing deletes everything all the same.
        store.save(&key_of(7), &small_sign_in()).unwrap();
        items
            .lock()
            .unwrap()
            .insert(INDEX.into(), b"not an index".to_vec());
        assert_eq!(store.delete_all(), Ok(1));
        assert!(items.lock().unwrap().is_empty());

        // A keychain that cannot list its service: the index is all there is.
        let unlisting = InMemory::default();
        let items = unlisting.items.clone();
        let store = KeychainStore::new(Box::new(unlisting));
        store.save(&key_of(1), &small_sign_in()).unwrap();
        items
            .lock()
            .unwrap()
            .insert(INDEX.into(), b"not an index".to_vec());
        assert_eq!(store.delete_all(), Err(invalid_index()));
        assert_eq!(items.lock().unwrap().len(), 2, "nothing deleted");
        items.lock().unwrap().remove(INDEX);
        store.save(&key_of(1), &small_sign_in()).unwrap();
        assert_eq!(store.delete_all(), Ok(1));
        assert!(items.lock().unwrap().is_empty());
    }

    #[test]
    fn an_item_that_names_more_parts_than_the_store_writes_is_not_the_bridges() {
        for part_limit in [None, Some(2560)] {
            let backend = InMemory {
                part_limit,
                lists_its_service: true,
                ..InMemory::default()
            };
            let store = KeychainStore::new(Box::new(backend.clone()));
            let key = key_of(1);
            let name = KeychainStore::entry_name(&key);
            store.save(&key, &small_sign_in()).unwrap();
            let huge = format!("{PARTS}{}", usize::MAX).into_bytes();
            backend.items().insert(name.clone(), huge.clone());
            let before = backend.calls();
            // Read as what it is: no entry.
            assert_eq!(store.load(&key), Ok(None));
            // Written over, with no delete of parts that were never written.
            store.save(&key, &small_sign_in()).unwrap();
            assert_eq!(store.load(&key), Ok(Some(small_sign_in())));
            backend
                .items()
                .insert(name.clone(), b"parts:4000000000".to_vec());
            assert_eq!(store.delete(&key), Ok(true));
            store.save(&key, &small_sign_in()).unwrap();
            backend.items().insert(name.clone(), huge.clone());
            backend.items().insert(INDEX.into(), huge);
            assert_eq!(store.keys(), Err(invalid_index()));
            assert_eq!(store.delete_all(), Ok(1));
            assert!(backend.calls() - before < 100, "{}", backend.calls());
        }
        // The most parts that a value of 16 MiB needs still count as parts.
        let backend = InMemory {
            part_limit: Some(MAX_VALUE_BYTES / 4),
            ..InMemory::default()
        };
        let store = KeychainStore::new(Box::new(backend.clone()));
        for n in 1..=4 {
            backend
                .items()
                .insert(format!("x/{n}"), format!("{n}").into_bytes());
        }
        backend.items().insert("x".into(), b"parts:4".to_vec());
        assert_eq!(
            store.read_value("x").unwrap().map(|v| v.to_vec()),
            Some(b"1234".to_vec())
        );
        backend.items().insert("x".into(), b"parts:5".to_vec());
        assert_eq!(
            store.read_value("x").unwrap().map(|v| v.to_vec()),
            Some(b"parts:5".to_vec())
        );
    }

    #[test]
    fn a_value_longer_than_the_store_writes_is_refused() {
        let backend = InMemory::default();
        let store = KeychainStore::new(Box::new(backend.clone()));
        let sign_in = StoredSignIn {
            access_token: "a".repeat(MAX_VALUE_BYTES).into(),
            ..small_sign_in()
        };
        let refused = store.save(&key_of(1), &sign_in).unwrap_err().to_string();
        assert!(
            refused.ends_with("would be longer than 16 MiB, the most that the bridge writes"),
            "{refused}"
        );
        assert!(backend.items().is_empty());
    }

    #[test]
    fn only_an_entry_item_counts_as_an_entry() {
        assert!(is_entry_name(&format!("entry/{}", "0f".repeat(32))));
        for other in [
            "index".to_owned(),
            format!("entry/{}/1", "0f".repeat(32)),
            "entry/short".to_owned(),
            format!("entry/{}", "zz".repeat(32)),
        ] {
            assert!(!is_entry_name(&other), "{other}");
        }
    }

    #[test]
    fn an_entry_of_exactly_the_limit_stays_one_item() {
        let key = key_of(1);
        let sign_in = small_sign_in();
        let whole = serde_json::to_vec(&StoredEntry {
            key: key.clone(),
            sign_in: sign_in.clone(),
        })
        .unwrap();
        let backend = InMemory {
            part_limit: Some(whole.len()),
            ..InMemory::default()
        };
        let store = KeychainStore::new(Box::new(backend.clone()));
        store.save(&key, &sign_in).unwrap();
        let name = KeychainStore::entry_name(&key);
        assert_eq!(backend.get(&name).unwrap().map(|v| v.to_vec()), Some(whole));
        assert!(!backend.items().contains_key(&format!("{name}/1")));
        assert_eq!(store.load(&key).unwrap(), Some(sign_in));
    }

    #[test]
    fn a_large_entry_is_split_into_numbered_parts_and_deleted_whole() {
        let backend = InMemory {
            part_limit: Some(100),
            ..InMemory::default()
        };
        let store = KeychainStore::new(Box::new(backend.clone()));
        let key = EntryKey::new(
            "https://x/mcp",
            "default",
            "http://127.0.0.1:41894/callback",
            ClientOption::Default,
        );
        let sign_in = StoredSignIn {
            issuer: "https://as".into(),
            resource: "https://x/mcp".into(),
            client_id: "c".into(),
            client_secret: None,
            access_token: "a".repeat(700).into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
        };
        store.save(&key, &sign_in).unwrap();
        let name = KeychainStore::entry_name(&key);
        let length = serde_json::to_vec(&StoredEntry {
            key: key.clone(),
            sign_in: sign_in.clone(),
        })
        .unwrap()
        .len();
        let count = length.div_ceil(100);
        assert!(count >= 8, "{length}");
        let names: Vec<String> = backend.items().keys().cloned().collect();
        for part in 1..=count {
            assert!(names.contains(&format!("{name}/{part}")), "{names:?}");
        }
        assert!(!names.contains(&format!("{name}/{}", count + 1)));
        assert_eq!(
            backend.get(&name).unwrap().map(|v| v.to_vec()),
            Some(format!("parts:{count}").into_bytes())
        );
        assert_eq!(store.load(&key).unwrap(), Some(sign_in.clone()));
        assert_eq!(store.keys().unwrap(), vec![key.clone()]);
        let short = StoredSignIn {
            access_token: "b".into(),
            ..sign_in
        };
        store.save(&key, &short).unwrap();
        assert_eq!(store.load(&key).unwrap(), Some(short));
        assert!(!backend.items().contains_key(&format!("{name}/{count}")));
        assert_eq!(store.delete(&key), Ok(true));
        assert!(backend.items().is_empty());
    }
}
