//! `mcp-bridge-vscode doctor`: whether VS Code will be able to use an upstream
//! server through the bridge, told in the words of the Output channel, with what
//! to do when not.
//!
//! doctor runs the bridge's own code against the upstream, never a copy of it:
//! the HTTP client of the URL form and its proxy rules, the steps of the sign-in,
//! the token store as a start opens it, and the session itself, in this process,
//! with doctor as VS Code's Local harness on its other side. The lines that the
//! bridge writes meanwhile are kept (`capture`) and become the lines of the
//! findings. Nothing is written to a token store unless `--sign-in` completes a
//! sign-in, and no tool is called unless `--call` names it.
//!
//! # Layout
//!
//! - [`report`]: the findings, their stable ids, the exit code;
//! - [`texts`]: the texts of others that doctor shows (the lines of the bridge,
//!   entries of its catalogue; VS Code's messages) and the sections of
//!   docs/troubleshooting.md;
//! - `capture`: the lines of the bridge while doctor runs;
//! - `reach_url`, `tls`: the proxy, the name, TCP, TLS and the POST of a URL;
//! - `sign_in`, `store`: the readiness of the sign-in, and the store lent to the session;
//! - `session`, `local_harness`, `tap`: the session in this process, VS Code's
//!   side of it, and a look at its upstream side; `start_url`: the one-time start
//!   URL through which doctor opens a later sign-in;
//! - `revision`: the start (stdio reach), server/discover, the capabilities;
//! - `lists`, `after_start`, `notifications`: what VS Code gets: the lists, a
//!   ping, the listen stream, the log messages, the call of `--call` and the
//!   notifications that the bridge did not forward during it;
//! - `human`, `json`: the two outputs.

mod after_start;
mod capture;
mod human;
mod json;
mod lists;
mod local_harness;
mod notifications;
mod reach_url;
pub mod report;
mod revision;
mod session;
mod sign_in;
mod start_url;
mod store;
mod tap;
pub mod texts;
mod tls;

use crate::config::{Config, DoctorOptions, UpstreamTarget};
use crate::upstream::stderr_tail::StderrTail;
use capture::Lines;
use report::{Check, Finding, Report};
use serde_json::{Map, Value};
use tokio::time::Duration;

/// What every check may read.
pub struct Context<'a> {
    pub config: &'a Config,
    /// The lines of the bridge so far.
    pub lines: Lines,
    /// `--sign-in`.
    pub sign_in: bool,
    /// `--call`.
    pub call: Option<(String, Map<String, Value>)>,
    /// The last lines of the upstream command's stderr.
    pub stderr_tail: StderrTail,
}

impl Context<'_> {
    /// Whether an error is doctor's own refusal to sign in: without `--sign-in`,
    /// the session's sign-in fails at once through the rule of the sandbox, and
    /// its cause is then no finding of the server.
    pub fn refused_sign_in(&self, error: &Value) -> bool {
        !self.sign_in
            && matches!(self.config.upstream, UpstreamTarget::Url(_))
            && revision::cause_of(error) == Some(crate::catalogue::Cause::SignInSandbox)
            && !crate::auth::environment::SignInEnvironment::of_process().sandbox
    }
}

/// What a check says when the server asked for a sign-in that doctor does not do.
pub const NEEDS_SIGN_IN: &str =
    "the server asked for a sign-in here: doctor signs in only with --sign-in";

/// How much longer than the bridge's own wait doctor waits for initialize.
const INITIALIZE_MARGIN: Duration = Duration::from_secs(15);

/// Runs doctor: the report on stdout; the exit code (0 when VS Code will work,
/// 1 when a check failed).
pub fn run(options: &DoctorOptions) -> u8 {
    let lines = capture::install(options.echo);
    // As a start writes them: a secret on the command line, say.
    for warning in &options.warnings {
        eprintln!("{}", texts::command_line_warning(warning));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{}", texts::cannot_run(&error));
            return 1;
        }
    };
    let report = runtime.block_on(check(options, lines));
    // The link's tasks of a session that did not stop in time end with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let text = if options.json {
        json::render(&report)
    } else {
        human::render(&report, human::colour_wanted())
    };
    print!("{text}");
    report.exit_code()
}

/// Every check, in the order a start of the bridge takes the steps.
async fn check(options: &DoctorOptions, lines: Lines) -> Report {
    let config = &options.config;
    let context = Context {
        config,
        lines,
        sign_in: options.sign_in,
        call: options.call.clone(),
        stderr_tail: StderrTail::default(),
    };
    let mut report = Report::new(upstream_name(&config.upstream));
    let plan = session::Plan {
        initialize_limit: config.discover_timeout + INITIALIZE_MARGIN,
        discover_wait: config.discover_timeout,
        call: options.call.clone(),
        sign_in_urls: None,
    };
    match &config.upstream {
        UpstreamTarget::Command { .. } => {
            let connector =
                crate::run::connector_with_stderr_tail(config, context.stderr_tail.clone())
                    .unwrap_or_else(|| crate::run::connector(config, None));
            let run = session::run(config, connector.clone(), &plan, &context.lines).await;
            revision::findings(&context, &run, connector.as_ref(), &mut report).await;
            after_initialize(&context, &run, &mut report);
        }
        UpstreamTarget::Url(target) => {
            let reached = reach_url::check(&context, target, &mut report).await;
            let sign_in_plan = sign_in::check(&context, target, &reached, &mut report).await;
            let skip = if reached.status.is_none() {
                Some("the server cannot be reached".to_owned())
            } else {
                sign_in_plan.skip.clone()
            };
            if let Some(why) = skip {
                sign_in::after_session(&context, &sign_in_plan, None, &mut report).await;
                revision::skip_after_start(&mut report, &why);
                skip_vscode(&mut report, &why);
                return report;
            }
            let connector = crate::run::connector_with(
                config,
                sign_in_plan.store.clone(),
                sign_in_plan.environment.clone(),
            );
            let static_authorization = target
                .headers
                .iter()
                .any(|header| header.name == "authorization");
            let sign_in_wait = if sign_in_plan.sign_in_can_start && !static_authorization {
                target.sign_in.sign_in_timeout
            } else {
                Duration::ZERO
            };
            // The wait of a start includes the sign-in's where none is stored; a
            // server that asked for no sign-in is told of no sign-in.
            let told_wait = if reached.asks_for_sign_in() {
                sign_in_wait
            } else {
                Duration::ZERO
            };
            let plan = session::Plan {
                initialize_limit: plan.initialize_limit + sign_in_wait,
                discover_wait: config.discover_timeout + told_wait,
                sign_in_urls: options.sign_in.then(|| {
                    (!target.sign_in.no_browser)
                        .then(|| sign_in_plan.environment.settings(target).opener)
                }),
                ..plan
            };
            let run = session::run(config, connector.clone(), &plan, &context.lines).await;
            sign_in::after_session(&context, &sign_in_plan, Some(&run), &mut report).await;
            revision::findings(&context, &run, connector.as_ref(), &mut report).await;
            after_initialize(&context, &run, &mut report);
        }
    }
    report
}

/// The checks of what VS Code gets, after a start that gave VS Code its result.
fn after_initialize(context: &Context<'_>, run: &session::Run, report: &mut Report) {
    if run.initialize_result().is_some() {
        lists::findings(context, run, report);
        after_start::findings(context, run, report);
    } else {
        skip_vscode(report, "initialize failed");
    }
}

/// The checks of what VS Code gets, not run.
fn skip_vscode(report: &mut Report, why: &str) {
    for check in Check::ALL {
        if check.group() == report::Group::Vscode && !report.has(check) {
            report.add(Finding::skipped(check, why));
        }
    }
}

/// The upstream as the report names it: a URL without its query (it can carry a
/// key), or the program without its arguments (they can carry one).
fn upstream_name(upstream: &UpstreamTarget) -> String {
    match upstream {
        UpstreamTarget::Url(target) => revision::shown_url(&target.url),
        UpstreamTarget::Command { program, args } => format!(
            "{} ({})",
            program.to_string_lossy(),
            report::counted(args.len(), "argument")
        ),
    }
}
