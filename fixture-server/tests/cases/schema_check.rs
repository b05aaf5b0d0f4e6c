//! The frame check of the test client itself refuses frames that break the 2026-07-28
//! schema, so that the other tests prove something when they pass.

use serde_json::json;

use crate::common::schema::check_frame;

fn errors(frame: serde_json::Value, method: Option<&str>) -> Vec<String> {
    check_frame(&frame, |_| method.map(str::to_owned))
}

#[test]
fn the_frame_check_accepts_valid_frames() {
    let result = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": [{"type": "text", "text": "x"}]}});
    assert_eq!(errors(result, Some("tools/call")), Vec::<String>::new());
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 0, "progress": 1}});
    assert_eq!(errors(progress, None), Vec::<String>::new());
}

#[test]
fn the_frame_check_refuses_frames_that_break_the_schema() {
    let cases = [
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
            Some("tools/call"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}}),
            Some("tools/list"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}),
            Some("tools/call"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s"}}),
            Some("tools/list"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
            Some("subscriptions/listen"),
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {}}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "method": "roots/list"}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32042, "message": "x"}}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}),
            None,
        ),
    ];
    for (frame, method) in cases {
        assert!(!errors(frame.clone(), method).is_empty(), "{frame} passed");
    }
}
