//! The outcome of one transcript: pass, or the failures with their diffs.

use serde_json::{Value, json};
use similar::TextDiff;

/// One thing that went wrong in a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The line of the step, when a step failed (wire checks have none).
    pub line: Option<usize>,
    pub message: String,
    /// A unified diff of the expected and the actual frame, or the frame.
    pub detail: Option<String>,
}

impl Failure {
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            message: message.into(),
            detail: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// What one transcript did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The path relative to the transcripts folder.
    pub display: String,
    pub name: String,
    pub items: Vec<String>,
    pub milestone: String,
    pub failures: Vec<Failure>,
    pub elapsed_ms: u128,
    /// The last stderr lines of the bridge (and of the fixture), shown with a failure.
    pub context: Option<String>,
    /// Why the transcript did not run (it needs a debug build of the bridge).
    pub skipped: Option<String>,
    /// Whether the outcome counts for the cells of its items. A recording of
    /// harness-sim expects what the bridge wrote when it was recorded: it is a
    /// regression replay and earns no item credit.
    pub credits_items: bool,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.skipped.is_none()
    }

    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// The failures as text for a person: each with its line, its message and its diff.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for failure in &self.failures {
            match failure.line {
                Some(line) => {
                    out.push_str(&format!("{}:{line}: {}\n", self.display, failure.message))
                }
                None => out.push_str(&format!("{}: {}\n", self.display, failure.message)),
            }
            if let Some(detail) = &failure.detail {
                for line in detail.lines() {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        if let Some(context) = self.context.as_ref().filter(|_| !self.failures.is_empty()) {
            out.push_str(&format!("{}: the last stderr lines:\n", self.display));
            for line in context.lines() {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "path": self.display,
            "name": self.name,
            "items": self.items,
            "milestone": self.milestone,
            "passed": self.passed(),
            "skipped": self.skipped,
            "credits_items": self.credits_items,
            "elapsed_ms": self.elapsed_ms as u64,
            "failures": self.failures.iter().map(|f| json!({
                "line": f.line, "message": f.message, "detail": f.detail,
            })).collect::<Vec<_>>(),
        })
    }
}

/// A unified diff of two frames, pretty-printed (keys in their order).
pub fn diff(expected: &Value, actual: &Value, expected_label: &str, actual_label: &str) -> String {
    let pretty = |value: &Value| {
        let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
        text.push('\n');
        text
    };
    let (old, new) = (pretty(expected), pretty(actual));
    TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(4)
        .header(expected_label, actual_label)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_the_extra_member() {
        let text = diff(
            &json!({"id": 4, "result": {"tools": []}}),
            &json!({"id": 4, "result": {"tools": [], "nextCursor": null}}),
            "expected",
            "actual",
        );
        assert!(text.contains("--- expected"), "{text}");
        assert!(text.contains("+    \"nextCursor\": null"), "{text}");
    }
}
