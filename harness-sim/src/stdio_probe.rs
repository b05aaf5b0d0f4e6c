//! `harness-sim stdio-probe [--write FILE]` (hidden): a server that tells what its
//! stdin, stdout and stderr are, for the tests of what a client gives a server
//! ([`crate::server_stdio`]) and of the relays: one line, each of fds 0, 1 and 2
//! as `sock`, `fifo` or `other`, then `distinct` when they are three different
//! files, else `shared` (`sock sock sock distinct`). It writes the line on stdout,
//! or into FILE, and exits 0.

use std::io::Write;

/// The line of this process.
pub fn line() -> String {
    let files = [describe(0), describe(1), describe(2)];
    let kinds: Vec<&str> = files.iter().map(|(kind, _)| *kind).collect();
    let mut identities: Vec<Option<(u64, u64)>> = files.iter().map(|(_, id)| *id).collect();
    identities.sort_unstable();
    identities.dedup();
    let distinct = identities.len() == 3 && identities.iter().all(Option::is_some);
    format!(
        "{} {}",
        kinds.join(" "),
        if distinct { "distinct" } else { "shared" }
    )
}

/// Runs the probe with the arguments after its name; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let line = line();
    let written = match args {
        [] => {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{line}").and_then(|()| stdout.flush())
        }
        [flag, file] if flag == "--write" => std::fs::write(file, line),
        _ => {
            eprintln!("harness-sim stdio-probe: usage: harness-sim stdio-probe [--write FILE]");
            return 2;
        }
    };
    match written {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("harness-sim stdio-probe: {error}");
            1
        }
    }
}

/// The kind of fd `fd` and its (device, inode).
#[cfg(unix)]
fn describe(fd: i32) -> (&'static str, Option<(u64, u64)>) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // fstat through /proc would follow the link; the fd's own metadata is fstat.
    let metadata = match fd {
        0 => metadata_of(std::io::stdin()),
        1 => metadata_of(std::io::stdout()),
        _ => metadata_of(std::io::stderr()),
    };
    let Some(metadata) = metadata else {
        return ("other", None);
    };
    let kind = if metadata.file_type().is_socket() {
        "sock"
    } else if metadata.file_type().is_fifo() {
        "fifo"
    } else {
        "other"
    };
    (kind, Some((metadata.dev(), metadata.ino())))
}

#[cfg(unix)]
fn metadata_of(stream: impl std::os::fd::AsFd) -> Option<std::fs::Metadata> {
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    std::fs::File::from(fd).metadata().ok()
}

#[cfg(not(unix))]
fn describe(_fd: i32) -> (&'static str, Option<(u64, u64)>) {
    ("other", None)
}
