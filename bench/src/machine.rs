//! The machine a run was on: date, cores, CPU, memory, kernel and load.

use serde::Serialize;

/// What a recorded run names of its machine.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// When the run started (UTC, RFC 3339).
    pub date: String,
    /// The cores this process may use (`nproc`).
    pub cores: usize,
    /// The `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// `MemTotal` of `/proc/meminfo`, in bytes.
    pub memory_bytes: u64,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
}

impl Machine {
    /// This machine, now.
    pub fn now() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        Self {
            date: harness_sim::record::rfc3339_utc_now(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu: cpu_model(&read("/proc/cpuinfo")).unwrap_or_else(|| "unknown CPU".into()),
            memory_bytes: mem_total(&read("/proc/meminfo")).unwrap_or(0),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
        }
    }
}

/// The load averages over 1, 5 and 15 minutes, from `/proc/loadavg`.
pub fn load() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map(|(_, model)| model.trim().to_owned())
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cpu_and_the_memory() {
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: x\n").as_deref(),
            Some("AMD EPYC 7B13")
        );
        assert_eq!(
            mem_total("MemTotal:       24683520 kB\nMemFree: 1 kB\n"),
            Some(24_683_520 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }
}
