//! The conformance matrix: the items of the catalog as rows, the milestones as
//! columns, each cell `pass`, `FAIL`, `skip` (a transcript of the cell did not
//! run: not covered by this run) or `-` (not covered yet); a blank cell is a
//! milestone that added nothing to the item. Only transcripts whose expectations
//! come from the contract count: the recordings of `recorded/` are regression
//! replays (their failures still fail the run) and earn no cell.

use crate::catalog::Catalog;
use crate::outcome::Outcome;
use serde_json::{Map, Value, json};

/// One cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Pass,
    Fail,
    /// A transcript of the cell was skipped (it needs a debug build): the cell is
    /// not covered by this run, whatever the others say.
    Skipped,
    NotCovered,
    /// A documentation item (Q9): the docs cover it, no transcript can.
    Documentation,
    /// The item has no behaviour in this milestone.
    Blank,
    /// Every transcript of the cell cannot apply to another implementation, and a
    /// run in the contract's terms did not run them: neither a pass nor covered.
    NotApplicable,
}

impl Cell {
    pub fn text(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "FAIL",
            Self::Skipped => "skip",
            Self::NotCovered => "-",
            Self::Documentation => "doc",
            Self::Blank => "",
            Self::NotApplicable => "n/a",
        }
    }
}

/// The matrix of a run.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub milestones: Vec<String>,
    /// (id, requirement, cells in the order of `milestones`).
    pub rows: Vec<(String, String, Vec<Cell>)>,
    pub passed: usize,
    pub failed: usize,
    /// Transcripts that need a debug build of the bridge, against a release build.
    pub skipped: usize,
}

impl Matrix {
    /// Builds the matrix of `outcomes`, limited to `items` and `milestones` when given.
    pub fn build(
        catalog: &Catalog,
        outcomes: &[Outcome],
        only_item: Option<&str>,
        only_milestone: Option<&str>,
    ) -> Self {
        let milestones: Vec<String> = catalog
            .milestones
            .iter()
            .filter(|m| only_milestone.is_none_or(|only| only == m.as_str()))
            .cloned()
            .collect();
        let rows = catalog
            .items
            .iter()
            .filter(|item| only_item.is_none_or(|only| only == item.id))
            .map(|item| {
                let cells = milestones
                    .iter()
                    .map(|milestone| {
                        if !item.milestones.contains(milestone) {
                            return Cell::Blank;
                        }
                        let (not_applicable, covering): (Vec<&Outcome>, Vec<&Outcome>) = outcomes
                            .iter()
                            .filter(|o| o.credits_items)
                            .filter(|o| &o.milestone == milestone && o.items.contains(&item.id))
                            .partition(|o| crate::mode::is_not_applicable(o));
                        if covering.is_empty() && !not_applicable.is_empty() {
                            Cell::NotApplicable
                        } else if covering.is_empty() && item.kind == "documentation" {
                            Cell::Documentation
                        } else if covering.is_empty() {
                            Cell::NotCovered
                        } else if covering.iter().any(|o| o.failed()) {
                            Cell::Fail
                        } else if covering.iter().any(|o| o.skipped.is_some()) {
                            Cell::Skipped
                        } else {
                            Cell::Pass
                        }
                    })
                    .collect();
                (item.id.clone(), item.requirement.clone(), cells)
            })
            // With --milestone, the items that have nothing in that milestone go.
            .filter(|(_, _, cells): &(String, String, Vec<Cell>)| {
                cells.iter().any(|cell| *cell != Cell::Blank)
            })
            .collect();
        Self {
            milestones,
            rows,
            passed: outcomes.iter().filter(|o| o.passed()).count(),
            failed: outcomes.iter().filter(|o| o.failed()).count(),
            skipped: outcomes.iter().filter(|o| o.skipped.is_some()).count(),
        }
    }

    fn count(&self, cell: Cell) -> usize {
        self.rows
            .iter()
            .flat_map(|(_, _, cells)| cells)
            .filter(|c| **c == cell)
            .count()
    }

    /// "covered: N of M cells (pass P, FAIL F); by milestone: M1 a/b, ..." (the
    /// cells that are not applicable count for neither).
    pub fn coverage_line(&self) -> String {
        let cells = self.rows.len() * self.milestones.len()
            - self.count(Cell::Blank)
            - self.count(Cell::Documentation)
            - self.count(Cell::NotApplicable);
        let covered = self.count(Cell::Pass) + self.count(Cell::Fail);
        let by_milestone: Vec<String> = self
            .milestones
            .iter()
            .enumerate()
            .map(|(index, milestone)| {
                let column = || self.rows.iter().map(move |(_, _, cells)| cells[index]);
                let all = column()
                    .filter(|c| {
                        !matches!(c, Cell::Blank | Cell::Documentation | Cell::NotApplicable)
                    })
                    .count();
                let done = column()
                    .filter(|c| matches!(c, Cell::Pass | Cell::Fail))
                    .count();
                format!("{milestone} {done}/{all}")
            })
            .collect();
        let not_applicable = match self.count(Cell::NotApplicable) {
            0 => String::new(),
            count => format!(", {count} not applicable"),
        };
        format!(
            "items covered: {covered} of {cells} cells ({} pass, {} FAIL, {} not covered{not_applicable}); by milestone: {}",
            self.count(Cell::Pass),
            self.count(Cell::Fail),
            self.count(Cell::NotCovered) + self.count(Cell::Skipped),
            by_milestone.join(", ")
        )
    }

    /// The summary line: `N passed, N failed` (transcripts), and `, N skipped`
    /// when some did not run.
    pub fn summary_line(&self) -> String {
        if self.skipped > 0 {
            format!(
                "{} passed, {} failed, {} skipped",
                self.passed, self.failed, self.skipped
            )
        } else {
            format!("{} passed, {} failed", self.passed, self.failed)
        }
    }

    /// A plain-text table for a terminal.
    pub fn text(&self) -> String {
        const WIDTH: usize = 64;
        let id_width = self
            .rows
            .iter()
            .map(|(id, _, _)| id.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!("{:<id_width$}  {:<WIDTH$}", "Item", "Requirement");
        for milestone in &self.milestones {
            out.push_str(&format!("  {milestone:<4}"));
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
        out.push_str(&"-".repeat(id_width + 2 + WIDTH + 6 * self.milestones.len()));
        out.push('\n');
        for (id, requirement, cells) in &self.rows {
            out.push_str(&format!(
                "{id:<id_width$}  {:<WIDTH$}",
                shorten(requirement, WIDTH)
            ));
            for cell in cells {
                out.push_str(&format!("  {:<4}", cell.text()));
            }
            let trimmed = out.trim_end().len();
            out.truncate(trimmed);
            out.push('\n');
        }
        out
    }

    /// A Markdown table.
    pub fn markdown(&self) -> String {
        let mut out = String::from("| Item | Requirement |");
        for milestone in &self.milestones {
            out.push_str(&format!(" {milestone} |"));
        }
        out.push_str("\n|---|---|");
        out.push_str(&"---|".repeat(self.milestones.len()));
        out.push('\n');
        for (id, requirement, cells) in &self.rows {
            out.push_str(&format!("| {id} | {} |", requirement.replace('|', "\\|")));
            for cell in cells {
                out.push_str(&format!(" {} |", cell.text()));
            }
            out.push('\n');
        }
        out
    }

    pub fn to_json(&self, outcomes: &[Outcome]) -> Value {
        let items: Vec<Value> = self
            .rows
            .iter()
            .map(|(id, requirement, cells)| {
                let cells: Map<String, Value> = self
                    .milestones
                    .iter()
                    .zip(cells)
                    .filter(|(_, cell)| **cell != Cell::Blank)
                    .map(|(milestone, cell)| {
                        let text = match cell {
                            Cell::NotCovered => "not covered",
                            Cell::Skipped => "skipped",
                            Cell::Documentation => "documentation",
                            Cell::Fail => "fail",
                            Cell::NotApplicable => "not applicable",
                            _ => "pass",
                        };
                        (milestone.clone(), Value::from(text))
                    })
                    .collect();
                json!({"id": id, "requirement": requirement, "cells": cells})
            })
            .collect();
        json!({
            "milestones": self.milestones,
            "items": items,
            "transcripts": outcomes.iter().map(Outcome::to_json).collect::<Vec<_>>(),
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
        })
    }
}

fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width - 3).collect();
    out.push_str("...");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Item;

    fn outcome(items: &[&str], milestone: &str, passed: bool) -> Outcome {
        Outcome {
            display: "x".into(),
            name: "x".into(),
            items: items.iter().map(|s| s.to_string()).collect(),
            milestone: milestone.into(),
            failures: if passed {
                vec![]
            } else {
                vec![crate::outcome::Failure::at(1, "no")]
            },
            elapsed_ms: 0,
            context: None,
            skipped: None,
            credits_items: true,
        }
    }

    #[test]
    fn cells_are_pass_fail_not_covered_or_blank() {
        let catalog = Catalog {
            milestones: vec!["M1".into(), "M2".into()],
            items: vec![
                Item {
                    id: "R1".into(),
                    requirement: "r".into(),
                    milestones: vec!["M1".into(), "M2".into()],
                    kind: String::new(),
                    tests: Vec::new(),
                },
                Item {
                    id: "R4".into(),
                    requirement: "n".into(),
                    milestones: vec!["M1".into()],
                    kind: String::new(),
                    tests: Vec::new(),
                },
            ],
        };
        let outcomes = [
            outcome(&["R1"], "M1", true),
            outcome(&["R4"], "M1", true),
            outcome(&["R4"], "M1", false),
        ];
        let matrix = Matrix::build(&catalog, &outcomes, None, None);
        assert_eq!(matrix.rows[0].2, [Cell::Pass, Cell::NotCovered]);
        assert_eq!(matrix.rows[1].2, [Cell::Fail, Cell::Blank]);
        assert_eq!(matrix.summary_line(), "2 passed, 1 failed");
        assert!(
            matrix
                .coverage_line()
                .starts_with("items covered: 2 of 3 cells"),
            "{}",
            matrix.coverage_line()
        );
        assert!(matrix.text().contains("R4    n"), "{}", matrix.text());
        assert!(matrix.markdown().contains("| R1 | r | pass | - |"));
    }

    #[test]
    fn a_skip_or_a_recording_is_never_a_pass() {
        let catalog = Catalog {
            milestones: vec!["M1".into()],
            items: ["STOP", "R1", "R2"]
                .iter()
                .map(|id| Item {
                    id: (*id).into(),
                    requirement: "r".into(),
                    milestones: vec!["M1".into()],
                    kind: String::new(),
                    tests: Vec::new(),
                })
                .collect(),
        };
        let mut skipped = outcome(&["STOP"], "M1", true);
        skipped.skipped = Some("it needs a debug build".into());
        let mut recorded = outcome(&["R1"], "M1", true);
        recorded.credits_items = false;
        let outcomes = [skipped, outcome(&["STOP", "R2"], "M1", true), recorded];
        let matrix = Matrix::build(&catalog, &outcomes, None, None);
        assert_eq!(matrix.rows[0].2, [Cell::Skipped]);
        assert_eq!(matrix.rows[1].2, [Cell::NotCovered]);
        assert_eq!(matrix.rows[2].2, [Cell::Pass]);
        assert_eq!(matrix.summary_line(), "2 passed, 0 failed, 1 skipped");
        assert!(
            matrix
                .coverage_line()
                .starts_with("items covered: 1 of 3 cells (1 pass, 0 FAIL, 2 not covered)"),
            "{}",
            matrix.coverage_line()
        );
        assert!(matrix.text().contains("skip"), "{}", matrix.text());
    }

    #[test]
    fn a_cell_of_only_not_applicable_transcripts_is_neither_a_pass_nor_counted() {
        let catalog = Catalog {
            milestones: vec!["M5".into()],
            items: ["EMBED", "STOP"]
                .iter()
                .map(|id| Item {
                    id: (*id).into(),
                    requirement: "r".into(),
                    milestones: vec!["M5".into()],
                    kind: String::new(),
                    tests: Vec::new(),
                })
                .collect(),
        };
        let not_applicable = |items: &[&str]| {
            let mut outcome = outcome(items, "M5", true);
            outcome.skipped = Some(format!("{}it cannot apply", crate::mode::NOT_APPLICABLE));
            outcome
        };
        let outcomes = [
            not_applicable(&["EMBED"]),
            not_applicable(&["STOP"]),
            outcome(&["STOP"], "M5", true),
        ];
        let matrix = Matrix::build(&catalog, &outcomes, None, None);
        assert_eq!(matrix.rows[0].2, [Cell::NotApplicable]);
        // The transcript that applies earns the cell; the other one is left out.
        assert_eq!(matrix.rows[1].2, [Cell::Pass]);
        assert_eq!(
            matrix.coverage_line(),
            "items covered: 1 of 1 cells (1 pass, 0 FAIL, 0 not covered, 1 not applicable); by milestone: M5 1/1"
        );
        assert!(matrix.text().contains("n/a"), "{}", matrix.text());
        let json = matrix.to_json(&outcomes);
        assert_eq!(json["items"][0]["cells"]["M5"], "not applicable");
    }
}
