//! Each profile through the bridge (`mcp-bridge-vscode -- bridge-fixture-server`).
//! The Copilot profiles get -32601 for server/discover (C1) and fall back to
//! initialize. The tests assert the behaviour of the contract by milestone:
//! M1 lists and calls, M2 input requests, M3 list changes before results.

use crate::common;

use common::{accepting_policy, bridge_command, client, result_text};
use harness_sim::client::{CallOutcome, StopStep, WirePath};
use harness_sim::record::Transcript;
use harness_sim::replay::{ReplayOptions, replay};
use harness_sim::{Profile, SimClient, StdioPeer};
use serde_json::json;
use tokio::time::Duration;

async fn started(profile: Profile) -> SimClient {
    let mut client = client(profile, &bridge_command(), accepting_policy());
    let negotiated = client.start().await.unwrap();
    assert_eq!(negotiated.path, WirePath::Legacy, "{profile}");
    assert_eq!(negotiated.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(
        negotiated.server_info["name"],
        json!("bridge-fixture-server")
    );
    if !profile.is_local() {
        assert_eq!(negotiated.discover.as_deref(), Some("error -32601"), "C1");
    }
    client
}

async fn stops_cleanly(client: &mut SimClient) {
    let stop = client.stop().await;
    if client.profile().is_local() {
        assert_eq!(stop.step, StopStep::EndOfInput, "{stop:?}");
        assert_eq!(stop.exit_code, Some(0), "R7: exit 0 after the end of stdin");
        assert!(stop.exited_after_ms.unwrap() < 2500.0, "{stop:?}");
    } else {
        assert_ne!(stop.step, StopStep::NotExited, "{stop:?}");
    }
    assert!(stop.group_gone);
}

#[tokio::test]
async fn every_profile_lists_and_calls_through_the_bridge() {
    for profile in Profile::all().iter().copied() {
        let mut client = started(profile).await;
        let names = client.tool_names();
        for tool in ["add", "echo", "bare_array", "toggle", "toggled"] {
            assert!(
                names.iter().any(|n| n == tool),
                "{profile}: no {tool} in {names:?}"
            );
        }
        if profile.is_local() {
            // R6: the bridge repaired bare_array, so no tool is omitted or stopped.
            let listing = client.last_tools_listing().unwrap().as_ref().unwrap();
            assert!(listing.omitted.is_empty(), "{:?}", listing.omitted);
            assert!(listing.blocked.is_none(), "{:?}", listing.blocked);
            assert_eq!(client.prompts().len(), 3);
            let sent = client.peer().sent_frames();
            let methods: Vec<&str> = sent
                .iter()
                .map(|f| f["method"].as_str().unwrap_or(""))
                .collect();
            assert_eq!(
                &methods[..5],
                &[
                    "initialize",
                    "logging/setLevel",
                    "notifications/initialized",
                    "prompts/list",
                    "tools/list"
                ]
            );
        }
        let add = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(result_text(&add), "5", "{profile}");
        let echo = client
            .call_tool("echo", json!({"text": "hello"}))
            .await
            .unwrap();
        assert_eq!(result_text(&echo), "hello", "{profile}");
        stops_cleanly(&mut client).await;
    }
}

#[tokio::test]
async fn every_profile_sees_the_list_change_before_the_toggle_result() {
    for profile in Profile::all().iter().copied() {
        let mut client = started(profile).await;
        let toggle = client
            .call_tool("toggle", json!({"enabled": false}))
            .await
            .unwrap();
        assert_eq!(result_text(&toggle), "tool toggled: disabled", "{profile}");
        assert!(
            !client.tool_names().iter().any(|n| n == "toggled"),
            "{profile}: after the call the client still lists toggled (M3: the list change must come before the result)"
        );
        stops_cleanly(&mut client).await;
    }
}

#[tokio::test]
async fn every_profile_answers_the_input_requests_through_the_bridge() {
    for profile in Profile::all().iter().copied() {
        let mut client = started(profile).await;
        let form = client.call_tool("ask_form", json!({})).await.unwrap();
        let text = result_text(&form);
        assert!(
            text.starts_with("form: accept") && text.contains("Ada"),
            "{profile}: {text}"
        );
        let url = client.call_tool("ask_url", json!({})).await.unwrap();
        assert_eq!(result_text(&url), "url: accept", "{profile}");
        let sample = client.call_tool("sample", json!({})).await.unwrap();
        assert_eq!(result_text(&sample), "model: Hello!", "{profile}");
        let roots = client.call_tool("list_roots", json!({})).await.unwrap();
        if profile.is_local() {
            assert_eq!(result_text(&roots), "roots: file:///tmp/ws", "{profile}");
        } else {
            // C2: copilot-cli declares no roots; the upstream refuses with -32021.
            match roots {
                CallOutcome::Error { code, .. } => assert_eq!(code, -32021, "{profile}"),
                other => panic!("{profile}: {other:?}"),
            }
        }
        stops_cleanly(&mut client).await;
    }
}

#[tokio::test]
async fn a_tapped_bridge_session_replays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bridge.jsonl");
    let mut command = vec![
        common::harness_sim(),
        "tap".to_string(),
        "--out".to_string(),
        out.display().to_string(),
        "--".to_string(),
    ];
    command.extend(bridge_command());
    let peer = StdioPeer::spawn(&command).unwrap();
    let mut client = SimClient::with_options(
        Profile::Local141,
        peer,
        accepting_policy(),
        common::test_options(Profile::Local141),
    );
    client.start().await.unwrap();
    let add = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(result_text(&add), "5");
    client
        .settle(Duration::from_millis(200), Duration::from_secs(2))
        .await
        .unwrap();
    let sent_direct = client.peer().sent_frames();
    let received_direct = client.peer().received_frames();
    stops_cleanly(&mut client).await;

    let transcript = Transcript::read(&out).unwrap();
    let recorded_c2s: Vec<_> = transcript
        .frames(harness_sim::record::Dir::C2s)
        .into_iter()
        .cloned()
        .collect();
    let recorded_s2c: Vec<_> = transcript
        .frames(harness_sim::record::Dir::S2c)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(
        recorded_c2s, sent_direct,
        "the tap recorded what the client sent"
    );
    assert_eq!(
        recorded_s2c, received_direct,
        "the tap recorded what the bridge sent"
    );
    assert!(
        transcript
            .entries
            .iter()
            .any(|e| e.dir == harness_sim::record::Dir::Stderr)
    );

    let report = replay(&transcript, &bridge_command(), &ReplayOptions::default())
        .await
        .unwrap();
    assert!(report.matches(), "{:#?}", report.mismatches);
    assert_eq!(report.exit_code, Some(0));
}
