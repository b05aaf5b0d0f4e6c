//! `--token-store memory`, and the last store of `auto`: the tokens live as long as
//! the process, so each start signs in again.

use super::{EntryKey, StoreError, StoreKind, StoredSignIn, TokenStore};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<BTreeMap<EntryKey, StoredSignIn>>,
}

impl MemoryStore {
    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<EntryKey, StoredSignIn>> {
        // A panic while the lock was held left a map that is still whole.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl TokenStore for MemoryStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Memory
    }

    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
        Ok(self.entries().get(key).cloned())
    }

    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError> {
        self.entries().insert(key.clone(), sign_in.clone());
        Ok(())
    }

    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError> {
        Ok(self.entries().remove(key).is_some())
    }

    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        Ok(self.entries().keys().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::ClientOption;

    #[test]
    fn an_entry_is_there_until_it_is_deleted() {
        let store = MemoryStore::default();
        let key = EntryKey::new(
            "https://x/mcp",
            "default",
            "http://127.0.0.1:1/callback",
            ClientOption::Default,
        );
        assert_eq!(store.load(&key), Ok(None));
        let sign_in = StoredSignIn::for_tests("https://x/mcp", "a");
        store.save(&key, &sign_in).unwrap();
        assert_eq!(store.load(&key).unwrap().as_ref(), Some(&sign_in));
        assert_eq!(store.keys().unwrap(), vec![key.clone()]);
        assert_eq!(store.delete(&key), Ok(true));
        assert_eq!(store.delete(&key), Ok(false));
    }

    /// The default `delete_all` of the trait, which the memory store keeps.
    #[test]
    fn delete_all_counts_each_deleted_entry() {
        let store = MemoryStore::default();
        let sign_in = StoredSignIn::for_tests("https://x/mcp", "a");
        for account in ["one", "two", "three"] {
            let key = EntryKey::new("https://x/mcp", account, "r", ClientOption::Default);
            store.save(&key, &sign_in).unwrap();
        }
        assert_eq!(store.delete_all(), Ok(3));
        assert_eq!(store.keys(), Ok(vec![]));
        assert_eq!(store.delete_all(), Ok(0));
    }
}
