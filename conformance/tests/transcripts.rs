//! `cargo test -p mcp-conformance`: each transcript is its own test, named by
//! its path under `transcripts/`, so a failure names the transcript; its
//! message is the runner's report with the diff.
//!
//! One more test proves that the runner can fail: with the fault switch
//! `MCP_BRIDGE_TEST_FAULT=keep-null-cursor` (debug builds of the bridge skip R4's
//! rule), exactly the transcripts that script a `nextCursor: null` fail, and
//! their report shows the null cursor in a diff.

use libtest_mimic::{Arguments, Failed, Trial};
use mcp_conformance::bins::Bins;
use mcp_conformance::catalog::Catalog;
use mcp_conformance::outcome::Outcome;
use mcp_conformance::runner::{self, Env};
use mcp_conformance::schema::Schemas;
use mcp_conformance::{paths, suite};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// The executables, built once for every test.
fn env() -> Result<Env, Failed> {
    static ENV: OnceLock<Result<Env, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let dir = paths::transcripts_dir();
        let schemas = Schemas::load(&dir.join("schema")).map_err(|error| error.to_string())?;
        // MCP_CONFORMANCE_RELAY: another mcp-conformance as the relay (a target
        // folder that several worktrees share can hold another one's build).
        let relay = std::env::var_os("MCP_CONFORMANCE_RELAY")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcp-conformance")));
        let bins = Bins::locate(relay, true).map_err(|error| error.to_string())?;
        Ok(Env {
            bins,
            schemas: Arc::new(schemas),
            bridge_env: Vec::new(),
            product_paths: Default::default(),
        })
    })
    .clone()
    .map_err(Failed::from)
}

fn verdict(outcome: &Outcome) -> Result<(), Failed> {
    if let Some(why) = &outcome.skipped {
        Err(format!("{}: {why}, and cargo test builds one", outcome.display).into())
    } else if outcome.passed() {
        Ok(())
    } else {
        Err(outcome.report().into())
    }
}

fn main() {
    let mut args = Arguments::from_args();
    // A transcript waits on processes and timers far more than it computes: as many at
    // once as the runner's own default (`--jobs`), unless `--test-threads` or
    // RUST_TEST_THREADS says otherwise.
    if args.test_threads.is_none() {
        args.test_threads = Some(
            std::env::var("RUST_TEST_THREADS")
                .ok()
                .and_then(|threads| threads.parse().ok())
                .unwrap_or_else(suite::default_jobs),
        );
    }
    let dir = paths::transcripts_dir();
    let catalog = Catalog::load(&dir.join("catalog.json")).expect("the catalog");
    let loaded = suite::load(&dir, &[], &catalog).expect("the transcripts folder");
    let mut trials = Vec::new();
    let mut m1 = Vec::new();
    for entry in loaded {
        match entry {
            Ok(transcript) => {
                // A transcript with a fault of its own (its header's variable wins)
                // proves nothing here and takes the watchdog's 8 s.
                if transcript.header.milestone == "M1" && !transcript.header.needs_test_faults {
                    m1.push(transcript.clone());
                }
                let name = transcript.display.clone();
                trials.push(Trial::test(name, move || {
                    let env = env()?;
                    let outcome = runtime().block_on(runner::run(&transcript, &env));
                    verdict(&outcome)
                }));
            }
            Err(outcome) => {
                let name = outcome.display.clone();
                trials.push(Trial::test(name, move || verdict(&outcome)));
            }
        }
    }
    trials.push(Trial::test(
        "fault: keep-null-cursor fails exactly the transcripts of a null nextCursor",
        move || {
            let mut env = env()?;
            env.bridge_env
                .push(("MCP_BRIDGE_TEST_FAULT".into(), "keep-null-cursor".into()));
            let expected: Vec<String> = m1
                .iter()
                .filter(|t| {
                    // A frame of `upstream_send`, or the escaped text of `upstream_raw`.
                    std::fs::read_to_string(&t.path).is_ok_and(|text| {
                        text.contains(r#""nextCursor":null"#)
                            || text.contains(r#"\"nextCursor\":null"#)
                    })
                })
                .map(|t| t.display.clone())
                .collect();
            if expected.is_empty() {
                return Err("no M1 transcript scripts a nextCursor: null".into());
            }
            let loaded = m1.iter().cloned().map(Ok).collect();
            let outcomes = runtime().block_on(suite::run_all(
                loaded,
                env,
                suite::RunPlan {
                    jobs: suite::default_jobs(),
                    fail_fast: false,
                },
            ));
            let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.passed()).collect();
            let names: Vec<String> = failed.iter().map(|o| o.display.clone()).collect();
            if names != expected {
                let reports: String = failed.iter().map(|o| o.report()).collect();
                return Err(format!(
                    "with the fault, the failing transcripts are {names:?}, expected {expected:?}\n{reports}"
                )
                .into());
            }
            for outcome in failed {
                let report = outcome.report();
                if !report.contains("+") || !report.contains("\"nextCursor\": null") {
                    return Err(format!("the report of {} shows no diff with the null cursor:\n{report}", outcome.display).into());
                }
            }
            Ok(())
        },
    ));
    libtest_mimic::run(&args, trials).exit();
}
