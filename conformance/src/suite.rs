//! A set of transcripts: found in the transcripts folder (or named), checked
//! against the catalog, filtered, and run a few at a time.

use crate::catalog::Catalog;
use crate::format::{self, Body, StepKind, Transcript};
use crate::outcome::{Failure, Outcome};
use crate::runner::{self, Env};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many transcripts run at the same time: each is a bridge and a relay (and
/// a fixture), mostly waiting; a few wait on purpose for seconds (the watchdog,
/// the still-waiting lines), so the others need slots beside them.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 4)
        .unwrap_or(8)
        .clamp(4, 16)
}

/// A transcript, or the reason it cannot run (shown as a failed outcome).
pub type Loaded = Result<Transcript, Box<Outcome>>;

fn load_failure(display: String, message: String) -> Box<Outcome> {
    Box::new(Outcome {
        name: display.clone(),
        display,
        items: Vec::new(),
        milestone: String::new(),
        failures: vec![Failure {
            line: None,
            message,
            detail: None,
        }],
        elapsed_ms: 0,
        context: None,
        skipped: None,
        credits_items: true,
    })
}

/// Reads `files` (every transcript under `root` when empty) and checks their items
/// against the catalog.
pub fn load(root: &Path, files: &[PathBuf], catalog: &Catalog) -> Result<Vec<Loaded>, FolderError> {
    let files = if files.is_empty() {
        format::discover_files(root).map_err(|error| FolderError {
            folder: root.display().to_string(),
            error,
        })?
    } else {
        files.to_vec()
    };
    Ok(files
        .iter()
        .map(|path| {
            let transcript = format::read(path, root)
                .map_err(|e| load_failure(path.display().to_string(), e.to_string()))?;
            check_items(&transcript, catalog)
                .map_err(|problem| load_failure(transcript.display.clone(), problem.to_string()))?;
            Ok(transcript)
        })
        .collect())
}

/// Every item of a transcript has a cell in its milestone's column.
pub fn check_items(transcript: &Transcript, catalog: &Catalog) -> Result<(), ItemsProblem> {
    let header = &transcript.header;
    if header.items.is_empty() {
        return Err(ItemsProblem::None);
    }
    for id in &header.items {
        if catalog.item(id).is_none() {
            return Err(ItemsProblem::NotInCatalog(id.clone()));
        }
        if !catalog.has_cell(id, &header.milestone) {
            return Err(ItemsProblem::NoCell {
                item: id.clone(),
                milestone: header.milestone.clone(),
            });
        }
    }
    Ok(())
}

/// The transcripts folder cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{folder}: {error}")]
pub struct FolderError {
    folder: String,
    error: std::io::Error,
}

/// Why the items of a transcript do not fit the catalog.
#[derive(Debug, thiserror::Error)]
pub enum ItemsProblem {
    #[error("the transcript names no item of the catalog")]
    None,
    #[error("the item {0} is not in the catalog")]
    NotInCatalog(String),
    #[error("the catalog gives the item {item} no cell in the milestone {milestone}")]
    NoCell { item: String, milestone: String },
}

/// Whether a loaded transcript passes the filters.
pub fn selected(loaded: &Loaded, milestone: Option<&str>, item: Option<&str>) -> bool {
    match loaded {
        Ok(t) => {
            milestone.is_none_or(|m| t.header.milestone == m)
                && item.is_none_or(|i| t.header.items.iter().any(|x| x == i))
        }
        Err(_) => true,
    }
}

/// About how long a transcript waits on purpose (its sleeps and its long time
/// limits), so that the slow ones start first and the run ends sooner.
fn expected_wait_ms(loaded: &Loaded) -> u64 {
    let Ok(transcript) = loaded else {
        return 0;
    };
    let Body::Steps(steps) = &transcript.body else {
        return 0;
    };
    steps
        .iter()
        .map(|step| match step.kind {
            StepKind::Sleep(ms) => ms,
            _ => step.within_ms.filter(|ms| *ms > 3000).unwrap_or(0),
        })
        .sum()
}

/// The indexes of `loaded` in the order their runs start: the slow ones first,
/// so that the run ends sooner; with `fail_fast` the fast ones first, so that a
/// failure is known sooner. Ties keep the order of the input.
fn start_order(loaded: &[Loaded], fail_fast: bool) -> Vec<usize> {
    let mut order: Vec<(usize, u64)> = loaded
        .iter()
        .enumerate()
        .map(|(index, entry)| (index, expected_wait_ms(entry)))
        .collect();
    if fail_fast {
        order.sort_by_key(|(index, wait)| (*wait, *index));
    } else {
        order.sort_by_key(|(index, wait)| (std::cmp::Reverse(*wait), *index));
    }
    order.into_iter().map(|(index, _)| index).collect()
}

/// How a set of transcripts runs.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    /// How many transcripts run at the same time.
    pub jobs: usize,
    /// After the first failure no other transcript starts (those running end);
    /// the fast ones start first, so that a failure is known soon. For a search
    /// such as the mutation score, where one failure is the whole answer.
    pub fail_fast: bool,
}

const NOT_RUN_AFTER_FAILURE: &str = "not run: an earlier transcript failed (--fail-fast)";

/// Runs the transcripts, `jobs` at a time, the slow ones first (the fast ones
/// with `fail_fast`); the outcomes keep the input order.
pub async fn run_all(loaded: Vec<Loaded>, env: Env, plan: RunPlan) -> Vec<Outcome> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(plan.jobs.max(1)));
    let env = Arc::new(env);
    let one_failed = Arc::new(AtomicBool::new(false));
    let order = start_order(&loaded, plan.fail_fast);
    let mut entries: Vec<Option<Loaded>> = loaded.into_iter().map(Some).collect();
    let mut handles: Vec<Option<tokio::task::JoinHandle<Outcome>>> =
        entries.iter().map(|_| None).collect();
    for index in order {
        let Some(entry) = entries[index].take() else {
            continue;
        };
        let semaphore = semaphore.clone();
        let env = env.clone();
        let one_failed = one_failed.clone();
        // Each task takes its permit in the order of the spawns.
        let permit = semaphore.acquire_owned();
        handles[index] = Some(tokio::spawn(async move {
            let outcome = match entry {
                Err(outcome) => *outcome,
                Ok(transcript) => {
                    let _permit = permit.await;
                    if plan.fail_fast && one_failed.load(Ordering::Relaxed) {
                        return runner::not_run(&transcript, NOT_RUN_AFTER_FAILURE);
                    }
                    runner::run(&transcript, &env).await
                }
            };
            if outcome.failed() {
                one_failed.store(true, Ordering::Relaxed);
            }
            outcome
        }));
    }
    let handles = handles.into_iter().flatten();
    let mut outcomes = Vec::new();
    for handle in handles {
        match handle.await {
            Ok(outcome) => outcomes.push(outcome),
            Err(error) => outcomes.push(*load_failure(
                "?".into(),
                format!("the run panicked: {error}"),
            )),
        }
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(path: &str) -> Loaded {
        let root = crate::paths::transcripts_dir();
        Ok(format::read(&root.join(path), &root).unwrap())
    }

    #[test]
    fn the_slow_transcripts_start_first_and_with_fail_fast_last() {
        let set = vec![
            loaded("m1/r4-null-cursor.jsonl"),
            loaded("m1/stop-watchdog.jsonl"),
            loaded("m1/r2-ping-set-level.jsonl"),
            loaded("m1/log-still-waiting.jsonl"),
        ];
        let slow_first = start_order(&set, false);
        let fast_first = start_order(&set, true);
        assert_eq!(&slow_first[2..], &[0, 2]);
        assert_eq!(&fast_first[..2], &[0, 2]);
        let mut slow_ones = fast_first[2..].to_vec();
        slow_ones.sort_unstable();
        assert_eq!(slow_ones, vec![1, 3]);
    }

    #[test]
    fn the_slow_transcripts_are_known_by_their_waits() {
        assert!(expected_wait_ms(&loaded("m1/stop-watchdog.jsonl")) >= 9000);
        assert!(expected_wait_ms(&loaded("m1/log-still-waiting.jsonl")) >= 9000);
        assert_eq!(expected_wait_ms(&loaded("m1/r4-null-cursor.jsonl")), 0);
    }
}
