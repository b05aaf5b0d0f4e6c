//! A scripted server: plays the server side of a frame file or recording.
//!
//! `harness-sim script-server FILE...` (hidden) reads the entries of the files
//! in order: for each `c2s` entry it reads one line from stdin (the client's
//! frame, not compared here: the tests compare what the client sent), for each
//! `s2c` entry it writes the frame (or the raw `line`) to stdout. After the last
//! entry it reads stdin until its end and exits 0. The tests use it to check
//! the simulators' frames against `shared/reference/vscode/frames/` and to
//! script misbehaving servers (a `nextCursor: null` loop).

use std::path::PathBuf;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::record::{Dir, Payload, Transcript};

/// Runs the script; returns the exit code.
pub async fn run_script_server(paths: &[PathBuf]) -> i32 {
    let mut entries = Vec::new();
    for path in paths {
        match Transcript::read(path) {
            Ok(transcript) => entries.extend(transcript.entries),
            Err(error) => {
                eprintln!("harness-sim script-server: {}: {error}", path.display());
                return 2;
            }
        }
    }
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut stdout = tokio::io::stdout();
    let mut line = Vec::new();
    for entry in entries {
        match entry.dir {
            Dir::C2s => {
                line.clear();
                match stdin.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return 0,
                    Ok(_) => {}
                }
            }
            Dir::S2c => {
                let mut bytes = match &entry.payload {
                    Payload::Frame(frame) => serde_json::to_vec(frame).unwrap_or_default(),
                    Payload::Line(text) => text.clone().into_bytes(),
                };
                bytes.push(b'\n');
                if stdout.write_all(&bytes).await.is_err() || stdout.flush().await.is_err() {
                    return 1;
                }
            }
            Dir::Stderr => {
                if let Payload::Line(text) = &entry.payload {
                    eprintln!("{text}");
                }
            }
        }
    }
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
    }
}
