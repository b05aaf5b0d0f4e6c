//! Each profile's frames compared with the frame files of
//! `shared/reference/vscode/frames/` (played by the scripted server), and
//! snapshotted with insta (UUIDs and trace ids replaced by placeholders).

use crate::common;

use common::{assert_same_frames, c2s_frames, normalize, scripted};
use harness_sim::answers::{FormAnswer, SamplingAnswer, UrlAnswer};
use harness_sim::client::{CallOutcome, EventKind, WirePath};
use harness_sim::{AnswerPolicy, Profile};
use serde_json::{Value, json};
use tokio::time::Duration;

const LOCAL_START: &str = "local-1.141-start.jsonl";
const COPILOT_START: &str = "copilot-1.0.92-start.jsonl";

fn sent(client: &harness_sim::SimClient) -> Vec<Value> {
    client.peer().sent_frames()
}

fn text(outcome: &CallOutcome) -> &str {
    outcome
        .text()
        .unwrap_or_else(|| panic!("not a result: {outcome:?}"))
}

#[tokio::test]
async fn local_1_141_opening_matches_the_frame_file() {
    let mut client = scripted(Profile::Local141, &[LOCAL_START], AnswerPolicy::new());
    let negotiated = client.start().await.unwrap();
    assert_eq!(negotiated.path, WirePath::Legacy);
    assert_eq!(
        negotiated.server_info,
        json!({"name": "bridge-fixture", "version": "0.1.2"})
    );
    assert_eq!(negotiated.instructions.as_deref(), Some("Fixture server."));
    // Paging: page 2 came from nextCursor "page-2".
    assert_eq!(client.tool_names(), vec!["add", "ask_form", "echo"]);
    assert_eq!(client.prompts().len(), 1);
    assert_same_frames(&sent(&client), &c2s_frames(&[LOCAL_START]));
    insta::assert_json_snapshot!("local-1.141-opening", normalize(&sent(&client)));
    client.stop().await;
}

#[tokio::test]
async fn local_1_140_and_1_142_opening_differ_only_in_version_and_extensions() {
    for (profile, version, extensions) in [
        (Profile::Local140, "1.140.0", false),
        (Profile::Local142, "1.142.0", true),
    ] {
        let mut client = scripted(profile, &[LOCAL_START], AnswerPolicy::new());
        client.start().await.unwrap();
        let mut want = c2s_frames(&[LOCAL_START]);
        want[0]["params"]["clientInfo"]["version"] = json!(version);
        if !extensions {
            want[0]["params"]["capabilities"]
                .as_object_mut()
                .unwrap()
                .remove("extensions");
        }
        assert_same_frames(&sent(&client), &want);
        insta::assert_json_snapshot!(
            format!("{}-opening", profile.name()),
            normalize(&sent(&client))
        );
        client.stop().await;
    }
}

#[tokio::test]
async fn local_tools_call_meta_and_cancel_match_the_frame_file() {
    let files = [LOCAL_START, "local-tools-call.jsonl"];
    let mut client = scripted(Profile::Local141, &files, AnswerPolicy::new());
    client.start().await.unwrap();
    let outcome = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&outcome), "5");
    let id = client
        .send_call("echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(id, 7);
    client.cancel(id).await.unwrap();
    client
        .settle(Duration::from_millis(400), Duration::from_secs(3))
        .await
        .unwrap();
    // The late result of the cancelled call is ignored.
    assert!(client.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::LateResponse { id, .. } if *id == json!(7)
    )));
    let frames = sent(&client);
    assert_same_frames(&frames, &c2s_frames(&files));
    // A fresh UUID progress token for each call; the chat ids stay.
    let meta6 = &frames[6]["params"]["_meta"];
    let meta7 = &frames[7]["params"]["_meta"];
    assert_ne!(meta6["progressToken"], meta7["progressToken"]);
    assert!(uuid::Uuid::parse_str(meta6["progressToken"].as_str().unwrap()).is_ok());
    assert_eq!(
        meta6["vscode.conversationId"],
        meta7["vscode.conversationId"]
    );
    let traceparent = meta6["traceparent"].as_str().unwrap();
    assert_eq!(traceparent.len(), 55, "{traceparent}");
    insta::assert_json_snapshot!("local-tools-call", normalize(&frames[6..]));
    client.stop().await;
}

#[tokio::test]
async fn local_form_elicitation_matches_the_frame_file() {
    let files = [LOCAL_START, "local-elicitation-form.jsonl"];
    let policy = AnswerPolicy::new().forms(vec![
        FormAnswer::Accept(Some(
            json!({"name": "Ada", "age": 36})
                .as_object()
                .unwrap()
                .clone(),
        )),
        FormAnswer::Cancel,
    ]);
    let mut client = scripted(Profile::Local141, &files, policy);
    client.start().await.unwrap();
    let first = client.call_tool("ask_form", json!({})).await.unwrap();
    assert_eq!(text(&first), "form: accept name=Ada age=36");
    let second = client.call_tool("ask_form", json!({})).await.unwrap();
    assert_eq!(text(&second), "form: cancel");
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("local-elicitation-form", normalize(&sent(&client)[6..]));
    client.stop().await;
}

#[tokio::test]
async fn local_url_elicitation_matches_the_frame_file() {
    let files = [LOCAL_START, "local-elicitation-url.jsonl"];
    let policy = AnswerPolicy::new().url(UrlAnswer::Accept);
    let mut client = scripted(Profile::Local141, &files, policy);
    client.start().await.unwrap();
    let outcome = client.call_tool("ask_url", json!({})).await.unwrap();
    assert_eq!(text(&outcome), "url: accept");
    assert!(client.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::Notification { method, .. } if method == "notifications/elicitation/complete"
    )));
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("local-elicitation-url", normalize(&sent(&client)[6..]));
    client.stop().await;
}

#[tokio::test]
async fn local_roots_and_their_change_match_the_frame_file() {
    let files = [LOCAL_START, "local-roots.jsonl"];
    let policy = AnswerPolicy::new().root("ws", "file:///home/me/ws");
    let mut client = scripted(Profile::Local141, &files, policy);
    client.start().await.unwrap();
    let outcome = client.call_tool("list_roots", json!({})).await.unwrap();
    assert_eq!(text(&outcome), "roots: file:///home/me/ws");
    let mut roots = client.policy_mut().roots.clone();
    roots.push(harness_sim::answers::Root {
        name: "lib".into(),
        uri: "file:///home/me/lib".into(),
    });
    client.set_roots(roots).await.unwrap();
    client
        .settle(Duration::from_millis(400), Duration::from_secs(3))
        .await
        .unwrap();
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("local-roots", normalize(&sent(&client)[6..]));
    client.stop().await;
}

#[tokio::test]
async fn local_sampling_and_its_refusal_match_the_frame_file() {
    let files = [LOCAL_START, "local-sampling.jsonl"];
    let policy = AnswerPolicy::new().samplings(vec![
        SamplingAnswer::Text {
            text: "Hello!".into(),
            model: Some("copilot/gpt-4.1".into()),
        },
        SamplingAnswer::Refuse,
    ]);
    let mut client = scripted(Profile::Local141, &files, policy);
    client.start().await.unwrap();
    let first = client.call_tool("sample", json!({})).await.unwrap();
    assert_eq!(text(&first), "model: Hello!");
    let second = client.call_tool("sample", json!({})).await.unwrap();
    match second {
        CallOutcome::Error { display, .. } => {
            assert_eq!(display, "MPC -32000: Sampling not allowed")
        }
        other => panic!("not an error: {other:?}"),
    }
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("local-sampling", normalize(&sent(&client)[6..]));
    client.stop().await;
}

#[tokio::test]
async fn copilot_opening_after_method_not_found_matches_the_frame_file() {
    for profile in [
        Profile::Copilot089,
        Profile::Copilot092,
        Profile::Copilot095,
    ] {
        let mut client = scripted(profile, &[COPILOT_START], AnswerPolicy::new());
        let negotiated = client.start().await.unwrap();
        assert_eq!(negotiated.path, WirePath::Legacy);
        assert_eq!(negotiated.discover.as_deref(), Some("error -32601"));
        assert_eq!(client.tool_names(), vec!["add", "echo"]);
        let mut want = c2s_frames(&[COPILOT_START]);
        let version = json!(profile.client_version());
        want[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["version"] =
            version.clone();
        want[1]["params"]["clientInfo"]["version"] = version;
        assert_same_frames(&sent(&client), &want);
        insta::assert_json_snapshot!(format!("{}-opening", profile.name()), sent(&client));
        client.stop().await;
    }
}

#[tokio::test]
async fn copilot_falls_back_after_its_discover_time_limit_without_a_cancel() {
    let file = "copilot-discover-timeout.jsonl";
    let mut client = scripted(Profile::Copilot092, &[file], AnswerPolicy::new());
    client.options_mut().discover_timeout = Duration::from_millis(300);
    let negotiated = client.start().await.unwrap();
    assert_eq!(negotiated.path, WirePath::Legacy);
    assert_eq!(negotiated.discover.as_deref(), Some("no answer in 0.3 s"));
    let outcome = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&outcome), "5");
    assert_same_frames(&sent(&client), &c2s_frames(&[file]));
    client.stop().await;
}

#[tokio::test]
async fn copilot_relists_after_a_list_change_before_the_result() {
    let files = [COPILOT_START, "copilot-tools-call.jsonl"];
    let mut client = scripted(Profile::Copilot092, &files, AnswerPolicy::new());
    client.start().await.unwrap();
    let echo = client
        .call_tool("echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "hello\nlistchanged: {\"sent\":true}");
    for _ in 0..2 {
        let add = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(text(&add), "5");
    }
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("copilot-tools-call", &sent(&client)[4..]);
    client.stop().await;
}

#[tokio::test]
async fn copilot_answers_server_requests_as_observed() {
    let files = [COPILOT_START, "copilot-server-requests.jsonl"];
    let policy = AnswerPolicy::new()
        .form(FormAnswer::Decline)
        .url(UrlAnswer::Decline)
        .sampling(SamplingAnswer::Ignore);
    let mut client = scripted(Profile::Copilot092, &files, policy);
    client.start().await.unwrap();
    let outcome = client
        .call_tool("echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert!(text(&outcome).starts_with("hello\nping: {}"), "{outcome:?}");
    assert_eq!(
        client.unanswered().len(),
        1,
        "sampling waits for an approval"
    );
    assert_same_frames(&sent(&client), &c2s_frames(&files));
    insta::assert_json_snapshot!("copilot-server-requests", &sent(&client)[4..]);
    client.stop().await;
}
