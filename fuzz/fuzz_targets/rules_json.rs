//! The rules on arbitrary JSON from the upstream server: the result shaping of
//! every forwarded method (R4-R6, R8, O10, O11), the schema repair (R6), the
//! initialize result (R1), the capabilities, the input rounds (M2), the errors,
//! the events of the listen stream and the progress (M3, O4). No rule may panic,
//! the schema repair must be idempotent, and the one-level shaping of a tools/call
//! result must give the text of the shaped tree.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcp_bridge_vscode::internals::notify::events;
use mcp_bridge_vscode::internals::rules::capabilities::{self, Declared, InputKinds};
use mcp_bridge_vscode::internals::rules::initialize::{FallbackIdentity, initialize_result};
use mcp_bridge_vscode::internals::rules::input::{Ask, answer_of, plan_round};
use mcp_bridge_vscode::internals::rules::results::ShallowShape;
use mcp_bridge_vscode::internals::rules::schema_repair::{SchemaFix, repair_array_items};
use mcp_bridge_vscode::internals::rules::{errors, meta, progress, results};
use mcp_bridge_vscode::internals::wire::shallow::ShallowObject;
use mcp_bridge_vscode_fuzz::{object, value};
use serde_json::Value;
use std::collections::HashSet;

/// The forwarded methods of the bridge, and one it does not know.
fn methods() -> Vec<&'static str> {
    let mut methods = mcp_bridge_vscode::internals::rules::FORWARDED_METHODS.to_vec();
    methods.push("x/unknown");
    methods
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(result) = object(&mut u, 8) else {
        return;
    };
    let Ok(any) = value(&mut u, 8) else {
        return;
    };

    for method in methods() {
        let mut shaped = result.clone();
        let fixes = results::shape_result(method, &mut shaped);
        for fix in &fixes {
            let _ = fix.log_line().to_string();
        }
        // Shaping twice changes nothing more.
        let mut again = shaped.clone();
        let more = results::shape_result(method, &mut again);
        assert_eq!(again, shaped, "{method}: the shaping is not idempotent");
        assert!(
            more.iter()
                .all(|f| matches!(f.fix, SchemaFix::TooDeep { .. }))
        );
        let _ = results::result_kind(&result);
        let _ = results::check_result_shape(method, &result);
    }

    // The one-level path of tools/call results gives the text of the tree path.
    let text = Value::Object(result.clone()).to_string();
    if let Some(mut shallow) = ShallowObject::parse(&text) {
        match results::shape_call_result_shallow(&mut shallow) {
            ShallowShape::Shaped(_) => {
                let mut shaped = result.clone();
                results::shape_result("tools/call", &mut shaped);
                assert_eq!(shallow.to_json(), Value::Object(shaped).to_string());
            }
            ShallowShape::Invalid(detail) => {
                assert_eq!(
                    results::check_result_shape("tools/call", &result),
                    Err(detail)
                );
            }
            ShallowShape::NeedsTree => {}
        }
    }

    let mut schema = any.clone();
    repair_array_items(&mut schema);
    let once = schema.clone();
    let fixes = repair_array_items(&mut schema);
    assert_eq!(schema, once, "the schema repair is not idempotent");
    assert!(fixes.iter().all(|f| matches!(f, SchemaFix::TooDeep { .. })));

    let fallback = FallbackIdentity {
        name: "fuzz".into(),
        version: "0.0.0".into(),
    };
    let initialize = initialize_result(&result, &fallback);
    if let Some(Value::Object(caps)) = initialize.get("capabilities") {
        let _ = Declared::of(caps);
    }
    let _ = capabilities::upstream_client_capabilities(&result);
    let _ = capabilities::initialize_capabilities(&result);
    let kinds = InputKinds::of(&result);

    let accepted: HashSet<String> = ["https://example.com/a".to_owned()].into();
    for declared in [
        kinds,
        InputKinds {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            sampling_tools: false,
            roots: true,
        },
    ] {
        if let Ok(plan) = plan_round(&result, declared, &accepted, 16) {
            assert!(plan.inputs.len() <= 16);
        }
    }
    for ask in [
        Ask::ContinueForm,
        Ask::ContinueUrl {
            url: "https://example.com/a".into(),
        },
        Ask::Url {
            url: "https://example.com/a".into(),
        },
        Ask::Sampling,
        Ask::Roots,
    ] {
        let _ = answer_of(&ask, any.clone());
        let _ = answer_of(&ask, Value::Object(result.clone()));
    }

    let _ = errors::client_error(any.clone());
    let _ = errors::code_and_message(&result);
    let client_meta = ShallowObject::from_map(&result);
    let _ = meta::client_progress_token(Some(&client_meta));
    let base = meta::SharedMeta::new(meta::base_meta(Some(&any), result.clone()));
    let base = std::sync::Arc::new(base);
    let _ = meta::request_meta(&base, Some("info"), Some(7), Some(&client_meta));
    let _ = progress::client_progress(result.clone(), &any);
    let _ = events::subscription_id(Some(&result));
    for method in [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
        "notifications/message",
        "notifications/subscriptions/acknowledged",
    ] {
        let _ = events::stream_notification(method, Some(result.clone()));
        let _ = events::notification(method, result.clone());
    }
    let _ = events::log_message(Some(result.clone()), Some("debug"));
    let _ = events::log_message(Some(result), None);
});
