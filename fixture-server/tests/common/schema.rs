//! Validation of every frame the fixture writes against the `$defs` of the vendored
//! 2026-07-28 schema (transcripts/schema/2026-07-28.schema.json), chosen by the method
//! of the request that a response answers, or by the method of a notification.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../transcripts/schema/2026-07-28.schema.json"
);

fn root() -> &'static Value {
    static ROOT: OnceLock<Value> = OnceLock::new();
    ROOT.get_or_init(|| {
        let text = std::fs::read_to_string(SCHEMA_PATH).expect("the vendored 2026-07-28 schema");
        serde_json::from_str(&text).expect("the schema is JSON")
    })
}

/// A validator for `#/$defs/<name>`, resolved within the same document (no network).
fn validator(name: &str) -> &'static Validator {
    static CACHE: OnceLock<std::sync::Mutex<HashMap<String, &'static Validator>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(validator) = cache.get(name) {
        return validator;
    }
    assert!(
        root()["$defs"].get(name).is_some(),
        "the schema has no $defs/{name}"
    );
    let mut schema = root().clone();
    schema["$ref"] = Value::String(format!("#/$defs/{name}"));
    let validator: &'static Validator = Box::leak(Box::new(
        jsonschema::validator_for(&schema).expect("the schema compiles"),
    ));
    cache.insert(name.to_owned(), validator);
    validator
}

/// The errors of `instance` against `$defs/<name>`.
pub fn check(name: &str, instance: &Value) -> Vec<String> {
    validator(name)
        .iter_errors(instance)
        .map(|error| format!("$defs/{name}: {error} at {}", error.instance_path()))
        .collect()
}

/// The response definition and the result definition of a request method.
fn result_defs(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "server/discover" => ("DiscoverResultResponse", "DiscoverResult"),
        "tools/list" => ("ListToolsResultResponse", "ListToolsResult"),
        "tools/call" => ("CallToolResultResponse", "CallToolResult"),
        "prompts/list" => ("ListPromptsResultResponse", "ListPromptsResult"),
        "prompts/get" => ("GetPromptResultResponse", "GetPromptResult"),
        "resources/list" => ("ListResourcesResultResponse", "ListResourcesResult"),
        "resources/templates/list" => (
            "ListResourceTemplatesResultResponse",
            "ListResourceTemplatesResult",
        ),
        "resources/read" => ("ReadResourceResultResponse", "ReadResourceResult"),
        "completion/complete" => ("CompleteResultResponse", "CompleteResult"),
        "subscriptions/listen" => (
            "SubscriptionsListenResultResponse",
            "SubscriptionsListenResult",
        ),
        _ => return None,
    })
}

fn notification_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "notifications/cancelled" => "CancelledNotification",
        _ => return None,
    })
}

fn error_def(code: i64) -> Option<(&'static str, bool)> {
    // (definition, whether it describes the whole response or only the error object)
    Some(match code {
        -32700 => ("ParseError", false),
        -32600 => ("InvalidRequestError", false),
        -32601 => ("MethodNotFoundError", false),
        -32602 => ("InvalidParamsError", false),
        -32603 => ("InternalError", false),
        -32021 => ("MissingRequiredClientCapabilityError", true),
        -32022 => ("UnsupportedProtocolVersionError", true),
        _ => return None,
    })
}

/// Checks one frame; `method_of` gives the method of the request a response answers.
pub fn check_frame(frame: &Value, method_of: impl Fn(&Value) -> Option<String>) -> Vec<String> {
    let mut errors = check("JSONRPCMessage", frame);
    if let Some(method) = frame.get("method").and_then(Value::as_str) {
        if frame.get("id").is_some() {
            errors.push("the server wrote a request: servers MUST NOT send requests".into());
            return errors;
        }
        errors.extend(check("ServerNotification", frame));
        match notification_def(method) {
            Some(def) => errors.extend(check(def, frame)),
            None => errors.push(format!("a notification that servers do not send: {method}")),
        }
        return errors;
    }
    if let Some(error) = frame.get("error") {
        errors.extend(check("JSONRPCErrorResponse", frame));
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        match error_def(code) {
            Some((def, true)) => errors.extend(check(def, frame)),
            Some((def, false)) => errors.extend(check(def, error)),
            None => errors.push(format!(
                "an error code the specification does not define: {code}"
            )),
        }
        return errors;
    }
    let Some(id) = frame.get("id") else {
        errors.push("a frame that is neither a notification nor a response".into());
        return errors;
    };
    let Some(method) = method_of(id) else {
        errors.push(format!("a response to an id the client never sent: {id}"));
        return errors;
    };
    let Some((response_def, result_def)) = result_defs(&method) else {
        errors.push(format!(
            "a result for the method {method}, which has no result"
        ));
        return errors;
    };
    errors.extend(check("JSONRPCResultResponse", frame));
    errors.extend(check(response_def, frame));
    let result = &frame["result"];
    errors.extend(check("ServerResult", result));
    match result.get("resultType").and_then(Value::as_str) {
        Some("complete") => errors.extend(check(result_def, result)),
        Some("input_required") => {
            if !matches!(
                method.as_str(),
                "tools/call" | "prompts/get" | "resources/read"
            ) {
                errors.push(format!("input_required for {method}"));
            }
            errors.extend(check("InputRequiredResult", result));
            if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
                errors.push("an InputRequiredResult without inputRequests and requestState".into());
            }
        }
        other => errors.push(format!("a result with resultType {other:?}")),
    }
    errors
}
