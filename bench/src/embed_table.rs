//! The rows of the embedded measurement (`--only embedded`): the same
//! calls on three paths of `bridge-embedded-server`, and whether the legacy path
//! inside the server costs less than the separate bridge process, as the issue
//! expects. A table of its own: the paths are not the direct and bridged sides of
//! the other rows.

use serde::Serialize;

use super::report::{Unit, aligned, ratio_text};
use super::stats::median;

/// The three paths of the embedded measurement, one column each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedPath {
    /// A 2026-07-28 client direct to `bridge-embedded-server`: rmcp's own
    /// transport, no bridge (the server alone).
    Modern,
    /// A 2025-11-25 client to `bridge-embedded-server`: its initialize selects
    /// the bridge in the server's process (the in-process link).
    Legacy,
    /// The same 2025-11-25 client to `mcp-bridge-vscode -- bridge-embedded-server`:
    /// the bridge as a process of its own, the server behind it on the modern path.
    Separate,
}

impl EmbedPath {
    /// The paths in the order of the columns.
    pub const ALL: [EmbedPath; 3] = [EmbedPath::Modern, EmbedPath::Legacy, EmbedPath::Separate];

    pub fn name(self) -> &'static str {
        match self {
            EmbedPath::Modern => "modern",
            EmbedPath::Legacy => "legacy",
            EmbedPath::Separate => "separate",
        }
    }
}

/// Which way a figure is better: lower for times and memory, higher for throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// The samples of the three paths (one per round).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trio {
    pub modern: Vec<f64>,
    pub legacy: Vec<f64>,
    pub separate: Vec<f64>,
}

impl Trio {
    pub fn push(&mut self, path: EmbedPath, value: f64) {
        match path {
            EmbedPath::Modern => self.modern.push(value),
            EmbedPath::Legacy => self.legacy.push(value),
            EmbedPath::Separate => self.separate.push(value),
        }
    }
}

/// One line of the embedded table: the medians of the three paths, their ratios,
/// and whether the legacy path is cheaper than the separate bridge process.
#[derive(Clone, Debug, Serialize)]
pub struct EmbedRow {
    /// A stable name for machines, e.g. `embedded.p50`.
    pub key: String,
    /// The text of the first column.
    pub label: String,
    pub unit: Unit,
    pub better: Better,
    pub modern: Option<f64>,
    pub legacy: Option<f64>,
    pub separate: Option<f64>,
    /// legacy / modern: what the bridge inside the server adds to the server alone.
    pub legacy_to_modern: Option<f64>,
    /// separate / modern: what the bridge process adds to the server alone.
    pub separate_to_modern: Option<f64>,
    /// legacy / separate.
    pub legacy_to_separate: Option<f64>,
    /// Whether the legacy path is better than the separate bridge process in the
    /// direction of [`Better`] (`None` without both figures).
    pub legacy_cheaper: Option<bool>,
    pub samples: Trio,
}

impl EmbedRow {
    /// A row of the medians of `samples`.
    pub fn new(key: &str, label: &str, unit: Unit, better: Better, samples: Trio) -> Self {
        let modern = median(&samples.modern);
        let legacy = median(&samples.legacy);
        let separate = median(&samples.separate);
        let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
        let legacy_cheaper = legacy.zip(separate).map(|(l, s)| match better {
            Better::Lower => l < s,
            Better::Higher => l > s,
        });
        Self {
            key: key.into(),
            label: label.into(),
            unit,
            better,
            modern,
            legacy,
            separate,
            legacy_to_modern: ratio(legacy, modern),
            separate_to_modern: ratio(separate, modern),
            legacy_to_separate: ratio(legacy, separate),
            legacy_cheaper,
            samples,
        }
    }

    fn cells(&self) -> Vec<String> {
        let figure = |value: Option<f64>| value.map_or_else(|| "-".into(), |v| self.unit.format(v));
        let ratio = |value: Option<f64>| value.map_or_else(|| "-".into(), ratio_text);
        let cheaper = match self.legacy_cheaper {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        vec![
            self.label.clone(),
            figure(self.modern),
            figure(self.legacy),
            figure(self.separate),
            ratio(self.legacy_to_modern),
            ratio(self.separate_to_modern),
            ratio(self.legacy_to_separate),
            cheaper.into(),
        ]
    }
}

/// The header of the embedded table.
pub const HEADER: [&str; 8] = [
    "measure",
    "modern",
    "legacy",
    "separate",
    "legacy/modern",
    "separate/modern",
    "legacy/separate",
    "legacy cheaper",
];

/// The table of `rows`, figures and ratios right-aligned.
pub fn table(rows: &[EmbedRow]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(EmbedRow::cells).collect();
    aligned(&HEADER, &cells, |i| i > 0 && i < HEADER.len() - 1)
}

/// The summary line under the table: in how many rows the legacy path is cheaper.
pub fn summary(rows: &[EmbedRow]) -> String {
    let compared: Vec<&EmbedRow> = rows.iter().filter(|r| r.legacy_cheaper.is_some()).collect();
    let cheaper = compared
        .iter()
        .filter(|r| r.legacy_cheaper == Some(true))
        .count();
    format!(
        "the legacy path inside the server costs less than the separate bridge process: {cheaper} of {} measures\n",
        compared.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::MIB;

    fn trio(modern: &[f64], legacy: &[f64], separate: &[f64]) -> Trio {
        Trio {
            modern: modern.to_vec(),
            legacy: legacy.to_vec(),
            separate: separate.to_vec(),
        }
    }

    #[test]
    fn a_row_takes_medians_and_ratios_of_the_three_paths() {
        let row = EmbedRow::new(
            "embedded.p50",
            "9 small echo, p50",
            Unit::Seconds,
            Better::Lower,
            trio(&[50e-6, 40e-6, 60e-6], &[70e-6, 80e-6, 60e-6], &[100e-6]),
        );
        assert_eq!(row.modern, Some(50e-6));
        assert_eq!(row.legacy, Some(70e-6));
        assert_eq!(row.separate, Some(100e-6));
        assert!((row.legacy_to_modern.unwrap() - 1.4).abs() < 1e-9);
        assert!((row.separate_to_modern.unwrap() - 2.0).abs() < 1e-9);
        assert!((row.legacy_to_separate.unwrap() - 0.7).abs() < 1e-9);
        assert_eq!(row.legacy_cheaper, Some(true));
    }

    #[test]
    fn cheaper_follows_the_direction_of_the_figure() {
        let faster = EmbedRow::new(
            "t",
            "throughput",
            Unit::PerSecond,
            Better::Higher,
            trio(&[100.0], &[90.0], &[80.0]),
        );
        assert_eq!(faster.legacy_cheaper, Some(true));
        let slower = EmbedRow::new(
            "t",
            "throughput",
            Unit::PerSecond,
            Better::Higher,
            trio(&[100.0], &[70.0], &[80.0]),
        );
        assert_eq!(slower.legacy_cheaper, Some(false));
        let heavier = EmbedRow::new(
            "m",
            "peak",
            Unit::Bytes,
            Better::Lower,
            trio(&[4.0 * MIB], &[9.0 * MIB], &[8.0 * MIB]),
        );
        assert_eq!(heavier.legacy_cheaper, Some(false));
        let missing = EmbedRow::new(
            "m",
            "peak",
            Unit::Bytes,
            Better::Lower,
            trio(&[4.0], &[], &[8.0]),
        );
        assert_eq!(missing.legacy_cheaper, None);
        assert_eq!(missing.legacy_to_separate, None);
    }

    #[test]
    fn the_table_names_the_paths_and_says_whether_the_legacy_path_is_cheaper() {
        let rows = vec![
            EmbedRow::new(
                "embedded.p50",
                "9 small echo, p50",
                Unit::Seconds,
                Better::Lower,
                trio(&[50e-6], &[70e-6], &[100e-6]),
            ),
            EmbedRow::new(
                "embedded.peak",
                "9 peak RSS",
                Unit::Bytes,
                Better::Lower,
                trio(&[4.0 * MIB], &[9.0 * MIB], &[8.0 * MIB]),
            ),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "measure             modern   legacy  separate  legacy/modern  separate/modern  legacy/separate  legacy cheaper"
        );
        assert_eq!(
            lines[1],
            "9 small echo, p50  50.0 µs  70.0 µs    100 µs           1.40             2.00             0.70  yes"
        );
        assert_eq!(
            lines[2],
            "9 peak RSS         4.0 MiB  9.0 MiB   8.0 MiB           2.25             2.00             1.12  NO"
        );
        assert_eq!(
            summary(&rows),
            "the legacy path inside the server costs less than the separate bridge process: 1 of 2 measures\n"
        );
    }
}
