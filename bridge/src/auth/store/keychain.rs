//! `--token-store keychain`: the keychain of the host, one item for each entry.
//!
//! Under the service `mcp-bridge-rs/mcp-bridge-vscode`, the item `entry/<hash>`
//! holds one entry (its key and sign-in as JSON; the hash of the identity names
//! it), and the item `index` holds the keys of every entry, which `keys()` and
//! `logout` read. A value longer than the backend's limit (a Windows credential
//! holds 2560 bytes) is split: the item `<name>` then holds `parts:<n>`, and the
//! items `<name>/1` ... `<name>/<n>` hold the parts.
//!
//! The system calls are behind [`KeychainBackend`]; the native one is
//! [`super::NativeKeychain`].

use super::{EntryKey, StoreError, StoreKind, StoredEntry, StoredSignIn, TokenStore};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use zeroize::Zeroizing;

/// The name of the index item.
const INDEX: &str = "index";
const PARTS: &str = "parts:";

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
    /// Deletes every item of the service, also those of no index (`logout --all`).
    fn delete_service(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
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

/// The index keeps at most this many entries (the oldest go first).
const MAX_INDEX: usize = 256;

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

    fn read_value(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
        let Some(value) = self.backend.get(name)? else {
            return Ok(None);
        };
        let Some(count) = parts_of(&value) else {
            return Ok(Some(value));
        };
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
        let old_parts = self
            .backend
            .get(name)?
            .and_then(|old| parts_of(&old))
            .unwrap_or(0);
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
        for part in 1..=parts_of(&value).unwrap_or(0) {
            self.backend.delete(&format!("{name}/{part}"))?;
        }
        self.backend.delete(name)
    }

    fn read_index(&self) -> Result<Index, StoreError> {
        let Some(bytes) = self.read_value(INDEX)? else {
            return Ok(Index::default());
        };
        match serde_json::from_slice::<Index>(&bytes) {
            Ok(index) => Ok(index),
            Err(_) => {
                self.warn_invalid(INDEX, "it is not the JSON of an index");
                Ok(Index::default())
            }
        }
    }

    fn change_index(&self, change: impl FnOnce(&mut Vec<EntryKey>)) -> Result<(), StoreError> {
        let _guard = self
            .index_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut index = self.read_index()?;
        change(&mut index.entries);
        if index.entries.len() > MAX_INDEX {
            let extra = index.entries.len() - MAX_INDEX;
            index.entries.drain(..extra);
        }
        if index.entries.is_empty() {
            self.delete_value(INDEX)?;
            return Ok(());
        }
        index.version = 1;
        let bytes = serde_json::to_vec(&index).map_err(|e| StoreError::Failed(e.to_string()))?;
        self.write_value(INDEX, &bytes)
    }

    fn warn_invalid(&self, name: &str, why: &str) {
        tracing::warn!(
            target: crate::log::BRIDGE,
            "the keychain item {name} is not valid ({why}): the bridge counts it as absent"
        );
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

    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError> {
        let entry = StoredEntry {
            key: key.clone(),
            sign_in: sign_in.clone(),
        };
        let bytes = Zeroizing::new(
            serde_json::to_vec(&entry).map_err(|e| StoreError::Failed(e.to_string()))?,
        );
        self.write_value(&Self::entry_name(key), &bytes)?;
        self.change_index(|entries| {
            if !entries.contains(key) {
                entries.push(key.clone());
            }
        })
    }

    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError> {
        let deleted = self.delete_value(&Self::entry_name(key))?;
        self.change_index(|entries| entries.retain(|other| other != key))?;
        Ok(deleted)
    }

    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        let mut keys = self.read_index()?.entries;
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    fn delete_all(&self) -> Result<usize, StoreError> {
        let mut deleted = 0;
        for key in self.keys()? {
            if self.delete_value(&Self::entry_name(&key))? {
                deleted += 1;
            }
        }
        self.delete_value(INDEX)?;
        // Items that no index names (an index write that failed) go too.
        self.backend.delete_service()?;
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::ClientOption;
    use std::collections::BTreeMap;

    #[derive(Debug, Default)]
    struct Small(Mutex<BTreeMap<String, Vec<u8>>>);

    impl KeychainBackend for Small {
        fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
            Ok(self
                .0
                .lock()
                .unwrap()
                .get(name)
                .cloned()
                .map(Zeroizing::new))
        }
        fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
            assert!(value.len() <= 100, "{name}: {} bytes", value.len());
            self.0.lock().unwrap().insert(name.into(), value.to_vec());
            Ok(())
        }
        fn delete(&self, name: &str) -> Result<bool, StoreError> {
            Ok(self.0.lock().unwrap().remove(name).is_some())
        }
        fn part_limit(&self) -> Option<usize> {
            Some(100)
        }
    }

    #[test]
    fn a_large_entry_is_split_into_numbered_parts_and_deleted_whole() {
        let backend = std::sync::Arc::new(Small::default());
        #[derive(Debug)]
        struct Shared(std::sync::Arc<Small>);
        impl KeychainBackend for Shared {
            fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
                self.0.get(name)
            }
            fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
                self.0.set(name, value)
            }
            fn delete(&self, name: &str) -> Result<bool, StoreError> {
                self.0.delete(name)
            }
            fn part_limit(&self) -> Option<usize> {
                self.0.part_limit()
            }
        }
        let store = KeychainStore::new(Box::new(Shared(backend.clone())));
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
        let names: Vec<String> = backend.0.lock().unwrap().keys().cloned().collect();
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
        assert!(
            !backend
                .0
                .lock()
                .unwrap()
                .contains_key(&format!("{name}/{count}"))
        );
        assert_eq!(store.delete(&key), Ok(true));
        assert!(backend.0.lock().unwrap().is_empty());
    }
}
