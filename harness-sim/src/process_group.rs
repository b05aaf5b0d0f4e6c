//! Whether a process group is gone: a server that a client starts runs in its own
//! group, and so does the upstream of the bridge; a stop must leave no process of
//! it (the stop sequence of the contract). [`crate::process::StdioPeer`], the tests
//! of the bridge and the conformance runner ask here.
//!
//! A killed process whose parent (the bridge) has exited stays a zombie until
//! the init process reaps it, and a zombie still answers a signal 0: on Linux the
//! process table of `/proc` tells the zombies apart, which count as gone.

/// Whether no live process is left in the group `id`.
#[cfg(unix)]
pub fn is_gone(id: u32) -> bool {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    let Ok(group) = i32::try_from(id) else {
        return true;
    };
    if matches!(
        killpg(Pid::from_raw(group), None),
        Err(nix::errno::Errno::ESRCH)
    ) {
        return true;
    }
    match live_members(id) {
        Some(live) => live == 0,
        None => false,
    }
}

/// Without process groups nothing can be asked: a group counts as gone.
#[cfg(not(unix))]
pub fn is_gone(_id: u32) -> bool {
    true
}

/// Kills what is left of the group `id`, if anything: for a test whose process
/// under test left processes behind, which must not outlive the test.
#[cfg(unix)]
pub fn kill_rest(id: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(group) = i32::try_from(id)
        && !is_gone(id)
    {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// Without process groups there is no group to kill.
#[cfg(not(unix))]
pub fn kill_rest(_id: u32) {}

/// How many processes of the group `id` are not zombies, from `/proc` (None
/// without it).
#[cfg(unix)]
fn live_members(id: u32) -> Option<usize> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut live = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((state, group)) = state_and_group(&stat)
            && group == id
            && state != 'Z'
        {
            live += 1;
        }
    }
    Some(live)
}

/// The state and the process group of a `/proc/<pid>/stat` line: the fields
/// after the command, which is in parentheses and may hold spaces.
#[cfg(any(unix, test))]
fn state_and_group(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stat_line_gives_the_state_and_the_group() {
        assert_eq!(
            state_and_group("4242 (mcp conformance) Z 1 4242 4242 0 -1"),
            Some(('Z', 4242))
        );
        assert_eq!(state_and_group("no parentheses"), None);
    }

    #[cfg(unix)]
    #[test]
    fn our_own_group_is_not_gone() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(!is_gone(u32::try_from(own).unwrap()));
    }
}
