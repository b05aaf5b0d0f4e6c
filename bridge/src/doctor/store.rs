//! The token store as doctor lends it to the session without `--sign-in`: the
//! stored sign-in is read as a server start reads it, and nothing is written.
//! Its refresh token stays out of reach too: a refresh can replace it at the
//! authorization server, and a new one that is never stored would leave the
//! store with a refresh token that no longer works.

use crate::auth::store::{EntryKey, StoreError, StoreKind, StoredSignIn, TokenStore};
use std::sync::Arc;

#[derive(Debug)]
pub struct ReadOnly(pub Arc<dyn TokenStore>);

impl TokenStore for ReadOnly {
    fn kind(&self) -> StoreKind {
        self.0.kind()
    }

    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
        Ok(self.0.load(key)?.map(|mut sign_in| {
            sign_in.refresh_token = None;
            sign_in
        }))
    }

    fn save(&self, _key: &EntryKey, _sign_in: &StoredSignIn) -> Result<(), StoreError> {
        Ok(())
    }

    fn delete(&self, _key: &EntryKey) -> Result<bool, StoreError> {
        Ok(false)
    }

    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        self.0.keys()
    }

    fn delete_all(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::{ClientOption, MemoryStore};

    #[test]
    fn the_store_is_read_without_its_refresh_token_and_never_written() {
        let memory = Arc::new(MemoryStore::default());
        let key = EntryKey::new(
            "https://mcp.example/mcp",
            "default",
            "http://127.0.0.1:41894/callback",
            ClientOption::Default,
        );
        let sign_in = StoredSignIn {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            client_id: "c".into(),
            client_secret: None,
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            expires_at: None,
            scope: None,
        };
        memory.save(&key, &sign_in).unwrap();
        let read_only = ReadOnly(memory.clone());
        let loaded = read_only.load(&key).unwrap().unwrap();
        assert!(loaded.refresh_token.is_none());
        assert_eq!(loaded.access_token, sign_in.access_token);
        let mut other = sign_in.clone();
        other.access_token = "b".into();
        read_only.save(&key, &other).unwrap();
        assert!(!read_only.delete(&key).unwrap());
        assert_eq!(read_only.delete_all().unwrap(), 0);
        assert_eq!(memory.load(&key).unwrap(), Some(sign_in));
    }
}
