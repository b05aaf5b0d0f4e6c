//! The repair of tool input schemas for the Copilot extension (R6).
//!
//! The Copilot extension stops every chat request when one tool schema has
//! `type: "array"` and an `items` that is false in JavaScript (VS Code issue 339276).
//! The bridge gives such schemas `items: {}`. It does not run VS Code's draft-07 check
//! (R6 a): a schema that fails it is the upstream server's to correct.

use crate::catalogue::RequestInfo;
use mcp_names::schema_keywords::{LIST, MAP, ONE};
use serde_json::{Map, Value};

/// Schemas nested deeper than this are not examined (the "too deep" log line).
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// One change or one limit met, with the JSON pointer (RFC 6901) of the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaFix {
    /// `items` was missing or false in JavaScript (`null`, `0`, `""`): now `{}`.
    ItemsAdded { pointer: String },
    /// `items: false` is now `{}`, with `maxItems` = the length of `prefixItems`
    /// when it had none, so the array still takes no extra items.
    ItemsFalseReplaced { pointer: String },
    /// The schema at this pointer is deeper than [`MAX_SCHEMA_DEPTH`].
    TooDeep { pointer: String },
}

impl SchemaFix {
    /// The info line of the Output channel, for the tool `name`.
    pub fn log_line<'a>(&'a self, name: &'a str) -> RequestInfo<'a> {
        match self {
            Self::ItemsAdded { pointer } | Self::ItemsFalseReplaced { pointer } => {
                RequestInfo::ItemsAdded { name, pointer }
            }
            Self::TooDeep { pointer } => RequestInfo::SchemaTooDeep { name, pointer },
        }
    }
}

/// Gives every array schema in `schema` a truthy `items` (R6). Returns the fixes,
/// in document order. Array-valued `type`s (`["array","null"]`) are left alone, as
/// the Copilot check only looks at `type: "array"`.
pub fn repair_array_items(schema: &mut Value) -> Vec<SchemaFix> {
    let mut fixes = Vec::new();
    let mut pointer = String::new();
    walk(schema, &mut pointer, 1, &mut fixes);
    fixes
}

fn walk(node: &mut Value, pointer: &mut String, depth: usize, fixes: &mut Vec<SchemaFix>) {
    let Value::Object(schema) = node else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        fixes.push(SchemaFix::TooDeep {
            pointer: pointer.clone(),
        });
        return;
    }
    if schema.get("type").and_then(Value::as_str) == Some("array") {
        repair_one(schema, pointer, fixes);
    }
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        let before = pointer.len();
        if (ONE.contains(&key) || key == "items") && value.is_object() {
            push_token(pointer, key);
            walk(value, pointer, depth + 1, fixes);
        } else if MAP.contains(&key) {
            if let Value::Object(members) = value {
                push_token(pointer, key);
                for (name, member) in members.iter_mut() {
                    let inner = pointer.len();
                    push_token(pointer, name);
                    walk(member, pointer, depth + 1, fixes);
                    pointer.truncate(inner);
                }
            }
        } else if (LIST.contains(&key) || key == "items")
            && let Value::Array(members) = value
        {
            push_token(pointer, key);
            for (index, member) in members.iter_mut().enumerate() {
                let inner = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                walk(member, pointer, depth + 1, fixes);
                pointer.truncate(inner);
            }
        }
        pointer.truncate(before);
    }
}

fn repair_one(schema: &mut Map<String, Value>, pointer: &str, fixes: &mut Vec<SchemaFix>) {
    match schema.get("items") {
        Some(Value::Bool(false)) => {
            schema.insert("items".into(), Value::Object(Map::new()));
            if !schema.contains_key("maxItems") {
                let prefix = schema
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                schema.insert("maxItems".into(), prefix.into());
            }
            fixes.push(SchemaFix::ItemsFalseReplaced {
                pointer: pointer.to_owned(),
            });
        }
        Some(items) if !is_falsy_in_javascript(items) => {}
        _ => {
            schema.insert("items".into(), Value::Object(Map::new()));
            fixes.push(SchemaFix::ItemsAdded {
                pointer: pointer.to_owned(),
            });
        }
    }
}

/// `false`, `null`, `0`, `-0` and `""` are false in JavaScript; objects and arrays are not.
pub fn is_falsy_in_javascript(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// Appends one reference token, escaped as RFC 6901 says (`~` → `~0`, `/` → `~1`).
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The input schema of the fixture's `bare_array` tool (reference study 1.2).
    fn bare_array() -> Value {
        json!({"type":"object","properties":{
            "values":{"type":"array"},
            "pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false},
            "choice":{"anyOf":[{"type":"array"},{"type":"string"}]}
        },"required":["values"],"additionalProperties":false})
    }

    #[test]
    fn r6_repairs_the_bare_array_schema() {
        let mut schema = bare_array();
        let fixes = repair_array_items(&mut schema);
        assert_eq!(
            fixes,
            vec![
                SchemaFix::ItemsAdded {
                    pointer: "/properties/values".into()
                },
                SchemaFix::ItemsFalseReplaced {
                    pointer: "/properties/pair".into()
                },
                SchemaFix::ItemsAdded {
                    pointer: "/properties/choice/anyOf/0".into()
                },
            ]
        );
        assert_eq!(
            schema["properties"]["values"],
            json!({"type":"array","items":{}})
        );
        assert_eq!(schema["properties"]["pair"]["items"], json!({}));
        assert_eq!(schema["properties"]["pair"]["maxItems"], json!(2));
        assert_eq!(
            schema["properties"]["choice"]["anyOf"][0],
            json!({"type":"array","items":{}})
        );
        assert_eq!(
            fixes[0].log_line("bare_array").to_string(),
            "tool 'bare_array': added an items schema at '/properties/values' of the input schema"
        );
    }

    #[test]
    fn r6_javascript_falsy_items_are_replaced_and_truthy_ones_kept() {
        for items in [json!(null), json!(0), json!(-0.0), json!("")] {
            let mut schema = json!({"type":"array","items":items});
            assert_eq!(repair_array_items(&mut schema).len(), 1);
            assert_eq!(schema, json!({"type":"array","items":{}}));
        }
        for items in [
            json!({}),
            json!(true),
            json!([]),
            json!({"type":"string"}),
            json!(1),
            json!("x"),
        ] {
            let mut schema = json!({"type":"array","items":items.clone()});
            assert!(repair_array_items(&mut schema).is_empty());
            assert_eq!(schema["items"], items);
        }
    }

    #[test]
    fn r6_items_false_keeps_an_existing_max_items() {
        let mut schema = json!({"type":"array","items":false,"maxItems":5});
        repair_array_items(&mut schema);
        assert_eq!(schema, json!({"type":"array","items":{},"maxItems":5}));
    }

    #[test]
    fn r6_pointers_escape_and_walk_nested_keywords() {
        let mut schema = json!({"type":"object","$defs":{"a/b~c":{"type":"array"}},
            "properties":{"x":{"type":"array","items":{"type":"array"}}},
            "if":{"type":"array"},"items":[{"type":"array"}],"type_array":{"type":"array"}});
        let pointers: Vec<_> = repair_array_items(&mut schema)
            .into_iter()
            .map(|fix| match fix {
                SchemaFix::ItemsAdded { pointer } => pointer,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            pointers,
            vec!["/$defs/a~1b~0c", "/properties/x/items", "/if", "/items/0"]
        );
    }

    #[test]
    fn r6_type_arrays_are_left_alone() {
        let mut schema = json!({"type":["array","null"]});
        assert!(repair_array_items(&mut schema).is_empty());
    }

    #[test]
    fn r6_stops_below_64_levels() {
        let mut schema = json!({"type":"array"});
        for _ in 0..70 {
            schema = json!({"type":"object","properties":{"p":schema}});
        }
        let fixes = repair_array_items(&mut schema);
        assert_eq!(fixes.len(), 1);
        let SchemaFix::TooDeep { pointer } = &fixes[0] else {
            panic!("{fixes:?}")
        };
        assert_eq!(pointer.matches("/properties/p").count(), MAX_SCHEMA_DEPTH);
        assert_eq!(
            fixes[0].log_line("t").to_string(),
            format!("tool 't': the input schema at '{pointer}' is too deep to examine")
        );
    }
}
