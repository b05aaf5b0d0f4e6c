//! The names of an implementation's own paths, which the contract leaves to it:
//! the token directory of the file store under `$XDG_STATE_HOME`, and the
//! service of its items in the keychain. The transcripts name them through
//! `$TOKEN_DIR` and `$KEYCHAIN_SERVICE` (replaced where `$RUN_DIR` is), and a run
//! takes them from `--token-dir` and `--keychain-service`, this project's by
//! default.

/// The token directory of this project's bridge, under `$XDG_STATE_HOME`.
pub const TOKEN_DIR: &str = "mcp-bridge-rs/vscode/tokens";

/// The keychain service of this project's bridge.
pub const KEYCHAIN_SERVICE: &str = "mcp-bridge-rs/mcp-bridge-vscode";

/// The paths of the implementation under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductPaths {
    /// The token directory, relative to `$XDG_STATE_HOME` (`$TOKEN_DIR`).
    pub token_dir: String,
    /// The service of the keychain items (`$KEYCHAIN_SERVICE`).
    pub keychain_service: String,
}

impl Default for ProductPaths {
    fn default() -> Self {
        Self {
            token_dir: TOKEN_DIR.to_owned(),
            keychain_service: KEYCHAIN_SERVICE.to_owned(),
        }
    }
}

impl ProductPaths {
    /// `text` with `$TOKEN_DIR` and `$KEYCHAIN_SERVICE` replaced, as written (in
    /// a regex too, as `$RUN_DIR` is).
    pub fn resolve(&self, text: &str) -> String {
        text.replace("$TOKEN_DIR", &self.token_dir)
            .replace("$KEYCHAIN_SERVICE", &self.keychain_service)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholders_become_the_names_of_the_run() {
        let ours = ProductPaths::default();
        assert_eq!(
            ours.resolve("$RUN_DIR/$TOKEN_DIR/x.entry and $KEYCHAIN_SERVICE"),
            "$RUN_DIR/mcp-bridge-rs/vscode/tokens/x.entry and mcp-bridge-rs/mcp-bridge-vscode"
        );
        let theirs = ProductPaths {
            token_dir: "other/tokens".into(),
            keychain_service: "other".into(),
        };
        assert_eq!(
            theirs.resolve("$TOKEN_DIR|$KEYCHAIN_SERVICE"),
            "other/tokens|other"
        );
    }
}
