//! The JUnit XML of a run (`mcp-conformance run --junit FILE`), the one format
//! that CI systems show (GitHub Actions, GitLab, Jenkins).
//!
//! One `<testcase>` per transcript, in one `<testsuite>` per milestone (M1 .. M6
//! in the catalog's order), the regression replays of `recorded/` in the suite
//! `recorded` (they earn no cell of the matrix), and a transcript that could not
//! be read in the suite `unreadable`. A test case is named by its path and its
//! items (`m1/r4-null-cursor.jsonl [R4]`), its class is its suite, and its
//! properties give the path, the milestone and each item. A failed transcript has
//! one `<failure>`: its first difference as the message, the whole report (every
//! failure with its diff and the last stderr lines) as the text. A skipped one has
//! `<skipped message="why"/>`. Each suite and the root `<testsuites>` count their
//! tests, failures, errors (always 0: a transcript that cannot run fails) and
//! skips; the times are seconds, a suite's the sum of its transcripts', the root's
//! the run's own (transcripts run side by side). Every text is escaped, and the
//! characters that XML 1.0 forbids (control characters but tab, line feed and
//! carriage return; U+FFFE, U+FFFF) are left out.

use crate::mode::RunMode;
use crate::outcome::Outcome;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The file of `--junit`, created before the run so that a path that cannot be
/// written stops it before the first transcript.
pub struct ReportFile {
    path: PathBuf,
    file: std::fs::File,
}

/// The file of `--junit` cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("--junit {}: {error}", path.display())]
pub struct ReportFileError {
    path: PathBuf,
    error: std::io::Error,
}

impl ReportFile {
    pub fn create(path: PathBuf) -> Result<Self, ReportFileError> {
        match std::fs::File::create(&path) {
            Ok(file) => Ok(Self { path, file }),
            Err(error) => Err(ReportFileError { path, error }),
        }
    }

    /// Writes the report of `outcomes` ([`render`]).
    pub fn write(
        mut self,
        outcomes: &[Outcome],
        milestones: &[String],
        info: &RunInfo,
    ) -> Result<(), ReportFileError> {
        let xml = render(outcomes, milestones, info);
        self.file
            .write_all(xml.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|error| ReportFileError {
                path: self.path,
                error,
            })
    }
}

/// The suite of the regression replays of `recorded/`.
pub const RECORDED_SUITE: &str = "recorded";
/// The suite of the transcripts that could not be read.
pub const UNREADABLE_SUITE: &str = "unreadable";

/// What the report says of the run as a whole.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo {
    pub mode: RunMode,
    /// When the run started.
    pub started: SystemTime,
    /// How long the whole run took.
    pub elapsed: Duration,
}

/// The suite of an outcome.
pub fn suite_of(outcome: &Outcome) -> &str {
    if !outcome.credits_items {
        RECORDED_SUITE
    } else if outcome.milestone.is_empty() {
        UNREADABLE_SUITE
    } else {
        &outcome.milestone
    }
}

/// The names of the suites of `outcomes`: the `milestones` in their order, then
/// `recorded`, then any other (an unknown milestone, `unreadable`) in the order of
/// their first outcome. Only suites with a transcript are named.
fn suite_names<'a>(outcomes: &'a [Outcome], milestones: &'a [String]) -> Vec<&'a str> {
    let present = |name: &str| outcomes.iter().any(|o| suite_of(o) == name);
    let mut names: Vec<&str> = milestones
        .iter()
        .map(String::as_str)
        .chain([RECORDED_SUITE])
        .filter(|name| present(name))
        .collect();
    for outcome in outcomes {
        let name = suite_of(outcome);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The counts of a set of outcomes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    tests: usize,
    failures: usize,
    skipped: usize,
}

impl Counts {
    fn of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Self {
        let mut counts = Self::default();
        for outcome in outcomes {
            counts.tests += 1;
            counts.failures += usize::from(outcome.failed());
            counts.skipped += usize::from(outcome.skipped.is_some() && !outcome.failed());
        }
        counts
    }

    fn attributes(self) -> String {
        format!(
            r#"tests="{}" failures="{}" errors="0" skipped="{}""#,
            self.tests, self.failures, self.skipped
        )
    }
}

/// The JUnit XML document of a run: `milestones` orders the suites.
pub fn render(outcomes: &[Outcome], milestones: &[String], info: &RunInfo) -> String {
    let timestamp = timestamp(info.started);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        r#"<testsuites name="mcp-conformance ({mode})" {counts} time="{time}" timestamp="{timestamp}">"#,
        mode = info.mode.name(),
        counts = Counts::of(outcomes).attributes(),
        time = seconds(info.elapsed.as_millis()),
    );
    for name in suite_names(outcomes, milestones) {
        let members: Vec<&Outcome> = outcomes.iter().filter(|o| suite_of(o) == name).collect();
        let time: u128 = members.iter().map(|o| o.elapsed_ms).sum();
        let _ = writeln!(
            out,
            r#"  <testsuite name="{}" {} time="{}" timestamp="{timestamp}">"#,
            attribute(name),
            Counts::of(members.iter().copied()).attributes(),
            seconds(time),
        );
        out.push_str("    <properties>\n");
        property(&mut out, 6, "mode", info.mode.name());
        out.push_str("    </properties>\n");
        for outcome in members {
            test_case(&mut out, name, outcome);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn test_case(out: &mut String, suite: &str, outcome: &Outcome) {
    let name = if outcome.items.is_empty() {
        outcome.display.clone()
    } else {
        format!("{} [{}]", outcome.display, outcome.items.join(", "))
    };
    let _ = writeln!(
        out,
        r#"    <testcase name="{}" classname="{}" time="{}">"#,
        attribute(&name),
        attribute(suite),
        seconds(outcome.elapsed_ms),
    );
    out.push_str("      <properties>\n");
    property(out, 8, "path", &outcome.display);
    if !outcome.milestone.is_empty() {
        property(out, 8, "milestone", &outcome.milestone);
    }
    for item in &outcome.items {
        property(out, 8, "item", item);
    }
    out.push_str("      </properties>\n");
    if let Some(first) = outcome.failures.first() {
        let message = match first.line {
            Some(line) => format!("{}:{line}: {}", outcome.display, first.message),
            None => format!("{}: {}", outcome.display, first.message),
        };
        let _ = writeln!(
            out,
            r#"      <failure message="{}" type="transcript">{}</failure>"#,
            attribute(&message),
            text(&outcome.report()),
        );
    } else if let Some(why) = &outcome.skipped {
        let _ = writeln!(out, r#"      <skipped message="{}"/>"#, attribute(why));
    }
    out.push_str("    </testcase>\n");
}

fn property(out: &mut String, indent: usize, name: &str, value: &str) {
    let _ = writeln!(
        out,
        r#"{:indent$}<property name="{}" value="{}"/>"#,
        "",
        attribute(name),
        attribute(value),
    );
}

/// Milliseconds as seconds with three decimals.
fn seconds(ms: u128) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Whether XML 1.0 allows the character in a document at all.
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r')
        || ('\u{20}'..='\u{D7FF}').contains(&c)
        || ('\u{E000}'..='\u{FFFD}').contains(&c)
        || c >= '\u{10000}'
}

/// `value` for an attribute in double quotes: line breaks and tabs as character
/// references, so that a reader gets them back and not spaces.
fn attribute(value: &str) -> String {
    escape(value, true)
}

/// `value` as the text of an element.
fn text(value: &str) -> String {
    escape(value, false)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // A reader turns a bare carriage return into a line feed.
            '\r' => out.push_str("&#13;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            c if allowed_in_xml(c) => out.push(c),
            _ => {}
        }
    }
    out
}

/// `time` as the timestamp of the JUnit schema: `YYYY-MM-DDTHH:MM:SS`, in UTC
/// (the schema has no zone).
fn timestamp(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    // The RFC 3339 form without its milliseconds and zone letter.
    let mut text = harness_sim::record::rfc3339_utc(secs, 0);
    text.truncate("YYYY-MM-DDTHH:MM:SS".len());
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Failure;

    fn outcome(display: &str, milestone: &str, items: &[&str]) -> Outcome {
        Outcome {
            display: display.into(),
            name: display.into(),
            items: items.iter().map(|s| s.to_string()).collect(),
            milestone: milestone.into(),
            failures: Vec::new(),
            elapsed_ms: 1250,
            context: None,
            skipped: None,
            credits_items: true,
        }
    }

    fn info() -> RunInfo {
        RunInfo {
            mode: RunMode::Strict,
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_650_000),
            elapsed: Duration::from_millis(61_005),
        }
    }

    #[test]
    fn texts_are_escaped_and_characters_that_xml_forbids_are_left_out() {
        assert_eq!(
            attribute("a<b>&\"c\"\n\td\r"),
            "a&lt;b&gt;&amp;&quot;c&quot;&#10;&#9;d&#13;"
        );
        assert_eq!(text("a\n\"b\"\t<c>"), "a\n\"b\"\t&lt;c&gt;");
        assert_eq!(
            text("\u{1b}[31mred\u{0}\u{7}\u{FFFE}\u{FFFF}é\u{10000}"),
            "[31mredé\u{10000}"
        );
    }

    #[test]
    fn suites_follow_the_milestones_then_recorded_then_the_unreadable() {
        let mut recorded = outcome("recorded/local-1.141.jsonl", "M1", &["R1"]);
        recorded.credits_items = false;
        let outcomes = [
            outcome("/tmp/bad.jsonl", "", &[]),
            recorded,
            outcome("m2/b.jsonl", "M2", &["R2"]),
            outcome("m1/a.jsonl", "M1", &["R4"]),
        ];
        let milestones = ["M1".to_string(), "M2".into(), "M3".into()];
        assert_eq!(
            suite_names(&outcomes, &milestones),
            ["M1", "M2", RECORDED_SUITE, UNREADABLE_SUITE]
        );
    }

    #[test]
    fn a_run_gives_counts_a_failure_with_its_first_difference_and_a_skip_with_its_reason() {
        let mut failed = outcome("m1/r4-null-cursor.jsonl", "M1", &["R4", "LOG-1"]);
        failed.failures = vec![
            Failure::at(5, "the frame differs").with_detail("--- expected\n+++ actual"),
            Failure::at(9, "a second one"),
        ];
        let mut skipped = outcome("m1/stop.jsonl", "M1", &["STOP"]);
        skipped.skipped = Some("it needs <a debug build>".into());
        skipped.elapsed_ms = 0;
        let passed = outcome("m2/x.jsonl", "M2", &["R2"]);
        let xml = render(
            &[failed, skipped, passed],
            &["M1".to_string(), "M2".into()],
            &info(),
        );
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcp-conformance (strict)\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"61.005\" timestamp=\"2026-12-07T"), "{xml}");
        assert!(
            xml.contains(
                r#"<testsuite name="M1" tests="2" failures="1" errors="0" skipped="1" time="1.250""#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<testsuite name="M2" tests="1" failures="0" errors="0" skipped="0" time="1.250""#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="m1/r4-null-cursor.jsonl [R4, LOG-1]" classname="M1" time="1.250">"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="item" value="LOG-1"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<failure message="m1/r4-null-cursor.jsonl:5: the frame differs" type="transcript">m1/r4-null-cursor.jsonl:5: the frame differs"#),
            "{xml}"
        );
        assert!(
            xml.contains("m1/r4-null-cursor.jsonl:9: a second one\n"),
            "{xml}"
        );
        assert!(xml.contains("    +++ actual\n"), "{xml}");
        assert!(
            xml.contains(r#"<skipped message="it needs &lt;a debug build&gt;"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="mode" value="strict"/>"#),
            "{xml}"
        );
    }

    #[test]
    fn timestamps_are_utc_dates_of_the_calendar() {
        assert_eq!(timestamp(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00");
        let leap_day = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723);
        assert_eq!(timestamp(leap_day), "2000-02-29T01:02:03");
        let new_year = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(timestamp(new_year), "2026-12-31T23:59:59");
    }
}
