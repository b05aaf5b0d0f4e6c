//! The handling of client lines by a whole session: an in-process bridge with a
//! scripted upstream gets initialize, then the fuzzer's bytes as lines, then a
//! ping. The ping must be answered, every line on stdout must be a JSON-RPC
//! object, and the bridge must stop with exit code 0 after the end of stdin.
//!
//! The first byte picks how the upstream answers tools/call, prompts/get and
//! resources/read: at once, or first with a round of input requests (a form, a
//! URL, sampling and roots), so that the fuzzer's lines can answer `b-N`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge_vscode::config::{Config, Limits, UpstreamTarget};
use mcp_bridge_vscode::log::LogLevel;
use mcp_bridge_vscode::internals::upstream::memory::{MemoryConnector, MemoryPeer};
use mcp_bridge_vscode::internals::upstream::{Outgoing, UpstreamEvent};
use mcp_bridge_vscode::internals::wire::frame::Message;
use mcp_bridge_vscode::{Exit, serve};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::runtime::Runtime;

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn config() -> Config {
    Config {
        name: None,
        log_level: LogLevel::Err,
        discover_timeout: Duration::from_secs(60),
        // Small, so that the fuzzer reaches line_too_long.
        max_line_bytes: 2048,
        upstream: UpstreamTarget::Command {
            program: "fuzz-server".into(),
            args: vec![],
        },
        limits: Limits {
            max_in_flight: 8,
            ..Limits::default()
        },
    }
}

fn frame_of(outgoing: &Outgoing) -> Value {
    let mut line = Vec::new();
    outgoing.encode_into(&mut line);
    serde_json::from_slice(&line).expect("the bridge sends JSON upstream")
}

fn input_round() -> Value {
    json!({"resultType":"input_required","requestState":"s","inputRequests":{
        "form":{"method":"elicitation/create","params":{"message":"m","requestedSchema":
            {"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}}},
        "url":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com/a"}},
        "model":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
        "roots":{"method":"roots/list"}}})
}

/// Answers every request of the bridge, like a 2026-07-28 server.
async fn upstream(mut peer: MemoryPeer, rounds: bool) {
    while let Some(outgoing) = peer.frames.recv().await {
        let frame = frame_of(&outgoing);
        let Some(id) = frame.get("id").cloned() else {
            continue;
        };
        let method = frame["method"].as_str().unwrap_or_default();
        let first_round = frame["params"].get("requestState").is_none();
        let result = match method {
            "server/discover" => json!({"resultType":"complete","supportedVersions":["2026-07-28"],
                "capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{"subscribe":true},"logging":{}}}),
            "subscriptions/listen" => {
                let ack = json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
                    "params":{"notifications":frame["params"]["notifications"],
                        "_meta":{"io.modelcontextprotocol/subscriptionId":id}}});
                send(&peer, ack).await;
                continue;
            }
            "tools/call" | "prompts/get" | "resources/read" if rounds && first_round => {
                input_round()
            }
            "tools/call" => json!({"content":[{"type":"text","text":"ok"}]}),
            "tools/list" => {
                json!({"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"v":{"type":"array"}}}}],"nextCursor":null})
            }
            _ => json!({}),
        };
        send(&peer, json!({"jsonrpc":"2.0","id":id,"result":result})).await;
    }
}

async fn send(peer: &MemoryPeer, frame: Value) {
    let message = Message::classify(frame).expect("a valid frame");
    let _ = peer.events.send(UpstreamEvent::Message(message)).await;
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, lines)) = data.split_first() else {
        return;
    };
    let lines = lines.to_vec();
    runtime().block_on(async move {
        let (connector, mut peers) = MemoryConnector::new();
        let rounds = first % 2 == 1;
        let server = tokio::spawn(async move {
            while let Some(peer) = peers.recv().await {
                tokio::spawn(upstream(peer, rounds));
            }
        });
        let (mut input, bridge_input) = tokio::io::duplex(1 << 16);
        let (bridge_output, output) = tokio::io::duplex(1 << 16);
        let config = config();
        let bridge = tokio::spawn(async move {
            serve(&config, Arc::new(connector), bridge_input, bridge_output).await
        });
        let writer = tokio::spawn(async move {
            let start = concat!(
                r#"{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-11-25","#,
                r#""capabilities":{"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}}},"#,
                r#""clientInfo":{"name":"fuzz","version":"1"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            );
            input.write_all(start.as_bytes()).await?;
            input.write_all(&lines).await?;
            input
                .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-end\",\"method\":\"ping\"}\n")
                .await?;
            Ok::<_, std::io::Error>(input)
        });
        let mut output = BufReader::new(output).lines();
        let read = async {
            while let Some(line) = output.next_line().await.expect("stdout is UTF-8") {
                let frame: Value = serde_json::from_str(&line).expect("stdout is JSON");
                assert_eq!(frame["jsonrpc"], "2.0", "{line}");
                if frame["id"] == "fuzz-end" {
                    return;
                }
            }
            panic!("stdout ended before the answer to the last ping");
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the last ping got no answer in 10 s");
        let input = writer.await.expect("the writer").expect("stdin takes the lines");
        drop(input);
        // Stdout drains while the bridge stops.
        let drain = async { while let Ok(Some(_)) = output.next_line().await {} };
        let (exit, ()) = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::join!(bridge, drain)
        })
        .await
        .expect("the bridge did not stop in 10 s after the end of stdin");
        assert_eq!(exit.expect("the session did not panic"), Exit::EndOfInput);
        server.abort();
    });
});
