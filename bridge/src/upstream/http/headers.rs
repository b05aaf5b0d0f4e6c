//! The request metadata headers of Streamable HTTP 2026-07-28: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-*` headers that a tool's input
//! schema asks for with `x-mcp-header`. Pure functions: the link calls them for
//! each POST and for each tools/list result.

use crate::catalogue::RequestWarning;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The revision in `MCP-Protocol-Version` (the same as in each request's `_meta`).
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
pub const METHOD_HEADER: &str = "mcp-method";
pub const NAME_HEADER: &str = "mcp-name";

/// The member of `params` that `Mcp-Name` mirrors, for the methods that need it.
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// A header value as the revision encodes it: the value itself when it is plain
/// visible ASCII without whitespace at its ends, else `=?base64?…?=` of its UTF-8
/// bytes (also a plain value that looks like that form).
pub fn encode_value(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|byte| byte == b'\t' || (0x20..=0x7e).contains(&byte));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let looks_encoded = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = visible && !padded && !looks_encoded;
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(value.as_bytes()))
    }
}

/// One `x-mcp-header` of a tool: the header, and the path of `properties` keys
/// to the argument whose value it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// `Mcp-Param-{name}`.
    pub header: String,
    pub path: Vec<String>,
}

/// Why a tool's `x-mcp-header` annotations are not valid: the client excludes the
/// tool (Streamable HTTP, "Schema Extension").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamHeaderError {
    #[error("the x-mcp-header at '{0}' is not a header name")]
    NotAName(String),
    #[error("the x-mcp-header '{0}' occurs twice")]
    Twice(String),
    #[error(
        "the x-mcp-header at '{0}' is on a property that is not an integer, a string or a boolean"
    )]
    NotPrimitive(String),
    #[error("the x-mcp-header at '{0}' is not reachable through properties alone")]
    NotReachable(String),
}

/// The `x-mcp-header` annotations of one input schema.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, ParamHeaderError> {
    let mut found = Vec::new();
    let mut names: Vec<String> = Vec::new();
    walk_properties(input_schema, &mut Vec::new(), &mut found, &mut names)?;
    // An annotation anywhere else than on a chain of `properties` makes the tool invalid.
    if let Some(pointer) = stray_annotation(input_schema, "", true) {
        return Err(ParamHeaderError::NotReachable(pointer));
    }
    Ok(found)
}

fn walk_properties(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
    names: &mut Vec<String>,
) -> Result<(), ParamHeaderError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(annotation) = property.get("x-mcp-header") {
            let pointer = pointer_of(path);
            let name = annotation
                .as_str()
                .filter(|name| is_token(name))
                .ok_or_else(|| ParamHeaderError::NotAName(pointer.clone()))?;
            if names.iter().any(|seen| seen.eq_ignore_ascii_case(name)) {
                return Err(ParamHeaderError::Twice(name.to_owned()));
            }
            let primitive = matches!(
                property.get("type").and_then(Value::as_str),
                Some("integer" | "string" | "boolean")
            );
            if !primitive {
                return Err(ParamHeaderError::NotPrimitive(pointer));
            }
            names.push(name.to_owned());
            found.push(ParamHeader {
                header: format!("mcp-param-{name}"),
                path: path.clone(),
            });
        }
        walk_properties(property, path, found, names)?;
        path.pop();
    }
    Ok(())
}

/// The pointer of an `x-mcp-header` that no chain of `properties` reaches.
fn stray_annotation(schema: &Value, pointer: &str, reachable: bool) -> Option<String> {
    let object = schema.as_object()?;
    if !reachable && object.contains_key("x-mcp-header") {
        return Some(pointer.to_owned());
    }
    for (key, value) in object {
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                for (name, property) in properties {
                    let inner = format!("{pointer}/properties/{}", escape(name));
                    if let Some(found) = stray_annotation(property, &inner, reachable) {
                        return Some(found);
                    }
                }
            }
            (_, Value::Object(_)) => {
                let inner = format!("{pointer}/{}", escape(key));
                if let Some(found) = stray_annotation(value, &inner, false) {
                    return Some(found);
                }
            }
            (_, Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let inner = format!("{pointer}/{}/{index}", escape(key));
                    if let Some(found) = stray_annotation(item, &inner, false) {
                        return Some(found);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The headers of one tools/call: the value at each annotated path, encoded; no
/// header where the arguments have no value there (or `null`).
pub fn param_values(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|param| {
            let (first, rest) = param.path.split_first()?;
            let mut value = arguments.get(first)?;
            for key in rest {
                value = value.get(key)?;
            }
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Bool(flag) => flag.to_string(),
                Value::Number(number) if number.is_i64() || number.is_u64() => number.to_string(),
                _ => return None,
            };
            Some((param.header.clone(), encode_value(&text)))
        })
        .collect()
}

/// Whether [`learn_tools`] may find a header in a tools/list line: every header and
/// every warning comes from an `x-mcp-header` key, which the text must spell. A
/// list without one needs no tree, unless it must clear the headers of a tool.
pub fn may_have_param_headers(line: &[u8]) -> bool {
    json_shallow::may_spell(line, &["x-mcp-header"])
}

/// A tool that the bridge took out of a tools/list result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub tool: String,
    pub error: ParamHeaderError,
}

impl LeftOut {
    /// The warning line of the Output channel.
    pub fn log_line(&self) -> RequestWarning<'_> {
        RequestWarning::ToolLeftOut {
            name: &self.tool,
            error: &self.error,
        }
    }
}

/// The `x-mcp-header` table of each tool of a tools/list result, by tool name: empty
/// for a tool without annotations, and for a tool whose annotations are not valid,
/// which is taken out of the result and comes back for its warning line.
pub fn learn_tools(
    result: &mut Map<String, Value>,
) -> (HashMap<String, Vec<ParamHeader>>, Vec<LeftOut>) {
    let mut tables = HashMap::new();
    let mut warnings = Vec::new();
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return (tables, warnings);
    };
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let (keep, headers) = match tool.get("inputSchema").map(param_headers) {
            None => (true, Vec::new()),
            Some(Ok(headers)) => (true, headers),
            Some(Err(error)) => {
                warnings.push(LeftOut {
                    tool: name.to_owned(),
                    error,
                });
                (false, Vec::new())
            }
        };
        tables.insert(name.to_owned(), headers);
        keep
    });
    (tables, warnings)
}

/// An HTTP field name: `1*tchar` (RFC 9110, 5.1).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

fn pointer_of(path: &[String]) -> String {
    path.iter()
        .map(|key| format!("/properties/{}", escape(key)))
        .collect()
}

/// RFC 6901.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_plain_or_base64_as_the_revision_shows() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode_value("file:///a b"), "file:///a b");
        // Only the whole sentinel is encoded, not a value that starts or ends like it.
        assert_eq!(encode_value("=?base64?x"), "=?base64?x");
        assert_eq!(encode_value("x?="), "x?=");
    }

    #[test]
    fn annotations_on_chains_of_properties_make_headers() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"tenant":{"type":"integer","x-mcp-header":"Tenant"}}},
            "query":{"type":"string"}}});
        let headers = param_headers(&schema).unwrap();
        assert_eq!(
            headers,
            vec![
                ParamHeader {
                    header: "mcp-param-Region".into(),
                    path: vec!["region".into()]
                },
                ParamHeader {
                    header: "mcp-param-Tenant".into(),
                    path: vec!["opts".into(), "tenant".into()]
                },
            ]
        );
        let arguments = json!({"region":"us-west1","opts":{"tenant":42},"query":"x"});
        assert_eq!(
            param_values(&headers, arguments.as_object().unwrap()),
            vec![
                ("mcp-param-Region".to_owned(), "us-west1".to_owned()),
                ("mcp-param-Tenant".to_owned(), "42".to_owned())
            ]
        );
        let missing = json!({"region":null,"opts":{}});
        assert!(param_values(&headers, missing.as_object().unwrap()).is_empty());
        // The revision encodes strings, integers and booleans only: a number that
        // is no integer, an object or an array makes no header.
        let unencodable = json!({"region":["a"],"opts":{"tenant":2.5}});
        assert!(param_values(&headers, unencodable.as_object().unwrap()).is_empty());
    }

    #[test]
    fn annotations_that_break_a_constraint_are_refused() {
        let cases = [
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
                "is not a header name",
            ),
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
                "is not a header name",
            ),
            (
                json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
                "not an integer",
            ),
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}),
                "occurs twice",
            ),
            (
                json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
                "not reachable",
            ),
            (
                json!({"anyOf":[{"x-mcp-header":"A","type":"string"}]}),
                "not reachable",
            ),
        ];
        for (schema, text) in cases {
            let error = param_headers(&schema).unwrap_err().to_string();
            assert!(error.contains(text), "{schema}: {error}");
        }
    }

    #[test]
    fn a_tools_list_result_loses_only_the_tools_with_invalid_annotations() {
        let mut result = json!({"tools":[
            {"name":"ok","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}},
            {"name":"plain","inputSchema":{"type":"object"}}]});
        let (tables, warnings) = learn_tools(result.as_object_mut().unwrap());
        let names: Vec<_> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("ok"), json!("plain")]);
        let mut tables: Vec<_> = tables.into_iter().collect();
        tables.sort_by(|a, b| a.0.cmp(&b.0));
        let header_names = |headers: &[ParamHeader]| -> Vec<String> {
            headers.iter().map(|param| param.header.clone()).collect()
        };
        assert_eq!(
            tables
                .iter()
                .map(|(tool, headers)| (tool.as_str(), header_names(headers)))
                .collect::<Vec<_>>(),
            vec![
                ("bad", vec![]),
                ("ok", vec!["mcp-param-R".to_owned()]),
                ("plain", vec![])
            ]
        );
        let warnings: Vec<String> = warnings
            .iter()
            .map(|left_out| left_out.log_line().to_string())
            .collect();
        assert_eq!(
            warnings,
            vec![
                "tool 'bad': the bridge left the tool out of the list: the x-mcp-header at '/properties/r' is on a property that is not an integer, a string or a boolean"
            ]
        );
    }

    #[test]
    fn a_list_whose_text_names_no_annotation_teaches_nothing() {
        for (text, may) in [
            (
                r#"{"tools":[{"name":"plain","inputSchema":{"type":"object"}}]}"#,
                false,
            ),
            (
                r#"{"tools":[{"name":"a","inputSchema":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}]}"#,
                true,
            ),
            (
                r#"{"tools":[{"name":"a","inputSchema":{"properties":{"r":{"type":"string","x-mcp-h\u0065ader":"R"}}}}]}"#,
                true,
            ),
        ] {
            assert_eq!(may_have_param_headers(text.as_bytes()), may, "{text}");
            let mut result: Map<String, Value> = serde_json::from_str(text).unwrap();
            let (tables, warnings) = learn_tools(&mut result);
            if !may {
                assert!(tables.values().all(Vec::is_empty), "{text}");
                assert!(warnings.is_empty(), "{text}");
            }
        }
        let mut escaped: Map<String, Value> = serde_json::from_str(
            r#"{"tools":[{"name":"a","inputSchema":{"properties":{"r":{"type":"string","x-mcp-h\u0065ader":"R"}}}}]}"#,
        )
        .unwrap();
        assert_eq!(learn_tools(&mut escaped).0["a"].len(), 1);
    }
}
