//! The executable around a session: stdin and stdout, the connector of the
//! configured upstream, and the handling of an internal error.

use crate::auth::environment::SignInEnvironment;
use crate::auth::store::{Access, MemoryStore, OpenedStore, TokenStore};
use crate::catalogue::cli::CliWarning;
use crate::catalogue::{ExecutableError, TokenStoreError, TokenStoreInfo};
use crate::client::stdio as client_stdio;
use crate::config::{Config, UpstreamTarget};
use crate::log::{emit, line_of};
use crate::net::ProxyEnvironment;
use crate::serve::{Serve, watchdog_line};
use crate::session::Exit;
use crate::upstream::Connector;
use crate::upstream::http::{HttpConnector, SignIn};
use crate::upstream::stderr_tail::StderrTail;
use crate::upstream::stdio::{StdioConnector, kill_all_groups};
use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

/// The connector of the configured upstream; the URL form keeps the tokens of its
/// sign-in in `store` (in memory when there is none).
pub fn connector(config: &Config, store: Option<Arc<dyn TokenStore>>) -> Arc<dyn Connector> {
    connector_with(config, store, SignInEnvironment::of_process())
}

/// [`connector`], with the environment of the sign-in (`doctor` gives one in
/// which no sign-in asks the user unless it may).
pub(crate) fn connector_with(
    config: &Config,
    store: Option<Arc<dyn TokenStore>>,
    environment: SignInEnvironment,
) -> Arc<dyn Connector> {
    match &config.upstream {
        UpstreamTarget::Command { program, args } => {
            Arc::new(stdio_connector(config, program, args, None))
        }
        UpstreamTarget::Url(target) => Arc::new(
            HttpConnector::new((**target).clone(), ProxyEnvironment::of_process()).with_sign_in(
                SignIn {
                    store: store.unwrap_or_else(|| Arc::new(MemoryStore::default())),
                    environment,
                },
            ),
        ),
    }
}

/// [`connector`] of an upstream command whose stderr goes through `tail`, which
/// keeps its last lines (`doctor` quotes them); `None` for a URL.
pub(crate) fn connector_with_stderr_tail(
    config: &Config,
    tail: StderrTail,
) -> Option<Arc<dyn Connector>> {
    match &config.upstream {
        UpstreamTarget::Command { program, args } => {
            Some(Arc::new(stdio_connector(config, program, args, Some(tail))))
        }
        UpstreamTarget::Url(_) => None,
    }
}

fn stdio_connector(
    config: &Config,
    program: &std::ffi::OsString,
    args: &[std::ffi::OsString],
    stderr_tail: Option<StderrTail>,
) -> StdioConnector {
    StdioConnector {
        program: program.clone(),
        args: args.to_vec(),
        max_line_bytes: config.max_line_bytes,
        grace: config.limits.shutdown_grace,
        stderr_tail,
    }
}

/// The token store of the URL form with its sign-in, opened at the start: its line
/// goes to the log; a store that does not open is exit code 2. `None` for a
/// command, or for a static Authorization header, which disables the sign-in.
pub fn token_store(config: &Config) -> Result<Option<OpenedStore>, u8> {
    token_store_for(config, Access::ReadWrite)
}

/// [`token_store`] for `access`: `doctor` without `--sign-in` opens it to read.
pub fn token_store_for(config: &Config, access: Access) -> Result<Option<OpenedStore>, u8> {
    let UpstreamTarget::Url(target) = &config.upstream else {
        return Ok(None);
    };
    if target
        .headers
        .iter()
        .any(|header| header.name == "authorization")
    {
        return Ok(None);
    }
    let options = &target.sign_in;
    match crate::auth::store::open_for(
        access,
        options.token_store,
        options.token_key_file.as_deref(),
        &|name| std::env::var(name).ok(),
    ) {
        Ok(opened) => {
            emit!(TokenStoreInfo: opened.line);
            Ok(Some(opened))
        }
        Err(error) => {
            emit!(TokenStoreError::DidNotOpen { cause: &error });
            Err(2)
        }
    }
}

/// Writes the warnings of the command line, once the log is open.
pub fn log_warnings(warnings: &[CliWarning]) {
    for warning in warnings {
        emit!(CliWarning: warning);
    }
}

/// The internal error line of an executable that cannot go on (exit code 1).
pub fn log_internal_error(error: &dyn Display) {
    emit!(ExecutableError::InternalError { error });
}

/// Serves VS Code on stdin and stdout.
pub async fn run_stdio(config: &Config, store: Option<OpenedStore>) -> Exit {
    let backstop = last_resort_watchdog(config.limits.watchdog + LAST_RESORT_AFTER);
    Serve::new(config, connector(config, store.map(|opened| opened.store)))
        .input_hangup(client_stdio::input_hangup())
        .on_end_of_input(backstop)
        .run(client_stdio::input(), client_stdio::output())
        .await
}

/// How long after the watchdog the last-resort watchdog acts.
const LAST_RESORT_AFTER: Duration = Duration::from_secs(1);

/// The session's watchdog is a timer of the runtime, and the runtime has one
/// thread: if that thread were ever stuck, no timer of it could fire. This one is
/// an OS thread, armed at the end of stdin, that stops the bridge a moment after
/// the session's watchdog would have, as the contract's watchdog does.
fn last_resort_watchdog(after: Duration) -> impl FnOnce() + Send + 'static {
    move || {
        std::thread::spawn(move || {
            // Real time on purpose: this thread must act when the runtime cannot.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(after);
            write_line(&line_of(&watchdog_line(after - LAST_RESORT_AFTER)));
            kill_all_groups();
            std::process::exit(0);
        });
    }
}

/// A panic in any task is an internal error: one line, the upstream stops, exit 1.
/// Without this, a panicked task could leave the session waiting forever.
pub fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        write_line(&line_of(&ExecutableError::InternalError {
            error: &format_args!("{message}{location}"),
        }));
        kill_all_groups();
        std::process::exit(1);
    }));
}

/// One line on stderr, outside the logger. A stderr that is gone is no reason to
/// fail: these lines come on the way out.
fn write_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
