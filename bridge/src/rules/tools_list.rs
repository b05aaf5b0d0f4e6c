//! A tools/list result read one level deep (R4, R6, R8): the edits of
//! [`shape_result`](super::results::shape_result) for tools/list, with a tree only
//! of each tool's schemas. A list of 10,000 tools is otherwise parsed into a tree
//! whole and written out again, for the few members that the rules touch.
//!
//! A tool that needs no edit stays the text it came as; so does the `tools` array
//! when no tool needs one.

use super::results::{ShallowShape, ShapeError, ToolSchemaFix, strip_modern_members_shallow};
use super::schema_repair::{MAX_SCHEMA_DEPTH, repair_array_items};
use crate::wire::shallow::ShallowObject;
use serde_json::Value;
use std::borrow::Cow;

/// The rules of a complete tools/list result, applied to its members' text:
/// R8 (the members of revision 2026-07-28), R4 (a `nextCursor` that is not a
/// string goes), R6 (the schemas). `NeedsTree` for a result that is not
/// complete; `Invalid` without a `tools` array, as
/// [`check_result_shape`](super::results::check_result_shape) says.
pub fn shape_tools_list_shallow(result: &mut ShallowObject<'_>) -> ShallowShape {
    let complete = result
        .get("resultType")
        .is_none_or(|kind| kind == "\"complete\"");
    if !complete {
        return ShallowShape::NeedsTree;
    }
    let Some(tools) = result.get("tools") else {
        return missing_tools();
    };
    if !tools.starts_with('[') {
        return missing_tools();
    }
    let mut fixes = Vec::new();
    // The array, then each tool in it, is read only when its text shows that
    // R6 may change something: most lists need no edit at all.
    let tools = if may_need_an_edit(tools, TOOL_LEVELS_ABOVE_A_SCHEMA) {
        let Some(items) = json_shallow::array_items(tools, usize::MAX) else {
            return missing_tools();
        };
        let mut shaped_items: Vec<Cow<'_, str>> = Vec::with_capacity(items.len());
        let mut edited = false;
        for item in items {
            match shape_tool(item, &mut fixes) {
                Some(tool) => {
                    edited = true;
                    shaped_items.push(Cow::Owned(tool));
                }
                None => shaped_items.push(Cow::Borrowed(item)),
            }
        }
        edited.then(|| format!("[{}]", shaped_items.join(",")))
    } else {
        None
    };
    strip_modern_members_shallow(result);
    if result
        .get("nextCursor")
        .is_some_and(|cursor| !cursor.starts_with('"'))
    {
        result.remove("nextCursor");
    }
    if let Some(tools) = tools {
        result.insert_json("tools", tools);
    }
    ShallowShape::Shaped(fixes)
}

fn missing_tools() -> ShallowShape {
    ShallowShape::Invalid(ShapeError::Missing {
        method: "tools/list",
        member: "tools",
        kind: "array",
    })
}

/// R6 for one item of `tools`: every input schema gets truthy array `items`, and
/// an output schema whose root is not `type: "object"` goes. The tool's new text
/// when it changed; `None` when it stays as it came (or is not an object, which
/// the tree path leaves alone too).
fn shape_tool(item: &str, fixes: &mut Vec<ToolSchemaFix>) -> Option<String> {
    if !may_need_an_edit(item, 1) {
        return None;
    }
    let mut tool = ShallowObject::parse(item)?;
    let mut changed = false;
    if let Some(schema) = tool
        .get("inputSchema")
        .filter(|schema| may_need_an_edit(schema, 0))
    {
        // The text was read as JSON, so only a number out of serde_json's range
        // (or a lone surrogate) fails here; such a schema is left as it came.
        if let Ok(mut schema) = serde_json::from_str::<Value>(schema) {
            let schema_fixes = repair_array_items(&mut schema);
            if !schema_fixes.is_empty() {
                let name = string_member(&tool, "name");
                fixes.extend(schema_fixes.into_iter().map(|fix| ToolSchemaFix {
                    tool: name.clone(),
                    fix,
                }));
                tool.insert_value("inputSchema", &schema);
                changed = true;
            }
        }
    }
    if tool
        .get("outputSchema")
        .is_some_and(|schema| !has_object_root(schema))
    {
        tool.remove("outputSchema");
        changed = true;
    }
    changed.then(|| tool.to_json())
}

/// The levels of the `tools` array and of a tool above the tool's input schema.
const TOOL_LEVELS_ABOVE_A_SCHEMA: usize = 2;

/// Whether R6 may change `json`, the valid JSON text of a tool, of the tools
/// array or of an input schema, which sits `levels_above` levels above the input
/// schemas in it. `false` only when no edit is possible:
/// - every fix of `repair_array_items` but "too deep" is at a schema whose
///   `type` is "array", which the text must spell;
/// - "too deep" needs a schema nested past `MAX_SCHEMA_DEPTH` levels of schemas,
///   each at least one level of JSON;
/// - an output schema is a member whose name the text must spell.
fn may_need_an_edit(json: &str, levels_above: usize) -> bool {
    json_shallow::may_spell(json.as_bytes(), &["array", "outputSchema"])
        || json_shallow::nesting(json) > MAX_SCHEMA_DEPTH + levels_above
}

/// Whether `schema` (JSON text) is an object whose `type` is the string "object".
fn has_object_root(schema: &str) -> bool {
    ShallowObject::parse(schema).is_some_and(|schema| string_member(&schema, "type") == "object")
}

/// The member `name` of `object` as a string ("" when it is none), its escapes undone.
fn string_member(object: &ShallowObject<'_>, name: &str) -> String {
    object
        .get(name)
        .filter(|text| text.starts_with('"'))
        .and_then(|text| serde_json::from_str::<String>(text).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::results::{check_result_shape, shape_result};
    use serde_json::json;

    /// The shallow result and the tree's, with their fixes, for the same text.
    fn both(text: &str) -> ((Value, Vec<ToolSchemaFix>), (Value, Vec<ToolSchemaFix>)) {
        let mut shallow = ShallowObject::parse(text).unwrap();
        let ShallowShape::Shaped(shallow_fixes) = shape_tools_list_shallow(&mut shallow) else {
            panic!("not shaped: {text}");
        };
        let shallow: Value = serde_json::from_str(&shallow.to_json()).unwrap();
        let Value::Object(mut tree) = serde_json::from_str(text).unwrap() else {
            panic!("not an object: {text}");
        };
        check_result_shape("tools/list", &tree).unwrap();
        let tree_fixes = shape_result("tools/list", &mut tree);
        ((shallow, shallow_fixes), (Value::Object(tree), tree_fixes))
    }

    #[test]
    fn the_shallow_list_is_the_shaped_tree_to_the_letter() {
        for result in [
            json!({"tools": []}),
            json!({"tools": [], "nextCursor": null, "resultType": "complete", "ttlMs": 5,
                   "cacheScope": "session", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}}),
            json!({"tools": [], "nextCursor": 3, "_meta": {"io.modelcontextprotocol/serverInfo": {}, "k": 1}}),
            json!({"tools": [], "nextCursor": "c2"}),
            json!({"tools": [
                {"name": "plain", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
                {"name": "list", "inputSchema": {"type": "object", "properties": {"xs": {"type": "array"}}}},
                {"name": "none", "inputSchema": {"type": "array", "items": false, "prefixItems": [{}]}},
                {"name": "out", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}},
                {"name": "out2", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
                {"name": "out3", "inputSchema": {"type": "object"}, "outputSchema": "object"},
                {"name": "esc\u{e9}", "inputSchema": {"type": "array"}, "outputSchema": {"type": "\u{6f}bject"}},
                7, "x", null, [],
                {"inputSchema": {"type": "array", "items": null}},
                {"name": 5, "inputSchema": {"type": "array", "items": 0}},
            ], "nextCursor": "next"}),
        ] {
            let ((shallow, shallow_fixes), (tree, tree_fixes)) = both(&result.to_string());
            assert_eq!(shallow, tree, "{result}");
            assert_eq!(shallow_fixes, tree_fixes, "{result}");
        }
    }

    #[test]
    fn escapes_repeats_and_spaces_in_the_text_are_read_as_the_tree_reads_them() {
        for text in [
            r#"{"tools":[{"name":"a\u00e9","outputSchema":{"type":"\u006fbject"},"inputSchema":{"type":"array"}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"object"},"inputSchema":{"type":"array"}}]}"#,
            r#"{"tools":[{"name":"a","outputSchema":{"type":"object"},"outputSchema":{"type":"string"}}]}"#,
            r#"{"tools" : [ { "name" : "a" , "inputSchema" : { "type" : "array" } } , 1 ] , "tools":[]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"arr\u0061y"}}]}"#,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"object"},"output\u0053chema":{"type":"string"}}]}"#,
            r#"{"tools":[{"name":"plain","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"array"}}]}"#,
        ] {
            let ((shallow, shallow_fixes), (tree, tree_fixes)) = both(text);
            assert_eq!(shallow, tree, "{text}");
            assert_eq!(shallow_fixes, tree_fixes, "{text}");
        }
    }

    #[test]
    fn a_schema_too_deep_to_examine_is_logged_though_it_has_no_array() {
        // Each `not` is one level of schemas and one of JSON.
        for levels in [63, 64, 65, 66] {
            let mut schema = json!({"type": "object"});
            for _ in 1..levels {
                schema = json!({"not": schema});
            }
            let result = json!({"tools": [{"name": "deep", "inputSchema": schema}]});
            let ((shallow, shallow_fixes), (tree, tree_fixes)) = both(&result.to_string());
            assert_eq!(shallow, tree, "{levels}");
            assert_eq!(shallow_fixes, tree_fixes, "{levels}");
            assert_eq!(
                tree_fixes.is_empty(),
                levels <= MAX_SCHEMA_DEPTH,
                "{levels}"
            );
        }
    }

    #[test]
    fn a_schema_that_serde_json_cannot_hold_stays_as_it_came() {
        // A number out of range is JSON text but no `f64`: as in a tools/call result
        // passed one level deep, it goes to VS Code as the upstream wrote it.
        let text = r#"{"tools":[{"name":"big","inputSchema":{"type":"array","maxItems":1e400}}]}"#;
        let mut result = ShallowObject::parse(text).unwrap();
        assert_eq!(
            shape_tools_list_shallow(&mut result),
            ShallowShape::Shaped(Vec::new())
        );
        assert_eq!(result.to_json(), text);
    }

    #[test]
    fn a_list_that_needs_no_edit_keeps_its_text() {
        let text =
            r#"{"tools":[ {"name":"a", "inputSchema":{"type":"object"}} ],"nextCursor":"n"}"#;
        let mut result = ShallowObject::parse(text).unwrap();
        assert_eq!(
            shape_tools_list_shallow(&mut result),
            ShallowShape::Shaped(Vec::new())
        );
        assert_eq!(
            result.get("tools"),
            Some(r#"[ {"name":"a", "inputSchema":{"type":"object"}} ]"#)
        );
    }

    #[test]
    fn a_result_without_a_tools_array_is_invalid_and_one_that_asks_for_input_takes_the_tree() {
        for text in [r#"{}"#, r#"{"tools":{}}"#, r#"{"tools":null}"#] {
            let mut result = ShallowObject::parse(text).unwrap();
            let ShallowShape::Invalid(error) = shape_tools_list_shallow(&mut result) else {
                panic!("not invalid: {text}");
            };
            let tree = serde_json::from_str(text).unwrap();
            assert_eq!(check_result_shape("tools/list", &tree), Err(error));
        }
        let mut asking =
            ShallowObject::parse(r#"{"resultType":"input_required","inputRequests":{}}"#).unwrap();
        assert_eq!(
            shape_tools_list_shallow(&mut asking),
            ShallowShape::NeedsTree
        );
    }
}
