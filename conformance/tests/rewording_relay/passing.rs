//! The trials of the relay as a process, around small shell commands in place of
//! a bridge: what goes in comes out rewritten line by line, the bridge's end is
//! the relay's end (its exit code, its death by a signal), and a termination
//! signal reaches the bridge.

use crate::check_eq;
use libtest_mimic::{Failed, Trial};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

/// The relay (with rewording) around `sh -c script`, `input` on its stdin.
fn relay_sh(script: &str, input: &[u8]) -> Result<Output, Failed> {
    let relay = std::env::current_exe().map_err(|error| error.to_string())?;
    let mut child = Command::new(relay)
        .args([crate::RELAY_ARG, "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| error.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    stdin.write_all(input).map_err(|error| error.to_string())?;
    drop(stdin);
    child
        .wait_with_output()
        .map_err(|error| error.to_string().into())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "relay: stdin reaches the bridge unchanged, to its end",
            || {
                let input = b"{\"id\":1}\r\nnot a frame\n{\"last\":true}";
                let output = relay_sh("cat >&2", input)?;
                // The upstream's lines (without the bridge's prefix) stay on stderr.
                check_eq(text(&output.stderr), text(input))
            },
        ),
        Trial::test(
            "relay: stdout lines are rewritten with their ends kept",
            || {
                let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no zebra here\"}}\r\nUsage: the bridge\n{\"id\":2,\"result\":{}}";
                let output = relay_sh("cat", input)?;
                check_eq(
                    text(&output.stdout),
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"on arbez ereh\"}}\r\nUsage: eht egdirb\n{\"id\":2,\"result\":{}}",
                )
            },
        ),
        Trial::test(
            "relay: stderr lines of the bridge keep their scope and level",
            || {
                let output = relay_sh(
                    "echo 'mcp-bridge-vscode: bridge: warning: the sky fell' >&2; echo 'mcp-bridge-vscode: bridge: info: the upstream server is ready' >&2",
                    b"",
                )?;
                check_eq(
                    text(&output.stderr),
                    "mcp-bridge-vscode: bridge: warning: eht yks llef\nmcp-bridge-vscode: bridge: info: the upstream server is ready\n",
                )
            },
        ),
        Trial::test("relay: the bridge's exit code is the relay's", || {
            let output = relay_sh("exit 7", b"")?;
            check_eq(format!("{:?}", output.status.code()), "Some(7)")
        }),
        Trial::test(
            "relay: the bridge's death by a signal is the relay's",
            || {
                let output = relay_sh("kill -s TERM $$", b"")?;
                check_eq(format!("{:?}", output.status.signal()), "Some(15)")
            },
        ),
        Trial::test(
            "relay: SIGTERM reaches the bridge",
            sigterm_reaches_the_bridge,
        ),
    ]
}

/// The relay (without rewording) around a shell that answers SIGTERM with a
/// line and the exit code 3: the relay gets the signal, the shell answers.
fn sigterm_reaches_the_bridge() -> Result<(), Failed> {
    let relay = std::env::current_exe().map_err(|error| error.to_string())?;
    let script = "trap 'echo got TERM; exit 3' TERM; echo started; while :; do sleep 0.05; done";
    let mut child = Command::new(relay)
        .args([crate::RELAY_ARG, "--no-rewording", "sh", "-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| error.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let checked = (|| {
        let mut stdout = std::io::BufReader::new(stdout);
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).map_err(|error| error.to_string())?;
        check_eq(&line, "started\n")?;
        let pid = i32::try_from(child.id()).map_err(|error| error.to_string())?;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )
        .map_err(|error| error.to_string())?;
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).map_err(|error| error.to_string())?;
        let status = child.wait().map_err(|error| error.to_string())?;
        check_eq(format!("{:?} {rest}", status.code()), "Some(3) got TERM\n")
    })();
    // A relay that a failed check left running.
    let _ = child.kill();
    let _ = child.wait();
    checked
}
