//! An upstream that ends its lines with CRLF, as a stdio server on Windows may
//! (a console program's text mode): the bridge reads each line without its CR, and
//! what VS Code reads from the bridge ends every line with LF alone. Read here as
//! the raw bytes of the bridge's stdout, which a line reader would hide.

use crate::pipes::{EXCHANGE, bridge_exe, harness_sim_exe, initialize_frame};
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};

/// The scripted upstream whose discover result and first call result end in CRLF
/// (its `raw` action writes the text and LF: the text ends in CR).
fn crlf_upstream() -> Value {
    let discover = r#"{"jsonrpc":"2.0","id":{id},"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"crlf","version":"1"}}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"crlf {n}"}],"resultType":"complete"}}"#;
    json!({
        "on_discover": [{"raw": format!("{discover}\r")}],
        "calls": {"1": [{"raw": format!("{call}\r")}]},
    })
}

/// The bridge's stdin, its stdout, and every byte read from that stdout so far.
type Ends<'a> = (&'a mut ChildStdin, &'a mut ChildStdout, &'a mut Vec<u8>);

/// Writes `frames`, then reads stdout until a whole line holds `until`.
async fn exchange(ends: &mut Ends<'_>, frames: &[Value], until: &str) {
    let (stdin, stdout, output) = ends;
    let mut input = Vec::new();
    for frame in frames {
        input.extend_from_slice(frame.to_string().as_bytes());
        input.push(b'\n');
    }
    stdin.write_all(&input).await.unwrap();
    let read = async {
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(output).contains(until) || output.last() != Some(&b'\n') {
            let count = stdout.read(&mut buffer).await.unwrap();
            assert!(
                count > 0,
                "stdout ended: {:?}",
                String::from_utf8_lossy(output)
            );
            output.extend_from_slice(&buffer[..count]);
        }
    };
    if tokio::time::timeout(EXCHANGE, read).await.is_err() {
        panic!(
            "no {until:?} in time; stdout: {:?}",
            String::from_utf8_lossy(output)
        );
    }
}

#[tokio::test]
async fn the_cr_of_an_upstream_s_crlf_lines_never_reaches_the_bridge_s_stdout() {
    let mut bridge = tokio::process::Command::new(bridge_exe())
        .arg("--")
        .arg(harness_sim_exe())
        .arg("scripted-upstream")
        .arg(crlf_upstream().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the bridge starts");
    let mut stdin = bridge.stdin.take().unwrap();
    let mut stdout = bridge.stdout.take().unwrap();
    let mut output = Vec::new();
    let mut ends = (&mut stdin, &mut stdout, &mut output);
    exchange(&mut ends, &[initialize_frame()], "\"serverInfo\"").await;
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"anything","arguments":{}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    exchange(&mut ends, &[initialized, call], "crlf 1").await;
    assert!(
        !output.contains(&b'\r'),
        "a CR on the bridge's stdout: {:?}",
        String::from_utf8_lossy(&output)
    );
    let frames: Vec<Value> = output
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).expect("each line is one JSON frame"))
        .collect();
    let answer = |id: u64| frames.iter().find(|frame| frame["id"] == id);
    assert!(answer(1).is_some_and(|frame| frame.get("result").is_some()));
    assert_eq!(
        answer(2).map(|frame| &frame["result"]["content"][0]["text"]),
        Some(&json!("crlf 1"))
    );
    drop(stdin);
    let status = tokio::time::timeout(EXCHANGE, bridge.wait()).await;
    assert!(matches!(status, Ok(Ok(status)) if status.success()));
}
