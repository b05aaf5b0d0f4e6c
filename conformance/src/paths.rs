//! Where the data is: the transcripts folder of this workspace.

use std::path::PathBuf;

/// `transcripts/` of the workspace this crate was built in.
pub fn transcripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|root| root.join("transcripts"))
        .unwrap_or_else(|| PathBuf::from("transcripts"))
}
