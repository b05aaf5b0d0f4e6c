//! The memory of a process as Linux reports it in /proc/<pid>/status, for the tests
//! that prove the bridge's memory stays flat under load.
#![allow(dead_code)]

/// The resident memory of a process in KiB (0 when it cannot be read).
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A figure of /proc/<pid>/status in KiB (VmRSS; VmHWM: the peak).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
