//! Where the tokens of a sign-in live: one interface, [`TokenStore`], with one
//! implementation per store of `--token-store` ("Token storage" of the contract).
//!
//! A store keeps one [`StoredSignIn`] for each [`EntryKey`]: the server URL, the
//! account and the redirect URI (with the client option that changes the client).
//! Its operations are blocking (a keychain answers over D-Bus or a system API), so
//! an async caller runs them with `tokio::task::spawn_blocking`.

//!
//! # Layout
//!
//! - [`open()`]: the one way to get the store of `--token-store`, with its start line.
//! - `key`: the key of the file store and the token directory.
//! - `file`: encrypted files, one for each entry.
//! - `private_dir`: the directory of `file`, kept private, and its writes, whole or
//!   not at all.
//! - `keychain`: the keychain of the host (items, their index, the parts of a large
//!   entry), over a small backend per system (`keychain_native`).
//! - `fallback`: the keychain that stops to answer, replaced for the rest of the process.
//! - `memory`: the tokens of the process alone.

mod fallback;
mod file;
mod key;
mod keychain;
mod keychain_native;
mod memory;
mod open;
mod private_dir;

pub use fallback::KeychainFallback;
pub use file::FileStore;
pub use key::{TokenKey, token_directory, token_key};
pub use keychain::{KeychainBackend, KeychainStore};
pub use keychain_native::{NativeKeychain, SERVICE};
pub use memory::MemoryStore;
pub use open::{Access, OpenError, OpenedStore, open, open_for, open_with, open_with_access};

use super::secret_string::SecretString;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which sign-in an entry keeps: "one stored sign-in for each server URL, account
/// and redirect URI" (contract, "Sign-in and accounts").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EntryKey {
    /// The URL of the upstream server, as the command line gave it.
    pub server_url: String,
    /// The client part of the identity: `mcp-bridge-vscode|<account>|<redirect URI>`,
    /// then `|client=<id>` for `--client-id` or `|cimd=<url>` for
    /// `--client-metadata-url` (see [`EntryKey::new`]).
    pub client: String,
}

/// The client option that the identity of an entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientOption<'a> {
    /// The client ID comes from the metadata document of the bridge or from a
    /// dynamic registration.
    Default,
    /// `--client-id`.
    ClientId(&'a str),
    /// `--client-metadata-url`.
    MetadataDocument(&'a str),
}

impl EntryKey {
    pub fn new(
        server_url: &str,
        account: &str,
        redirect_uri: &str,
        client: ClientOption<'_>,
    ) -> Self {
        let mut identity = format!("{}|{account}|{redirect_uri}", Self::CLIENT_NAME);
        match client {
            ClientOption::Default => {}
            ClientOption::ClientId(id) => identity.push_str(&format!("|client={id}")),
            ClientOption::MetadataDocument(url) => identity.push_str(&format!("|cimd={url}")),
        }
        Self {
            server_url: server_url.to_owned(),
            client: identity,
        }
    }

    /// The first part of every identity.
    pub const CLIENT_NAME: &'static str = "mcp-bridge-vscode";
}

/// What a store keeps of one sign-in. Every field but the times is a secret or
/// close to one: the `Debug` output redacts them all.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSignIn {
    /// The issuer of the authorization server that issued the tokens.
    pub issuer: String,
    /// The `resource` of the protected resource metadata (RFC 8707).
    pub resource: String,
    /// The client ID that the tokens belong to (registered, from a document, or
    /// `--client-id`).
    pub client_id: String,
    /// The secret of a dynamically registered confidential client, when the
    /// authorization server gave one (never `MCP_BRIDGE_CLIENT_SECRET`, which stays
    /// in the environment).
    pub client_secret: Option<SecretString>,
    pub access_token: SecretString,
    pub refresh_token: Option<SecretString>,
    /// When the access token expires, in seconds since the Unix epoch (a wall
    /// clock: the entry outlives the process).
    pub expires_at: Option<u64>,
    /// The scopes the tokens were granted, separated by spaces.
    pub scope: Option<String>,
}

#[cfg(test)]
impl StoredSignIn {
    /// A sign-in of the unit tests: an access token for `resource` at the issuer
    /// `https://as`, without a refresh token, an expiry or a scope.
    pub(crate) fn for_tests(resource: &str, access_token: &str) -> Self {
        Self {
            issuer: "https://as".into(),
            resource: resource.into(),
            client_id: "c".into(),
            client_secret: None,
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
        }
    }
}

impl fmt::Debug for StoredSignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredSignIn")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("client_id", &"[REDACTED]")
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("access_token", &"[REDACTED]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[REDACTED]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

/// Which store serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Keychain,
    File,
    Memory,
}

/// Why a store operation failed. The text never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store does not answer (a keychain that is locked or gone): the next
    /// store serves the rest of the process.
    #[error("{0}")]
    Unavailable(String),
    /// The operation failed; the store may answer the next one.
    #[error("{0}")]
    Failed(String),
}

/// A store of sign-ins. Blocking; see the module documentation.
pub trait TokenStore: Send + Sync + fmt::Debug {
    fn kind(&self) -> StoreKind;

    /// The entry of `key`; `None` when there is none (or one that cannot be read,
    /// which counts as absent, with a warning).
    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError>;

    /// Writes the entry of `key`, in place of the one before.
    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError>;

    /// Deletes the entry of `key`; `true` when there was one.
    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError>;

    /// The keys of every stored entry (the index that `logout` reads).
    fn keys(&self) -> Result<Vec<EntryKey>, StoreError>;

    /// Deletes every entry and what the store keeps about them (`logout --all`);
    /// the number of entries deleted.
    fn delete_all(&self) -> Result<usize, StoreError> {
        let mut deleted = 0;
        for key in self.keys()? {
            if self.delete(&key)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

/// What one entry holds in the keychain or in a file: its key with the sign-in, so
/// that a value moved to the place of another entry is seen.
#[derive(Serialize, Deserialize)]
struct StoredEntry {
    key: EntryKey,
    sign_in: StoredSignIn,
}

/// The hash of an entry's identity, in hex: the name of its file or keychain item
/// (no URL in a name).
fn identity_hash(key: &EntryKey) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(b"mcp-bridge-rs token entry\0");
    hasher.update(key.server_url.as_bytes());
    hasher.update(b"\0");
    hasher.update(key.client.as_bytes());
    let digest = hasher.finalize();
    let mut text = String::with_capacity(64);
    for byte in digest.iter() {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_of_an_entry_names_the_account_the_redirect_and_the_client_option() {
        let redirect = "http://127.0.0.1:41894/callback";
        let key = EntryKey::new(
            "https://mcp.example/mcp",
            "default",
            redirect,
            ClientOption::Default,
        );
        assert_eq!(
            key.client,
            "mcp-bridge-vscode|default|http://127.0.0.1:41894/callback"
        );
        let key = EntryKey::new(
            "https://x/mcp",
            "work",
            redirect,
            ClientOption::ClientId("c1"),
        );
        assert_eq!(
            key.client,
            "mcp-bridge-vscode|work|http://127.0.0.1:41894/callback|client=c1"
        );
        let key = EntryKey::new(
            "https://x/mcp",
            "default",
            redirect,
            ClientOption::MetadataDocument("https://d/c.json"),
        );
        assert!(key.client.ends_with("|cimd=https://d/c.json"));
    }

    #[test]
    fn the_debug_output_of_a_sign_in_has_no_secret() {
        let sign_in = StoredSignIn {
            issuer: "https://as".into(),
            resource: "https://mcp/mcp".into(),
            client_id: "client-7".into(),
            client_secret: Some("secret-9".into()),
            access_token: "access-1".into(),
            refresh_token: Some("refresh-2".into()),
            expires_at: Some(1),
            scope: Some("mcp:read".into()),
        };
        let text = format!("{sign_in:?}");
        for secret in ["client-7", "secret-9", "access-1", "refresh-2"] {
            assert!(!text.contains(secret), "{text}");
        }
    }
}
