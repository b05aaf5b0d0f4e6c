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
    #[cfg(windows)]
    {
        // A directory made now gets an access list of its own; one that was there
        // keeps the list that it has (the user may have changed it).
        let made_now = !dir.exists();
        builder.create(dir)?;
        if made_now {
            windows_acl::make_private(dir)?;
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        builder.create(dir)
    }
}

/// The access list of the token directory on Windows: only the account of the
/// bridge, with full control, inherited by the files of the directory, and nothing
/// inherited from its parents. `icacls` and `whoami` of the system set it: the
/// bridge forbids unsafe code, and these programs do what Win32 calls would.
#[cfg_attr(not(windows), allow(dead_code))]
mod windows_acl {
    use std::ffi::OsString;
    use std::path::Path;

    /// The security identifier of the account in the output of `whoami /user /fo
    /// csv /nh`: `"host\name","S-1-5-21-..."`.
    pub(super) fn sid_of_whoami(output: &str) -> Option<&str> {
        let sid = output.trim().rsplit(',').next()?.trim().trim_matches('"');
        let well_formed = sid.starts_with("S-1-")
            && sid
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-');
        well_formed.then_some(sid)
    }

    /// The arguments of `icacls` that give `dir` only the account `sid`: the
    /// inherited entries removed, one grant of full control that the files and
    /// folders in it inherit.
    pub(super) fn icacls_arguments(dir: &Path, sid: &str) -> Vec<OsString> {
        vec![
            dir.as_os_str().to_owned(),
            "/inheritance:r".into(),
            "/grant:r".into(),
            format!("*{sid}:(OI)(CI)F").into(),
            "/q".into(),
        ]
    }

    /// A program of the system directory, whatever `PATH` says.
    #[cfg(windows)]
    fn system_program(name: &str) -> std::path::PathBuf {
        match std::env::var_os("SystemRoot") {
            Some(root) => Path::new(&root).join("System32").join(name),
            None => name.into(),
        }
    }

    #[cfg(windows)]
    pub(super) fn make_private(dir: &Path) -> std::io::Result<()> {
        use std::process::{Command, Stdio};
        let failed = |what: &str| std::io::Error::other(format!("{what} failed"));
        let whoami = Command::new(system_program("whoami.exe"))
            .args(["/user", "/fo", "csv", "/nh"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()?;
        let text = String::from_utf8_lossy(&whoami.stdout);
        let sid = sid_of_whoami(&text)
            .filter(|_| whoami.status.success())
            .ok_or_else(|| failed("whoami /user"))?;
        let status = Command::new(system_program("icacls.exe"))
            .args(icacls_arguments(dir, sid))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(failed("icacls, which makes the directory private,"));
        }
        Ok(())
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

    #[test]
    fn the_windows_access_list_is_the_account_alone_with_nothing_inherited() {
        let sid = "S-1-5-21-1004336348-1177238915-682003330-512";
        let line = format!("\"desktop-1\\zoë smith\",\"{sid}\"\r\n");
        assert_eq!(windows_acl::sid_of_whoami(&line), Some(sid));
        assert_eq!(windows_acl::sid_of_whoami("\"a\",\"x\" & del *\""), None);
        assert_eq!(windows_acl::sid_of_whoami(""), None);
        let dir = Path::new("C:/Users/zoë smith/AppData/Local/mcp-bridge-rs/vscode/tokens");
        let arguments = windows_acl::icacls_arguments(dir, sid);
        assert_eq!(
            arguments,
            [
                dir.as_os_str(),
                "/inheritance:r".as_ref(),
                "/grant:r".as_ref(),
                format!("*{sid}:(OI)(CI)F").as_ref(),
                "/q".as_ref(),
            ]
        );
    }

    /// On Windows a new token directory has one entry in its access list, the
    /// account's, and none inherited: `icacls /save` writes the list as SDDL.
    #[cfg(windows)]
    #[test]
    fn on_windows_a_new_token_directory_is_private_to_the_account() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("tokens of zoë");
        make_private_dir(&dir).unwrap();
        let saved = base.path().join("acl.txt");
        let status = std::process::Command::new("icacls")
            .arg(&dir)
            .arg("/save")
            .arg(&saved)
            .status()
            .unwrap();
        assert!(status.success());
        let bytes = fs::read(&saved).unwrap();
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect();
        let text = String::from_utf16_lossy(&units);
        let sddl = text
            .lines()
            .find(|line| line.contains("D:"))
            .unwrap_or_else(|| panic!("no access list in {text:?}"));
        let dacl = &sddl[sddl.find("D:").unwrap()..];
        // P: protected, nothing inherited from the parents.
        assert!(dacl.starts_with("D:P"), "{dacl}");
        assert_eq!(dacl.matches("(A;").count(), 1, "{dacl}");
        // An inherited entry has the flag ID (`(A;OICIID;...)`).
        assert!(!dacl.contains("ID;"), "{dacl}");
        // The files made in it inherit the list.
        let file = dir.join("entry");
        fs::write(&file, b"x").unwrap();
        assert!(fs::read(&file).is_ok());
    }

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
