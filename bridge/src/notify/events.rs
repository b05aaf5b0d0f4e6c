//! Pure rules for the notifications that reach VS Code (O5, O6, O7).

use serde_json::{Map, Value, json};

type Object = Map<String, Value>;

/// The `_meta` key that tags the notifications of a listen stream.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The notifications of a listen stream that VS Code gets (O6, O7).
const FORWARDED: [&str; 4] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
];

/// Whether `method` is one of the notifications of a listen stream that VS Code gets.
pub fn is_stream_kind(method: &str) -> bool {
    FORWARDED.contains(&method)
}

/// The levels of revision 2025-11-25, from the lowest.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn level_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|known| *known == level)
}

/// The listen stream that a notification belongs to, when it is tagged.
pub fn subscription_id(params: Option<&Object>) -> Option<u64> {
    params?.get("_meta")?.get(SUBSCRIPTION_ID_KEY)?.as_u64()
}

/// A notification of a listen stream for VS Code, or `None` when VS Code does not
/// get it: a kind outside the four, or an update without a string uri. The
/// subscription id goes; an empty `_meta` and empty params go too.
pub fn stream_notification(method: &str, params: Option<Object>) -> Option<Value> {
    if !is_stream_kind(method) {
        return None;
    }
    let mut params = params.unwrap_or_default();
    if method == "notifications/resources/updated"
        && !params.get("uri").is_some_and(Value::is_string)
    {
        return None;
    }
    if let Some(Value::Object(meta)) = params.get_mut("_meta") {
        meta.shift_remove(SUBSCRIPTION_ID_KEY);
        if meta.is_empty() {
            params.shift_remove("_meta");
        }
    }
    Some(notification(method, params))
}

/// O5: an upstream log message for VS Code, when VS Code set a level and the message
/// is at that level or above; the upstream's `_meta` goes.
pub fn log_message(params: Option<Object>, client_level: Option<&str>) -> Option<Value> {
    let mut params = params?;
    let wanted = level_rank(client_level?)?;
    let level = level_rank(params.get("level")?.as_str()?)?;
    if level < wanted || !params.contains_key("data") {
        return None;
    }
    params.shift_remove("_meta");
    Some(notification("notifications/message", params))
}

/// A notification frame; without params when there are none.
pub fn notification(method: &str, params: Object) -> Value {
    if params.is_empty() {
        json!({"jsonrpc": "2.0", "method": method})
    } else {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn o6_list_changes_lose_the_subscription_id() {
        let params = obj(json!({"_meta":{"io.modelcontextprotocol/subscriptionId":7}}));
        assert_eq!(subscription_id(Some(&params)), Some(7));
        assert_eq!(
            stream_notification("notifications/tools/list_changed", Some(params)),
            Some(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}))
        );
        let params = obj(json!({"_meta":{"io.modelcontextprotocol/subscriptionId":7,"x/y":1}}));
        assert_eq!(
            stream_notification("notifications/prompts/list_changed", Some(params)),
            Some(
                json!({"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"x/y":1}}})
            )
        );
    }

    #[test]
    fn o7_updates_need_a_string_uri() {
        let params = obj(
            json!({"uri":"file:///fixture/notes.txt","_meta":{"io.modelcontextprotocol/subscriptionId":3}}),
        );
        assert_eq!(
            stream_notification("notifications/resources/updated", Some(params)),
            Some(
                json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///fixture/notes.txt"}})
            )
        );
        assert_eq!(
            stream_notification(
                "notifications/resources/updated",
                Some(obj(json!({"uri":5})))
            ),
            None
        );
        assert_eq!(
            stream_notification("notifications/resources/updated", None),
            None
        );
    }

    #[test]
    fn o6_other_notifications_of_a_stream_are_dropped() {
        for method in [
            "notifications/message",
            "notifications/progress",
            "notifications/tasks/status",
            "x",
        ] {
            assert_eq!(stream_notification(method, None), None, "{method}");
        }
    }

    #[test]
    fn o5_log_messages_at_or_above_the_level_of_vscode() {
        let message = |level: &str| {
            obj(json!({"level":level,"logger":"fixture","data":"a message","_meta":{"a/b":1}}))
        };
        assert_eq!(
            log_message(Some(message("warning")), Some("info")),
            Some(
                json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"fixture","data":"a message"}})
            )
        );
        assert!(log_message(Some(message("info")), Some("info")).is_some());
        assert_eq!(log_message(Some(message("debug")), Some("info")), None);
        assert_eq!(log_message(Some(message("error")), None), None);
        assert_eq!(log_message(Some(message("loud")), Some("debug")), None);
        assert_eq!(
            log_message(Some(obj(json!({"level":"error"}))), Some("debug")),
            None
        );
    }
}
