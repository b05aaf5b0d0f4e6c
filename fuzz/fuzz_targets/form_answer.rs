//! The check of VS Code's accepted form content against the schema of the
//! upstream server (quirk table), on arbitrary schemas and contents: no panic,
//! and no input that makes the check hang (run with -timeout).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcp_bridge_vscode::internals::rules::input::{Answer, Ask, answer_of, form_content_error};
use mcp_bridge_vscode_fuzz::{object, value};
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(schema) = object(&mut u, 6) else {
        return;
    };
    let Ok(content) = value(&mut u, 6) else {
        return;
    };
    let schema = Value::Object(schema);
    let error = form_content_error(&schema, &content);
    let ask = Ask::Form {
        schema: schema.clone(),
    };
    let answer = answer_of(
        &ask,
        json!({"action": "accept", "content": content.clone()}),
    );
    match (&error, &answer) {
        (None, Answer::Ready(ready)) => assert_eq!(ready["content"], content),
        (Some(_), Answer::Invalid(_)) => {}
        // Missing content is checked as {}.
        _ => panic!("the answer does not follow the check: {error:?} {answer:?}"),
    }
    for action in ["decline", "cancel"] {
        assert_eq!(
            answer_of(&ask, json!({"action": action, "content": content.clone()})),
            Answer::Ready(json!({"action": action}))
        );
    }
});
