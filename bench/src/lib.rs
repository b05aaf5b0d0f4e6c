//! `harness-bench`: the bridge against the physical floor.
//!
//! Every measurement runs twice on the same machine in the same run: **direct**, a
//! client of revision 2026-07-28 talking to `bridge-fixture-server`, and
//! **bridged**, a client of revision 2025-11-25 talking to `mcp-bridge-vscode --
//! bridge-fixture-server`. The table shows both medians and their ratio; on a
//! shared machine the ratios and the memory figures count, not the absolute times.
//! The rounds alternate the sides (direct, bridged, bridged, direct, ...) so that a
//! drift of the machine's load falls on both. The client gives the server of every
//! side the same stdin and stdout: Unix socket pairs as VS Code gives them, or
//! pipes with `--stdio pipe`.
//!
//! # Layout
//! - [`conn`]: a lean connection to one server process (one reader task, only the ends of
//!   each line kept); [`scan`]: the id of a line from its first bytes.
//! - [`frames`]: the pre-serialized frames of both clients; [`session`]: a started
//!   session on one side.
//! - [`scenarios`]: one file per measurement.
//! - [`stats`], [`machine`], [`targets`], [`report`]: the figures, the targets
//!   and the table (the memory comes from `harness_sim::proc_mem`).
//! - [`http`]: the fixture over HTTPS and the direct HTTP client of the URL form's
//!   measurement (`scenarios/url.rs`); [`remote`]: mcp-remote, its third column.
//! - [`relay`]: `harness-bench relay`, a process that only passes bytes through:
//!   with `--floor` every measurement also runs through it, to show the floor of
//!   one more process on the path; [`url_relay`]: `harness-bench url-relay`, its
//!   counterpart for the URL form, a process that only POSTs each line.
//! - [`cli`]: the command line of the executable.
//! - [`embed_table`]: the three columns of the embedded measurement
//!   (`scenarios/embedded.rs`): `bridge-embedded-server` on its modern
//!   path, on its legacy path, and behind the separate bridge process.

#![forbid(unsafe_code)]

pub mod cli;
pub mod conn;
pub mod embed_table;
pub mod frames;
pub mod http;
pub mod machine;
pub mod reactor_relay;
pub mod relay;
pub mod remote;
pub mod report;
pub mod scan;
pub mod scenarios;
pub mod session;
pub mod stats;
pub mod targets;
pub mod url_relay;

use std::ffi::OsString;
use std::path::PathBuf;
use std::str::FromStr;

use tokio::time::Instant;

use harness_sim::server_stdio::StdioKind;

pub use frames::Side;
pub use report::{Report, Row};

/// Why a bench run failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The executables or a process could not be started.
    #[error("setup: {0}")]
    Setup(String),
    /// A pipe or `/proc` failed.
    #[error("i/o: {0}")]
    Io(String),
    /// The server closed its stdout (or stdin is closed).
    #[error("the server closed the connection")]
    Closed,
    /// No answer in time.
    #[error("timeout: {0}")]
    Timeout(String),
    /// An answer that is not the expected one.
    #[error("unexpected answer: {0}")]
    Server(String),
}

/// One measurement of the issue; `--only` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scenario {
    /// 1: sequential small echo calls, p50 and p99.
    Latency,
    /// 2: echo calls with 32 in flight, calls per second.
    Throughput,
    /// 3: echo of 1 MiB, 16 MiB and 64 MiB texts: time and peak memory.
    Large,
    /// 4: tools/list of 10,000 tools across all pages.
    List,
    /// 5 and 7: from the process start to the opening result, and the idle memory.
    Start,
    /// 6: from the end of stdin to the exit, idle and with 32 calls in flight.
    Stop,
    /// 8: the URL form: small calls over HTTPS direct, through the bridge and through
    /// mcp-remote, and the start of each.
    Url,
    /// 9: the bridge inside a server: small calls to
    /// `bridge-embedded-server` on its modern path, on its legacy path, and behind
    /// the separate bridge process.
    Embedded,
    /// 10: 1,000,000 small calls, the memory after 10,000 and at the end.
    /// It takes minutes: only with `--only soak`, never in a run of [`Scenario::ALL`].
    Soak,
    /// 11: the URL form's memory over 100,000 calls, the bridge's and
    /// mcp-remote's. mcp-remote takes more than a minute: only with `--only url-soak`.
    UrlSoak,
}

impl Scenario {
    /// Every scenario, in the order of the issues.
    pub const ALL: [Scenario; 8] = [
        Scenario::Latency,
        Scenario::Throughput,
        Scenario::Large,
        Scenario::List,
        Scenario::Start,
        Scenario::Stop,
        Scenario::Url,
        Scenario::Embedded,
    ];

    /// The measurements that run only when `--only` names them.
    pub const ON_REQUEST: [Scenario; 2] = [Scenario::Soak, Scenario::UrlSoak];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Latency => "latency",
            Scenario::Throughput => "throughput",
            Scenario::Large => "large",
            Scenario::List => "list",
            Scenario::Start => "start",
            Scenario::Stop => "stop",
            Scenario::Url => "url",
            Scenario::Embedded => "embedded",
            Scenario::Soak => "soak",
            Scenario::UrlSoak => "url-soak",
        }
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let known = || Self::ALL.into_iter().chain(Self::ON_REQUEST);
        known()
            .find(|scenario| scenario.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = known().map(|s| s.name()).collect();
                format!(
                    "unknown measurement {s:?}; the measurements are {}",
                    names.join(", ")
                )
            })
    }
}

/// What `harness-bench` was asked for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Fewer calls and rounds: a check that the bench works, not a measurement.
    pub quick: bool,
    /// Only these measurements (all when empty).
    pub only: Vec<Scenario>,
    /// Rounds of each measurement (default 5, `--quick` 1).
    pub rounds: Option<usize>,
    /// The bridge executable (default: the workspace's, built when missing).
    pub bridge: Option<PathBuf>,
    /// The fixture server executable (default: the workspace's).
    pub fixture: Option<PathBuf>,
    /// The embedded server executable (default: the workspace's), for `embedded`.
    pub embedded: Option<PathBuf>,
    /// mcp-remote's `proxy.js` (default: the workspace's `interop/node_modules`), for
    /// `url` and `url-soak`.
    pub mcp_remote: Option<PathBuf>,
    /// Also measure through `harness-bench relay` (the floor of one more process).
    pub floor: bool,
    /// What the relay column runs (`--whole-lines`, `--reactor`, `--tasks`).
    pub relay_mode: RelayMode,
    /// The stdin and stdout of the server on every side.
    pub stdio: StdioKind,
    /// The command line, for the report.
    pub command: String,
}

/// What `harness-bench relay` does in the relay column of `--floor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RelayMode {
    /// Two blocking threads write each read at once: the floor of one more process.
    #[default]
    Plain,
    /// Each line is held whole, then written in one piece, as the bridge must.
    WholeLines,
    /// Each line whole, on a one-thread tokio runtime with every pipe in the
    /// reactor: a process built as the bridge is, without its work.
    Reactor,
    /// As `Reactor`, each line handed through the bridge's tasks and channels:
    /// the bridge without its work.
    Tasks,
}

impl RelayMode {
    /// The option of `harness-bench relay` for this mode.
    fn flag(self) -> Option<&'static str> {
        match self {
            Self::Plain => None,
            Self::WholeLines => Some("--whole-lines"),
            Self::Reactor => Some("--reactor"),
            Self::Tasks => Some("--tasks"),
        }
    }

    /// The note of the report on this mode.
    fn note(self) -> Option<&'static str> {
        match self {
            Self::Plain => None,
            Self::WholeLines => Some(
                "relay --whole-lines: the relay holds each line until its newline and writes it in one piece, as the bridge does; the plain relay writes each read at once.",
            ),
            Self::Reactor => Some(
                "relay --reactor: the relay holds each line whole and runs on a one-thread tokio runtime with its stdin, its stdout and the server's pipes in the reactor, as the bridge does; the plain relay uses two blocking threads.",
            ),
            Self::Tasks => Some(
                "relay --tasks: as relay --reactor, with each line handed through the bridge's tasks: a reader task a direction, one middle task for both (the session's place) and a writer task a direction, joined by channels as the bridge's (four hops a call); the plain relay uses two blocking threads.",
            ),
        }
    }
}

/// What every measurement needs: the executables and the sizes of the run.
#[derive(Clone, Debug)]
pub struct Ctx {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    /// `bridge-embedded-server`, when the run measures `embedded`.
    pub embedded: Option<PathBuf>,
    /// This executable, for `harness-bench relay` (with `floor`).
    pub relay: PathBuf,
    /// mcp-remote's `proxy.js`, run with Node (see [`remote`]).
    pub mcp_remote: PathBuf,
    pub rounds: usize,
    pub quick: bool,
    pub floor: bool,
    /// What the relay column runs.
    pub relay_mode: RelayMode,
    /// The stdin and stdout of the server on every side (direct, relay, bridged).
    pub stdio: StdioKind,
}

impl Ctx {
    /// The command of a server on `side`, with `fixture_args` for the fixture.
    pub fn argv(&self, side: Side, fixture_args: &[&str]) -> Vec<OsString> {
        let mut argv = Vec::new();
        match side {
            Side::Direct => {}
            Side::Bridged => {
                argv.push(self.bridge.clone().into_os_string());
                argv.push("--".into());
            }
            Side::Relay => {
                argv.push(self.relay.clone().into_os_string());
                argv.push("relay".into());
                argv.extend(self.relay_mode.flag().map(OsString::from));
                argv.push("--".into());
            }
        }
        argv.push(self.fixture.clone().into_os_string());
        argv.extend(fixture_args.iter().map(OsString::from));
        argv
    }

    /// `full`, or `quick` with `--quick`.
    pub fn count(&self, full: usize, quick: usize) -> usize {
        if self.quick { quick } else { full }
    }

    /// A progress line on stderr (stdout holds only the report).
    pub fn progress(&self, line: &str) {
        eprintln!("bench: {line}");
    }

    /// The sides of `rounds` rounds (see [`order`]).
    pub fn order(&self, rounds: usize) -> Vec<Side> {
        order(rounds, self.floor)
    }
}

/// The sides of `rounds` rounds: direct first in even rounds, bridged first in odd
/// ones (ABBA), so that a linear drift of the machine cancels out. With `floor` the
/// relay runs between them.
pub fn order(rounds: usize, floor: bool) -> Vec<Side> {
    let mut forward = vec![Side::Direct];
    if floor {
        forward.push(Side::Relay);
    }
    forward.push(Side::Bridged);
    (0..rounds)
        .flat_map(|round| {
            let mut sides = forward.clone();
            if round % 2 == 1 {
                sides.reverse();
            }
            sides
        })
        .collect()
}

/// The executable `bin` of `package`: `given`, else the workspace's in the profile
/// of this executable (built when missing).
fn find(
    given: &Option<PathBuf>,
    package: &'static str,
    bin: &'static str,
) -> Result<PathBuf, BenchError> {
    match given {
        Some(path) => Ok(path.clone()),
        None => {
            workspace_bin::path(package, bin).map_err(|error| BenchError::Setup(error.to_string()))
        }
    }
}

/// Finds the bridge and the fixture: the options' paths, else the workspace's in
/// the profile of this executable (built when missing).
pub fn executables(options: &Options) -> Result<(PathBuf, PathBuf), BenchError> {
    Ok((
        find(&options.bridge, "mcp-bridge-vscode", "mcp-bridge-vscode")?,
        find(
            &options.fixture,
            "bridge-fixture-server",
            "bridge-fixture-server",
        )?,
    ))
}

/// Finds `bridge-embedded-server` the same way, when the run measures `embedded`.
pub fn embedded_executable(options: &Options) -> Result<Option<PathBuf>, BenchError> {
    if !options.selects(Scenario::Embedded) {
        return Ok(None);
    }
    find(
        &options.embedded,
        "bridge-embedded-server",
        "bridge-embedded-server",
    )
    .map(Some)
}

impl Options {
    /// Whether the run measures `scenario` (every one without `--only`).
    pub fn selects(&self, scenario: Scenario) -> bool {
        let default = self.only.is_empty() && !Scenario::ON_REQUEST.contains(&scenario);
        default || self.only.contains(&scenario)
    }
}

/// Runs the measurements of `options` and returns the report.
pub async fn run(options: &Options) -> Result<Report, BenchError> {
    let started = Instant::now();
    let machine = machine::Machine::now();
    let load_before = machine::load();
    let (bridge, fixture) = executables(options)?;
    let embedded = embedded_executable(options)?;
    let relay = std::env::current_exe()
        .map_err(|error| BenchError::Setup(format!("the path of harness-bench: {error}")))?;
    let ctx = Ctx {
        bridge,
        fixture,
        embedded,
        relay,
        mcp_remote: options
            .mcp_remote
            .clone()
            .unwrap_or_else(remote::default_proxy),
        floor: options.floor,
        relay_mode: options.relay_mode,
        stdio: options.stdio,
        rounds: options
            .rounds
            .unwrap_or(if options.quick { 1 } else { 5 })
            .max(1),
        quick: options.quick,
    };
    let mut rows = Vec::new();
    let mut embedded_rows = Vec::new();
    let mut notes = Vec::new();
    if cfg!(debug_assertions) {
        let warning = "this is a debug build: the bridge and the fixture of the debug profile are measured; run cargo run --release -p harness-bench".to_owned();
        eprintln!("bench: {warning}");
        notes.push(warning);
    }
    if Scenario::ALL
        .into_iter()
        .chain(Scenario::ON_REQUEST)
        .any(|scenario| scenario != Scenario::Embedded && options.selects(scenario))
    {
        notes.push("direct: copilot-cli 1.0.95 on the 2026-07-28 path (_meta on every request) talking to the fixture; bridged: the same client on the 2025-11-25 path (initialize, then the same calls) talking to the bridge in front of the fixture. Medians over the rounds; the rounds alternate the sides (ABBA).".to_owned());
    }
    notes.push(stdio_note(ctx.stdio));
    if let Some(note) = ctx.relay_mode.note().filter(|_| ctx.floor) {
        notes.push(note.to_owned());
    }
    for scenario in Scenario::ALL.into_iter().chain(Scenario::ON_REQUEST) {
        if !options.selects(scenario) {
            continue;
        }
        let mut measured = scenarios::measure(&ctx, scenario).await?;
        rows.append(&mut measured.rows);
        embedded_rows.append(&mut measured.embedded);
        notes.append(&mut measured.notes);
    }
    Ok(Report {
        machine,
        command: options.command.clone(),
        bridge: ctx.bridge.display().to_string(),
        fixture: ctx.fixture.display().to_string(),
        embedded: ctx.embedded.as_ref().map(|path| path.display().to_string()),
        rounds: ctx.rounds,
        quick: ctx.quick,
        stdio: ctx.stdio,
        load_before,
        load_after: machine::load(),
        seconds: started.elapsed().as_secs_f64(),
        rows,
        embedded_rows,
        notes,
    })
}

/// How the processes of a run are connected, for the notes of the report.
fn stdio_note(stdio: StdioKind) -> String {
    let client = match stdio {
        StdioKind::SocketPair => "Unix socket pairs, as VS Code (libuv) gives them on POSIX",
        _ => "pipes, as a shell gives them",
    };
    format!(
        "stdio {stdio}: the client gives the server of every side (direct, relay, bridged; modern, legacy, separate) {client}; the bridge and the relay give their server pipes."
    )
}

/// Runs [`run`] on a thread of its own with a single-threaded runtime: the client
/// side of a measurement then takes one core at most and never wakes another
/// thread, which leaves the most of the machine to the servers it measures.
pub async fn run_on_own_thread(options: Options) -> Result<Report, BenchError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| BenchError::Setup(format!("the runtime: {error}")))
            .and_then(|runtime| runtime.block_on(run(&options)));
        let _ = sender.send(result);
    });
    receiver
        .await
        .map_err(|_| BenchError::Setup("the bench thread stopped".into()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_the_sides() {
        use Side::{Bridged as B, Direct as D, Relay as R};
        assert_eq!(order(1, false), vec![D, B]);
        assert_eq!(order(3, false), vec![D, B, B, D, D, B]);
        assert_eq!(order(2, true), vec![D, R, B, B, R, D]);
    }

    #[test]
    fn only_a_run_that_measures_embedded_needs_the_embedded_server() {
        let mut options = Options::default();
        assert!(options.selects(Scenario::Embedded));
        options.only = vec![Scenario::Latency];
        assert!(!options.selects(Scenario::Embedded));
        assert_eq!(embedded_executable(&options).unwrap(), None);
        options.only = vec![Scenario::Embedded];
        options.embedded = Some("/e".into());
        assert_eq!(
            embedded_executable(&options).unwrap(),
            Some(PathBuf::from("/e"))
        );
    }

    #[test]
    fn scenario_names_round_trip() {
        for scenario in Scenario::ALL.into_iter().chain(Scenario::ON_REQUEST) {
            assert_eq!(scenario.name().parse::<Scenario>(), Ok(scenario));
        }
        // soak runs only when asked for.
        assert!(!Options::default().selects(Scenario::Soak));
        let soak = Options {
            only: vec![Scenario::Soak],
            ..Options::default()
        };
        assert!(soak.selects(Scenario::Soak) && !soak.selects(Scenario::Latency));
        assert!(
            "memory"
                .parse::<Scenario>()
                .unwrap_err()
                .contains("latency")
        );
    }

    #[test]
    fn the_bridged_command_puts_the_fixture_after_two_dashes() {
        let ctx = Ctx {
            bridge: "/b".into(),
            fixture: "/f".into(),
            embedded: None,
            relay: "/h".into(),
            mcp_remote: "/m".into(),
            rounds: 1,
            quick: true,
            floor: true,
            relay_mode: RelayMode::Plain,
            stdio: StdioKind::SocketPair,
        };
        assert_eq!(
            ctx.argv(Side::Bridged, &["--many-tools", "5"]),
            ["/b", "--", "/f", "--many-tools", "5"].map(OsString::from)
        );
        assert_eq!(ctx.argv(Side::Direct, &[]), [OsString::from("/f")]);
        assert_eq!(
            ctx.argv(Side::Relay, &[]),
            ["/h", "relay", "--", "/f"].map(OsString::from)
        );
        let whole_lines = Ctx {
            relay_mode: RelayMode::WholeLines,
            ..ctx.clone()
        };
        assert_eq!(
            whole_lines.argv(Side::Relay, &[]),
            ["/h", "relay", "--whole-lines", "--", "/f"].map(OsString::from)
        );
        let reactor = Ctx {
            relay_mode: RelayMode::Reactor,
            ..ctx
        };
        assert_eq!(
            reactor.argv(Side::Relay, &[]),
            ["/h", "relay", "--reactor", "--", "/f"].map(OsString::from)
        );
        let tasks = Ctx {
            relay_mode: RelayMode::Tasks,
            ..reactor
        };
        assert_eq!(
            tasks.argv(Side::Relay, &[]),
            ["/h", "relay", "--tasks", "--", "/f"].map(OsString::from)
        );
    }
}
