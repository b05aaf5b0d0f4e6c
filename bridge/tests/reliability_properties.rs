//! Properties over generated JSON (proptest).
//!
//! - Transparency: a forwarded result equals the upstream result except for the
//!   listed rules (R4, R5, R6, R8, O10), by an independent model of those rules
//!   (R6 included: `model_repair`, not the bridge's repair function),
//!   and through a whole in-process session.
//! - The schema repair (R6) is idempotent and leaves no array schema without a
//!   truthy `items` in the depth that it examines.
//! - No rule panics on any JSON value.
//! - The id of a line over the limit is recovered from its start or its end.

use crate::common;

use common::*;
use mcp_bridge_vscode::internals::net::url::url_is_safe;
use mcp_bridge_vscode::internals::notify::events;
use mcp_bridge_vscode::internals::rules::capabilities::{self, Declared, InputKinds};
use mcp_bridge_vscode::internals::rules::initialize::{FallbackIdentity, initialize_result};
use mcp_bridge_vscode::internals::rules::input::{Ask, answer_of, form_content_error, plan_round};
use mcp_bridge_vscode::internals::rules::results::{
    ResultKind, ShallowShape, check_result_shape, result_kind, shape_call_result_shallow,
    shape_result,
};
use mcp_bridge_vscode::internals::rules::schema_repair::{
    MAX_SCHEMA_DEPTH, SchemaFix, is_falsy_in_javascript, repair_array_items,
};
use mcp_bridge_vscode::internals::rules::tools_list::shape_tools_list_shallow;
use mcp_bridge_vscode::internals::rules::{SERVER_INFO_KEY, errors, meta, progress};
use mcp_bridge_vscode::internals::wire::id::recover_id;
use mcp_bridge_vscode::internals::wire::shallow::ShallowObject;
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};
use std::collections::HashSet;

/// The forwarded methods of the bridge, and one it does not know.
fn methods() -> Vec<&'static str> {
    let mut methods = mcp_bridge_vscode::internals::rules::FORWARDED_METHODS.to_vec();
    methods.push("x/unknown");
    methods
}

const LIST_METHODS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// Keys that the rules look at, so that generated values reach them.
const KEYS: &[&str] = &[
    "type",
    "items",
    "prefixItems",
    "maxItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "additionalItems",
    "anyOf",
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "dependencies",
    "dependentSchemas",
    "contains",
    "propertyNames",
    "tools",
    "name",
    "inputSchema",
    "outputSchema",
    "content",
    "structuredContent",
    "nextCursor",
    "resultType",
    "ttlMs",
    "cacheScope",
    "_meta",
    SERVER_INFO_KEY,
    "inputRequests",
    "requestState",
    "method",
    "params",
    "mode",
    "message",
    "url",
    "requestedSchema",
    "text",
    "capabilities",
    "progressToken",
    "prompts",
    "resources",
    "messages",
    "contents",
    "completion",
];

const WORDS: &[&str] = &[
    "array",
    "object",
    "string",
    "text",
    "complete",
    "input_required",
    "elicitation/create",
    "url",
    "form",
    "",
    "-0",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-z/~]{1,5}",
    ]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        (-2i64..3).prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        prop::sample::select(WORDS).prop_map(|w| Value::String(w.to_owned())),
        "\\PC{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key(), json_value()), 0..8)
        .prop_map(|members| members.into_iter().collect())
}

/// The rules of the contract for a complete result, written apart from the bridge.
fn model(method: &str, input: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in input {
        match key.as_str() {
            // R8: members of revision 2026-07-28 only.
            "resultType" | "ttlMs" | "cacheScope" => {}
            // O10: the server's identity leaves _meta; an empty _meta goes.
            "_meta" if value.is_object() => {
                let kept: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(key, _)| *key != SERVER_INFO_KEY)
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect();
                if !kept.is_empty() {
                    out.insert(key.clone(), Value::Object(kept));
                }
            }
            // R4: only string cursors.
            "nextCursor" if LIST_METHODS.contains(&method) && !value.is_string() => {}
            // R6: the tools get repaired input schemas and lose non-object output schemas.
            "tools" if method == "tools/list" => {
                let tools = match value {
                    Value::Array(tools) => Value::Array(tools.iter().map(model_tool).collect()),
                    other => other.clone(),
                };
                out.insert(key.clone(), tools);
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if method == "tools/call" {
        // R5: a content array; structured content alone gets its text block.
        if !out.contains_key("content") {
            out.insert("content".into(), json!([]));
        }
        let structured = out
            .get("structuredContent")
            .filter(|s| !s.is_null())
            .cloned();
        if let (Some(structured), Some(Value::Array(content))) =
            (structured, out.get_mut("content"))
            && !content.iter().any(|block| block["type"] == "text")
        {
            content.push(json!({"type":"text","text":structured.to_string()}));
        }
    }
    out
}

fn model_tool(tool: &Value) -> Value {
    let Value::Object(tool) = tool else {
        return tool.clone();
    };
    let mut out = Map::new();
    for (key, value) in tool {
        match key.as_str() {
            "inputSchema" => {
                out.insert(key.clone(), model_repair(value, 1));
            }
            "outputSchema" if value.get("type").and_then(Value::as_str) != Some("object") => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// R6 written apart from the bridge's repair: every schema with `type: "array"`
/// whose `items` is missing or false in JavaScript gets `items: {}` (`items: false`
/// also a `maxItems` of the `prefixItems` count, unless it has one), in each
/// sub-schema of the JSON Schema keywords, down to the depth limit.
fn model_repair(node: &Value, depth: usize) -> Value {
    const ONE: [&str; 11] = [
        "additionalProperties",
        "additionalItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "items",
    ];
    const MAP: [&str; 6] = [
        "properties",
        "patternProperties",
        "dependencies",
        "dependentSchemas",
        "$defs",
        "definitions",
    ];
    const LIST: [&str; 5] = ["anyOf", "allOf", "oneOf", "prefixItems", "items"];
    let Value::Object(schema) = node else {
        return node.clone();
    };
    if depth > MAX_SCHEMA_DEPTH {
        return node.clone();
    }
    let child = |value: &Value| model_repair(value, depth + 1);
    let mut out = Map::new();
    for (key, value) in schema {
        let repaired = match (key.as_str(), value) {
            (key, Value::Object(members)) if MAP.contains(&key) => Value::Object(
                members
                    .iter()
                    .map(|(name, member)| (name.clone(), child(member)))
                    .collect(),
            ),
            (key, Value::Array(members)) if LIST.contains(&key) => {
                Value::Array(members.iter().map(child).collect())
            }
            (key, Value::Object(_)) if ONE.contains(&key) => child(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), repaired);
    }
    if out.get("type") == Some(&json!("array")) {
        let falsy = |value: &Value| match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            _ => false,
        };
        match out.get("items") {
            Some(Value::Bool(false)) => {
                out.insert("items".into(), json!({}));
                if !out.contains_key("maxItems") {
                    let prefix = out
                        .get("prefixItems")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    out.insert("maxItems".into(), prefix.into());
                }
            }
            Some(items) if !falsy(items) => {}
            _ => {
                out.insert("items".into(), json!({}));
            }
        }
    }
    Value::Object(out)
}

/// Every array schema that the repair examines has a truthy `items`: the walk of
/// the R6 keywords, written apart from the bridge.
fn arrays_without_items(node: &Value, depth: usize, found: &mut Vec<Value>) {
    let Value::Object(schema) = node else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    if schema.get("type").and_then(Value::as_str) == Some("array")
        && schema.get("items").is_none_or(is_falsy_in_javascript)
    {
        found.push(node.clone());
    }
    for (key, value) in schema {
        let children: Vec<&Value> = match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "dependencies" | "dependentSchemas" | "$defs"
                | "definitions",
                Value::Object(members),
            ) => members.values().collect(),
            ("anyOf" | "allOf" | "oneOf" | "prefixItems" | "items", Value::Array(members)) => {
                members.iter().collect()
            }
            (
                "additionalProperties"
                | "additionalItems"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "propertyNames"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else"
                | "items",
                Value::Object(_),
            ) => vec![value],
            _ => vec![],
        };
        for child in children {
            arrays_without_items(child, depth + 1, found);
        }
    }
}

/// JSON schemas rich in array schemas, with each kind of `items` and each kind of
/// keyword that holds sub-schemas.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "array"})),
        Just(json!({"type": "array", "items": false})),
        Just(json!({"type": "array", "items": 0})),
        Just(json!({"type": "array", "items": ""})),
        Just(json!({"type": "array", "items": null})),
        Just(json!({"type": "array", "items": true, "maxItems": 2})),
        Just(json!({"type": ["array", "null"]})),
        Just(json!({"type": "string"})),
        Just(json!(true)),
        Just(json!(false)),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        (
            prop::sample::select(vec!["array", "object", "string"]),
            prop::sample::select(vec![
                "properties",
                "items",
                "anyOf",
                "prefixItems",
                "additionalProperties",
                "not",
                "$defs",
                "x-other",
            ]),
            prop::collection::vec(inner, 1..4),
            any::<bool>(),
        )
            .prop_map(|(kind, keyword, members, one)| {
                let value = match keyword {
                    "properties" | "$defs" => Value::Object(
                        members
                            .into_iter()
                            .enumerate()
                            .map(|(i, m)| (format!("p{i}"), m))
                            .collect(),
                    ),
                    "items" | "additionalProperties" | "not" | "x-other" if one => {
                        members[0].clone()
                    }
                    _ => Value::Array(members),
                };
                let mut schema = Map::new();
                schema.insert("type".into(), kind.into());
                schema.insert(keyword.into(), value);
                Value::Object(schema)
            })
    })
}

/// A tools/list result: tools with generated schemas (or other values), and
/// the members that R4 and R8 edit.
fn tools_list_result() -> impl Strategy<Value = Map<String, Value>> {
    let tool = prop_oneof![
        4 => (
            prop::sample::select(vec!["t", "t\u{e9}", "", "a/b"]),
            prop::option::of(schema()),
            prop::option::of(prop_oneof![schema(), json_value()]),
            json_object(),
        )
            .prop_map(|(name, input, output, mut extra)| {
                extra.insert("name".into(), name.into());
                if let Some(input) = input {
                    extra.insert("inputSchema".into(), input);
                }
                if let Some(output) = output {
                    extra.insert("outputSchema".into(), output);
                }
                Value::Object(extra)
            }),
        1 => json_value(),
    ];
    (
        prop::option::of(prop_oneof![
            prop::collection::vec(tool, 0..5).prop_map(Value::Array),
            json_value()
        ]),
        json_object(),
    )
        .prop_map(|(tools, mut result)| {
            if let Some(tools) = tools {
                result.insert("tools".into(), tools);
            }
            result
        })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn transparency_a_shaped_result_equals_the_upstream_result_but_for_the_listed_rules(
        result in json_object(),
        method in prop::sample::select(methods()),
    ) {
        let mut shaped = result.clone();
        shape_result(method, &mut shaped);
        // The key order is kept too: compare the text.
        prop_assert_eq!(
            Value::Object(shaped).to_string(),
            Value::Object(model(method, &result)).to_string()
        );
    }

    /// The hot path of tools/call results (one level deep) gives VS Code the very
    /// text of the full path, or leaves the result to it.
    #[test]
    fn the_shallow_call_result_equals_the_shaped_tree_or_takes_the_tree(result in json_object()) {
        let text = Value::Object(result.clone()).to_string();
        let mut shallow = ShallowObject::parse(&text).unwrap();
        let structured = result.get("structuredContent").is_some_and(|s| !s.is_null());
        match shape_call_result_shallow(&mut shallow) {
            ShallowShape::Shaped(fixes) => {
                prop_assert!(fixes.is_empty());
                prop_assert_eq!(result_kind(&result), ResultKind::Complete);
                prop_assert!(check_result_shape("tools/call", &result).is_ok());
                prop_assert!(!structured);
                let mut shaped = result.clone();
                shape_result("tools/call", &mut shaped);
                let passed = shallow.to_json();
                prop_assert_eq!(passed, Value::Object(shaped).to_string());
            }
            ShallowShape::Invalid(detail) => {
                prop_assert_eq!(result_kind(&result), ResultKind::Complete);
                prop_assert_eq!(check_result_shape("tools/call", &result), Err(detail));
            }
            ShallowShape::NeedsTree => {
                prop_assert!(structured || result_kind(&result) != ResultKind::Complete);
            }
        }
    }

    /// The tools/list read one level deep (R4, R6, R8) gives VS Code the result and
    /// the Output-channel fixes of the full path, or leaves the result to it.
    #[test]
    fn the_shallow_tools_list_equals_the_shaped_tree_or_takes_the_tree(
        result in tools_list_result(),
    ) {
        let text = Value::Object(result.clone()).to_string();
        let mut shallow = ShallowObject::parse(&text).unwrap();
        match shape_tools_list_shallow(&mut shallow) {
            ShallowShape::Shaped(fixes) => {
                prop_assert_eq!(result_kind(&result), ResultKind::Complete);
                prop_assert!(check_result_shape("tools/list", &result).is_ok());
                let mut shaped = result.clone();
                let tree_fixes = shape_result("tools/list", &mut shaped);
                let passed: Value = serde_json::from_str(&shallow.to_json()).unwrap();
                prop_assert_eq!(passed, Value::Object(shaped));
                prop_assert_eq!(fixes, tree_fixes);
            }
            ShallowShape::Invalid(detail) => {
                prop_assert_eq!(result_kind(&result), ResultKind::Complete);
                prop_assert_eq!(check_result_shape("tools/list", &result), Err(detail));
            }
            ShallowShape::NeedsTree => {
                prop_assert!(result_kind(&result) != ResultKind::Complete);
            }
        }
    }

    /// R6 by the independent model: the bridge's repair gives the same schema.
    #[test]
    fn the_schema_repair_equals_the_independent_model_of_r6(schema in schema()) {
        let mut repaired = schema.clone();
        repair_array_items(&mut repaired);
        prop_assert_eq!(repaired.to_string(), model_repair(&schema, 1).to_string());
    }

    #[test]
    fn the_schema_repair_is_idempotent_and_leaves_no_array_without_truthy_items(
        mut schema in json_value(),
    ) {
        repair_array_items(&mut schema);
        let mut found = Vec::new();
        arrays_without_items(&schema, 1, &mut found);
        prop_assert!(found.is_empty(), "array schemas without items: {:?}", found);
        let once = schema.clone();
        let fixes = repair_array_items(&mut schema);
        prop_assert_eq!(&schema, &once);
        let only_limits = fixes.iter().all(|fix| matches!(fix, SchemaFix::TooDeep { .. }));
        prop_assert!(only_limits, "a second repair changed something: {:?}", fixes);
    }

    #[test]
    fn no_rule_panics_on_any_json_value(value in json_value(), object in json_object()) {
        for method in methods() {
            let mut shaped = object.clone();
            for fix in shape_result(method, &mut shaped) {
                let _ = fix.log_line().to_string();
            }
            let _ = check_result_shape(method, &object);
        }
        let _ = result_kind(&object);
        let mut schema = value.clone();
        repair_array_items(&mut schema);
        let fallback = FallbackIdentity { name: "n".into(), version: "1".into() };
        let initialize = initialize_result(&object, &fallback);
        if let Some(Value::Object(caps)) = initialize.get("capabilities") {
            let _ = Declared::of(caps);
        }
        let _ = capabilities::upstream_client_capabilities(&object);
        let _ = capabilities::initialize_capabilities(&object);
        let kinds = InputKinds::of(&object);
        let accepted: HashSet<String> = ["https://example.com/".to_owned()].into();
        let _ = plan_round(&object, kinds, &accepted, 16);
        for ask in [
            Ask::Form { schema: json!({"type":"object","properties":{"a":{"type":"string"}}}) },
            Ask::ContinueForm,
            Ask::ContinueUrl { url: "https://example.com/".into() },
            Ask::Url { url: "https://example.com/".into() },
            Ask::Sampling,
            Ask::Roots,
        ] {
            let _ = answer_of(&ask, value.clone());
            let _ = answer_of(&ask, Value::Object(object.clone()));
        }
        let _ = errors::client_error(value.clone());
        let _ = errors::code_and_message(&object);
        let shallow = ShallowObject::from_map(&object);
        let _ = meta::client_progress_token(Some(&shallow));
        let base = meta::SharedMeta::new(meta::base_meta(Some(&value), object.clone()));
        let _ = meta::request_meta(&std::sync::Arc::new(base), Some("info"), Some(7), Some(&shallow));
        let _ = progress::client_progress(object.clone(), &value);
        let _ = events::subscription_id(Some(&object));
        let _ = events::stream_notification("notifications/resources/updated", Some(object.clone()));
        let _ = events::log_message(Some(object.clone()), Some("debug"));
        if let Value::String(text) = &value {
            let _ = url_is_safe(text);
        }
    }

    #[test]
    fn no_form_schema_or_content_makes_the_check_panic(
        schema in json_object(),
        content in json_value(),
    ) {
        let _ = form_content_error(&Value::Object(schema), &content);
    }

    #[test]
    fn the_id_of_a_line_over_the_limit_is_recovered_at_its_start_or_its_end(
        id in prop_oneof![
            any::<i64>().prop_map(Value::from),
            "\\PC{0,20}".prop_map(Value::String),
        ],
        params in json_value(),
        padding in 5000usize..9000,
        id_first in any::<bool>(),
    ) {
        let params = json!({"p": params, "pad": "x".repeat(padding)});
        let line = if id_first {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{params},"id":{id}}}"#)
        };
        let bytes = line.as_bytes();
        let kept = 4096.min(bytes.len());
        let recovered = recover_id(&bytes[..kept], &bytes[bytes.len() - kept..]);
        prop_assert_eq!(recovered, Some(id));
    }
}

/// A complete result for `method` from generated members, most of the time with
/// the member that VS Code reads.
fn upstream_result() -> impl Strategy<Value = (&'static str, Map<String, Value>)> {
    (
        prop::sample::select(mcp_bridge_vscode::internals::rules::FORWARDED_METHODS.to_vec()),
        json_object(),
        any::<bool>(),
        prop::collection::vec(json_value(), 0..4),
        prop::option::of(prop_oneof![
            Just(Value::Null),
            Just(json!("next")),
            Just(json!(3))
        ]),
    )
        .prop_map(|(method, mut result, with_member, items, cursor)| {
            result.shift_remove("resultType");
            if let Some(cursor) = cursor {
                result.insert("nextCursor".into(), cursor);
            }
            let member = match method {
                "tools/list" => "tools",
                "prompts/list" => "prompts",
                "resources/list" => "resources",
                "resources/templates/list" => "resourceTemplates",
                "prompts/get" => "messages",
                "resources/read" => "contents",
                "completion/complete" => "completion",
                _ => "content",
            };
            if with_member {
                let value = if member == "completion" {
                    json!({"values": items})
                } else {
                    Value::Array(items)
                };
                result.insert(member.into(), value);
            }
            (method, result)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn transparency_through_the_session(results in prop::collection::vec(upstream_result(), 1..24)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut bridge = Bridge::start();
            let (_, mut upstream) = bridge
                .initialize(json!({"tools":{},"prompts":{},"resources":{},"completions":{}}))
                .await;
            for (index, (method, result)) in results.iter().enumerate() {
                bridge
                    .send(json!({"jsonrpc":"2.0","id":index,"method":method,"params":{"name":"t","uri":"file:///x"}}))
                    .await;
                let request = upstream.recv().await;
                upstream.respond(&request, Value::Object(result.clone())).await;
                let got = bridge.recv().await;
                let expected = match check_result_shape(method, result) {
                    Ok(()) => json!({"jsonrpc":"2.0","id":index,"result":model(method, result)}),
                    Err(detail) => json!({"jsonrpc":"2.0","id":index,"error":{"code":-32603,
                        "message":"The upstream server sent a response that is not valid. See the Output channel of the server.",
                        "data":{"cause":"invalid_response","detail":detail.to_string()}}}),
                };
                assert_eq!(got.to_string(), expected.to_string(), "{method}");
            }
        });
    }
}
