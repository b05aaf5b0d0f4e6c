//! The report for a person: one finding a line under the title of its group, the
//! status and the id in aligned columns, then what more it found, the lines of the
//! Output channel, and what to do. Colour only on a terminal, never with `NO_COLOR`.
//! Every text of the report is [`printable`]: what a server sends (tool names,
//! error messages, scopes) reaches the terminal without its control characters.

use super::report::{Finding, Report, Status, counted};
use super::texts::vscode_shows;
use crate::log::printable;
use std::fmt::Write as _;
use std::io::IsTerminal;

/// Whether the report may use colour: stdout is a terminal and `NO_COLOR` is not
/// set to a text (https://no-color.org).
pub fn colour_wanted() -> bool {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    !no_colour && std::io::stdout().is_terminal()
}

/// The width of the status column.
const STATUS_WIDTH: usize = 8;
/// The indent of the lines under a finding.
const INDENT: usize = 2 + STATUS_WIDTH + 1;

pub fn render(report: &Report, colour: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mcp-bridge-vscode doctor {}: {}",
        env!("CARGO_PKG_VERSION"),
        printable(&report.upstream)
    );
    let findings = report.findings();
    let id_width = findings
        .iter()
        .map(|finding| finding.check.id().len())
        .max()
        .unwrap_or_default();
    let mut group = None;
    let mut last_skip: Option<&str> = None;
    for finding in findings {
        if group != Some(finding.check.group()) {
            group = Some(finding.check.group());
            let _ = writeln!(out, "\n{}", finding.check.group().title());
            last_skip = None;
        }
        // A run of checks skipped for one reason says it once.
        let same = finding.status == Status::Skipped
            && finding.details.is_empty()
            && last_skip == Some(finding.summary.as_str());
        write_finding(&mut out, finding, id_width, colour, same);
        last_skip = (finding.status == Status::Skipped).then_some(finding.summary.as_str());
    }
    let _ = writeln!(out, "\n{}", verdict(report));
    out
}

fn write_finding(out: &mut String, finding: &Finding, id_width: usize, colour: bool, same: bool) {
    let word = finding.status.word();
    let status = if colour {
        format!(
            "\u{1b}[{}m{word:<STATUS_WIDTH$}\u{1b}[0m",
            colour_code(finding.status)
        )
    } else {
        format!("{word:<STATUS_WIDTH$}")
    };
    let summary = if same {
        "(the same)".to_owned()
    } else {
        printable(&finding.summary)
    };
    let _ = writeln!(
        out,
        "  {status} {:<id_width$}  {summary}",
        finding.check.id()
    );
    let pad = " ".repeat(INDENT + id_width + 2);
    for detail in &finding.details {
        let _ = writeln!(out, "{pad}- {}", printable(detail));
    }
    for line in &finding.lines {
        let _ = writeln!(out, "{pad}Output channel: {}", printable(line));
    }
    if let Some(cause) = finding.cause {
        let _ = writeln!(
            out,
            "{pad}Cause: {} ({})",
            cause.name(),
            vscode_shows(cause)
        );
    }
    if let Some(advice) = &finding.advice {
        let _ = writeln!(
            out,
            "{pad}What to do: {} See {}",
            printable(&advice.text),
            advice.section.link()
        );
    }
}

fn colour_code(status: Status) -> &'static str {
    match status {
        Status::Pass => "32",
        Status::Warning => "33",
        Status::Fail => "31",
        Status::Skipped => "2",
    }
}

/// The last line: whether VS Code will work, and the counts.
pub fn verdict(report: &Report) -> String {
    let counts = format!(
        "{} passed, {}, {} failed, {} skipped",
        report.count(Status::Pass),
        counted(report.count(Status::Warning), "warning"),
        report.count(Status::Fail),
        report.count(Status::Skipped)
    );
    if report.exit_code() == 0 && !report.complete() {
        format!("No check failed, but doctor could not check what VS Code gets ({counts}).")
    } else if report.exit_code() == 0 {
        format!("VS Code will work with this server through the bridge ({counts}).")
    } else {
        format!("VS Code will not work with this server through the bridge as it is ({counts}).")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Cause;
    use crate::doctor::report::Check;
    use crate::doctor::texts::Section;

    fn report() -> Report {
        let mut report = Report::new("https://mcp.example.com/mcp".into());
        report.add(Finding::pass(
            Check::Dns,
            "mcp.example.com has the addresses 192.0.2.1",
        ));
        report.add(
            Finding::fail(
                Check::Tls,
                "the certificate of the server comes from a CA that the bridge does not trust",
            )
            .line("mcp-bridge-vscode: bridge: warning: server/discover failed: x")
            .cause(Cause::TransportFailed)
            .advice(Section::Reach, "Give --ca-file."),
        );
        report.add(Finding::skipped(Check::Call, "no --call").detail("one"));
        report
    }

    #[test]
    fn the_text_has_aligned_columns_under_the_groups_and_no_colour_unless_asked() {
        let text = render(&report(), false);
        assert!(!text.contains('\u{1b}'), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "Reach");
        assert_eq!(
            lines[3],
            "  pass     reach.dns    mcp.example.com has the addresses 192.0.2.1"
        );
        assert!(lines[4].starts_with("  fail     reach.tls    the certificate"));
        assert!(lines[5].starts_with("                        Output channel: mcp-bridge-vscode:"));
        assert!(text.contains(
            "Cause: transport_failed (MPC -32603: The connection to the upstream server failed."
        ));
        assert!(
            text.contains("What to do: Give --ca-file. See docs/troubleshooting.md#doctor-reach")
        );
        assert!(text.contains("\nWhat VS Code will get\n  skipped  vscode.call  no --call\n"));
        assert!(
            text.trim_end()
                .ends_with("(1 passed, 0 warnings, 1 failed, 1 skipped).")
        );
        let coloured = render(&report(), true);
        assert!(coloured.contains("\u{1b}[31mfail    \u{1b}[0m"));
    }
}
