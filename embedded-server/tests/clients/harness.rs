//! The simulated clients of VS Code against `bridge-embedded-server` (M5, "The
//! Copilot harness and an embedded server"): the Local harness takes the bridge
//! and its input rounds; the Copilot harness takes the modern path by default and
//! does the rounds itself from 1.0.92; with `--refuse-discover`, copilot-cli 1.0.89
//! takes the bridge, which does the rounds it cannot do.

use harness_sim::client::{CallOutcome, StopStep, WirePath};
use harness_sim::{AnswerPolicy, Profile, SimClient, SimOptions, StdioPeer};
use serde_json::json;
use std::time::Duration;

fn client(profile: Profile, args: &[&str]) -> SimClient {
    let exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bridge-embedded-server"));
    let mut command = vec![exe.display().to_string()];
    command.extend(args.iter().map(|arg| arg.to_string()));
    let peer = StdioPeer::spawn(&command).expect("the server starts");
    let mut options = SimOptions::for_profile(profile).no_delay();
    options.request_timeout = Duration::from_secs(10);
    options.initialize_timeout = Duration::from_secs(10);
    options.discover_timeout = Duration::from_secs(5);
    let policy = AnswerPolicy::new().accept_form(json!({"name": "Ada"}));
    SimClient::with_options(profile, peer, policy, options)
}

fn text(outcome: &CallOutcome) -> String {
    outcome
        .text()
        .unwrap_or_else(|| panic!("not a result: {outcome:?}"))
        .to_owned()
}

#[tokio::test]
async fn the_local_harness_takes_the_bridge_and_its_input_round_completes() {
    for profile in [Profile::Local140, Profile::Local141, Profile::Local142] {
        let mut client = client(profile, &[]);
        let negotiated = client.start().await.unwrap();
        assert_eq!(negotiated.path, WirePath::Legacy, "{profile}");
        assert_eq!(negotiated.server_info["name"], "bridge-embedded-server");
        let echo = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(text(&echo), "hi", "{profile}");
        let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
        assert_eq!(text(&greeted), "Hello, Ada.", "{profile}");
        let stop = client.stop().await;
        assert_eq!(
            (stop.step, stop.exit_code),
            (StopStep::EndOfInput, Some(0)),
            "{profile}: {}",
            stop.describe()
        );
    }
}

#[tokio::test]
async fn the_copilot_harness_takes_the_modern_path_and_does_the_rounds_from_1_0_92() {
    for profile in [
        Profile::Copilot089,
        Profile::Copilot092,
        Profile::Copilot095,
    ] {
        let mut client = client(profile, &[]);
        let negotiated = client.start().await.unwrap();
        assert_eq!(negotiated.path, WirePath::Modern, "{profile}");
        let add = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(text(&add), "5", "{profile}");
        let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
        if profile.has_mrtr() {
            assert_eq!(text(&greeted), "Hello, Ada.", "{profile}");
        } else {
            // Without MRTR a tool that asks for input cannot complete here.
            assert!(
                matches!(greeted, CallOutcome::Failed { .. }),
                "{profile}: {greeted:?}"
            );
        }
        client.stop().await;
    }
}

#[tokio::test]
async fn with_discover_refused_copilot_1_0_89_takes_the_bridge_which_does_the_rounds() {
    let mut client = client(Profile::Copilot089, &["--refuse-discover"]);
    let negotiated = client.start().await.unwrap();
    assert_eq!(negotiated.path, WirePath::Legacy);
    let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(text(&greeted), "Hello, Ada.");
    client.stop().await;
}
