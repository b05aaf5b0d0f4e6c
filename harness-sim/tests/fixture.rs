//! Each profile against the fixture server directly. The fixture answers
//! server/discover, so the Copilot profiles take the modern path (MRTR rounds
//! from 1.0.92); it speaks only 2026-07-28, so the Local harness gets -32601
//! for initialize (seed: "A zig-sdk server on stdio answers its initialize
//! with -32601"), shown as VS Code shows it.

use crate::common;

use common::{accepting_policy, client, fixture, result_text};
use harness_sim::client::{CallOutcome, EventKind, StopStep, WirePath};
use harness_sim::{Profile, SimError};
use serde_json::{Value, json};

#[tokio::test]
async fn copilot_profiles_take_the_modern_path_and_call_the_tools() {
    for profile in [
        Profile::Copilot089,
        Profile::Copilot092,
        Profile::Copilot095,
    ] {
        let mut client = client(profile, &[fixture()], accepting_policy());
        let negotiated = client.start().await.unwrap();
        assert_eq!(negotiated.path, WirePath::Modern, "{profile}");
        assert_eq!(
            negotiated.server_info["name"],
            json!("bridge-fixture-server")
        );
        assert!(negotiated.instructions.is_some());
        let names = client.tool_names();
        for tool in ["add", "echo", "toggle", "toggled", "ask_form"] {
            assert!(
                names.iter().any(|n| n == tool),
                "{profile}: no {tool} in {names:?}"
            );
        }
        let add = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(result_text(&add), "5");
        let echo = client
            .call_tool("echo", json!({"text": "hello"}))
            .await
            .unwrap();
        assert_eq!(result_text(&echo), "hello");
        // The list change arrives on the listen stream before the result, and
        // copilot-cli lists again before the next call.
        let toggle = client
            .call_tool("toggle", json!({"enabled": false}))
            .await
            .unwrap();
        assert_eq!(result_text(&toggle), "tool toggled: disabled");
        assert!(
            !client.tool_names().iter().any(|n| n == "toggled"),
            "{profile}: toggled still listed"
        );

        let form = client.call_tool("ask_form", json!({})).await.unwrap();
        if profile.has_mrtr() {
            let text = result_text(&form);
            assert!(
                text.starts_with("form: accept") && text.contains("Ada"),
                "{profile}: {text}"
            );
            let url = client.call_tool("ask_url", json!({})).await.unwrap();
            assert_eq!(result_text(&url), "url: accept");
            let sample = client.call_tool("sample", json!({})).await.unwrap();
            assert_eq!(result_text(&sample), "model: Hello!");
        } else {
            match form {
                CallOutcome::Failed { message } => {
                    assert!(message.contains("no multi round-trip"), "{message}")
                }
                other => panic!("{profile}: ask_form completed without MRTR: {other:?}"),
            }
        }
        modern_frames_carry_the_meta(profile, &client.peer().sent_frames());
        let stop = client.stop().await;
        assert_ne!(stop.step, StopStep::NotExited);
        assert!(stop.group_gone);
    }
}

/// Every request of the modern path has the 2026-07-28 `_meta`, and the
/// progress token counts up from 0 after discover.
fn modern_frames_carry_the_meta(profile: Profile, frames: &[Value]) {
    let mut expected_token = 0;
    for frame in frames
        .iter()
        .filter(|f| f.get("id").is_some() && f.get("method").is_some())
    {
        let meta = &frame["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            json!("2026-07-28"),
            "{frame}"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["version"],
            json!(profile.client_version())
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"]
                .get("roots")
                .is_none()
        );
        if frame["method"] == json!("server/discover") {
            assert_eq!(frame["id"], json!(0));
            continue;
        }
        assert_eq!(meta["progressToken"], json!(expected_token), "{frame}");
        expected_token += 1;
    }
    let listen = frames
        .iter()
        .find(|f| f["method"] == json!("subscriptions/listen"))
        .expect("a listen request");
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let retry = frames
        .iter()
        .find(|f| f["params"].get("inputResponses").is_some())
        .map(|f| {
            f["params"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        });
    if profile.has_mrtr() {
        assert_eq!(
            retry.unwrap(),
            vec![
                "_meta",
                "arguments",
                "inputResponses",
                "name",
                "requestState"
            ],
            "sorted params with the echoed requestState"
        );
    } else {
        assert!(retry.is_none());
    }
}

#[tokio::test]
async fn local_profiles_get_method_not_found_for_initialize() {
    for profile in [Profile::Local140, Profile::Local141, Profile::Local142] {
        let mut client = client(profile, &[fixture()], accepting_policy());
        match client.start().await {
            Err(SimError::Rpc {
                method, display, ..
            }) => {
                assert_eq!(method, "initialize");
                assert!(display.starts_with("MPC -32601: "), "{display}");
            }
            other => panic!("{profile}: {other:?}"),
        }
        let stop = client.stop().await;
        assert_eq!(stop.step, StopStep::EndOfInput, "{stop:?}");
        assert_eq!(stop.exit_code, Some(0));
        assert!(
            client
                .events()
                .iter()
                .any(|e| matches!(e.kind, EventKind::Stopped { .. }))
        );
    }
}
