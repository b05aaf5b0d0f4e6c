//! What the sign-in of the URL form takes from the environment of the process:
//! the secret of `--client-id`, the sandbox of VS Code, and the browser.

use super::browser::Opener;
use super::client_id::ClientOptions;
use super::secret_string::SecretString;
use super::sign_in::SignInSettings;
use crate::config::HttpTarget;
use std::ffi::OsString;

/// The variables that the sign-in reads, read once at the start.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SignInEnvironment {
    /// `MCP_BRIDGE_CLIENT_SECRET`.
    pub client_secret: Option<SecretString>,
    /// `SANDBOX_RUNTIME=1`.
    pub sandbox: bool,
    /// `$BROWSER`.
    pub browser: Option<OsString>,
}

impl std::fmt::Debug for SignInEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInEnvironment")
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("sandbox", &self.sandbox)
            .field("browser", &self.browser)
            .finish()
    }
}

impl SignInEnvironment {
    pub fn of_process() -> Self {
        Self {
            client_secret: std::env::var("MCP_BRIDGE_CLIENT_SECRET")
                .ok()
                .filter(|secret| !secret.is_empty())
                .map(SecretString::from),
            sandbox: std::env::var("SANDBOX_RUNTIME").is_ok_and(|value| value == "1"),
            browser: std::env::var_os("BROWSER"),
        }
    }

    /// The settings of the sign-in of `target`.
    pub fn settings(&self, target: &HttpTarget) -> SignInSettings {
        let options = &target.sign_in;
        let hidden = target
            .headers
            .iter()
            .filter_map(|header| header.variable.clone())
            .collect();
        SignInSettings {
            server_url: target.url.clone(),
            redirect_port: options.redirect_port,
            sign_in_timeout: options.sign_in_timeout,
            no_browser: options.no_browser,
            sandbox: self.sandbox,
            client: ClientOptions {
                client_id: options.client_id.clone(),
                client_issuer: options.client_issuer.clone(),
                client_secret: self.client_secret.clone(),
                metadata_url: options.client_metadata_url.clone(),
            },
            opener: Opener::of_environment(self.browser.clone(), hidden),
            lingering: Default::default(),
        }
    }
}
