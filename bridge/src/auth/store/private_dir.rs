//! The private directory of the file store and its writes, whole or not at all: a
//! synced temporary file next to its target, renamed or hard-linked to its name,
//! then a synced directory (the "Writes" of `file`).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Makes `dir` (and its parents) and keeps it private to the account.
pub(super) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        builder.mode(0o700);
        builder.create(dir)?;
        let metadata = fs::metadata(dir)?;
        if !metadata.is_dir() {
            return Err(std::io::Error::other("it is not a directory"));
        }
        if metadata.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        builder.create(dir)
    }
}

/// Creates `path` with `bytes` when it is not there, whole or not at all (a
/// synced temporary file, hard-linked to its name); `false` when it was there.
pub(super) fn create_if_absent(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    create_if_absent_with(dir, path, bytes, |from, to| fs::hard_link(from, to))
}

/// [`create_if_absent`] with `link` for the hard link: a test's file system
/// without hard links.
fn create_if_absent_with(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    link: impl Fn(&Path, &Path) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    let temporary = write_temporary(dir, path, bytes)?;
    let created = match link(&temporary, path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: a rename, which a writer at the same
        // moment could win.
        Err(_) if !path.exists() => fs::rename(&temporary, path).map(|()| true),
        Err(error) => Err(error),
    };
    let _ = fs::remove_file(&temporary);
    sync_dir(dir);
    created
}

/// Temporary file, fsync, rename, fsync of the directory.
pub(super) fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = write_temporary(dir, path, bytes)?;
    if let Err(error) = fs::rename(&temporary, path) {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    sync_dir(dir);
    Ok(())
}

/// A new private temporary file next to `path` with `bytes`, synced.
fn write_temporary(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|error| std::io::Error::other(error.to_string()))?;
    let stem = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{stem}.{:016x}.tmp", u64::from_le_bytes(suffix)));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let result = (|| {
        let mut file = options.open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(error) = result {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    Ok(temporary)
}

/// A writer finishes its temporary file in milliseconds: one older than this was
/// left by a process that was killed.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary files of writers that were killed before their rename.
pub(super) fn remove_stale_temporaries(dir: &Path) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for item in listing.flatten() {
        let name = item.file_name().to_string_lossy().into_owned();
        let stale = name.starts_with('.')
            && name.ends_with(".tmp")
            && item
                .metadata()
                .and_then(|metadata| metadata.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = fs::remove_file(item.path());
        }
    }
}

/// Makes a rename or a removal durable. Not every system syncs a directory (Windows
/// cannot open one): the rename itself is atomic there too.
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hard link of a file system that has none.
    fn no_hard_links(_: &Path, _: &Path) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// The names in `dir`.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn without_hard_links_a_rename_creates_the_file_only_when_it_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key-check");
        let created = create_if_absent_with(dir.path(), &path, b"first", no_hard_links);
        assert!(created.unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"first");
        assert_eq!(names(dir.path()), ["key-check"]);
        // Now it is there: the link's error, never a rename over it.
        let error = create_if_absent_with(dir.path(), &path, b"second", no_hard_links).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::Unsupported);
        assert_eq!(fs::read(&path).unwrap(), b"first");
        // No temporary file is left behind.
        assert_eq!(names(dir.path()), ["key-check"]);
    }
}
