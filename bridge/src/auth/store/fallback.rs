//! `auto` with the keychain: when the keychain stops to answer after the start (the
//! user locked it, its daemon died), the next store serves the rest of the process:
//! the encrypted files when a key is there, else memory. The operation that met the
//! silence runs again on the next store, so a sign-in that was being saved is not
//! lost.

use super::{EntryKey, StoreError, StoreKind, StoredSignIn, TokenStore};
use crate::catalogue::TokenStoreWarning;
use crate::log::emit;
use std::sync::{Arc, Mutex};

/// Makes the next store: the store, and the end of the warning line that names it
/// ("the tokens are in encrypted files in <dir>").
pub type MakeNext = Box<dyn Fn() -> (Arc<dyn TokenStore>, String) + Send + Sync>;
/// Where the warning line goes (the log; a test collects it).
pub type Warn = Box<dyn Fn(&TokenStoreWarning<'_>) + Send + Sync>;

pub struct KeychainFallback {
    keychain: Arc<dyn TokenStore>,
    next: Mutex<Option<Arc<dyn TokenStore>>>,
    make_next: MakeNext,
    warn: Warn,
}

impl std::fmt::Debug for KeychainFallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeychainFallback")
            .field("keychain", &self.keychain)
            .field("next", &self.current_next())
            .finish()
    }
}

impl KeychainFallback {
    /// The warning goes to the log with the `bridge` scope.
    pub fn new(keychain: Arc<dyn TokenStore>, make_next: MakeNext) -> Self {
        Self::with_warning(
            keychain,
            make_next,
            Box::new(|line| emit!(TokenStoreWarning: line)),
        )
    }

    pub fn with_warning(keychain: Arc<dyn TokenStore>, make_next: MakeNext, warn: Warn) -> Self {
        Self {
            keychain,
            next: Mutex::new(None),
            make_next,
            warn,
        }
    }

    fn current_next(&self) -> Option<Arc<dyn TokenStore>> {
        self.next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn switch(&self, error: &str) -> Arc<dyn TokenStore> {
        let mut next = self
            .next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(store) = next.as_ref() {
            return store.clone();
        }
        let (store, description) = (self.make_next)();
        (self.warn)(&TokenStoreWarning::KeychainStopped {
            error: &error,
            next_store: &description,
        });
        *next = Some(store.clone());
        store
    }

    fn with<T>(
        &self,
        operation: impl Fn(&dyn TokenStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if let Some(next) = self.current_next() {
            return operation(next.as_ref());
        }
        match operation(self.keychain.as_ref()) {
            Err(StoreError::Unavailable(error)) => operation(self.switch(&error).as_ref()),
            other => other,
        }
    }
}

impl TokenStore for KeychainFallback {
    fn kind(&self) -> StoreKind {
        self.current_next()
            .map_or(StoreKind::Keychain, |next| next.kind())
    }

    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
        self.with(|store| store.load(key))
    }

    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError> {
        self.with(|store| store.save(key, sign_in))
    }

    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError> {
        self.with(|store| store.delete(key))
    }

    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        self.with(|store| store.keys())
    }

    fn delete_all(&self) -> Result<usize, StoreError> {
        self.with(|store| store.delete_all())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::{ClientOption, MemoryStore};

    #[derive(Debug)]
    struct Silent;

    impl TokenStore for Silent {
        fn kind(&self) -> StoreKind {
            StoreKind::Keychain
        }
        fn load(&self, _: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
        fn save(&self, _: &EntryKey, _: &StoredSignIn) -> Result<(), StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
        fn delete(&self, _: &EntryKey) -> Result<bool, StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
        fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
    }

    #[test]
    fn a_delete_of_a_keychain_that_answers_tells_whether_an_entry_was_there() {
        let store = KeychainFallback::with_warning(
            Arc::new(MemoryStore::default()),
            Box::new(|| {
                (
                    Arc::new(MemoryStore::default()) as Arc<dyn TokenStore>,
                    "the tokens stay in memory".to_owned(),
                )
            }),
            Box::new(|_| panic!("the keychain answers")),
        );
        let key = EntryKey::new("https://x/mcp", "default", "r", ClientOption::Default);
        assert_eq!(store.delete(&key), Ok(false));
        let sign_in = StoredSignIn::for_tests("r", "a");
        store.save(&key, &sign_in).unwrap();
        assert_eq!(store.delete(&key), Ok(true));
        assert_eq!(store.load(&key), Ok(None));
    }

    #[test]
    fn a_keychain_that_stops_to_answer_hands_the_save_to_the_next_store_with_one_warning() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let collected = lines.clone();
        let store = KeychainFallback::with_warning(
            Arc::new(Silent),
            Box::new(|| {
                (
                    Arc::new(MemoryStore::default()) as Arc<dyn TokenStore>,
                    "the tokens stay in memory".to_owned(),
                )
            }),
            Box::new(move |line| collected.lock().unwrap().push(line.to_string())),
        );
        let key = EntryKey::new("https://x/mcp", "default", "r", ClientOption::Default);
        let sign_in = StoredSignIn::for_tests("r", "a");
        assert_eq!(store.kind(), StoreKind::Keychain);
        store.save(&key, &sign_in).unwrap();
        assert_eq!(store.load(&key).unwrap(), Some(sign_in));
        assert_eq!(store.kind(), StoreKind::Memory);
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                "the keychain stopped to answer (gone). For the rest of the process, the tokens stay in memory"
            ]
        );
    }

    /// Every operation switches, not only the save: the first one after the stop
    /// may be a load, a delete or a listing, and it gets the answer of the next store.
    #[test]
    fn the_first_operation_after_the_keychain_stops_goes_to_the_next_store_whatever_it_is() {
        type First = fn(&KeychainFallback, &EntryKey) -> Result<(), StoreError>;
        let firsts: [(&str, First); 4] = [
            ("load", |store, key| {
                store.load(key).map(|found| assert_eq!(found, None))
            }),
            ("delete", |store, key| {
                store.delete(key).map(|found| assert!(!found))
            }),
            ("keys", |store, _| {
                store.keys().map(|keys| assert!(keys.is_empty()))
            }),
            ("delete_all", |store, _| {
                store.delete_all().map(|count| assert_eq!(count, 0))
            }),
        ];
        for (name, first) in firsts {
            let warnings = Arc::new(Mutex::new(0));
            let counted = warnings.clone();
            let store = KeychainFallback::with_warning(
                Arc::new(Silent),
                Box::new(|| {
                    (
                        Arc::new(MemoryStore::default()) as Arc<dyn TokenStore>,
                        "the tokens stay in memory".to_owned(),
                    )
                }),
                Box::new(move |_| *counted.lock().unwrap() += 1),
            );
            let key = EntryKey::new("https://x/mcp", "default", "r", ClientOption::Default);
            assert_eq!(first(&store, &key), Ok(()), "{name}");
            assert_eq!(store.kind(), StoreKind::Memory, "{name}");
            assert_eq!(*warnings.lock().unwrap(), 1, "{name}");
        }
    }
}
