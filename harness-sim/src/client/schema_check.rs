//! The two schema checks of the Local harness (seed R6).
//!
//! (a) The workbench normalises each tool (a missing description becomes
//! `<empty>`, an inputSchema without `properties` gets `properties: {}`) and
//! checks each inputSchema against JSON Schema draft-07; tools that fail are
//! omitted with the log line `N tools have invalid JSON schemas and will be omitted`.
//! (b) The Copilot extension stops every chat request when any schema node has
//! `type: "array"` and an `items` that is falsy in JavaScript (missing, null,
//! false, 0, ""): one such tool stops all tools (VS Code issue 339276).

use mcp_names::schema_keywords::{LIST, MAP, ONE};
use serde_json::{Map, Value, json};

/// Which tool stopped all tools, and where.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Blocked {
    /// The tool.
    pub tool: String,
    /// RFC 6901 pointer of the array schema inside the input schema.
    pub pointer: String,
}

impl Blocked {
    /// The failure as the report shows it.
    pub fn message(&self) -> String {
        format!(
            "tool '{}': the array schema at '{}' of the input schema has no items, so the Copilot extension stops the requests for all tools (R6 b)",
            self.tool, self.pointer
        )
    }
}

/// The outcome of both checks on one tools/list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// The normalised tools that passed check (a), in list order.
    pub visible: Vec<Value>,
    /// The names of the tools omitted by check (a).
    pub omitted: Vec<String>,
    /// VS Code's log line when tools were omitted.
    pub log_line: Option<String>,
    /// The first tool that fails check (b), among the visible ones.
    pub blocked: Option<Blocked>,
}

/// Runs (a) then (b) over the tools of a complete list.
pub fn check_tools(tools: &[Value]) -> Verdict {
    let mut verdict = Verdict::default();
    for tool in tools {
        let normalized = normalize_tool(tool);
        let schema = normalized.get("inputSchema").cloned().unwrap_or(json!({}));
        if jsonschema::draft7::meta::is_valid(&schema) {
            verdict.visible.push(normalized);
        } else {
            verdict.omitted.push(tool_name(tool));
        }
    }
    if !verdict.omitted.is_empty() {
        verdict.log_line = Some(format!(
            "{} tools have invalid JSON schemas and will be omitted",
            verdict.omitted.len()
        ));
    }
    verdict.blocked = verdict.visible.iter().find_map(|tool| {
        let schema = tool.get("inputSchema")?;
        falsy_array_items(schema, "", 0).map(|pointer| Blocked {
            tool: tool_name(tool),
            pointer,
        })
    });
    verdict
}

/// The name of a tool (empty when it has none).
pub fn tool_name(tool: &Value) -> String {
    tool.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// VS Code's `_normalizeTool`: description `<empty>` when missing, and
/// `properties: {}` on an object inputSchema without it.
pub fn normalize_tool(tool: &Value) -> Value {
    let mut tool = tool.clone();
    if let Some(object) = tool.as_object_mut() {
        if !object.get("description").is_some_and(Value::is_string) {
            object.insert("description".into(), json!("<empty>"));
        }
        let schema = object
            .entry("inputSchema")
            .or_insert_with(|| json!({"type": "object"}));
        if let Some(schema) = schema.as_object_mut()
            && !schema.contains_key("properties")
        {
            schema.insert("properties".into(), Value::Object(Map::new()));
        }
    }
    tool
}

/// Whether `value` is falsy in JavaScript (`None` is `undefined`).
pub(crate) fn js_falsy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f == 0.0 || f.is_nan()),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => false,
    }
}

/// Deeper schemas than this are not examined (a guard against hostile input).
const MAX_DEPTH: usize = 128;

/// The pointer of the first array schema with falsy `items`, depth first.
fn falsy_array_items(schema: &Value, pointer: &str, depth: usize) -> Option<String> {
    let object = schema.as_object()?;
    if depth > MAX_DEPTH {
        return None;
    }
    if object.get("type").and_then(Value::as_str) == Some("array") && js_falsy(object.get("items"))
    {
        return Some(pointer.to_owned());
    }
    let child = |key: &str| format!("{pointer}/{}", escape(key));
    match object.get("items") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(p) =
                    falsy_array_items(item, &format!("{}/{i}", child("items")), depth + 1)
                {
                    return Some(p);
                }
            }
        }
        Some(items) => {
            if let Some(p) = falsy_array_items(items, &child("items"), depth + 1) {
                return Some(p);
            }
        }
        None => {}
    }
    for key in &ONE {
        if let Some(sub) = object.get(*key)
            && let Some(p) = falsy_array_items(sub, &child(key), depth + 1)
        {
            return Some(p);
        }
    }
    for key in &MAP {
        if let Some(Value::Object(map)) = object.get(*key) {
            for (name, sub) in map {
                let at = format!("{}/{}", child(key), escape(name));
                if let Some(p) = falsy_array_items(sub, &at, depth + 1) {
                    return Some(p);
                }
            }
        }
    }
    for key in &LIST {
        if let Some(Value::Array(list)) = object.get(*key) {
            for (i, sub) in list.iter().enumerate() {
                if let Some(p) = falsy_array_items(sub, &format!("{}/{i}", child(key)), depth + 1) {
                    return Some(p);
                }
            }
        }
    }
    None
}

/// RFC 6901 escaping of one reference token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: Value) -> Value {
        json!({"name": name, "description": "d", "inputSchema": schema})
    }

    #[test]
    fn omits_invalid_draft07_schemas() {
        let tools = vec![
            tool(
                "ok",
                json!({"type": "object", "properties": {"a": {"type": "number"}}}),
            ),
            tool(
                "bad",
                json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}),
            ),
            tool("bad2", json!({"type": "object", "required": "a"})),
            json!({"name": "nodesc", "inputSchema": {"type": "object"}}),
        ];
        let verdict = check_tools(&tools);
        assert_eq!(verdict.omitted, vec!["bad", "bad2"]);
        assert_eq!(
            verdict.log_line.as_deref(),
            Some("2 tools have invalid JSON schemas and will be omitted")
        );
        assert_eq!(verdict.visible.len(), 2);
        assert_eq!(verdict.visible[1]["description"], json!("<empty>"));
        assert_eq!(verdict.visible[1]["inputSchema"]["properties"], json!({}));
        assert!(verdict.blocked.is_none());
    }

    #[test]
    fn finds_falsy_array_items() {
        // Missing and false are valid draft-07, so check (b) sees them; null, 0
        // and "" are not valid draft-07, so check (a) omits the tool first.
        for (items, blocks) in [
            (None, true),
            (Some(json!(false)), true),
            (Some(json!(null)), false),
            (Some(json!(0)), false),
            (Some(json!("")), false),
        ] {
            let mut array = json!({"type": "array"});
            if let Some(items) = items {
                array["items"] = items;
            }
            let verdict = check_tools(&[
                tool(
                    "fine",
                    json!({"type": "object", "properties": {"v": {"type": "array", "items": {}}}}),
                ),
                tool(
                    "bare",
                    json!({"type": "object", "properties": {"x/y": {"anyOf": [{"type": "string"}, array]}}}),
                ),
            ]);
            if blocks {
                let blocked = verdict.blocked.expect("blocked");
                assert_eq!(blocked.tool, "bare");
                assert_eq!(blocked.pointer, "/properties/x~1y/anyOf/1");
            } else {
                assert_eq!(verdict.omitted, vec!["bare"]);
                assert!(verdict.blocked.is_none());
            }
        }
        // The walk itself also finds JS-falsy items that are not draft-07.
        let schema = json!({"type": "object", "properties": {"v": {"type": "array", "items": 0}}});
        assert_eq!(
            falsy_array_items(&schema, "", 0).as_deref(),
            Some("/properties/v")
        );
        let verdict = check_tools(&[tool(
            "tuple",
            json!({"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "array", "items": {}}]}}}),
        )]);
        assert!(verdict.blocked.is_none());
    }
}
