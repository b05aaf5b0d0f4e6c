//! A set of transcripts: found in the transcripts folder (or named), checked
//! against the catalog, filtered, and run a few at a time.

use crate::catalog::Catalog;
use crate::format::{self, Transcript};
use crate::outcome::{Failure, Outcome};
use crate::runner::{self, Env};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many transcripts run at the same time: each is a bridge and a relay (and
/// a fixture), mostly waiting.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(4)
        .clamp(2, 8)
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
pub fn load(root: &Path, files: &[PathBuf], catalog: &Catalog) -> Result<Vec<Loaded>, String> {
    let files = if files.is_empty() {
        format::discover_files(root).map_err(|e| format!("{}: {e}", root.display()))?
    } else {
        files.to_vec()
    };
    Ok(files
        .iter()
        .map(|path| {
            let transcript = format::read(path, root)
                .map_err(|e| load_failure(path.display().to_string(), e.to_string()))?;
            check_items(&transcript, catalog)
                .map_err(|message| load_failure(transcript.display.clone(), message))?;
            Ok(transcript)
        })
        .collect())
}

/// Every item of a transcript has a cell in its milestone's column.
pub fn check_items(transcript: &Transcript, catalog: &Catalog) -> Result<(), String> {
    let header = &transcript.header;
    if header.items.is_empty() {
        return Err("the transcript names no item of the catalog".into());
    }
    for id in &header.items {
        if catalog.item(id).is_none() {
            return Err(format!("the item {id} is not in the catalog"));
        }
        if !catalog.has_cell(id, &header.milestone) {
            return Err(format!(
                "the catalog gives the item {id} no cell in the milestone {}",
                header.milestone
            ));
        }
    }
    Ok(())
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

/// Runs the transcripts, `jobs` at a time; the outcomes keep the input order.
pub async fn run_all(loaded: Vec<Loaded>, env: Env, jobs: usize) -> Vec<Outcome> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let env = Arc::new(env);
    let mut handles = Vec::new();
    for entry in loaded {
        let semaphore = semaphore.clone();
        let env = env.clone();
        handles.push(tokio::spawn(async move {
            match entry {
                Err(outcome) => *outcome,
                Ok(transcript) => {
                    let _permit = semaphore.acquire().await;
                    runner::run(&transcript, &env).await
                }
            }
        }));
    }
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
