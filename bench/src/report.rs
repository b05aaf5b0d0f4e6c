//! The rows of a bench run, the readable table and the JSON form.

use serde::Serialize;

use super::embed_table::{self, EmbedRow};
use super::frames::Side;
use super::machine::Machine;
use super::stats::median;
use super::targets::Target;
use harness_sim::server_stdio::StdioKind;

/// The unit of a row's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Seconds,
    Bytes,
    PerSecond,
}

impl Unit {
    /// A figure as text.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Seconds if value.abs() < 1e-3 => {
                let micros = value * 1e6;
                if micros.abs() >= 100.0 {
                    format!("{micros:.0} µs")
                } else {
                    format!("{micros:.1} µs")
                }
            }
            Unit::Seconds if value.abs() < 10.0 => {
                let millis = value * 1e3;
                if millis.abs() >= 10.0 {
                    format!("{millis:.1} ms")
                } else {
                    format!("{millis:.2} ms")
                }
            }
            Unit::Seconds => format!("{value:.2} s"),
            Unit::Bytes => format!("{:.1} MiB", value / MIB),
            Unit::PerSecond => format!("{}/s", thousands(value.round() as u64)),
        }
    }
}

/// A ratio with two decimals, or three significant digits below 0.1.
pub(crate) fn ratio_text(ratio: f64) -> String {
    if ratio.abs() < 0.1 && ratio != 0.0 {
        format!("{ratio:.3}")
    } else {
        format!("{ratio:.2}")
    }
}

/// A mebibyte as a float.
pub const MIB: f64 = 1024.0 * 1024.0;

fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// What the ratio of a row compares the bridged figure with.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "of", rename_all = "snake_case")]
pub enum RatioOf {
    /// bridged / direct.
    Direct,
    /// bridged / the size of the message (memory rows).
    Message { bytes: f64 },
    /// No ratio.
    None,
}

/// The samples of both sides (one per round, or per call), and of the relay with `--floor`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Pair {
    pub direct: Vec<f64>,
    pub bridged: Vec<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relay: Vec<f64>,
}

impl Pair {
    pub fn push(&mut self, side: Side, value: f64) {
        match side {
            Side::Direct => self.direct.push(value),
            Side::Bridged => self.bridged.push(value),
            Side::Relay => self.relay.push(value),
        }
    }
}

/// The figures of mcp-remote in a row of the URL form: the third column,
/// measured in the same run as the other two. A round it could not complete leaves
/// no figure: the cell says `failed` and the notes say what it answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Remote {
    /// The median of the rounds, when every round gave a figure.
    pub median: Option<f64>,
    /// One figure per round that gave one.
    pub samples: Vec<f64>,
    /// Why the rounds that gave no figure failed, word for word, one per round.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Whether the bridged figure is better than mcp-remote's (lower, or higher
    /// for calls per second); `None` without both figures.
    pub bridged_better: Option<bool>,
}

impl Remote {
    /// The cell of the mcp-remote column.
    fn cell(&self, unit: Unit) -> String {
        if !self.failures.is_empty() {
            let rounds = self.failures.len() + self.samples.len();
            return format!("failed ({} of {rounds})", self.failures.len());
        }
        self.median.map_or_else(|| "-".into(), |v| unit.format(v))
    }
}

/// One line of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// A stable name for machines, e.g. `latency.p50`.
    pub key: String,
    /// The text of the first column.
    pub label: String,
    pub unit: Unit,
    /// The median of the direct samples.
    pub direct: Option<f64>,
    /// The median of the bridged samples.
    pub bridged: Option<f64>,
    /// The median of the relay samples (`--floor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay: Option<f64>,
    pub ratio_of: RatioOf,
    pub ratio: Option<f64>,
    pub target: Option<Target>,
    pub met: Option<bool>,
    pub samples: Pair,
    /// mcp-remote's figures (the URL form only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<Remote>,
}

impl Row {
    /// A row of the medians of `samples`.
    pub fn new(key: &str, label: &str, unit: Unit, samples: Pair) -> Self {
        let direct = median(&samples.direct);
        let bridged = median(&samples.bridged);
        let relay = median(&samples.relay);
        Self {
            key: key.into(),
            label: label.into(),
            unit,
            direct,
            bridged,
            relay,
            ratio_of: RatioOf::Direct,
            ratio: direct.zip(bridged).map(|(d, b)| b / d),
            target: None,
            met: None,
            samples,
            remote: None,
        }
    }

    /// mcp-remote's figures beside the bridged ones: `samples` of the rounds it
    /// completed and `failures` (what it answered) of those it did not. Its median
    /// is given only when no round failed: a figure of some rounds is not the
    /// figure of the run.
    pub fn with_remote(mut self, samples: Vec<f64>, failures: Vec<String>) -> Self {
        let median = if failures.is_empty() {
            median(&samples)
        } else {
            None
        };
        let bridged_better = self.bridged.zip(median).map(|(bridged, remote)| {
            if self.unit == Unit::PerSecond {
                bridged > remote
            } else {
                bridged < remote
            }
        });
        self.remote = Some(Remote {
            median,
            samples,
            failures,
            bridged_better,
        });
        self
    }

    /// The ratio against a message of `bytes` instead of the direct figure.
    pub fn per_message(mut self, bytes: f64) -> Self {
        self.ratio_of = RatioOf::Message { bytes };
        self.ratio = self.bridged.map(|b| b / bytes);
        self
    }

    /// No ratio (figures that do not compare).
    pub fn without_ratio(mut self) -> Self {
        self.ratio_of = RatioOf::None;
        self.ratio = None;
        self
    }

    /// The target of the row, and whether the bridged figure meets it.
    pub fn with_target(mut self, target: Target) -> Self {
        self.met = self.bridged.and_then(|b| target.met(self.direct, b));
        self.target = Some(target);
        self
    }

    /// The cells of the row; with `floor`, the relay's figure and its ratio too;
    /// with `remote`, mcp-remote's figure and whether the bridged one is better.
    fn cells(&self, floor: bool, remote: bool) -> Vec<String> {
        let figure = |value: Option<f64>| value.map_or_else(|| "-".into(), |v| self.unit.format(v));
        let ratio = match (self.ratio, self.ratio_of) {
            (Some(r), RatioOf::Message { .. }) => format!("{}× msg", ratio_text(r)),
            (Some(r), _) => ratio_text(r),
            (None, _) => "-".into(),
        };
        let target = self
            .target
            .map_or_else(|| "-".into(), |t| t.describe(|v| self.unit.format(v)));
        let met = match self.met {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let mut cells = vec![self.label.clone(), figure(self.direct)];
        if floor {
            cells.push(figure(self.relay));
        }
        cells.push(figure(self.bridged));
        cells.push(ratio);
        if floor {
            let relay_ratio = match (self.relay, self.direct, self.ratio_of) {
                (Some(r), Some(d), RatioOf::Direct) => ratio_text(r / d),
                _ => "-".into(),
            };
            cells.push(relay_ratio);
        }
        cells.push(target);
        cells.push(met.into());
        if remote {
            let (figure, better) = match &self.remote {
                Some(remote) => (
                    remote.cell(self.unit),
                    match remote.bridged_better {
                        Some(true) => "met",
                        Some(false) => "not met",
                        None => "-",
                    },
                ),
                None => ("-".into(), "-"),
            };
            cells.push(figure);
            cells.push(better.into());
        }
        cells
    }
}

/// The result of a bench run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub machine: Machine,
    /// The command line of the run.
    pub command: String,
    pub bridge: String,
    pub fixture: String,
    /// `bridge-embedded-server`, when the run measured `embedded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<String>,
    /// Rounds of each measurement (direct and bridged alternate: ABBA...).
    pub rounds: usize,
    pub quick: bool,
    /// The stdin and stdout of the server on every side.
    pub stdio: StdioKind,
    /// `/proc/loadavg` before and after the run.
    pub load_before: String,
    pub load_after: String,
    /// The duration of the run in seconds.
    pub seconds: f64,
    pub rows: Vec<Row>,
    /// The rows of the embedded measurement: three paths, not two sides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub embedded_rows: Vec<EmbedRow>,
    /// How each figure was measured, and what a row needs to be read right.
    pub notes: Vec<String>,
}

impl Report {
    /// The readable form: a header, the table and the notes.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let m = &self.machine;
        out.push_str(&format!(
            "harness-bench, {}: {} cores ({}), {:.1} GiB, Linux {}\n",
            m.date,
            m.cores,
            m.cpu,
            m.memory_bytes as f64 / (1024.0 * MIB),
            m.kernel
        ));
        out.push_str(&format!("command: {}\n", self.command));
        out.push_str(&format!(
            "bridge:  {}\nfixture: {}\nstdio:   {} (the server's stdin and stdout on every side)\n",
            self.bridge, self.fixture, self.stdio
        ));
        if let Some(embedded) = &self.embedded {
            out.push_str(&format!("embedded: {embedded}\n"));
        }
        out.push_str(&format!(
            "load average (1, 5, 15 min): {} before, {} after; {} rounds{}, {:.0} s\n\n",
            self.load_before,
            self.load_after,
            self.rounds,
            if self.quick { " (--quick)" } else { "" },
            self.seconds
        ));
        if !self.rows.is_empty() {
            out.push_str(&table(&self.rows));
            let with_target: Vec<&Row> = self.rows.iter().filter(|r| r.met.is_some()).collect();
            let met = with_target.iter().filter(|r| r.met == Some(true)).count();
            out.push_str(&format!("\ntargets met: {met} of {}\n", with_target.len()));
            if let Some(line) = remote_summary(&self.rows) {
                out.push_str(&line);
            }
        }
        if !self.embedded_rows.is_empty() {
            if !self.rows.is_empty() {
                out.push('\n');
            }
            out.push_str(&embed_table::table(&self.embedded_rows));
            out.push('\n');
            out.push_str(&embed_table::summary(&self.embedded_rows));
        }
        for note in &self.notes {
            out.push_str(&format!("- {note}\n"));
        }
        out
    }

    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The line under the table that counts the rows where the bridge beats mcp-remote,
/// when any row compares them.
fn remote_summary(rows: &[Row]) -> Option<String> {
    let compared: Vec<bool> = rows
        .iter()
        .filter_map(|row| row.remote.as_ref())
        .map(|remote| remote.bridged_better == Some(true))
        .collect();
    let failed = rows
        .iter()
        .filter_map(|row| row.remote.as_ref())
        .filter(|remote| !remote.failures.is_empty())
        .count();
    if compared.is_empty() {
        return None;
    }
    let better = compared.iter().filter(|better| **better).count();
    let mut line = format!(
        "bridged better than mcp-remote: {better} of {}",
        compared.len()
    );
    if failed > 0 {
        line.push_str(&format!(
            " ({failed} without a figure of mcp-remote: see the notes)"
        ));
    }
    line.push('\n');
    Some(line)
}

/// The table of `rows` with aligned columns; with a relay figure in any row, the
/// relay's column and its ratio to direct (`floor`) too; with mcp-remote's figures
/// in any row, its column and `vs mcp-remote` last.
pub fn table(rows: &[Row]) -> String {
    let floor = rows.iter().any(|row| row.relay.is_some());
    let remote = rows.iter().any(|row| row.remote.is_some());
    let mut header: Vec<&str> = if floor {
        vec![
            "measure", "direct", "relay", "bridged", "ratio", "floor", "target", "met",
        ]
    } else {
        vec!["measure", "direct", "bridged", "ratio", "target", "met"]
    };
    let figures_end = header.len() - 2;
    if remote {
        header.extend(["mcp-remote", "vs mcp-remote"]);
    }
    // The figures and ratios are right-aligned, the rest left-aligned.
    let right = |i: usize| (i > 0 && i < figures_end) || (remote && i == figures_end + 2);
    let cells: Vec<Vec<String>> = rows.iter().map(|row| row.cells(floor, remote)).collect();
    aligned(&header, &cells, right)
}

/// A table of `header` and `cells` in aligned columns, two spaces apart; the
/// columns where `right` holds are right-aligned, the others left-aligned.
pub(crate) fn aligned(
    header: &[&str],
    cells: &[Vec<String>],
    right: impl Fn(usize) -> bool,
) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            let pad = width - cell.chars().count();
            if !right(i) {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
            out.push_str("  ");
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header);
    for row in cells {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&row));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(direct: &[f64], bridged: &[f64]) -> Pair {
        Pair {
            direct: direct.to_vec(),
            bridged: bridged.to_vec(),
            relay: Vec::new(),
        }
    }

    #[test]
    fn small_ratios_keep_their_digits() {
        assert_eq!(ratio_text(2.3456), "2.35");
        assert_eq!(ratio_text(0.00283), "0.003");
        assert_eq!(ratio_text(0.0), "0.00");
    }

    #[test]
    fn units_format_for_people() {
        assert_eq!(Unit::Seconds.format(42.34e-6), "42.3 µs");
        assert_eq!(Unit::Seconds.format(420.4e-6), "420 µs");
        assert_eq!(Unit::Seconds.format(4.2e-3), "4.20 ms");
        assert_eq!(Unit::Seconds.format(0.5123), "512.3 ms");
        assert_eq!(Unit::Seconds.format(12.0), "12.00 s");
        assert_eq!(Unit::Bytes.format(3.0 * MIB), "3.0 MiB");
        assert_eq!(Unit::PerSecond.format(1_234_567.4), "1,234,567/s");
        assert_eq!(Unit::PerSecond.format(999.0), "999/s");
    }

    #[test]
    fn rows_take_medians_ratios_and_targets() {
        let row = Row::new(
            "latency.p50",
            "small echo p50",
            Unit::Seconds,
            pair(&[50e-6, 40e-6, 60e-6], &[70e-6, 90e-6, 80e-6]),
        )
        .with_target(Target::RatioAndAbove {
            ratio: 1.5,
            above: 100e-6,
        });
        assert_eq!(row.direct, Some(50e-6));
        assert_eq!(row.bridged, Some(80e-6));
        assert!((row.ratio.unwrap() - 1.6).abs() < 1e-9);
        assert_eq!(row.met, Some(false));

        let memory = Row::new("m", "peak", Unit::Bytes, pair(&[], &[128.0 * MIB]))
            .per_message(64.0 * MIB)
            .with_target(Target::TimesMessage {
                times: 3.0,
                message: 64.0 * MIB,
            });
        assert_eq!(memory.ratio, Some(2.0));
        assert_eq!(memory.met, Some(true));
        assert_eq!(memory.cells(false, false)[3], "2.00× msg");
    }

    #[test]
    fn the_table_aligns_its_columns() {
        let rows = vec![
            Row::new(
                "a",
                "small echo p50",
                Unit::Seconds,
                pair(&[50e-6], &[80e-6]),
            )
            .with_target(Target::RatioAtMost { ratio: 1.5 }),
            Row::new("b", "idle RSS", Unit::Bytes, pair(&[], &[6.0 * MIB]))
                .without_ratio()
                .with_target(Target::AtMost { limit: 10.0 * MIB }),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("measure"));
        assert!(
            lines[1].contains("50.0 µs") && lines[1].contains("1.60") && lines[1].ends_with("NO")
        );
        assert!(lines[2].contains("6.0 MiB") && lines[2].ends_with("yes"));
        // Right-aligned figures end in the same column.
        let end = |line: &str, cell: &str| {
            let at = line.find(cell).unwrap() + cell.len();
            line[..at].chars().count()
        };
        assert_eq!(end(lines[0], "bridged"), end(lines[1], "80.0 µs"));
        assert_eq!(end(lines[0], "bridged"), end(lines[2], "6.0 MiB"));
    }

    #[test]
    fn mcp_remote_comes_last_with_whether_the_bridge_beats_it() {
        let rows = vec![
            Row::new("p", "p50", Unit::Seconds, pair(&[50e-6], &[60e-6]))
                .with_target(Target::RatioAtMost { ratio: 1.2 })
                .with_remote(vec![4e-3], vec![]),
            Row::new("t", "rate", Unit::PerSecond, pair(&[1000.0], &[900.0]))
                .with_remote(vec![1200.0], vec![]),
            Row::new("m", "peak", Unit::Bytes, pair(&[], &[10.0 * MIB]))
                .without_ratio()
                .with_remote(vec![], vec!["the server closed the connection".into()]),
            Row::new("s", "stdio row", Unit::Seconds, pair(&[1e-3], &[2e-3])),
        ];
        assert_eq!(
            table(&rows),
            "measure     direct   bridged  ratio  target  met       mcp-remote  vs mcp-remote\n\
             p50        50.0 µs   60.0 µs   1.20  ≤ 1.2×  yes          4.00 ms  met\n\
             rate       1,000/s     900/s   0.90  -       -            1,200/s  not met\n\
             peak             -  10.0 MiB      -  -       -    failed (1 of 1)  -\n\
             stdio row  1.00 ms   2.00 ms   2.00  -       -                  -  -\n"
        );
        assert_eq!(
            remote_summary(&rows).unwrap(),
            "bridged better than mcp-remote: 1 of 3 (1 without a figure of mcp-remote: see the notes)\n"
        );
        assert_eq!(remote_summary(&rows[3..]), None);
    }

    #[test]
    fn the_floor_adds_the_relay_and_its_ratio() {
        let mut samples = pair(&[50e-6], &[80e-6]);
        samples.relay = vec![60e-6];
        let rows = vec![Row::new("a", "small echo p50", Unit::Seconds, samples)];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        let header: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            header,
            [
                "measure", "direct", "relay", "bridged", "ratio", "floor", "target", "met"
            ]
        );
        assert!(lines[1].contains("60.0 µs") && lines[1].contains("1.20"));
    }
}
