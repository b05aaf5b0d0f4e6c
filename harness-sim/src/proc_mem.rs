//! The resident memory of a process, from `/proc/<pid>/status` (Linux), and of a
//! process with its descendants (the bridge and the server it starts).

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

/// The memory of process `pid` and of all its descendants, summed: the resident
/// set of the whole tree now, and the sum of the peaks of its processes (each
/// process's own peak; they need not have come at the same moment, so this is an
/// upper bound of the tree's peak).
pub fn read_tree(pid: u32) -> std::io::Result<Memory> {
    let mut total = read(pid)?;
    for descendant in tree(pid)?.into_iter().skip(1) {
        // A descendant that exits between the scan and the read is not counted.
        if let Ok(memory) = read(descendant) {
            total.rss += memory.rss;
            total.peak += memory.peak;
        }
    }
    Ok(total)
}

/// `pid` and its descendants, parents first, from the parent ids of
/// `/proc/<pid>/stat` (this kernel has no `/proc/<pid>/task/<tid>/children`).
pub fn tree(pid: u32) -> std::io::Result<Vec<u32>> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A process that exits during the scan has no stat any more.
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat"))
            && let Some(parent) = parent_of(&stat)
        {
            parents.push((child, parent));
        }
    }
    Ok(descendants(pid, &parents))
}

/// `root` and every process below it in the `(pid, parent pid)` pairs, parents first.
pub fn descendants(root: u32, parents: &[(u32, u32)]) -> Vec<u32> {
    let mut found = vec![root];
    let mut next = 0;
    while let Some(&parent) = found.get(next) {
        let mut children: Vec<u32> = parents
            .iter()
            .filter(|&&(pid, ppid)| ppid == parent && pid != root && !found.contains(&pid))
            .map(|&(pid, _)| pid)
            .collect();
        children.sort_unstable();
        found.extend(children);
        next += 1;
    }
    found
}

/// The parent pid of the text of a `/proc/<pid>/stat` file: the second field after
/// the command name, which is in parentheses and may hold spaces and parentheses.
pub fn parent_of(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
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
    fn the_parent_pid_follows_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(
            parent_of("4242 (mcp-bridge-vscode) S 4100 4242 4100 0 -1 4194560 2 0"),
            Some(4100)
        );
        assert_eq!(parent_of("77 (a) b (c)) R 1 77 77 0"), Some(1));
        assert_eq!(parent_of("77 (no end"), None);
        assert_eq!(parent_of("77 (a) S x"), None);
    }

    #[test]
    fn descendants_come_parents_first_without_other_trees() {
        // 10 -> 11 -> 13, 10 -> 12; 20 -> 21 is another tree; 30's parent is 1.
        let parents = [(11, 10), (12, 10), (13, 11), (21, 20), (30, 1), (10, 1)];
        assert_eq!(descendants(10, &parents), vec![10, 11, 12, 13]);
        assert_eq!(descendants(20, &parents), vec![20, 21]);
        assert_eq!(descendants(99, &parents), vec![99]);
    }

    #[test]
    fn the_tree_of_this_process_holds_a_child_it_started() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let tree = tree(std::process::id()).unwrap();
        assert_eq!(tree[0], std::process::id());
        assert!(tree.contains(&child.id()), "{tree:?}");
        let alone = read(std::process::id()).unwrap();
        let whole = read_tree(std::process::id()).unwrap();
        assert!(whole.peak > alone.peak, "{whole:?} {alone:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn reads_this_process() {
        let memory = read(std::process::id()).unwrap();
        assert!(memory.rss > 0 && memory.peak >= memory.rss);
    }
}
