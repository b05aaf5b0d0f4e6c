//! `mcp-bridge-vscode doctor --json`, run as a user runs it: the executable with
//! the arguments of a server entry, its report read back as JSON.
#![allow(dead_code)]

use crate::pipes::bridge_exe;
use harness_sim::process::PROXY_VARIABLES;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

/// The ids of doctor's checks, in the order of the report. A script reads them
/// from `--json`: a change here is a change of the interface.
pub const IDS: [&str; 30] = [
    "reach.command",
    "reach.stdout",
    "reach.proxy",
    "reach.dns",
    "reach.tcp",
    "reach.tls",
    "reach.post",
    "sign_in.token_store",
    "sign_in.challenge",
    "sign_in.resource_metadata",
    "sign_in.authorization_server",
    "sign_in.authorization_url",
    "sign_in.client_id",
    "sign_in.redirect_port",
    "sign_in.stored",
    "sign_in.sign_in",
    "revision.discover",
    "revision.capabilities",
    "vscode.initialize",
    "vscode.tools",
    "vscode.tool_names",
    "vscode.tool_schemas",
    "vscode.icons",
    "vscode.prompts",
    "vscode.resources",
    "vscode.resource_templates",
    "vscode.ping",
    "vscode.listen",
    "vscode.logging",
    "vscode.call",
];

/// A report of doctor.
#[derive(Debug)]
pub struct Report {
    pub value: Value,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `mcp-bridge-vscode doctor --json <args>` with `env` (and without the
/// runner's proxy variables, `SANDBOX_RUNTIME` and `BROWSER`).
pub async fn doctor(args: &[&str], env: &[(&str, &str)]) -> Report {
    let output = run(&[&["--json"], args].concat(), env).await;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let value = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!("doctor {args:?} printed no JSON ({error}):\n{stdout}\nstderr:\n{stderr}")
    });
    Report {
        value,
        code: output.status.code(),
        stdout,
        stderr,
    }
}

/// Runs `mcp-bridge-vscode doctor <args>` with `env`: its whole output.
pub async fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = tokio::process::Command::new(bridge_exe());
    command
        .arg("doctor")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for name in PROXY_VARIABLES
        .iter()
        .chain(&["SANDBOX_RUNTIME", "BROWSER", "NO_COLOR"])
    {
        if !env.iter().any(|(set, _)| set == name) {
            command.env_remove(name);
        }
    }
    tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .unwrap_or_else(|_| panic!("doctor {args:?} did not end in 180 s"))
        .expect("doctor runs")
}

impl Report {
    /// The finding of `id`.
    pub fn finding(&self, id: &str) -> &Value {
        self.findings()
            .iter()
            .find(|finding| finding["id"] == id)
            .unwrap_or_else(|| panic!("no finding {id} in:\n{}", self.stdout))
    }

    pub fn findings(&self) -> &Vec<Value> {
        self.value["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("no findings:\n{}", self.stdout))
    }

    pub fn status(&self, id: &str) -> &str {
        self.finding(id)["status"].as_str().unwrap_or_default()
    }

    pub fn summary(&self, id: &str) -> &str {
        self.finding(id)["summary"].as_str().unwrap_or_default()
    }

    /// The lines, details and advice of a finding, as one text.
    pub fn text(&self, id: &str) -> String {
        self.finding(id).to_string()
    }

    /// Asserts the status of `id`, and that its summary has `part`.
    pub fn expect(&self, id: &str, status: &str, part: &str) {
        let finding = self.finding(id);
        assert!(
            finding["status"] == status
                && finding["summary"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(part),
            "{id}: expected {status} with {part:?}, got {finding:#}\nthe whole report:\n{}",
            self.stdout
        );
    }

    /// The ids of the report, in order.
    pub fn ids(&self) -> Vec<&str> {
        self.findings()
            .iter()
            .map(|finding| finding["id"].as_str().unwrap_or_default())
            .collect()
    }

    /// The report is well formed: known ids in the stable order, known statuses,
    /// an exit code that is the verdict's, each advice with a link.
    pub fn assert_well_formed(&self) {
        let ids = self.ids();
        let mut at = 0;
        for id in &ids {
            let position = IDS
                .iter()
                .position(|known| known == id)
                .unwrap_or_else(|| panic!("an unknown id {id}"));
            assert!(position >= at, "{id} out of order: {ids:?}");
            at = position + 1;
        }
        for finding in self.findings() {
            assert!(
                ["pass", "warning", "fail", "skipped"]
                    .contains(&finding["status"].as_str().unwrap()),
                "{finding}"
            );
            if let Some(see) = finding["advice"]["see"].as_str() {
                assert!(see.starts_with("docs/troubleshooting.md#"), "{finding}");
            }
        }
        let failed = self.findings().iter().any(|f| f["status"] == "fail");
        assert_eq!(
            self.value["exit_code"],
            i32::from(failed),
            "{}",
            self.stdout
        );
        assert_eq!(
            self.code,
            Some(i32::from(failed)),
            "{}\n{}",
            self.stdout,
            self.stderr
        );
        assert_eq!(self.value["vscode_will_work"], !failed);
    }
}
