//! The options of the authorization server of `--auth` (alias `--oauth`), as the command
//! line gives them.

use std::path::PathBuf;
use std::time::Duration;

/// The lifetime of an access token without `--token-lifetime` (study §1.5).
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(900);
/// The longest `--token-lifetime`: one year.
const MAX_TOKEN_LIFETIME: u64 = 365 * 86_400;

/// The options of the authorization server; `enabled: false` is the plain server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthOptions {
    /// `--auth` / `--oauth`: POST /mcp needs an access token of this server.
    pub enabled: bool,
    /// Dynamic client registration (RFC 7591); `--no-registration` turns it off.
    pub registration: bool,
    /// `--cimd`: client IDs that are https URLs of client ID metadata documents.
    pub cimd: bool,
    /// `--auth-ca-file PATH`: one more CA to trust when a document is fetched.
    pub ca_file: Option<PathBuf>,
    /// `--deny`: every authorization is denied (`error=access_denied`).
    pub deny: bool,
    /// The `iss` parameter of RFC 9207 in every redirect; `--no-iss` leaves it out.
    pub iss: bool,
    /// `--forget-clients`: the dynamically registered clients are forgotten each time
    /// the server issues the tokens of a code (a server that forgot a client: the
    /// first sign-in works, its refresh gets `invalid_client`, the next `/authorize`
    /// an error page).
    pub forget_clients: bool,
    /// `--token-lifetime S`: the lifetime of an access token.
    pub token_lifetime: Duration,
    /// Refresh tokens are issued; `--no-refresh-tokens` turns them off.
    pub refresh_tokens: bool,
    /// `--invalid-grant`: every refresh gets `invalid_grant`.
    pub invalid_grant: bool,
}

impl Default for AuthOptions {
    fn default() -> AuthOptions {
        AuthOptions {
            enabled: false,
            registration: true,
            cimd: false,
            ca_file: None,
            deny: false,
            iss: true,
            forget_clients: false,
            token_lifetime: DEFAULT_TOKEN_LIFETIME,
            refresh_tokens: true,
            invalid_grant: false,
        }
    }
}

/// The options that need `--auth` (besides `--auth` and `--oauth`).
pub const AUTH_OPTIONS: &[&str] = &[
    "--no-registration",
    "--cimd",
    "--auth-ca-file",
    "--deny",
    "--no-iss",
    "--forget-clients",
    "--token-lifetime",
    "--no-refresh-tokens",
    "--invalid-grant",
];

impl AuthOptions {
    /// Applies one option of [`AUTH_OPTIONS`] (or `--auth`, `--oauth`) with its value
    /// (empty for a flag); the error names the option.
    pub fn apply(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "--auth" | "--oauth" => self.enabled = true,
            "--no-registration" => self.registration = false,
            "--cimd" => self.cimd = true,
            "--auth-ca-file" => self.ca_file = Some(value.into()),
            "--deny" => self.deny = true,
            "--no-iss" => self.iss = false,
            "--forget-clients" => self.forget_clients = true,
            "--token-lifetime" => {
                let seconds = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=MAX_TOKEN_LIFETIME).contains(s) && !value.starts_with('+'))
                    .ok_or_else(|| {
                        format!(
                            "the value '{value}' of --token-lifetime is not a number from 1 to {MAX_TOKEN_LIFETIME}"
                        )
                    })?;
                self.token_lifetime = Duration::from_secs(seconds);
            }
            "--no-refresh-tokens" => self.refresh_tokens = false,
            "--invalid-grant" => self.invalid_grant = true,
            other => return Err(format!("unknown argument '{other}'")),
        }
        Ok(())
    }

    /// Whether an option other than `--auth` was given.
    pub fn has_sub_options(&self) -> bool {
        AuthOptions {
            enabled: false,
            ..self.clone()
        } != AuthOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_auth_option_fills_its_field() {
        let mut auth = AuthOptions::default();
        for (name, value) in [
            ("--oauth", ""),
            ("--no-registration", ""),
            ("--cimd", ""),
            ("--auth-ca-file", "/tmp/ca.crt"),
            ("--deny", ""),
            ("--no-iss", ""),
            ("--forget-clients", ""),
            ("--token-lifetime", "5"),
            ("--no-refresh-tokens", ""),
            ("--invalid-grant", ""),
        ] {
            auth.apply(name, value).unwrap();
        }
        assert!(auth.enabled && !auth.registration && auth.cimd && auth.deny);
        assert!(!auth.iss && auth.forget_clients && !auth.refresh_tokens && auth.invalid_grant);
        assert_eq!(auth.ca_file, Some(PathBuf::from("/tmp/ca.crt")));
        assert_eq!(auth.token_lifetime, Duration::from_secs(5));
        assert!(auth.has_sub_options());
    }

    #[test]
    fn a_bad_token_lifetime_names_the_option() {
        let mut auth = AuthOptions::default();
        assert_eq!(
            auth.apply("--token-lifetime", "0").unwrap_err(),
            "the value '0' of --token-lifetime is not a number from 1 to 31536000"
        );
        assert!(auth.apply("--token-lifetime", "+5").is_err());
        assert!(!auth.has_sub_options());
    }
}
