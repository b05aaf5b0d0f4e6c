//! Progress of upstream requests as VS Code gets it (O4, C3).

use super::meta::PROGRESS_TOKEN_KEY;
use serde_json::{Map, Value};

/// The params of an upstream `notifications/progress` with VS Code's token in place
/// of the bridge's. The bridge keys progress by request, never by token (C3), so any
/// token of VS Code works, `0` too. The other members pass unchanged.
pub fn client_progress(mut params: Map<String, Value>, client_token: &Value) -> Map<String, Value> {
    params.insert(PROGRESS_TOKEN_KEY.into(), client_token.clone());
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn o4_c3_progress_carries_the_token_of_vscode() {
        let params =
            json!({"progressToken": 12, "progress": 1, "total": 3, "message": "Step 0 of 3"});
        let out = client_progress(params.as_object().unwrap().clone(), &json!(0));
        assert_eq!(
            Value::Object(out),
            json!({"progressToken": 0, "progress": 1, "total": 3, "message": "Step 0 of 3"})
        );
    }
}
