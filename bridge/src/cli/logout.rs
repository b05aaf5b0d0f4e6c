//! `mcp-bridge-vscode logout [--account <label>] <url>` and `logout --all`
//! ("Steps to sign out" of the contract).
//!
//! logout deletes the stored sign-ins of the URL and the account (with the
//! redirect URI of `--redirect-port`, and any client option) in each store that
//! opens; `--all` deletes every entry of every store and the token directory. It
//! never tells the authorization server. Exit codes: 0 (also when nothing was
//! there), 1 (a deletion failed), 2 (arguments, `--ca-file`, an explicit store that
//! does not open; `auto` skips such a store with an info line).

use super::{ArgsError, UsageError, url_form, url_form_args, usage_error};
use crate::auth::store::{
    self, ClientOption, EntryKey, OpenError, StoreError, TokenStore, token_directory, token_key,
};
use crate::catalogue::cli::CliError;
use crate::catalogue::{LogoutDebug, LogoutError, LogoutInfo, TokenStoreError};
use crate::config::{DEFAULT_REDIRECT_PORT, TokenStoreChoice};
use crate::log::{LogLevel, emit};
use clap::{Arg, ArgAction, Command, value_parser};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use url::Url;

pub use crate::catalogue::cli::LOGOUT_USAGE;

/// What logout deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogoutTarget {
    /// The sign-ins of one URL and account.
    Url(Url),
    /// `--all`: every stored sign-in and the token directory.
    All,
}

/// The command line of logout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutArgs {
    pub target: LogoutTarget,
    pub account: String,
    pub redirect_port: u16,
    pub token_store: TokenStoreChoice,
    pub token_key_file: Option<PathBuf>,
    /// The certificates of `--ca-file`, for the protected resource metadata.
    pub extra_roots: Vec<rustls_pki_types::CertificateDer<'static>>,
    pub log_level: LogLevel,
}

impl LogoutArgs {
    /// The redirect URI of the entries to delete.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.redirect_port)
    }
}

/// The options of logout: those of the contract, with the parsers of the URL form.
const LOGOUT_OPTIONS: [&str; 5] = [
    "redirect-port",
    "account",
    "token-store",
    "token-key-file",
    "ca-file",
];

/// The command of logout: its options are in the options table of
/// docs/configuration.md.
#[doc(hidden)]
pub fn command() -> Command {
    Command::new("mcp-bridge-vscode logout")
        .override_usage(LOGOUT_USAGE)
        .args_override_self(true)
        .disable_help_subcommand(true)
        .disable_version_flag(true)
        .about("Delete the stored sign-in of a server. logout does not tell the authorization server.")
        .after_help("Give the URL, --account and --redirect-port of the server entry. Exit codes: 0 when the deletion succeeded, also when there was nothing to delete, 1 when a deletion failed, 2 for arguments that are not valid, a --ca-file that the bridge cannot use, or a --token-store keychain or file that does not open.")
        .arg(
            Arg::new("log-level")
                .long("log-level")
                .value_name("level")
                .value_parser(value_parser!(LogLevel))
                .default_value("info")
                .help("The level of the log lines on stderr: err, warn, info or debug"),
        )
        .args(
            url_form_args()
                .into_iter()
                .filter(|arg| LOGOUT_OPTIONS.contains(&arg.get_id().as_str())),
        )
        .arg(
            Arg::new("all")
                .long("all")
                .action(ArgAction::SetTrue)
                .help("Delete each stored sign-in of the bridge, in every store, and the token directory"),
        )
        .arg(
            Arg::new("target")
                .value_name("url")
                .value_parser(value_parser!(OsString))
                .help("The URL of the server entry"),
        )
}

/// What the logout command line asks for.
#[derive(Debug)]
pub enum ParsedLogout {
    Run(LogoutArgs),
    /// `--help`: the text for stdout.
    Print(String),
}

/// Parses the arguments after `logout`.
pub fn parse(args: &[OsString]) -> Result<ParsedLogout, ArgsError> {
    let all_args = std::iter::once(OsString::from("logout")).chain(args.iter().cloned());
    let matches = match command().try_get_matches_from(all_args) {
        Ok(matches) => matches,
        Err(error) => {
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp => {
                    Ok(ParsedLogout::Print(error.render().to_string()))
                }
                _ => Err(ArgsError::Logout(usage_error(&error))),
            };
        }
    };
    let usage = |error: CliError| ArgsError::Logout(UsageError(error));
    let all = matches.get_flag("all");
    let target = match (matches.get_one::<OsString>("target"), all) {
        (Some(_), true) => {
            return Err(usage(CliError::UrlAndAll));
        }
        (Some(url), false) => {
            let text = url.to_string_lossy();
            LogoutTarget::Url(url_form::check_url(&text).map_err(usage)?)
        }
        (None, true) => LogoutTarget::All,
        (None, false) => {
            return Err(usage(CliError::LogoutNeedsTarget));
        }
    };
    let text = |id: &str| matches.get_one::<String>(id).cloned();
    let account = match text("account") {
        Some(label) if all => {
            let _ = label;
            return Err(usage(CliError::AllWithAccount));
        }
        Some(label) => url_form::account(&label).map_err(usage)?,
        None => "default".into(),
    };
    let token_store = match text("token-store") {
        Some(choice) => url_form::token_store(&choice).map_err(usage)?,
        None => TokenStoreChoice::Auto,
    };
    let extra_roots = match matches.get_one::<PathBuf>("ca-file") {
        Some(path) => url_form::ca_file(path).map_err(ArgsError::CaFile)?,
        None => Vec::new(),
    };
    Ok(ParsedLogout::Run(LogoutArgs {
        target,
        account,
        redirect_port: matches
            .get_one::<u16>("redirect-port")
            .copied()
            .unwrap_or(DEFAULT_REDIRECT_PORT),
        token_store,
        token_key_file: matches.get_one::<PathBuf>("token-key-file").cloned(),
        extra_roots,
        log_level: matches
            .get_one::<LogLevel>("log-level")
            .copied()
            .unwrap_or(LogLevel::Info),
    }))
}

pub use crate::auth::discovery::resource_covers;

/// The step of logout without an index entry for the URL: with the `resource` of
/// the server's protected resource metadata, delete the entry of the URL and the
/// account (the default client) only when that resource covers the URL. `Ok(false)`
/// when it does not, or when there was no entry.
pub fn delete_by_metadata(
    store: &dyn TokenStore,
    url: &Url,
    account: &str,
    redirect_uri: &str,
    resource: &str,
) -> Result<bool, StoreError> {
    if !resource_covers(resource, url) {
        return Ok(false);
    }
    store.delete(&EntryKey::new(
        url.as_str(),
        account,
        redirect_uri,
        ClientOption::Default,
    ))
}

/// Whether `key` is an entry of the URL, the account and the redirect URI.
pub fn entry_matches(key: &EntryKey, url: &Url, account: &str, redirect_uri: &str) -> bool {
    // Parsed, so that a URL stored in another spelling of the same URL matches.
    let same_url = Url::parse(&key.server_url).is_ok_and(|stored| stored == *url);
    let base = EntryKey::new("", account, redirect_uri, ClientOption::Default).client;
    same_url
        && (key.client == base
            || key
                .client
                .strip_prefix(&base)
                .is_some_and(|rest| rest.starts_with('|')))
}

/// A store that logout visits, with its name for the lines.
struct Visited {
    name: String,
    store: Arc<dyn TokenStore>,
}

/// Runs logout; the exit code.
pub fn run(args: &LogoutArgs) -> u8 {
    run_with(args, &|name| std::env::var(name).ok(), &store::open)
}

/// How logout opens one store (the keychain of the host, or one of a test).
pub type Open<'a> = dyn Fn(
        TokenStoreChoice,
        Option<&Path>,
        &dyn Fn(&str) -> Option<String>,
    ) -> Result<store::OpenedStore, OpenError>
    + 'a;

/// [`run`] with the environment and the opener of a store.
pub fn run_with(args: &LogoutArgs, env: &dyn Fn(&str) -> Option<String>, open: &Open<'_>) -> u8 {
    if args.token_store == TokenStoreChoice::Memory {
        emit!(LogoutInfo::NothingInMemory);
        return 0;
    }
    let explicit = args.token_store != TokenStoreChoice::Auto;
    let mut stores = Vec::new();
    let mut failed = false;
    let key_file = args.token_key_file.as_deref();
    if matches!(
        args.token_store,
        TokenStoreChoice::Auto | TokenStoreChoice::Keychain
    ) {
        match open(TokenStoreChoice::Keychain, key_file, env) {
            Ok(opened) => stores.push(Visited {
                name: "the keychain of the host".into(),
                store: opened.store,
            }),
            Err(error) if explicit => return did_not_open(&error),
            Err(OpenError::Keychain(cause)) => emit!(LogoutInfo::KeychainSkipped { why: &cause }),
            Err(error) => emit!(LogoutInfo::KeychainSkipped { why: &error }),
        }
    }
    let file_wanted = matches!(
        args.token_store,
        TokenStoreChoice::Auto | TokenStoreChoice::File
    );
    if file_wanted && args.target == LogoutTarget::All {
        // No key needed: the whole directory goes.
        match token_directory(env) {
            Some(dir) => {
                if let Err(error) = token_key(key_file, Some(&dir), env)
                    && explicit
                {
                    return did_not_open(&error);
                }
                failed |= !remove_token_directory(&dir);
            }
            None if explicit => return did_not_open(&OpenError::NoTokenDirectory),
            None => {}
        }
    } else if file_wanted {
        match open(TokenStoreChoice::File, key_file, env) {
            Ok(opened) => stores.push(Visited {
                name: format!(
                    "the encrypted files in {}",
                    token_directory(env)
                        .map(|dir| dir.display().to_string())
                        .unwrap_or_default()
                ),
                store: opened.store,
            }),
            Err(error) if explicit => return did_not_open(&error),
            Err(error) => emit!(LogoutInfo::FilesSkipped { why: &error }),
        }
    }
    match &args.target {
        LogoutTarget::All => {
            for visited in &stores {
                match visited.store.delete_all() {
                    Ok(count) => emit!(LogoutInfo::AllDeleted {
                        n: count,
                        store: &visited.name,
                    }),
                    Err(error) => {
                        failed = true;
                        emit!(LogoutError::AllDeletionFailed {
                            store: &visited.name,
                            error: &error,
                        });
                    }
                }
            }
        }
        LogoutTarget::Url(url) => failed |= !logout_url(args, url, &stores),
    }
    u8::from(failed)
}

/// Deletes the entries of the URL and the account; `false` when a deletion failed.
fn logout_url(args: &LogoutArgs, url: &Url, stores: &[Visited]) -> bool {
    let redirect_uri = args.redirect_uri();
    let mut deleted = 0;
    let mut ok = true;
    for visited in stores {
        let keys = match visited.store.keys() {
            Ok(keys) => keys,
            Err(error) => {
                ok = false;
                could_not_delete(&args.account, &visited.name, &error);
                continue;
            }
        };
        for key in keys
            .iter()
            .filter(|key| entry_matches(key, url, &args.account, &redirect_uri))
        {
            match visited.store.delete(key) {
                Ok(true) => deleted += 1,
                Ok(false) => {}
                Err(error) => {
                    ok = false;
                    could_not_delete(&args.account, &visited.name, &error);
                }
            }
        }
    }
    if deleted == 0 && ok && !stores.is_empty() {
        // No entry of the URL in the lists of the stores: an entry may still be
        // there under its own name (a list that lost it). The server's metadata
        // says whether the URL is its resource.
        if let Some(resource) = metadata_resource(args, url) {
            for visited in stores {
                match delete_by_metadata(
                    visited.store.as_ref(),
                    url,
                    &args.account,
                    &redirect_uri,
                    &resource,
                ) {
                    Ok(true) => deleted += 1,
                    Ok(false) => {}
                    Err(error) => {
                        ok = false;
                        could_not_delete(&args.account, &visited.name, &error);
                    }
                }
            }
        }
    }
    if deleted > 0 {
        emit!(LogoutInfo::Deleted {
            label: &args.account
        });
    } else if ok {
        emit!(LogoutInfo::NothingFound {
            label: &args.account
        });
    }
    ok
}

/// The `resource` of the protected resource metadata of the server at `url`,
/// fetched with the proxy of the environment and the CA certificates of
/// `--ca-file`; `None` (with a debug line) when there is none to read.
fn metadata_resource(args: &LogoutArgs, url: &Url) -> Option<String> {
    use crate::net::{ProxyEnvironment, build_client};
    let client = build_client(&args.extra_roots, &ProxyEnvironment::of_process()).ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let challenge = crate::auth::challenge::Challenge::default();
    match runtime.block_on(crate::auth::discovery::protected_resource(
        &client, url, &challenge,
    )) {
        Ok(metadata) => Some(metadata.resource),
        Err(error) => {
            emit!(LogoutDebug::NoResourceMetadata { error: &error });
            None
        }
    }
}

fn could_not_delete(account: &str, store: &str, error: &StoreError) {
    emit!(LogoutError::DeletionFailed {
        label: account,
        store,
        error,
    });
}

fn did_not_open(error: &OpenError) -> u8 {
    emit!(TokenStoreError::DidNotOpen { cause: error });
    2
}

/// `logout --all` and the file store: the token directory goes whole; `false` when
/// it could not be deleted.
fn remove_token_directory(dir: &Path) -> bool {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {
            emit!(LogoutInfo::DirectoryDeleted {
                dir: &dir.display()
            });
            true
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            emit!(LogoutInfo::NoDirectory {
                dir: &dir.display()
            });
            true
        }
        Err(error) => {
            emit!(LogoutError::DirectoryStays {
                dir: &dir.display(),
                error: &error,
            });
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    /// A keychain that opens but refuses to list or delete its entries.
    #[derive(Debug)]
    struct Refusing;

    impl TokenStore for Refusing {
        fn kind(&self) -> store::StoreKind {
            store::StoreKind::Keychain
        }
        fn load(&self, _: &EntryKey) -> Result<Option<store::StoredSignIn>, StoreError> {
            Ok(None)
        }
        fn save(&self, _: &EntryKey, _: &store::StoredSignIn) -> Result<(), StoreError> {
            Ok(())
        }
        fn delete(&self, _: &EntryKey) -> Result<bool, StoreError> {
            Err(StoreError::Failed("refused".into()))
        }
        fn keys(&self) -> Result<Vec<EntryKey>, StoreError> {
            Err(StoreError::Failed("refused".into()))
        }
    }

    #[test]
    fn a_store_that_refuses_the_deletion_fails_the_logout_of_a_url_and_of_all() {
        let open = |_: TokenStoreChoice, _: Option<&Path>, _: &dyn Fn(&str) -> Option<String>| {
            Ok(store::OpenedStore {
                store: Arc::new(Refusing),
                line: crate::catalogue::TokenStoreInfo::Keychain { service: "s" },
            })
        };
        for target in [
            LogoutTarget::All,
            LogoutTarget::Url(url("https://mcp.example.com/mcp")),
        ] {
            let args = LogoutArgs {
                target: target.clone(),
                account: "default".into(),
                redirect_port: DEFAULT_REDIRECT_PORT,
                token_store: TokenStoreChoice::Keychain,
                token_key_file: None,
                extra_roots: Vec::new(),
                log_level: LogLevel::Info,
            };
            assert_eq!(run_with(&args, &|_| None, &open), 1, "{target:?}");
        }
    }

    #[test]
    fn a_resource_covers_its_url_and_the_paths_below_it_only() {
        let target = url("https://mcp.example.com/mcp");
        assert!(resource_covers("https://mcp.example.com/mcp", &target));
        assert!(resource_covers("https://MCP.example.com:443/", &target));
        assert!(resource_covers("https://mcp.example.com", &target));
        assert!(resource_covers("https://mcp.example.com/mcp/", &target));
        assert!(resource_covers(
            "https://mcp.example.com/mcp",
            &url("https://mcp.example.com/mcp/sub")
        ));
        assert!(!resource_covers("https://mcp.example.com/mc", &target));
        assert!(!resource_covers("https://mcp.example.com/mcp/sub", &target));
        assert!(!resource_covers("http://mcp.example.com/mcp", &target));
        assert!(!resource_covers(
            "https://mcp.example.com:8443/mcp",
            &target
        ));
        assert!(!resource_covers("https://other.example.com/mcp", &target));
        assert!(!resource_covers("https://mcp.example.com/mcp?x=1", &target));
        // A resource with a query covers the same URL only: its path and its query.
        let with_query = url("https://mcp.example.com/mcp?x=1");
        assert!(resource_covers(
            "https://mcp.example.com/mcp?x=1",
            &with_query
        ));
        assert!(!resource_covers(
            "https://mcp.example.com/other?x=1",
            &with_query
        ));
        assert!(!resource_covers(
            "https://mcp.example.com/mcp?x=2",
            &with_query
        ));
        assert!(!resource_covers("not a url", &target));
    }

    #[test]
    fn an_entry_matches_the_url_the_account_and_the_redirect_with_any_client_option() {
        let target = url("https://mcp.example.com/mcp");
        let redirect = "http://127.0.0.1:41894/callback";
        let key = |account: &str, redirect: &str, client: ClientOption<'_>| {
            EntryKey::new("https://mcp.example.com/mcp", account, redirect, client)
        };
        assert!(entry_matches(
            &key("default", redirect, ClientOption::Default),
            &target,
            "default",
            redirect
        ));
        assert!(entry_matches(
            &key("default", redirect, ClientOption::ClientId("c")),
            &target,
            "default",
            redirect
        ));
        assert!(!entry_matches(
            &key("work", redirect, ClientOption::Default),
            &target,
            "default",
            redirect
        ));
        assert!(!entry_matches(
            &key(
                "default",
                "http://127.0.0.1:41895/callback",
                ClientOption::Default
            ),
            &target,
            "default",
            redirect
        ));
        assert!(!entry_matches(
            &key("default", redirect, ClientOption::Default),
            &url("https://mcp.example.com/other"),
            "default",
            redirect
        ));
        let other_spelling = EntryKey::new(
            "HTTPS://MCP.example.com:443/mcp",
            "default",
            redirect,
            ClientOption::Default,
        );
        assert!(entry_matches(&other_spelling, &target, "default", redirect));
    }

    #[test]
    fn the_metadata_step_deletes_only_when_the_resource_covers_the_url() {
        let memory = store::MemoryStore::default();
        let target = url("https://mcp.example.com/mcp");
        let redirect = "http://127.0.0.1:41894/callback";
        let key = EntryKey::new(target.as_str(), "default", redirect, ClientOption::Default);
        let sign_in = store::StoredSignIn::for_tests("https://mcp.example.com/mcp", "a");
        memory.save(&key, &sign_in).unwrap();
        let other = "https://other.example.com/mcp";
        assert_eq!(
            delete_by_metadata(&memory, &target, "default", redirect, other),
            Ok(false)
        );
        assert_eq!(memory.keys().unwrap().len(), 1);
        assert_eq!(
            delete_by_metadata(
                &memory,
                &target,
                "default",
                redirect,
                "https://mcp.example.com/"
            ),
            Ok(true)
        );
        assert!(memory.keys().unwrap().is_empty());
    }

    #[test]
    fn logout_parses_its_options_and_refuses_the_others() {
        let args = |list: &[&str]| -> Vec<OsString> { list.iter().map(OsString::from).collect() };
        let Ok(ParsedLogout::Run(parsed)) = parse(&args(&[
            "--account",
            "work",
            "--redirect-port=41895",
            "--token-store",
            "file",
            "https://mcp.example.com/mcp",
        ])) else {
            panic!()
        };
        assert_eq!(parsed.account, "work");
        assert_eq!(parsed.redirect_uri(), "http://127.0.0.1:41895/callback");
        assert_eq!(parsed.token_store, TokenStoreChoice::File);
        assert_eq!(
            parsed.target,
            LogoutTarget::Url(url("https://mcp.example.com/mcp"))
        );
        let error = |list: &[&str]| match parse(&args(list)) {
            Err(ArgsError::Logout(UsageError(error))) => error.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            error(&["--header", "X: y", "https://x/mcp"]),
            "the option --header is not known"
        );
        assert_eq!(error(&[]), "logout needs the URL of the server, or --all");
        assert_eq!(
            error(&["--all", "https://x/mcp"]),
            "write either a URL or --all, not both"
        );
        assert!(error(&["http://example.com/mcp"]).contains("not a loopback host"));
    }
}
