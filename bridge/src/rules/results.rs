//! The results that VS Code gets (R4, R5, R6, O10, O11, R8).
//!
//! A forwarded result equals the upstream result except for these edits; everything
//! else (annotations, icons, titles, `structuredContent`, extension members, unknown
//! members) passes untouched.

use super::SERVER_INFO_KEY;
use super::schema_repair::{SchemaFix, repair_array_items};
use crate::wire::shallow::ShallowObject;
use serde_json::{Map, Value, json};
use std::borrow::Cow;

type Object = Map<String, Value>;

/// The members of revision 2026-07-28 that a 2025-11-25 result never has.
const MODERN_RESULT_MEMBERS: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];

/// What an upstream result is, by its `resultType`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultKind {
    /// `complete`, or no `resultType` (an older server).
    Complete,
    /// An `InputRequiredResult` (R8): the bridge does the rounds.
    InputRequired,
    /// A value the bridge does not know: the result is not valid.
    Unknown(String),
}

pub fn result_kind(result: &Object) -> ResultKind {
    match result.get("resultType") {
        None => ResultKind::Complete,
        Some(Value::String(kind)) if kind == "complete" => ResultKind::Complete,
        Some(Value::String(kind)) if kind == "input_required" => ResultKind::InputRequired,
        Some(other) => ResultKind::Unknown(other.to_string()),
    }
}

/// A change that the Output channel reports (R6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSchemaFix {
    pub tool: String,
    pub fix: SchemaFix,
}

impl ToolSchemaFix {
    pub fn log_line(&self) -> crate::catalogue::RequestInfo<'_> {
        self.fix.log_line(&self.tool)
    }
}

/// Checks that a complete upstream result has the member that VS Code reads as an
/// array (or an object), as a typed client of revision 2026-07-28 would: a result
/// without it is not valid (`invalid_response`), and VS Code never sees it. A
/// tools/call result may lack `content` (R5 adds it), but not have another kind.
pub fn check_result_shape(method: &str, result: &Object) -> Result<(), ShapeError> {
    let (method, member, array, optional) = match method {
        "tools/list" => ("tools/list", "tools", true, false),
        "prompts/list" => ("prompts/list", "prompts", true, false),
        "resources/list" => ("resources/list", "resources", true, false),
        "resources/templates/list" => {
            ("resources/templates/list", "resourceTemplates", true, false)
        }
        "prompts/get" => ("prompts/get", "messages", true, false),
        "resources/read" => ("resources/read", "contents", true, false),
        "completion/complete" => ("completion/complete", "completion", false, false),
        "tools/call" => ("tools/call", "content", true, true),
        _ => return Ok(()),
    };
    let kind = if array { "array" } else { "object" };
    match result.get(member) {
        None if optional => Ok(()),
        Some(value) if value.is_array() == array && (array || value.is_object()) => Ok(()),
        Some(_) if optional => Err(ShapeError::WrongKind {
            method,
            member,
            kind,
        }),
        _ => Err(ShapeError::Missing {
            method,
            member,
            kind,
        }),
    }
}

/// Why a complete result is not valid for VS Code (`invalid_response`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("the {method} result has no {member} {kind}")]
    Missing {
        method: &'static str,
        member: &'static str,
        kind: &'static str,
    },
    #[error("the {method} result has a {member} that is not an {kind}")]
    WrongKind {
        method: &'static str,
        member: &'static str,
        kind: &'static str,
    },
}

/// What [`shape_call_result_shallow`] (or
/// [`shape_tools_list_shallow`](super::tools_list::shape_tools_list_shallow)) did.
#[derive(Debug, PartialEq, Eq)]
pub enum ShallowShape {
    /// The result is ready for VS Code; the schema fixes for the Output channel (R6).
    Shaped(Vec<ToolSchemaFix>),
    /// Not a complete result, or one with `structuredContent`: the rules need
    /// the whole tree, so the result goes the way of every other.
    NeedsTree,
    /// Not valid (`invalid_response`), as [`check_result_shape`] says.
    Invalid(ShapeError),
}

/// A complete tools/call result, read one level deep, shaped as [`shape_result`]
/// shapes it (R8, O10, R5): the same edits, without a tree of the content.
pub fn shape_call_result_shallow(result: &mut ShallowObject<'_>) -> ShallowShape {
    let complete = result
        .get("resultType")
        .is_none_or(|kind| kind == "\"complete\"");
    let structured = result
        .get("structuredContent")
        .is_some_and(|structured| structured != "null");
    if !complete || structured {
        return ShallowShape::NeedsTree;
    }
    match result.get("content") {
        Some(content) if !content.starts_with('[') => {
            return ShallowShape::Invalid(ShapeError::WrongKind {
                method: "tools/call",
                member: "content",
                kind: "array",
            });
        }
        Some(_) => {}
        None => result.insert_json("content", Cow::Borrowed("[]")),
    }
    strip_modern_members_shallow(result);
    ShallowShape::Shaped(Vec::new())
}

/// [`strip_modern_members`] on a result read one level deep (R8, O10).
pub(super) fn strip_modern_members_shallow(result: &mut ShallowObject<'_>) {
    // `None`: no `_meta` object; `Some(None)`: one that becomes empty.
    let edited_meta = result
        .get("_meta")
        .and_then(ShallowObject::parse)
        .map(|mut meta| {
            meta.retain(|name| name != SERVER_INFO_KEY);
            (!meta.is_empty()).then(|| meta.to_json())
        });
    result.retain(|name| !MODERN_RESULT_MEMBERS.contains(&name));
    match edited_meta {
        None => {}
        Some(None) => result.retain(|name| name != "_meta"),
        Some(Some(meta)) => result.insert_json("_meta", Cow::Owned(meta)),
    }
}

/// Shapes a complete upstream result of `method` for VS Code, in place.
pub fn shape_result(method: &str, result: &mut Object) -> Vec<ToolSchemaFix> {
    strip_modern_members(result);
    let mut fixes = Vec::new();
    match method {
        "tools/list" => {
            drop_non_string_cursor(result);
            fixes = shape_tools(result);
        }
        "prompts/list" | "resources/list" | "resources/templates/list" => {
            drop_non_string_cursor(result)
        }
        "tools/call" => shape_call_result(result),
        _ => {}
    }
    fixes
}

/// Removes `resultType`, `ttlMs`, `cacheScope` and the serverInfo key of `_meta`,
/// and `_meta` itself when nothing is left in it (R8, O10).
pub fn strip_modern_members(result: &mut Object) {
    result.retain(|name, _| !MODERN_RESULT_MEMBERS.contains(&name.as_str()));
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        meta.shift_remove(SERVER_INFO_KEY);
        if meta.is_empty() {
            result.shift_remove("_meta");
        }
    }
}

/// R4: VS Code asks for another page while `nextCursor` is present, even `null`.
fn drop_non_string_cursor(result: &mut Object) {
    if result
        .get("nextCursor")
        .is_some_and(|cursor| !cursor.is_string())
    {
        result.shift_remove("nextCursor");
    }
}

/// R6: every input schema gets truthy array `items`; an output schema whose root is
/// not `type: "object"` goes, as revision 2025-11-25 allows no other.
fn shape_tools(result: &mut Object) -> Vec<ToolSchemaFix> {
    let mut fixes = Vec::new();
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return fixes;
    };
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(schema) = tool.get_mut("inputSchema") {
            fixes.extend(
                repair_array_items(schema)
                    .into_iter()
                    .map(|fix| ToolSchemaFix {
                        tool: name.clone(),
                        fix,
                    }),
            );
        }
        let object_root = tool
            .get("outputSchema")
            .is_some_and(|schema| schema.get("type").and_then(Value::as_str) == Some("object"));
        if tool.contains_key("outputSchema") && !object_root {
            tool.shift_remove("outputSchema");
        }
    }
    fixes
}

/// R5: a `content` array; and a text block with the JSON of `structuredContent`
/// when the upstream sent structured content without any text.
fn shape_call_result(result: &mut Object) {
    if !result.contains_key("content") {
        result.insert("content".into(), Value::Array(Vec::new()));
    }
    let structured = match result.get("structuredContent") {
        Some(Value::Null) | None => return,
        Some(structured) => structured.to_string(),
    };
    if let Some(Value::Array(content)) = result.get_mut("content") {
        let has_text = content
            .iter()
            .any(|block| block.get("type").and_then(Value::as_str) == Some("text"));
        if !has_text {
            content.push(json!({"type": "text", "text": structured}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two ways of shaping a tools/call result agree, member order included.
    #[test]
    fn the_shallow_call_result_is_the_shaped_tree_to_the_letter() {
        let cases = [
            r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete","isError":false}"#,
            r#"{"resultType":"complete","isError":true}"#,
            r#"{"isError":false,"ttlMs":5,"cacheScope":"private","content":[]}"#,
            r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}"#,
            r#"{"_meta":{"a":1,"io.modelcontextprotocol/serverInfo":{},"b":[2]},"content":[]}"#,
            r#"{"_meta":"not an object","content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
            r#"{"content":[],"structuredContent":null,"x-extension":{"k":"v"}}"#,
            r#"{"content":[],"content":[{"type":"text","text":"last"}]}"#,
        ];
        for case in cases {
            let mut shallow = ShallowObject::parse(case).unwrap();
            assert_eq!(
                shape_call_result_shallow(&mut shallow),
                ShallowShape::Shaped(Vec::new()),
                "{case}"
            );
            let (tree, fixes) = shaped("tools/call", serde_json::from_str(case).unwrap());
            assert!(fixes.is_empty());
            assert_eq!(
                shallow.to_json(),
                serde_json::to_string(&tree).unwrap(),
                "{case}"
            );
        }
    }

    #[test]
    fn a_call_result_that_the_rules_must_see_whole_takes_the_tree() {
        for case in [
            r#"{"content":[],"structuredContent":{"a":1}}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"other","content":[]}"#,
        ] {
            let mut shallow = ShallowObject::parse(case).unwrap();
            assert_eq!(
                shape_call_result_shallow(&mut shallow),
                ShallowShape::NeedsTree,
                "{case}"
            );
        }
    }

    #[test]
    fn a_call_result_with_content_of_another_kind_is_invalid_in_both_ways() {
        let case = r#"{"content":"text"}"#;
        let mut shallow = ShallowObject::parse(case).unwrap();
        let tree: Value = serde_json::from_str(case).unwrap();
        assert_eq!(
            shape_call_result_shallow(&mut shallow),
            ShallowShape::Invalid(
                check_result_shape("tools/call", tree.as_object().unwrap()).unwrap_err()
            )
        );
    }

    fn shaped(method: &str, result: Value) -> (Value, Vec<ToolSchemaFix>) {
        let mut object = result.as_object().unwrap().clone();
        let fixes = shape_result(method, &mut object);
        (Value::Object(object), fixes)
    }

    #[test]
    fn r8_modern_members_and_server_info_go() {
        let (result, _) = shaped(
            "resources/read",
            json!({"contents":[],"resultType":"complete","ttlMs":0,"cacheScope":"private",
                   "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}),
        );
        assert_eq!(result, json!({"contents":[]}));
        let (result, _) = shaped(
            "prompts/get",
            json!({"messages":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"app/key":1}}),
        );
        assert_eq!(result, json!({"messages":[],"_meta":{"app/key":1}}));
    }

    #[test]
    fn r4_only_string_cursors_stay() {
        for method in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ] {
            for cursor in [json!(null), json!(5), json!({})] {
                let (result, _) = shaped(method, json!({"items":[],"nextCursor":cursor}));
                assert_eq!(result, json!({"items":[]}), "{method} {cursor}");
            }
            let (result, _) = shaped(method, json!({"nextCursor":""}));
            assert_eq!(result, json!({"nextCursor":""}));
        }
    }

    #[test]
    fn r5_a_call_result_always_has_content() {
        let (result, _) = shaped("tools/call", json!({"isError":false}));
        assert_eq!(result, json!({"isError":false,"content":[]}));
    }

    #[test]
    fn r5_structured_content_without_text_gets_a_text_block() {
        let (result, _) = shaped(
            "tools/call",
            json!({"content":[],"structuredContent":[1,2,3]}),
        );
        assert_eq!(
            result,
            json!({"content":[{"type":"text","text":"[1,2,3]"}],"structuredContent":[1,2,3]})
        );
        let with_text =
            json!({"content":[{"type":"text","text":"5 bytes"}],"structuredContent":{"a":1}});
        assert_eq!(shaped("tools/call", with_text.clone()).0, with_text);
    }

    #[test]
    fn r6_tools_list_repairs_schemas_and_drops_non_object_output_schemas() {
        let (result, fixes) = shaped(
            "tools/list",
            json!({"tools":[
                {"name":"a","inputSchema":{"type":"object","properties":{"v":{"type":"array"}}},
                 "outputSchema":{"type":"array","items":{"type":"integer"}},"annotations":{"readOnlyHint":true}},
                {"name":"b","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}},
                {"name":"c","inputSchema":{"type":"object"},"outputSchema":{"properties":{}}}
            ],"nextCursor":null,"resultType":"complete","ttlMs":5,"cacheScope":"public"}),
        );
        assert_eq!(
            result,
            json!({"tools":[
                {"name":"a","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":{}}}},
                 "annotations":{"readOnlyHint":true}},
                {"name":"b","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}},
                {"name":"c","inputSchema":{"type":"object"}}
            ]})
        );
        assert_eq!(fixes.len(), 1);
        assert_eq!(
            fixes[0].log_line().to_string(),
            "tool 'a': added an items schema at '/properties/v' of the input schema"
        );
    }

    #[test]
    fn results_need_the_member_that_vscode_reads() {
        let check = |method: &str, v: Value| {
            check_result_shape(method, v.as_object().unwrap()).map_err(|error| error.to_string())
        };
        assert_eq!(check("tools/list", json!({"tools":[]})), Ok(()));
        assert_eq!(
            check("tools/list", json!({"tools":{}})),
            Err("the tools/list result has no tools array".to_owned())
        );
        assert_eq!(check("tools/call", json!({})), Ok(()));
        assert_eq!(
            check("tools/call", json!({"content":null})),
            Err("the tools/call result has a content that is not an array".to_owned())
        );
        assert_eq!(
            check("completion/complete", json!({"completion":{}})),
            Ok(())
        );
        assert!(check("completion/complete", json!({"completion":[]})).is_err());
        assert_eq!(check("x/unknown", json!({})), Ok(()));
    }

    #[test]
    fn result_kinds() {
        let kind = |v: Value| result_kind(v.as_object().unwrap());
        assert_eq!(kind(json!({})), ResultKind::Complete);
        assert_eq!(kind(json!({"resultType":"complete"})), ResultKind::Complete);
        assert_eq!(
            kind(json!({"resultType":"input_required"})),
            ResultKind::InputRequired
        );
        assert_eq!(
            kind(json!({"resultType":"task"})),
            ResultKind::Unknown("\"task\"".into())
        );
        assert_eq!(
            kind(json!({"resultType":1})),
            ResultKind::Unknown("1".into())
        );
    }
}
