//! The report for a machine (`--json`): one object, each finding with its stable
//! id, its status, what it found, the lines or the cause, and the advice.

use super::report::{Report, Status};
use super::texts::vscode_shows;
use serde_json::{Value, json};

pub fn render(report: &Report) -> String {
    let findings: Vec<Value> = report
        .findings()
        .into_iter()
        .map(|finding| {
            json!({
                "id": finding.check.id(),
                "group": finding.check.group().key(),
                "status": finding.status.word(),
                "summary": finding.summary,
                "details": finding.details,
                "lines": finding.lines,
                "cause": finding.cause.map(|cause| cause.name()),
                "vscode_shows": finding.cause.map(vscode_shows),
                "advice": finding.advice.as_ref().map(|advice| json!({
                    "text": advice.text,
                    "see": advice.section.link(),
                })),
            })
        })
        .collect();
    let object = json!({
        "doctor": "mcp-bridge-vscode doctor",
        "version": env!("CARGO_PKG_VERSION"),
        "upstream": report.upstream,
        "vscode_will_work": report.exit_code() == 0,
        "complete": report.complete(),
        "exit_code": report.exit_code(),
        "counts": {
            "pass": report.count(Status::Pass),
            "warning": report.count(Status::Warning),
            "fail": report.count(Status::Fail),
            "skipped": report.count(Status::Skipped),
        },
        "findings": findings,
    });
    format!("{object:#}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Cause;
    use crate::doctor::report::{Check, Finding};
    use crate::doctor::texts::Section;

    #[test]
    fn the_object_has_every_finding_with_its_id_status_line_cause_and_advice() {
        let mut report = Report::new("bridge-fixture-server (0 arguments)".into());
        report.add(
            Finding::fail(Check::Command, "the command x did not start")
                .line("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: y")
                .cause(Cause::SpawnFailed)
                .advice(Section::Start, "Write the absolute path."),
        );
        report.add(Finding::pass(
            Check::Ping,
            "the bridge answered ping in 1 ms",
        ));
        let value: Value = serde_json::from_str(&render(&report)).unwrap();
        assert_eq!(value["exit_code"], 1);
        assert_eq!(value["vscode_will_work"], false);
        assert_eq!(
            value["counts"],
            json!({"pass": 1, "warning": 0, "fail": 1, "skipped": 0})
        );
        let first = &value["findings"][0];
        assert_eq!(first["id"], "reach.command");
        assert_eq!(first["group"], "reach");
        assert_eq!(first["status"], "fail");
        assert_eq!(first["cause"], "spawn_failed");
        assert_eq!(
            first["advice"]["see"],
            "docs/troubleshooting.md#the-start-and-the-upstream-server"
        );
        assert_eq!(value["findings"][1]["cause"], Value::Null);
    }
}
