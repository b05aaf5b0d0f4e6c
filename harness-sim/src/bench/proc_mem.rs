//! The resident memory of a process, from `/proc/<pid>/status` (Linux).

/// Resident memory figures of one process, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss: u64,
    /// `VmHWM`: the peak resident set since the process started.
    pub peak: u64,
}

/// Reads the memory of process `pid`.
pub fn read(pid: u32) -> std::io::Result<Memory> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_status(&text).ok_or_else(|| {
        std::io::Error::other(format!("/proc/{pid}/status has no VmRSS and VmHWM lines"))
    })
}

/// `VmRSS` and `VmHWM` of the text of a `/proc/<pid>/status` file.
pub fn parse_status(text: &str) -> Option<Memory> {
    let mut rss = None;
    let mut peak = None;
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("VmRSS:") {
            rss = kib_value(value);
        } else if let Some(value) = line.strip_prefix("VmHWM:") {
            peak = kib_value(value);
        }
    }
    Some(Memory {
        rss: rss?,
        peak: peak?,
    })
}

/// `"\t   1234 kB"` as bytes.
fn kib_value(value: &str) -> Option<u64> {
    let number = value.trim().strip_suffix("kB")?.trim();
    number.parse::<u64>().ok()?.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_status_file() {
        let text = "Name:\tmcp-bridge-vscode\nVmPeak:\t  300000 kB\nVmHWM:\t    9216 kB\nVmRSS:\t    8192 kB\nThreads:\t3\n";
        assert_eq!(
            parse_status(text),
            Some(Memory {
                rss: 8192 * 1024,
                peak: 9216 * 1024
            })
        );
        assert_eq!(parse_status("VmRSS:\t 12 kB\n"), None);
        assert_eq!(parse_status("VmRSS:\t x kB\nVmHWM:\t 1 kB\n"), None);
    }

    #[test]
    fn reads_this_process() {
        let memory = read(std::process::id()).unwrap();
        assert!(memory.rss > 0 && memory.peak >= memory.rss);
    }
}
