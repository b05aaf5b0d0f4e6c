//! The command line of `mcp-conformance`.
//!
//! ```text
//! mcp-conformance [run] [--milestone M] [--item ID] [--json | --markdown] [--junit FILE] [--contract]
//!                 [--token-dir PATH] [--keychain-service NAME] [--jobs N] [--fail-fast] [--dir DIR]
//!                 [--bridge PATH] [--fixture PATH] [--embedded PATH] [FILES...]
//! mcp-conformance replay [--bridge PATH] [--fixture PATH] [--embedded PATH] FILE
//! mcp-conformance contract --run RUN.json  (prints docs/contract.md)
//! mcp-conformance relay PORT TOKEN        (the bridge's upstream command; not for people)
//! ```
//!
//! Exit codes: 0 when every transcript that ran passed, 1 when one failed, 2 for
//! arguments or data that are not valid.

use crate::bins::{Bins, BinsError, Named};
use crate::catalog::Catalog;
use crate::junit::ReportFile;
use crate::matrix::Matrix;
use crate::mode::RunMode;
use crate::runner::Env;
use crate::schema::{SchemaError, Schemas};
use crate::suite;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "mcp-conformance",
    version,
    about = "Replays the transcripts of mcp-bridge-rs against the bridge and prints the conformance matrix."
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs transcripts and prints the matrix (the default).
    Run(RunArgs),
    /// Replays one transcript or harness-sim recording and shows each failure with a diff.
    Replay {
        file: PathBuf,
        /// The transcripts folder (the catalog and the schemas).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[command(flatten)]
        executables: ExecutableArgs,
    },
    /// Prints docs/contract.md: the catalog's items with the cells and transcripts of
    /// a recorded run (the JSON of `run --json`).
    Contract {
        /// The JSON of `mcp-conformance run --json`.
        #[arg(long)]
        run: PathBuf,
        /// The transcripts folder (the catalog).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// The relay between the bridge and the runner (started by the runner).
    #[command(hide = true)]
    Relay { port: u16, token: String },
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Only the transcripts of this milestone (M1 .. M6).
    #[arg(long)]
    milestone: Option<String>,
    /// Only the transcripts that cover this item (R4, C1, Q5, STOP, ...).
    #[arg(long)]
    item: Option<String>,
    /// Print the matrix and the outcomes as JSON.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the matrix as a Markdown table.
    #[arg(long)]
    markdown: bool,
    /// Run in the contract's terms: each text that a transcript marks as this
    /// implementation's ("ours") is checked by its shape only, and the transcripts
    /// that cannot apply to another implementation (the embedded server, the test
    /// faults of a debug build) are skipped as not applicable.
    #[arg(long)]
    contract: bool,
    /// The token directory of the bridge's file store under XDG_STATE_HOME, which
    /// the transcripts name $TOKEN_DIR (the contract leaves its name to the
    /// implementation).
    #[arg(long, value_name = "PATH", default_value = crate::product_paths::TOKEN_DIR)]
    token_dir: String,
    /// The service of the bridge's keychain items, which the transcripts name
    /// $KEYCHAIN_SERVICE.
    #[arg(long, value_name = "NAME", default_value = crate::product_paths::KEYCHAIN_SERVICE)]
    keychain_service: String,
    /// Also write the outcomes as JUnit XML to this file: one test case per
    /// transcript, one suite per milestone (and recorded/).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// How many transcripts run at the same time.
    #[arg(long)]
    jobs: Option<usize>,
    /// Start no other transcript after the first failure, the fast ones first.
    #[arg(long)]
    fail_fast: bool,
    /// The transcripts folder.
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    executables: ExecutableArgs,
    /// Transcript files (default: every .jsonl file of the folder).
    files: Vec<PathBuf>,
}

/// The executables under test, when they are not the workspace's.
#[derive(Debug, clap::Args)]
struct ExecutableArgs {
    /// The bridge to test, in place of this workspace's mcp-bridge-vscode (wins over
    /// the variable MCP_CONFORMANCE_BRIDGE).
    #[arg(long, value_name = "PATH")]
    bridge: Option<PathBuf>,
    /// The upstream fixture server, in place of this workspace's bridge-fixture-server
    /// (wins over MCP_CONFORMANCE_FIXTURE).
    #[arg(long, value_name = "PATH")]
    fixture: Option<PathBuf>,
    /// The embedded server of the transcripts of M5, in place of this workspace's
    /// bridge-embedded-server (wins over MCP_CONFORMANCE_EMBEDDED).
    #[arg(long, value_name = "PATH")]
    embedded: Option<PathBuf>,
}

impl ExecutableArgs {
    fn named(self) -> Named {
        Named {
            bridge: self.bridge,
            fixture: self.fixture,
            embedded: self.embedded,
        }
    }
}

/// Runs the command line; returns the exit code.
pub async fn main(args: Vec<std::ffi::OsString>) -> i32 {
    let args = match Args::try_parse_from(args) {
        Ok(args) => args,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return code;
        }
    };
    match args.command {
        Some(Command::Relay { port, token }) => crate::relay::run(port, &token).await,
        Some(Command::Replay {
            file,
            dir,
            executables,
        }) => replay(file, dir, executables.named()).await,
        Some(Command::Contract { run, dir }) => contract(&run, dir),
        Some(Command::Run(run_args)) => run(run_args).await,
        None => run(args.run).await,
    }
}

/// The item catalog of the transcripts folder; `None` after its error line.
fn load_catalog(dir: &std::path::Path) -> Option<Catalog> {
    Catalog::load(&dir.join("catalog.json"))
        .inspect_err(|error| eprintln!("mcp-conformance: {error}"))
        .ok()
}

/// Why a run cannot start: its schemas or its executables.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    #[error(transparent)]
    Schemas(#[from] SchemaError),
    #[error("cannot find mcp-conformance itself: {0}")]
    OwnPath(std::io::Error),
    #[error(transparent)]
    Bins(#[from] BinsError),
}

/// The schemas and the executables of a run (built first when they are stale).
fn environment(
    dir: &std::path::Path,
    with_embedded: bool,
    named: Named,
    product_paths: crate::product_paths::ProductPaths,
) -> Result<Env, SetupError> {
    let schemas = Schemas::load(&dir.join("schema"))?;
    let relay = std::env::current_exe().map_err(SetupError::OwnPath)?;
    let bins = Bins::locate_named(relay, with_embedded, named)?;
    Ok(Env {
        bins,
        schemas: Arc::new(schemas),
        bridge_env: Vec::new(),
        product_paths,
    })
}

async fn run(args: RunArgs) -> i32 {
    let dir = args.dir.unwrap_or_else(crate::paths::transcripts_dir);
    let Some(catalog) = load_catalog(&dir) else {
        return 2;
    };
    if let Some(item) = &args.item
        && catalog.item(item).is_none()
    {
        eprintln!("mcp-conformance: the item {item} is not in the catalog");
        return 2;
    }
    let loaded = match suite::load(&dir, &args.files, &catalog) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("mcp-conformance: {message}");
            return 2;
        }
    };
    let mode = if args.contract {
        RunMode::Contract
    } else {
        RunMode::Strict
    };
    let loaded: Vec<_> = loaded
        .into_iter()
        .filter(|l| suite::selected(l, args.milestone.as_deref(), args.item.as_deref()))
        .collect();
    let marks = crate::mode::marks_by_milestone(&loaded);
    let loaded: Vec<_> = loaded.into_iter().map(|l| mode.prepare(l)).collect();
    // Created before the executables are found (and built), so that a path it
    // cannot write stops the run at once.
    let junit = match args.junit.map(ReportFile::create).transpose() {
        Ok(junit) => junit,
        Err(message) => {
            eprintln!("mcp-conformance: {message}");
            return 2;
        }
    };
    // Found (and built when needed) before the runs start, not in one of them.
    let needs_embedded = loaded.iter().any(|loaded| {
        loaded
            .as_ref()
            .is_ok_and(|t| t.header.upstream == crate::format::Upstream::Embedded)
    });
    let product_paths = crate::product_paths::ProductPaths {
        token_dir: args.token_dir,
        keychain_service: args.keychain_service,
    };
    let env = match environment(
        &dir,
        needs_embedded,
        args.executables.named(),
        product_paths,
    ) {
        Ok(env) => env,
        Err(message) => {
            eprintln!("mcp-conformance: {message}");
            return 2;
        }
    };
    let plan = suite::RunPlan {
        jobs: args.jobs.unwrap_or_else(suite::default_jobs),
        fail_fast: args.fail_fast,
    };
    let started = std::time::SystemTime::now();
    let clock = tokio::time::Instant::now();
    let outcomes = suite::run_all(loaded, env, plan).await;
    let info = crate::junit::RunInfo {
        mode,
        started,
        elapsed: clock.elapsed(),
    };
    let matrix = Matrix::build(
        &catalog,
        &outcomes,
        args.item.as_deref(),
        args.milestone.as_deref(),
    );
    let junit_written = junit.map(|file| file.write(&outcomes, &catalog.milestones, &info));
    if args.json {
        let mut json = matrix.to_json(&outcomes);
        mode.describe_in_json(&mut json, &marks, &outcomes);
        println!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    } else {
        if args.markdown {
            print!("{}", matrix.markdown());
        } else {
            print!("{}", matrix.text());
        }
        for line in mode.lines(&marks, &outcomes) {
            println!("{line}");
        }
        println!(
            "pass: every transcript of the cell passed; FAIL: one failed; skip: one did not run (not covered); -: not covered yet; doc: documentation only; blank: nothing in that milestone; n/a: not applicable (--contract); recorded/ replays earn no cell"
        );
        println!();
        for outcome in outcomes.iter().filter(|o| o.failed()) {
            println!("FAILED {}", outcome.display);
            print!("{}", outcome.report());
        }
        for outcome in outcomes.iter() {
            if let Some(why) = &outcome.skipped {
                println!("skipped {}: {why}", outcome.display);
            }
        }
        println!("{}", matrix.coverage_line());
        println!("{}", matrix.summary_line());
    }
    if let Some(Err(message)) = junit_written {
        eprintln!("mcp-conformance: {message}");
        return 2;
    }
    i32::from(matrix.failed > 0)
}

fn contract(run: &std::path::Path, dir: Option<PathBuf>) -> i32 {
    let dir = dir.unwrap_or_else(crate::paths::transcripts_dir);
    let Some(catalog) = load_catalog(&dir) else {
        return 2;
    };
    let recorded = std::fs::read_to_string(run)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()));
    match recorded {
        Ok(recorded) => {
            print!("{}", crate::contract_page::render(&catalog, &recorded));
            0
        }
        Err(error) => {
            eprintln!("mcp-conformance: {}: {error}", run.display());
            2
        }
    }
}

async fn replay(file: PathBuf, dir: Option<PathBuf>, named: Named) -> i32 {
    let dir = dir.unwrap_or_else(crate::paths::transcripts_dir);
    let file = file.canonicalize().unwrap_or(file);
    let dir = dir.canonicalize().unwrap_or(dir);
    let root = if file.starts_with(&dir) {
        dir.clone()
    } else {
        PathBuf::new()
    };
    let transcript = match crate::format::read(&file, &root) {
        Ok(transcript) => transcript,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            return 2;
        }
    };
    let Some(catalog) = load_catalog(&dir) else {
        return 2;
    };
    let needs_embedded = transcript.header.upstream == crate::format::Upstream::Embedded;
    let env = match environment(&dir, needs_embedded, named, Default::default()) {
        Ok(env) => env,
        Err(message) => {
            eprintln!("mcp-conformance: {message}");
            return 2;
        }
    };
    if !transcript.header.items.is_empty()
        && let Err(message) = suite::check_items(&transcript, &catalog)
    {
        eprintln!("mcp-conformance: {}: {message}", transcript.display);
        return 2;
    }
    let outcome = crate::runner::run(&transcript, &env).await;
    if let Some(why) = &outcome.skipped {
        println!("{}: skipped: {why}", outcome.display);
        0
    } else if outcome.passed() {
        println!("{}: pass ({} ms)", outcome.display, outcome.elapsed_ms);
        0
    } else {
        print!("{}", outcome.report());
        println!("{}: FAIL", outcome.display);
        1
    }
}
