//! The figures of mcp-remote's rounds. mcp-remote is not ours: when it
//! cannot complete a round (an error, a wrong answer, a hang past a time limit) the
//! other columns still run, and its rows say so instead of a figure, with what it
//! answered word for word in the notes. A figure is never made up.

use std::future::Future;

use tokio::time::Duration;

use crate::BenchError;
use crate::report::Row;

/// The samples of one row of mcp-remote, and why the rounds without one failed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemoteFigures {
    /// One figure per round that gave one.
    pub samples: Vec<f64>,
    /// What mcp-remote answered, per round that gave none.
    pub failures: Vec<String>,
}

/// Runs one round of mcp-remote with a time limit. The round pushes its figures in
/// order as it takes them; what it did not reach gets the reason it stopped.
pub async fn limited(
    limit: Duration,
    round: impl Future<Output = Result<(), BenchError>>,
) -> Option<String> {
    match tokio::time::timeout(limit, round).await {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(error.to_string()),
        Err(_) => Some(format!(
            "mcp-remote did not finish the round in {} s (a hang)",
            limit.as_secs()
        )),
    }
}

/// Where a round's `got` figures go: one per row in `rows` order; a row the round
/// did not reach gets `failure` (or, without one, that it gave no figure).
pub fn record(rows: &mut [&mut RemoteFigures], got: &[f64], failure: Option<&str>) {
    for (i, figures) in rows.iter_mut().enumerate() {
        match got.get(i) {
            Some(value) => figures.samples.push(*value),
            None => figures.failures.push(
                failure
                    .unwrap_or("mcp-remote gave no figure in this round")
                    .to_owned(),
            ),
        }
    }
}

/// `row` with `figures` as its mcp-remote column.
pub fn with(row: Row, figures: RemoteFigures) -> Row {
    row.with_remote(figures.samples, figures.failures)
}

/// The notes of the rows whose mcp-remote column has no figure: how many rounds
/// failed, and each different answer word for word.
pub fn failure_notes(rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for row in rows {
        let Some(remote) = &row.remote else { continue };
        if remote.failures.is_empty() {
            continue;
        }
        let rounds = remote.failures.len() + remote.samples.len();
        let mut answers: Vec<&str> = Vec::new();
        for failure in &remote.failures {
            if !answers.contains(&failure.as_str()) {
                answers.push(failure);
            }
        }
        notes.push(format!(
            "{}: mcp-remote gave no figure in {} of {rounds} rounds: {}",
            row.label,
            remote.failures.len(),
            answers.join(" | ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Pair, Unit};

    #[test]
    fn a_round_that_stops_leaves_its_reason_in_the_rows_it_did_not_reach() {
        let (mut p50, mut rate, mut peak) = Default::default();
        record(
            &mut [&mut p50, &mut rate, &mut peak],
            &[80e-6, 5000.0, 1e8],
            None,
        );
        record(
            &mut [&mut p50, &mut rate, &mut peak],
            &[90e-6],
            Some("timeout: no response in 120s"),
        );
        assert_eq!(
            p50,
            RemoteFigures {
                samples: vec![80e-6, 90e-6],
                failures: vec![]
            }
        );
        assert_eq!(rate.samples, [5000.0]);
        assert_eq!(rate.failures, ["timeout: no response in 120s"]);
        assert_eq!(peak.failures, ["timeout: no response in 120s"]);
    }

    #[test]
    fn a_failed_row_has_no_median_and_a_note_with_the_answer() {
        let row = Row::new(
            "url.throughput",
            "8 URL: echo throughput, 32 in flight",
            Unit::PerSecond,
            Pair {
                direct: vec![10_000.0],
                bridged: vec![9_000.0],
                relay: vec![],
            },
        );
        let failed = with(
            row.clone(),
            RemoteFigures {
                samples: vec![3_000.0],
                failures: vec!["the server closed the connection".into(); 2],
            },
        );
        let remote = failed.remote.as_ref().unwrap();
        assert_eq!(remote.median, None);
        assert_eq!(remote.bridged_better, None);
        assert_eq!(
            failure_notes(&[failed]),
            [
                "8 URL: echo throughput, 32 in flight: mcp-remote gave no figure in 2 of 3 rounds: the server closed the connection"
            ]
        );
        let complete = with(
            row,
            RemoteFigures {
                samples: vec![3_000.0, 4_000.0, 2_000.0],
                failures: vec![],
            },
        );
        assert_eq!(complete.remote.as_ref().unwrap().median, Some(3_000.0));
        assert_eq!(complete.remote.as_ref().unwrap().bridged_better, Some(true));
        assert!(failure_notes(&[complete]).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_past_its_limit_is_a_hang() {
        let hang = limited(Duration::from_millis(10), std::future::pending()).await;
        assert_eq!(
            hang.as_deref(),
            Some("mcp-remote did not finish the round in 0 s (a hang)")
        );
        let error = limited(Duration::from_secs(1), async { Err(BenchError::Closed) }).await;
        assert_eq!(error.as_deref(), Some("the server closed the connection"));
        assert_eq!(
            limited(Duration::from_secs(1), async { Ok(()) }).await,
            None
        );
    }
}
