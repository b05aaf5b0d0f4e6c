//! `--token-store file`: one encrypted file for each entry in the token directory.
//!
//! # Format
//!
//! A file is named `<hash>.entry`, the hash of the entry's identity (no URL in a
//! name). It holds, after the magic `MBT1`, two XChaCha20-Poly1305 boxes with their
//! own random nonces:
//!
//! 1. the identity (the [`EntryKey`] as JSON), with the file name's hash as the
//!    associated data, so that `keys()` can read the identities without an index
//!    file that two processes would have to share;
//! 2. the sign-in, with the identity itself (server URL and client) as the
//!    associated data.
//!
//! `MBT1 | u32 LE length of box 1 | nonce 1 (24) | box 1 | nonce 2 (24) | box 2`
//!
//! A file moved to the name of another entry, changed by one bit, cut or of another
//! key does not open: it counts as absent, with a warning line, and it is moved
//! aside (`<name>.damaged-<random>`), so that the next sign-in does not write over
//! what might still be saved by hand.
//!
//! # The key check
//!
//! The file `key-check` holds one more box of the same key: a constant text, with
//! its own associated data (`MBK1 | nonce (24) | box`). It is written with the
//! first entry (or, in a directory of entries without it, once the key opens one
//! of them). A key that does not open it does not open the store: a mistyped key
//! would otherwise see every entry as absent, and the next sign-in would write over
//! the entries of the right key.
//!
//! # Writes
//!
//! A write goes to a new temporary file in the same directory (0600), is synced, and
//! is renamed over the entry; then the directory is synced. A kill at any moment
//! leaves the old entry or the new one, and two processes that write at once each
//! rename a whole file: the last rename wins. The temporary file of a killed
//! writer is removed by the next open once it is ten minutes old.

use super::private_dir::{
    create_if_absent, make_private_dir, remove_stale_temporaries, sync_dir, write_atomically,
};
use super::{EntryKey, StoreError, StoreKind, StoredEntry, StoredSignIn, TokenKey, TokenStore};
use crate::catalogue::TokenStoreWarning;
use crate::log::emit;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use std::fs;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

const MAGIC: &[u8; 4] = b"MBT1";
const NONCE: usize = 24;
const SUFFIX: &str = ".entry";
const KEY_CHECK: &str = "key-check";
const KEY_CHECK_MAGIC: &[u8; 4] = b"MBK1";
const KEY_CHECK_DOMAIN: &[u8] = b"mcp-bridge-rs/token-key-check/1\0";
const KEY_CHECK_TEXT: &[u8] = b"the key of this token directory";
const IDENTITY_DOMAIN: &[u8] = b"mcp-bridge-rs/token-entry/identity/1\0";
const SIGN_IN_DOMAIN: &[u8] = b"mcp-bridge-rs/token-entry/sign-in/1\0";
/// The most that a file of the store holds: an entry of at most 16 MiB (the
/// answers of a token endpoint and of a registration, 1 MiB each, as JSON) with its
/// identity, nonces and tags. A longer file is none that the store wrote.
const MAX_FILE_BYTES: u64 = 17 * 1024 * 1024;
/// What the name of a moved entry file adds to the name of the entry.
const DAMAGED: &str = ".damaged-";

pub struct FileStore {
    dir: PathBuf,
    key: TokenKey,
    /// Opened by [`FileStore::open_to_read`]: nothing in the directory changes.
    read_only: bool,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore")
            .field("dir", &self.dir)
            .field("key", &"[REDACTED]")
            .finish()
    }
}

/// Why a file does not open: it then counts as absent.
enum Unreadable {
    Format,
    Decrypt,
    OtherEntry,
}

impl Unreadable {
    fn text(&self) -> &'static str {
        match self {
            Self::Format => "its format is not known",
            Self::Decrypt => "it does not decrypt with the key",
            Self::OtherEntry => "it belongs to a different entry",
        }
    }
}

impl FileStore {
    /// Opens the store in `dir`, which it makes private to the account (0700),
    /// when `key` is the key of the directory (see the key check above); the
    /// error is the `<cause>` of "the token store did not open".
    pub fn open(dir: &Path, key: TokenKey) -> Result<Self, String> {
        make_private_dir(dir).map_err(|error| {
            format!("cannot use the token directory {}: {error}", dir.display())
        })?;
        remove_stale_temporaries(dir);
        let store = Self {
            dir: dir.to_path_buf(),
            key,
            read_only: false,
        };
        store.check_key()?;
        Ok(store)
    }

    /// Opens the store in `dir` to read it only (`doctor` without `--sign-in`): the
    /// directory is neither made nor changed, no key check is written, and a file
    /// that does not open stays where it is (with the warning); a write is an
    /// error. A directory that is not there is an empty store.
    pub fn open_to_read(dir: &Path, key: TokenKey) -> Result<Self, String> {
        let store = Self {
            dir: dir.to_path_buf(),
            key,
            read_only: true,
        };
        store.check_key()?;
        Ok(store)
    }

    /// The error of a write to a store opened to read only.
    fn writable(&self) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::Failed(format!(
                "the token directory {} is open to read only",
                self.dir.display()
            )));
        }
        Ok(())
    }

    fn wrong_key(&self) -> String {
        format!(
            "the key of the file store is not the key of the token directory {}: give the key that stored its sign-ins, or delete them with mcp-bridge-vscode logout --all",
            self.dir.display()
        )
    }

    /// The key opens the key check; without one, it opens an entry (a directory
    /// of a bridge before the key check), and the check is written now.
    fn check_key(&self) -> Result<(), String> {
        let check = self.dir.join(KEY_CHECK);
        if let Some(bytes) = self.read(&check).map_err(|error| error.to_string())? {
            return self.opens_key_check(&bytes).ok_or_else(|| self.wrong_key());
        }
        let files = self.entry_files().map_err(|error| error.to_string())?;
        if files.is_empty() {
            return Ok(());
        }
        let opens_one = files.iter().any(|(hash, path)| {
            self.read(path)
                .ok()
                .flatten()
                .is_some_and(|bytes| self.open_identity(hash, &bytes).is_ok())
        });
        if !opens_one {
            return Err(self.wrong_key());
        }
        if self.read_only {
            return Ok(());
        }
        self.ensure_key_check().map_err(|error| error.to_string())
    }

    fn opens_key_check(&self, bytes: &[u8]) -> Option<()> {
        let rest = bytes.strip_prefix(KEY_CHECK_MAGIC)?;
        let (nonce, sealed) = rest.split_at_checked(NONCE)?;
        let text = self
            .cipher()
            .decrypt(
                &nonce_of(nonce).ok()?,
                Payload {
                    msg: sealed,
                    aad: KEY_CHECK_DOMAIN,
                },
            )
            .ok()?;
        (text == KEY_CHECK_TEXT).then_some(())
    }

    /// Writes the key check when the directory has none. A check that is there
    /// must open with this key, also one that another process wrote after this
    /// store opened: two bridges with different keys that both started before the
    /// first sign-in.
    fn ensure_key_check(&self) -> Result<(), StoreError> {
        let check = self.dir.join(KEY_CHECK);
        if !check.exists() && self.create_key_check(&check)? {
            return Ok(());
        }
        match self.read(&check)? {
            Some(bytes) if self.opens_key_check(&bytes).is_some() => Ok(()),
            _ => Err(StoreError::Failed(self.wrong_key())),
        }
    }

    /// Writes the key check unless a file is there; `false` when one was.
    fn create_key_check(&self, check: &Path) -> Result<bool, StoreError> {
        let nonce = nonce()?;
        let sealed = self
            .cipher()
            .encrypt(
                &nonce,
                Payload {
                    msg: KEY_CHECK_TEXT,
                    aad: KEY_CHECK_DOMAIN,
                },
            )
            .map_err(|_| StoreError::Failed("the encryption of the key check failed".into()))?;
        let bytes = [KEY_CHECK_MAGIC.as_slice(), nonce.as_slice(), &sealed].concat();
        create_if_absent(&self.dir, check, &bytes).map_err(|error| {
            StoreError::Failed(format!(
                "cannot write the key check of the token directory {}: {error}",
                self.dir.display()
            ))
        })
    }

    /// The token directory.
    pub fn directory(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, key: &EntryKey) -> PathBuf {
        self.dir
            .join(format!("{}{SUFFIX}", super::identity_hash(key)))
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        // The cipher's copy of the key is zeroized when it drops (feature zeroize).
        XChaCha20Poly1305::new(&(*self.key.bytes()).into())
    }

    fn seal(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<Vec<u8>, StoreError> {
        let cipher = self.cipher();
        let hash = super::identity_hash(key);
        let identity = serde_json::to_vec(key).map_err(|e| StoreError::Failed(e.to_string()))?;
        let body = Zeroizing::new(
            serde_json::to_vec(sign_in).map_err(|e| StoreError::Failed(e.to_string()))?,
        );
        let nonce_1 = nonce()?;
        let nonce_2 = nonce()?;
        let failed = |_| StoreError::Failed("the encryption of the entry failed".into());
        let box_1 = cipher
            .encrypt(
                &nonce_1,
                Payload {
                    msg: &identity,
                    aad: &identity_aad(&hash),
                },
            )
            .map_err(failed)?;
        let box_2 = cipher
            .encrypt(
                &nonce_2,
                Payload {
                    msg: &body,
                    aad: &sign_in_aad(key),
                },
            )
            .map_err(failed)?;
        let length = u32::try_from(box_1.len())
            .map_err(|_| StoreError::Failed("the identity of the entry is too long".into()))?;
        let mut out = Vec::with_capacity(4 + 4 + 2 * NONCE + box_1.len() + box_2.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&nonce_1);
        out.extend_from_slice(&box_1);
        out.extend_from_slice(&nonce_2);
        out.extend_from_slice(&box_2);
        Ok(out)
    }

    /// The identity of a file, from its first box.
    fn open_identity(&self, hash: &str, bytes: &[u8]) -> Result<(EntryKey, usize), Unreadable> {
        let rest = bytes.strip_prefix(MAGIC).ok_or(Unreadable::Format)?;
        let (length, rest) = rest.split_at_checked(4).ok_or(Unreadable::Format)?;
        let length = u32::from_le_bytes(length.try_into().map_err(|_| Unreadable::Format)?);
        let length = usize::try_from(length).map_err(|_| Unreadable::Format)?;
        let (nonce_1, rest) = rest.split_at_checked(NONCE).ok_or(Unreadable::Format)?;
        let box_1 = rest.get(..length).ok_or(Unreadable::Format)?;
        let identity = self
            .cipher()
            .decrypt(
                &nonce_of(nonce_1)?,
                Payload {
                    msg: box_1,
                    aad: &identity_aad(hash),
                },
            )
            .map_err(|_| Unreadable::Decrypt)?;
        let key: EntryKey = serde_json::from_slice(&identity).map_err(|_| Unreadable::Format)?;
        if super::identity_hash(&key) != hash {
            return Err(Unreadable::OtherEntry);
        }
        Ok((key, 4 + 4 + NONCE + length))
    }

    fn open_file(&self, hash: &str, bytes: &[u8]) -> Result<StoredEntry, Unreadable> {
        let (key, offset) = self.open_identity(hash, bytes)?;
        let rest = bytes.get(offset..).ok_or(Unreadable::Format)?;
        let (nonce_2, box_2) = rest.split_at_checked(NONCE).ok_or(Unreadable::Format)?;
        let body = Zeroizing::new(
            self.cipher()
                .decrypt(
                    &nonce_of(nonce_2)?,
                    Payload {
                        msg: box_2,
                        aad: &sign_in_aad(&key),
                    },
                )
                .map_err(|_| Unreadable::Decrypt)?,
        );
        let sign_in = serde_json::from_slice(&body).map_err(|_| Unreadable::Format)?;
        Ok(StoredEntry { key, sign_in })
    }

    /// The bytes of the file at `path`, a regular file of at most
    /// [`MAX_FILE_BYTES`]: a symbolic link, a FIFO or a device (`/dev/zero`) is
    /// never opened, as its read could hang or never end.
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
        let failed = |why: String| {
            StoreError::Failed(format!(
                "cannot read the token file {}: {why}",
                path.display()
            ))
        };
        match fs::symlink_metadata(path) {
            Ok(metadata) if !metadata.file_type().is_file() => {
                return Err(failed("it is not a regular file".into()));
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(failed(error.to_string())),
        }
        let file = match fs::File::open(path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(failed(error.to_string())),
        };
        // The file opened may not be the one looked at: its own metadata decides.
        let regular = file.metadata().map_err(|error| failed(error.to_string()))?;
        if !regular.is_file() {
            return Err(failed("it is not a regular file".into()));
        }
        if regular.len() > MAX_FILE_BYTES {
            return Err(failed("it is longer than 17 MiB".into()));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_FILE_BYTES + 1),
            &mut bytes,
        )
        .map_err(|error| failed(error.to_string()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(failed("it is longer than 17 MiB".into()));
        }
        Ok(Some(bytes))
    }

    /// Deletes the copies of the entry file `path` that were moved aside
    /// (`<name>.damaged-<random>`): they are of the same entry, and a logout of it
    /// leaves nothing of it behind.
    fn delete_damaged_copies(&self, path: &Path) -> Result<(), StoreError> {
        let Some(name) = path.file_name().map(|name| name.to_string_lossy()) else {
            return Ok(());
        };
        let prefix = format!("{name}{DAMAGED}");
        let listing = match fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => {
                return Err(StoreError::Failed(format!(
                    "cannot list the token directory {}: {error}",
                    self.dir.display()
                )));
            }
        };
        for item in listing.flatten() {
            if !item.file_name().to_string_lossy().starts_with(&prefix) {
                continue;
            }
            match fs::remove_file(item.path()) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(StoreError::Failed(format!(
                        "cannot delete the token file {}: {error}",
                        item.path().display()
                    )));
                }
            }
        }
        Ok(())
    }

    fn warn_unreadable(&self, path: &Path, why: &Unreadable) {
        emit!(TokenStoreWarning::FileNotValid {
            path: &path.display(),
            why: &why.text(),
        });
    }

    /// Moves an entry file that does not open out of the way of the next write,
    /// with the warning that says where.
    fn move_aside(&self, path: &Path, why: &Unreadable) {
        if self.read_only {
            self.warn_unreadable(path, why);
            return;
        }
        let mut suffix = [0u8; 8];
        let aside = getrandom::fill(&mut suffix).ok().map(|()| {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.dir.join(format!(
                "{name}{DAMAGED}{:016x}",
                u64::from_le_bytes(suffix)
            ))
        });
        match aside {
            Some(aside) if fs::rename(path, &aside).is_ok() => {
                sync_dir(&self.dir);
                emit!(TokenStoreWarning::FileMoved {
                    path: &path.display(),
                    why: &why.text(),
                    new_path: &aside.display(),
                });
            }
            _ => self.warn_unreadable(path, why),
        }
    }

    /// The hashes of the entry files.
    fn entry_files(&self) -> Result<Vec<(String, PathBuf)>, StoreError> {
        let listing = match fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => {
                return Err(StoreError::Failed(format!(
                    "cannot list the token directory {}: {error}",
                    self.dir.display()
                )));
            }
        };
        let mut files = Vec::new();
        for item in listing.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if let Some(hash) = name.strip_suffix(SUFFIX)
                && !hash.starts_with('.')
            {
                files.push((hash.to_owned(), item.path()));
            }
        }
        files.sort();
        Ok(files)
    }
}

fn identity_aad(hash: &str) -> Vec<u8> {
    [IDENTITY_DOMAIN, hash.as_bytes()].concat()
}

fn sign_in_aad(key: &EntryKey) -> Vec<u8> {
    [
        SIGN_IN_DOMAIN,
        key.server_url.as_bytes(),
        b"\0",
        key.client.as_bytes(),
    ]
    .concat()
}

fn nonce() -> Result<XNonce, StoreError> {
    let mut bytes = [0u8; NONCE];
    getrandom::fill(&mut bytes)
        .map_err(|error| StoreError::Failed(format!("the system gave no random data: {error}")))?;
    Ok(bytes.into())
}

fn nonce_of(bytes: &[u8]) -> Result<XNonce, Unreadable> {
    let bytes: [u8; NONCE] = bytes.try_into().map_err(|_| Unreadable::Format)?;
    Ok(bytes.into())
}

impl TokenStore for FileStore {
    fn kind(&self) -> StoreKind {
        StoreKind::File
    }

    fn load(&self, key: &EntryKey) -> Result<Option<StoredSignIn>, StoreError> {
        let path = self.path_of(key);
        let Some(bytes) = self.read(&path)? else {
            return Ok(None);
        };
        match self.open_file(&super::identity_hash(key), &bytes) {
            Ok(entry) if entry.key == *key => Ok(Some(entry.sign_in)),
            Ok(_) => {
                self.move_aside(&path, &Unreadable::OtherEntry);
                Ok(None)
            }
            Err(why) => {
                self.move_aside(&path, &why);
                Ok(None)
            }
        }
    }

    /// Writes the entry (and the key check with the first one); an entry file
    /// there that does not open is moved aside first, never written over.
    fn save(&self, key: &EntryKey, sign_in: &StoredSignIn) -> Result<(), StoreError> {
        self.writable()?;
        let bytes = self.seal(key, sign_in)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(StoreError::Failed(
                "the sign-in is longer than a token file holds (17 MiB)".into(),
            ));
        }
        make_private_dir(&self.dir).map_err(|error| {
            StoreError::Failed(format!(
                "cannot use the token directory {}: {error}",
                self.dir.display()
            ))
        })?;
        self.ensure_key_check()?;
        let path = self.path_of(key);
        if let Some(old) = self.read(&path)? {
            match self.open_file(&super::identity_hash(key), &old) {
                Ok(entry) if entry.key == *key => {}
                Ok(_) => self.move_aside(&path, &Unreadable::OtherEntry),
                Err(why) => self.move_aside(&path, &why),
            }
        }
        write_atomically(&self.dir, &path, &bytes).map_err(|error| {
            StoreError::Failed(format!(
                "cannot write a token file in {}: {error}",
                self.dir.display()
            ))
        })
    }

    /// Deletes the entry file and the copies of it that were moved aside; `true`
    /// when there was an entry file.
    fn delete(&self, key: &EntryKey) -> Result<bool, StoreError> {
        self.writable()?;
        let path = self.path_of(key);
        self.delete_damaged_copies(&path)?;
        match fs::remove_file(&path) {
            Ok(()) => {
                sync_dir(&self.dir);
                Ok(true)
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                sync_dir(&self.dir);
                Ok(false)
            }
            Err(error) => Err(StoreError::Failed(format!(
                "cannot delete the token file {}: {error}",
                path.display()
            ))),
        }
    }

    /// The identities of the files that open with the key (no index file: each
    /// file names its own entry).
    fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
        let mut keys = Vec::new();
        for (hash, path) in self.entry_files()? {
            let Some(bytes) = self.read(&path)? else {
                continue;
            };
            match self.open_identity(&hash, &bytes) {
                Ok((key, _)) => keys.push(key),
                Err(why) => self.warn_unreadable(&path, &why),
            }
        }
        keys.sort();
        Ok(keys)
    }

    /// Every entry file, also those that do not open with this key.
    fn delete_all(&self) -> Result<usize, StoreError> {
        self.writable()?;
        let mut deleted = 0;
        for (_, path) in self.entry_files()? {
            match fs::remove_file(&path) {
                Ok(()) => deleted += 1,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(StoreError::Failed(format!(
                        "cannot delete the token file {}: {error}",
                        path.display()
                    )));
                }
            }
        }
        sync_dir(&self.dir);
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::ClientOption;

    /// The reasons of the warning line of a file that does not open (catalogue,
    /// FileMoved and FileNotValid).
    #[test]
    fn each_reason_of_a_file_that_does_not_open_has_its_text() {
        assert_eq!(Unreadable::Format.text(), "its format is not known");
        assert_eq!(
            Unreadable::Decrypt.text(),
            "it does not decrypt with the key"
        );
        assert_eq!(
            Unreadable::OtherEntry.text(),
            "it belongs to a different entry"
        );
    }

    fn key() -> TokenKey {
        TokenKey::from_hex(&"ab".repeat(32)).unwrap()
    }

    fn sign_in(token: &str) -> StoredSignIn {
        StoredSignIn {
            issuer: "https://as".into(),
            resource: "https://x/mcp".into(),
            client_id: "c".into(),
            client_secret: None,
            access_token: token.into(),
            refresh_token: Some("r".into()),
            expires_at: Some(7),
            scope: None,
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

    #[test]
    fn a_file_holds_no_url_and_no_token_in_clear_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens");
        let store = FileStore::open(&tokens, key()).unwrap();
        store
            .save(&entry("https://mcp.example/mcp"), &sign_in("tok-123"))
            .unwrap();
        let mut names: Vec<_> = fs::read_dir(&tokens)
            .unwrap()
            .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort_by_key(|name| name == KEY_CHECK);
        assert_eq!(names.len(), 2, "the entry and the key check: {names:?}");
        assert_eq!(names[0].len(), 64 + SUFFIX.len());
        assert_eq!(names[1], KEY_CHECK);
        let bytes = fs::read(tokens.join(&names[0])).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("mcp.example") && !text.contains("tok-123"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&tokens), 0o700);
            assert_eq!(mode(&tokens.join(&names[0])), 0o600);
            assert_eq!(mode(&tokens.join(KEY_CHECK)), 0o600);
        }
    }

    #[test]
    fn opening_removes_the_temporary_files_of_killed_writers_only_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".x.entry.0123456789abcdef.tmp");
        let fresh = dir.path().join(".y.entry.0123456789abcdef.tmp");
        fs::write(&old, b"half").unwrap();
        fs::write(&fresh, b"half").unwrap();
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(an_hour_ago)
            .unwrap();
        FileStore::open(dir.path(), key()).unwrap();
        assert!(!old.exists());
        assert!(fresh.exists());
    }

    #[test]
    fn opening_keeps_old_entries_and_the_old_key_check() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let entry = entry("https://mcp.example/mcp");
        store.save(&entry, &sign_in("tok-old")).unwrap();
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for path in [store.path_of(&entry), dir.path().join(KEY_CHECK)] {
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(an_hour_ago)
                .unwrap();
        }
        let again = FileStore::open(dir.path(), key()).unwrap();
        assert!(dir.path().join(KEY_CHECK).exists());
        let loaded = again.load(&entry).unwrap().expect("the old entry stays");
        assert_eq!(loaded.access_token, "tok-old".into());
    }

    #[test]
    fn reading_a_path_that_is_not_a_file_fails() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        assert_eq!(store.read(&dir.path().join("absent")), Ok(None));
        assert!(store.read(dir.path()).is_err());
    }

    /// A read that could hang (a FIFO without a writer) or never end (`/dev/zero`)
    /// is refused before the open; so is a file longer than the store writes.
    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_of_at_most_17_mib_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let entry = entry("https://mcp.example/mcp");
        let path = store.path_of(&entry);
        let not_regular = format!(
            "cannot read the token file {}: it is not a regular file",
            path.display()
        );
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert_eq!(
            store.load(&entry),
            Err(StoreError::Failed(not_regular.clone()))
        );
        fs::remove_file(&path).unwrap();
        let fifo = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(fifo.success());
        assert_eq!(
            store.load(&entry),
            Err(StoreError::Failed(not_regular.clone()))
        );
        assert!(store.save(&entry, &sign_in("tok")).is_err());
        fs::remove_file(&path).unwrap();
        // A link to a regular file is no regular file of the directory either.
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, b"MBT1").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(store.load(&entry), Err(StoreError::Failed(not_regular)));
        fs::remove_file(&path).unwrap();
        let long = fs::File::create(&path).unwrap();
        long.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert_eq!(
            store.load(&entry),
            Err(StoreError::Failed(format!(
                "cannot read the token file {}: it is longer than 17 MiB",
                path.display()
            )))
        );
        // The key check is read the same way.
        let check = dir.path().join(KEY_CHECK);
        fs::remove_file(&path).unwrap();
        if check.exists() {
            fs::remove_file(&check).unwrap();
        }
        std::os::unix::fs::symlink("/dev/zero", &check).unwrap();
        assert!(FileStore::open(dir.path(), key()).is_err());
    }

    #[test]
    fn a_store_opened_to_read_changes_nothing_and_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens");
        let reader = FileStore::open_to_read(&tokens, key()).unwrap();
        assert_eq!(reader.keys(), Ok(vec![]));
        assert!(!tokens.exists());
        let entry = entry("https://mcp.example/mcp");
        assert!(reader.save(&entry, &sign_in("a")).is_err());
        assert!(reader.delete(&entry).is_err());
        assert!(reader.delete_all().is_err());
        assert!(!tokens.exists());
        let writer = FileStore::open(&tokens, key()).unwrap();
        writer.save(&entry, &sign_in("a")).unwrap();
        let path = writer.path_of(&entry);
        let mut bytes = fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(&path, &bytes).unwrap();
        fs::remove_file(tokens.join(KEY_CHECK)).unwrap();
        let reader = FileStore::open_to_read(&tokens, key()).unwrap();
        assert_eq!(reader.load(&entry), Ok(None));
        assert_eq!(fs::read(&path).unwrap(), bytes, "the file stays");
        assert!(!tokens.join(KEY_CHECK).exists());
        assert!(
            FileStore::open_to_read(&tokens, TokenKey::from_hex(&"cd".repeat(32)).unwrap())
                .is_err()
        );
    }

    #[test]
    fn deleting_an_entry_deletes_its_damaged_copies_and_no_other_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let (mine, other) = (
            entry("https://a.example/mcp"),
            entry("https://b.example/mcp"),
        );
        store.save(&mine, &sign_in("a")).unwrap();
        store.save(&other, &sign_in("b")).unwrap();
        // A copy that did not open and was moved aside, twice, for each entry.
        for entry in [&mine, &other] {
            let path = store.path_of(entry);
            for n in 0..2 {
                let copy = format!("{}{DAMAGED}{n:016x}", path.display());
                fs::write(copy, b"damaged").unwrap();
            }
        }
        let names = || -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(dir.path())
                .unwrap()
                .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(store.delete(&mine), Ok(true));
        let mine_name = store.path_of(&mine);
        let mine_name = mine_name.file_name().unwrap().to_string_lossy();
        assert!(
            names().iter().all(|name| !name.starts_with(&*mine_name)),
            "{:?}",
            names()
        );
        assert_eq!(names().len(), 4, "{:?}", names()); // key-check, the other and its 2 copies
        // With the entry gone, its copies still go.
        let other_path = store.path_of(&other);
        fs::remove_file(&other_path).unwrap();
        assert_eq!(store.delete(&other), Ok(false));
        assert_eq!(names(), vec![KEY_CHECK.to_owned()]);
    }

    /// A logout that could not delete the file must not say that there was no
    /// sign-in: the sign-in is still there.
    #[test]
    fn deleting_an_entry_that_is_not_a_file_fails_and_does_not_count_it_absent() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let entry = entry("https://mcp.example/mcp");
        assert_eq!(store.delete(&entry), Ok(false));
        let path = store.path_of(&entry);
        fs::create_dir(&path).unwrap();
        let Err(StoreError::Failed(error)) = store.delete(&entry) else {
            panic!("a delete that failed must not count the entry absent");
        };
        assert!(
            error.starts_with(&format!(
                "cannot delete the token file {}: ",
                path.display()
            )),
            "{error}"
        );
    }

    #[test]
    fn the_identity_of_a_file_opens_only_under_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let entry = entry("https://mcp.example/mcp");
        let bytes = store.seal(&entry, &sign_in("tok")).unwrap();
        let own = super::super::identity_hash(&entry);
        assert!(store.open_identity(&own, &bytes).is_ok());
        let other = super::super::identity_hash(&self::entry("https://other.example/mcp"));
        assert!(matches!(
            store.open_identity(&other, &bytes),
            Err(Unreadable::Decrypt)
        ));
    }

    /// Where the identity box of `sealed`, the file of `entry`, ends.
    fn identity_end(store: &FileStore, entry: &EntryKey, sealed: &[u8]) -> usize {
        match store.open_identity(&super::super::identity_hash(entry), sealed) {
            Ok((_, end)) => end,
            Err(why) => panic!("{}", why.text()),
        }
    }

    #[test]
    fn a_sign_in_opens_only_behind_the_identity_it_was_sealed_with() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let (a, b) = (entry("https://a/mcp"), entry("https://b/mcp"));
        let sealed_a = store.seal(&a, &sign_in("A")).unwrap();
        let sealed_b = store.seal(&b, &sign_in("B")).unwrap();
        let hash_a = super::super::identity_hash(&a);
        let end_a = identity_end(&store, &a, &sealed_a);
        let end_b = identity_end(&store, &b, &sealed_b);
        // A's identity, then B's sign-in: the same key sealed both boxes.
        let spliced = [&sealed_a[..end_a], &sealed_b[end_b..]].concat();
        assert!(matches!(
            store.open_file(&hash_a, &spliced),
            Err(Unreadable::Decrypt)
        ));
        assert!(
            matches!(store.open_file(&hash_a, &sealed_a), Ok(entry) if entry.sign_in == sign_in("A"))
        );
    }

    #[test]
    fn a_token_directory_that_cannot_be_listed_fails_and_does_not_list_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let not_a_directory = dir.path().join("tokens");
        fs::write(&not_a_directory, b"").unwrap();
        let store = FileStore {
            dir: not_a_directory.clone(),
            key: key(),
            read_only: false,
        };
        let Err(StoreError::Failed(error)) = store.keys() else {
            panic!("a listing that failed must not be an empty store");
        };
        assert!(
            error.starts_with(&format!(
                "cannot list the token directory {}: ",
                not_a_directory.display()
            )),
            "{error}"
        );
        let absent = FileStore {
            dir: dir.path().join("absent"),
            key: key(),
            read_only: false,
        };
        assert_eq!(absent.keys(), Ok(vec![]));
    }

    /// A key check that this version wrote with the key `0123456789abcdef` four
    /// times: the format and the reading of the key stay, or a directory of an
    /// earlier bridge no longer opens.
    const WRITTEN_KEY_CHECK: &str = "4d424b313931b098b1558865bb7d130e4db0f3e3b644ccd8b9809532113ccbb704b328fae5f642a59d1145f2626587bed20aa5135d20ef4737ed8559ae63d39c3bad47d5ae913cc11c0e16";

    #[test]
    fn a_key_check_written_before_opens_with_the_same_key_text_only() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..WRITTEN_KEY_CHECK.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&WRITTEN_KEY_CHECK[at..at + 2], 16).unwrap())
            .collect();
        fs::write(dir.path().join(KEY_CHECK), bytes).unwrap();
        let same = TokenKey::from_hex(&"0123456789abcdef".repeat(4)).unwrap();
        assert!(FileStore::open(dir.path(), same).is_ok());
        let upper = TokenKey::from_hex(&"0123456789ABCDEF".repeat(4)).unwrap();
        assert!(FileStore::open(dir.path(), upper).is_ok());
        let other = TokenKey::from_hex(&"1032547698badcfe".repeat(4)).unwrap();
        assert!(FileStore::open(dir.path(), other).is_err());
    }

    #[test]
    fn each_seal_has_nonces_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let entry = entry("https://a/mcp");
        let first = store.seal(&entry, &sign_in("A")).unwrap();
        let second = store.seal(&entry, &sign_in("A")).unwrap();
        let nonce_1 = |sealed: &[u8]| sealed[8..8 + NONCE].to_vec();
        assert_ne!(nonce_1(&first), nonce_1(&second));
        let end = identity_end(&store, &entry, &first);
        assert_ne!(nonce_1(&first), first[end..end + NONCE]);
    }

    #[test]
    fn the_debug_output_of_the_store_has_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let shown = format!("{store:?}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
        assert!(!shown.contains("ab, ") && !shown.contains("171"), "{shown}");
    }

    #[test]
    fn a_file_moved_to_another_entry_counts_as_absent_and_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let (a, b) = (entry("https://a/mcp"), entry("https://b/mcp"));
        store.save(&a, &sign_in("A")).unwrap();
        fs::copy(store.path_of(&a), store.path_of(&b)).unwrap();
        assert_eq!(store.load(&b), Ok(None));
        assert!(!store.path_of(&b).exists());
        assert_eq!(store.keys().unwrap(), vec![a.clone()]);
        assert_eq!(store.load(&a).unwrap(), Some(sign_in("A")));
        assert_eq!(store.delete_all(), Ok(1));
    }

    #[test]
    fn the_key_check_is_written_with_the_first_entry_and_refuses_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        let check = dir.path().join(KEY_CHECK);
        assert!(!check.exists());
        store.save(&entry("https://a/mcp"), &sign_in("A")).unwrap();
        let written = fs::read(&check).unwrap();
        assert!(written.starts_with(KEY_CHECK_MAGIC));
        assert!(FileStore::open(dir.path(), key()).is_ok());
        let other = TokenKey::from_hex(&"cd".repeat(32)).unwrap();
        assert_eq!(
            FileStore::open(dir.path(), other).unwrap_err(),
            format!(
                "the key of the file store is not the key of the token directory {}: give the key that stored its sign-ins, or delete them with mcp-bridge-vscode logout --all",
                dir.path().display()
            )
        );
        assert_eq!(fs::read(&check).unwrap(), written);
    }

    #[test]
    fn a_key_check_written_after_the_store_opened_refuses_another_key() {
        let dir = tempfile::tempdir().unwrap();
        // Two bridges with different keys, both started before the first sign-in.
        let first = FileStore::open(dir.path(), key()).unwrap();
        let other =
            FileStore::open(dir.path(), TokenKey::from_hex(&"cd".repeat(32)).unwrap()).unwrap();
        first.save(&entry("https://a/mcp"), &sign_in("A")).unwrap();
        assert_eq!(
            other.save(&entry("https://b/mcp"), &sign_in("B")),
            Err(StoreError::Failed(other.wrong_key()))
        );
        assert!(!other.path_of(&entry("https://b/mcp")).exists());
        first.save(&entry("https://c/mcp"), &sign_in("C")).unwrap();
    }

    #[test]
    fn a_directory_without_a_key_check_gets_one_when_the_key_opens_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(dir.path(), key()).unwrap();
        store.save(&entry("https://a/mcp"), &sign_in("A")).unwrap();
        // A directory of a bridge before the key check.
        fs::remove_file(dir.path().join(KEY_CHECK)).unwrap();
        let other = TokenKey::from_hex(&"cd".repeat(32)).unwrap();
        assert!(FileStore::open(dir.path(), other).is_err());
        assert!(!dir.path().join(KEY_CHECK).exists());
        assert!(FileStore::open(dir.path(), key()).is_ok());
        assert!(dir.path().join(KEY_CHECK).exists());
    }
}
