//! `harness-sim relay -- <server command...>`: the floor of any process between a
//! client and a server. It passes the bytes of both directions through unchanged
//! with two blocking threads and no parsing, so `bench --floor` can show what one
//! more process on the path costs by itself, apart from what the bridge does.
//!
//! Its own stdin and stdout may be pipes or the ends of socket pairs (`bench
//! --stdio`): blocking reads and writes serve both, and a read returns 0 at the
//! shutdown of the client's writing side as at the close of a pipe. It gives the
//! server pipes, as the bridge gives its upstream, so that the two compare.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Starts `command`, relays stdin to it and its stdout back until its stdout ends;
/// returns its exit code (1 when it cannot start).
pub fn run(command: &[String]) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("harness-sim relay: the server command is empty");
        return 2;
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!("harness-sim relay: cannot start {program}: {error}");
            return 1;
        }
    };
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take())
    else {
        return 1;
    };
    // The end of our stdin closes the child's: the thread drops its end.
    std::thread::spawn(move || pump(&mut std::io::stdin().lock(), &mut to_child));
    pump(&mut from_child, &mut std::io::stdout().lock());
    child
        .wait()
        .ok()
        .and_then(|status| status.code())
        .unwrap_or(1)
}

/// Copies until the end of `from` or an error, writing each read at once.
fn pump(from: &mut impl Read, to: &mut impl Write) {
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if to.write_all(&buffer[..read]).is_err() || to.flush().is_err() {
            return;
        }
    }
}
