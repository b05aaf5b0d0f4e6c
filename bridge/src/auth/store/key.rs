//! The key of the file store and the token directory.
//!
//! The key is 64 hexadecimal digits (32 bytes) from `--token-key-file` or, without
//! that option, from `MCP_BRIDGE_TOKEN_KEY`. It lives in zeroized memory, and no
//! error names a digit of it. A key file must be private to the account and outside
//! the token directory: a copy of the directory alone must not decrypt.

use super::OpenError;
use std::fmt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The environment variable of the key.
pub const KEY_VARIABLE: &str = "MCP_BRIDGE_TOKEN_KEY";

/// The 32 bytes of the file store's key, zeroized when dropped.
#[derive(Clone)]
pub struct TokenKey(Zeroizing<[u8; 32]>);

impl TokenKey {
    /// Parses 64 hexadecimal digits (surrounding white space, such as the line
    /// break of a file, is ignored).
    pub fn from_hex(text: &str) -> Option<Self> {
        let text = text.trim().as_bytes();
        if text.len() != 64 {
            return None;
        }
        let mut bytes = Zeroizing::new([0u8; 32]);
        for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
            let [high, low] = pair else {
                return None;
            };
            *byte = (hex_digit(*high)? << 4) | hex_digit(*low)?;
        }
        Some(Self(bytes))
    }

    pub(super) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

impl fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenKey([REDACTED])")
    }
}

/// The token directory: `%LOCALAPPDATA%\mcp-bridge-rs\vscode\tokens` on Windows,
/// else `$XDG_STATE_HOME/mcp-bridge-rs/vscode/tokens` or
/// `~/.local/state/mcp-bridge-rs/vscode/tokens`. `None` without those variables.
pub fn token_directory(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let base = if cfg!(windows) {
        PathBuf::from(set("LOCALAPPDATA")?)
    } else {
        match set("XDG_STATE_HOME").filter(|dir| Path::new(dir).is_absolute()) {
            Some(state) => PathBuf::from(state),
            None => PathBuf::from(set("HOME")?).join(".local").join("state"),
        }
    };
    Some(base.join("mcp-bridge-rs").join("vscode").join("tokens"))
}

/// The key of the file store: from `key_file` when given, else from
/// `MCP_BRIDGE_TOKEN_KEY`; `None` when neither is there. A key that is given but
/// cannot be used is an error, also for `auto`: the user asked for the file store.
pub fn token_key(
    key_file: Option<&Path>,
    token_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<TokenKey>, OpenError> {
    if let Some(path) = key_file {
        return read_key_file(path, token_dir).map(Some);
    }
    match env(KEY_VARIABLE).map(Zeroizing::new) {
        None => Ok(None),
        Some(text) if text.is_empty() => Ok(None),
        Some(text) => TokenKey::from_hex(&text)
            .map(Some)
            .ok_or(OpenError::InvalidKey(KEY_VARIABLE.into())),
    }
}

fn read_key_file(path: &Path, token_dir: Option<&Path>) -> Result<TokenKey, OpenError> {
    let shown = path.display().to_string();
    let unreadable =
        |error: std::io::Error| OpenError::KeyFileUnreadable(shown.clone(), error.to_string());
    let real = std::fs::canonicalize(path).map_err(unreadable)?;
    if let Some(dir) = token_dir {
        // The directory may not exist yet: compare with its nearest existing parent.
        let dir_real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if real.starts_with(&dir_real) {
            return Err(OpenError::KeyInTokenDirectory(
                shown,
                dir.display().to_string(),
            ));
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&real)
            .map_err(unreadable)?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(OpenError::KeyFileNotPrivate(shown, mode & 0o777));
        }
    }
    let text = Zeroizing::new(std::fs::read_to_string(&real).map_err(unreadable)?);
    TokenKey::from_hex(&text).ok_or(OpenError::InvalidKey("--token-key-file".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_64_hex_digits_and_its_debug_output_is_redacted() {
        let hex = "00112233445566778899aabbccddeeffFFEEDDCCBBAA99887766554433221100";
        let key = TokenKey::from_hex(&format!("{hex}\n")).unwrap();
        assert_eq!(key.bytes()[1], 0x11);
        assert_eq!(key.bytes()[16], 0xff);
        assert_eq!(format!("{key:?}"), "TokenKey([REDACTED])");
        assert!(TokenKey::from_hex(&hex[1..]).is_none());
        assert!(TokenKey::from_hex(&format!("{}g", &hex[1..])).is_none());
    }

    #[test]
    fn the_token_directory_follows_the_state_directory_of_the_user() {
        if cfg!(windows) {
            return;
        }
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }
        };
        assert_eq!(
            token_directory(&env(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])),
            Some(PathBuf::from("/s/mcp-bridge-rs/vscode/tokens"))
        );
        assert_eq!(
            token_directory(&env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/state/mcp-bridge-rs/vscode/tokens"))
        );
        assert_eq!(token_directory(&env(&[])), None);
    }
}
