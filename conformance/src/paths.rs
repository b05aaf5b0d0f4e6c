//! Where the data is: the transcripts folder that this crate was built with.

use std::path::{Path, PathBuf};

/// `transcripts/` of this crate: in the workspace a link to the workspace's
/// `transcripts/`, in the published crate (`cargo install mcp-conformance`) the copy
/// that the package carries. Where the link is a plain file (a checkout without
/// symbolic links, as Git makes on Windows by default), the workspace's folder.
pub fn transcripts_dir() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let packaged = crate_dir.join("transcripts");
    if packaged.is_dir() {
        return packaged;
    }
    crate_dir
        .parent()
        .map(|root| root.join("transcripts"))
        .unwrap_or(packaged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcripts_are_found_with_their_catalog_and_schemas() {
        let dir = transcripts_dir();
        assert!(dir.join("catalog.json").is_file(), "{}", dir.display());
        assert!(dir.join("schema/2026-07-28.schema.json").is_file());
        assert!(dir.join("m1").is_dir());
    }
}
