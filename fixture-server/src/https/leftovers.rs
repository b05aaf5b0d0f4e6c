//! The folders of the CA certificate that servers killed without a chance to clean
//! up left behind (`bridge-fixture-server-<pid>-<hex>` in the temporary directory):
//! tests and runners stop fixtures with SIGKILL, which no `Drop` outlives. Each start
//! of `--https` removes the folders whose process is gone (on Linux, where
//! `/proc/<pid>` says it); a folder of a live process, or of a name that is not
//! exactly that form, stays.

use std::path::Path;

/// The prefix of every folder that [`super::tls::generate`] makes.
pub const PREFIX: &str = "bridge-fixture-server-";

/// The pid of a folder name `bridge-fixture-server-<pid>-<8 hex digits>`.
fn pid_of(name: &str) -> Option<u32> {
    let (pid, suffix) = name.strip_prefix(PREFIX)?.split_once('-')?;
    let hex = suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (hex && digits).then(|| pid.parse().ok()).flatten()
}

/// Removes the folders under `dir` of processes that are gone; returns how many.
pub fn sweep(dir: &Path) -> usize {
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(pid_of) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir
            && !Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_form_names_a_pid() {
        assert_eq!(pid_of("bridge-fixture-server-4242-1f2e3d4c"), Some(4242));
        for other in [
            "bridge-fixture-server-4242",
            "bridge-fixture-server-x-1f2e3d4c",
            "bridge-fixture-server-4242-1f2e3d4",
            "bridge-fixture-server--1f2e3d4c",
            "other-4242-1f2e3d4c",
        ] {
            assert_eq!(pid_of(other), None, "{other}");
        }
    }

    #[test]
    fn the_folders_of_gone_processes_go_and_the_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        // A process that has exited: its pid names no process now.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let live = std::process::id();
        let make = |name: String| {
            let path = dir.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("ca.crt"), "x").unwrap();
            path
        };
        let of_gone = make(format!("{PREFIX}{gone}-0a0b0c0d"));
        let of_live = make(format!("{PREFIX}{live}-0a0b0c0d"));
        let unrelated = make(format!("{PREFIX}{gone}-notahexx"));
        assert_eq!(sweep(dir.path()), 1);
        assert!(!of_gone.exists());
        assert!(of_live.exists() && unrelated.exists());
    }
}
