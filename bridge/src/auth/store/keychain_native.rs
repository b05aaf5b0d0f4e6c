//! The keychain of the host through keyring-core and the native store of each
//! system: the Secret Service on Linux (zbus, pure Rust), the macOS Keychain, the
//! Windows Credential Manager.
//!
//! An item has the service `mcp-bridge-rs/mcp-bridge-vscode` and the item name as
//! its user (`secret-tool search service mcp-bridge-rs/mcp-bridge-vscode` lists
//! them). On Windows the credential is named `mcp-bridge-rs/mcp-bridge-vscode/<name>`
//! and holds at most 2560 bytes, so large values come in parts.
//!
//! On Linux, the bridge asks the Secret Service first whether the collection is
//! locked: without a display (no `DISPLAY`, no `WAYLAND_DISPLAY`) a locked
//! collection is [`StoreError::Unavailable`], never an unlock prompt that nobody
//! can answer.

use super::{KeychainBackend, StoreError};
use keyring_core::{Entry, Error};
use std::collections::HashMap;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The keychain service of every item.
pub const SERVICE: &str = "mcp-bridge-rs/mcp-bridge-vscode";

/// The keychain of the host.
pub struct NativeKeychain {
    store: Arc<keyring_core::api::CredentialStore>,
    #[cfg(target_os = "linux")]
    lock_check: linux::LockCheck,
}

impl std::fmt::Debug for NativeKeychain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeKeychain")
            .field("service", &SERVICE)
            .finish()
    }
}

impl NativeKeychain {
    /// Connects to the keychain of the host. `has_display` tells whether an unlock
    /// prompt can show.
    pub fn connect(has_display: bool) -> Result<Self, StoreError> {
        #[cfg(target_os = "linux")]
        {
            let lock_check = linux::LockCheck::new(has_display);
            lock_check.check()?;
            let store = zbus_secret_service_keyring_store::Store::new().map_err(unavailable)?;
            Ok(Self { store, lock_check })
        }
        #[cfg(target_os = "macos")]
        {
            let _ = has_display;
            let store = apple_native_keyring_store::keychain::Store::new().map_err(unavailable)?;
            Ok(Self { store })
        }
        #[cfg(windows)]
        {
            let _ = has_display;
            let store = windows_native_keyring_store::Store::new().map_err(unavailable)?;
            Ok(Self { store })
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
        {
            let _ = has_display;
            Err(StoreError::Unavailable(
                "this system has no keychain that the bridge knows".into(),
            ))
        }
    }

    fn entry(&self, name: &str) -> Result<Entry, StoreError> {
        #[cfg(target_os = "linux")]
        self.lock_check.check()?;
        let result = if cfg!(windows) {
            let target = format!("{SERVICE}/{name}");
            let modifiers = HashMap::from([("target", target.as_str())]);
            Entry::new_in_store_with_modifiers(&self.store, SERVICE, name, &modifiers)
        } else {
            Entry::new_in_store(&self.store, SERVICE, name)
        };
        result.map_err(failed)
    }
}

/// The text of a keyring error. Never the data of an item: `BadEncoding` and
/// `BadDataFormat` carry it.
fn describe(error: &Error) -> String {
    match error {
        Error::PlatformFailure(inner) | Error::NoStorageAccess(inner) => inner.to_string(),
        Error::BadEncoding(_) | Error::BadDataFormat(_, _) => {
            "an item of the keychain holds data that the bridge did not write".into()
        }
        Error::NoEntry => "no such item".into(),
        Error::Ambiguous(_) => "the keychain has more than one item of that name".into(),
        Error::TooLong(what, limit) => format!("the {what} is longer than {limit}"),
        Error::Invalid(what, why) => format!("the {what} is not valid: {why}"),
        _ => "the keychain failed".into(),
    }
}

fn unavailable(error: Error) -> StoreError {
    StoreError::Unavailable(describe(&error))
}

/// An error of an operation: a keychain that no longer answers is `Unavailable`.
fn failed(error: Error) -> StoreError {
    match error {
        Error::PlatformFailure(_) | Error::NoStorageAccess(_) => unavailable(error),
        other => StoreError::Failed(describe(&other)),
    }
}

impl KeychainBackend for NativeKeychain {
    fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
        match self.entry(name)?.get_secret() {
            Ok(secret) => Ok(Some(Zeroizing::new(secret))),
            Err(Error::NoEntry) => Ok(None),
            Err(error) => Err(failed(error)),
        }
    }

    fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.entry(name)?.set_secret(value).map_err(failed)
    }

    fn delete(&self, name: &str) -> Result<bool, StoreError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(Error::NoEntry) => Ok(false),
            Err(error) => Err(failed(error)),
        }
    }

    fn part_limit(&self) -> Option<usize> {
        // CRED_MAX_CREDENTIAL_BLOB_SIZE: 5 * 512 bytes.
        cfg!(windows).then_some(2560)
    }

    #[cfg(target_os = "linux")]
    fn delete_service(&self) -> Result<usize, StoreError> {
        self.lock_check.check()?;
        let spec = HashMap::from([("service", SERVICE)]);
        let entries = self.store.search(&spec).map_err(failed)?;
        let mut deleted = 0;
        for entry in entries {
            match entry.delete_credential() {
                Ok(()) => deleted += 1,
                Err(Error::NoEntry) => {}
                Err(error) => return Err(failed(error)),
            }
        }
        Ok(deleted)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::StoreError;
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    use std::sync::Mutex;

    /// Whether the default collection is locked, asked before each operation.
    pub(super) struct LockCheck {
        has_display: bool,
        service: Mutex<Option<SecretService<'static>>>,
    }

    impl LockCheck {
        pub(super) fn new(has_display: bool) -> Self {
            Self {
                has_display,
                service: Mutex::new(None),
            }
        }

        pub(super) fn check(&self) -> Result<(), StoreError> {
            let mut service = self
                .service
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if service.is_none() {
                *service = Some(SecretService::connect(EncryptionType::Plain).map_err(text)?);
            }
            let Some(connected) = service.as_ref() else {
                return Err(StoreError::Unavailable(
                    "the Secret Service does not answer".into(),
                ));
            };
            let locked = connected
                .get_default_collection()
                .and_then(|collection| collection.is_locked());
            match locked {
                Ok(false) => Ok(()),
                Ok(true) if self.has_display => Ok(()),
                Ok(true) => Err(StoreError::Unavailable(
                    "the collection of the Secret Service is locked, and without a display the bridge shows no unlock prompt".into(),
                )),
                Err(error) => {
                    // A connection to a daemon that died is useless: connect anew next time.
                    *service = None;
                    Err(text(error))
                }
            }
        }
    }

    fn text(error: secret_service::Error) -> StoreError {
        StoreError::Unavailable(format!("the Secret Service does not answer: {error}"))
    }
}
