//! Upstream errors as VS Code gets them.

use serde_json::{Map, Value};

/// The code of revision 2025-11-25 for "open these URLs first" (URLElicitationRequired).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// An upstream JSON-RPC error for VS Code: unchanged, except -32042, which becomes
/// -32603 with the same message and no data. VS Code opens each URL in the
/// `data.elicitations` of a -32042 (quirk table), and revision 2026-07-28 forbids
/// the code anyway. `None` when the error object is not valid JSON-RPC.
pub fn client_error(error: Value) -> Option<Value> {
    let Value::Object(mut error) = error else {
        return None;
    };
    let code = error.get("code")?.as_i64()?;
    if !error.get("message")?.is_string() {
        return None;
    }
    if code == URL_ELICITATION_REQUIRED {
        error.insert("code".into(), (-32603).into());
        error.shift_remove("data");
    }
    Some(Value::Object(error))
}

/// The code and message of a valid upstream error, for log lines and `data.detail`.
pub fn code_and_message(error: &Map<String, Value>) -> Option<(i64, &str)> {
    Some((
        error.get("code")?.as_i64()?,
        error.get("message")?.as_str()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_pass_through_unchanged() {
        let error = json!({"code":-32601,"message":"Method not found","data":{"x":1},"extra":true});
        assert_eq!(client_error(error.clone()), Some(error));
        let error =
            json!({"code":-32021,"message":"missing","data":{"requiredCapabilities":{"roots":{}}}});
        assert_eq!(client_error(error.clone()), Some(error));
    }

    #[test]
    fn quirk_url_elicitation_required_becomes_an_internal_error_without_data() {
        let error = json!({"code":-32042,"message":"Open these","data":{"elicitations":[{"url":"file:///x"}]}});
        assert_eq!(
            client_error(error),
            Some(json!({"code":-32603,"message":"Open these"}))
        );
    }

    #[test]
    fn malformed_errors_are_refused() {
        for error in [
            json!(1),
            json!({"message":"x"}),
            json!({"code":"1","message":"x"}),
            json!({"code":1}),
        ] {
            assert_eq!(client_error(error), None);
        }
    }
}
