//! Shared parts of the fuzz targets: JSON values built from the fuzzer's bytes,
//! with a bias toward the keys that the rules of the bridge look at, so that the
//! fuzzer reaches the schema walk, the result shaping and the input rounds quickly.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Keys of JSON Schema and of MCP results that the rules examine.
const KEYS: &[&str] = &[
    "type",
    "items",
    "prefixItems",
    "maxItems",
    "properties",
    "patternProperties",
    "additionalProperties",
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
    "$ref",
    "required",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "default",
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
    "io.modelcontextprotocol/serverInfo",
    "inputRequests",
    "requestState",
    "method",
    "params",
    "mode",
    "message",
    "url",
    "requestedSchema",
    "messages",
    "maxTokens",
    "toolChoice",
    "action",
    "roots",
    "uri",
    "role",
    "model",
    "text",
    "capabilities",
    "supportedVersions",
    "instructions",
    "progressToken",
    "progress",
    "code",
    "data",
    "level",
    "logger",
    "listChanged",
    "subscribe",
    "elicitation",
    "sampling",
    "extensions",
    "version",
    "title",
    "icons",
    "src",
];

/// Strings that the rules compare against.
const WORDS: &[&str] = &[
    "array",
    "object",
    "string",
    "integer",
    "number",
    "boolean",
    "null",
    "complete",
    "input_required",
    "form",
    "url",
    "accept",
    "decline",
    "cancel",
    "elicitation/create",
    "sampling/createMessage",
    "roots/list",
    "tool_use",
    "tool_result",
    "text",
    "https://example.com/a",
    "http://localhost:1/x",
    "http://127.0.0.1/",
    "file:///x",
    "2026-07-28",
    "email",
    "date-time",
    "uri",
    "^a+$",
    "#",
    "#/$defs/a",
    "-0",
    "",
];

/// A JSON value of at most `depth` levels.
pub fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let choice = if depth == 0 {
        u.int_in_range(0..=5)?
    } else {
        u.int_in_range(0..=8)?
    };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(number(u)?),
        3 => Value::String(word(u)?),
        4 => Value::String(u.arbitrary()?),
        5 => Value::Number(Number::from(u.int_in_range(-2i64..=3)?)),
        6 | 7 => Value::Object(object(u, depth - 1)?),
        _ => {
            let len = u.int_in_range(0..=4)?;
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(value(u, depth - 1)?);
            }
            Value::Array(items)
        }
    })
}

/// An object of at most `depth` levels below it.
pub fn object(u: &mut Unstructured<'_>, depth: usize) -> Result<Map<String, Value>> {
    let len = u.int_in_range(0..=6)?;
    let mut map = Map::new();
    for _ in 0..len {
        let key = if u.ratio(7, 8)? {
            (*u.choose(KEYS)?).to_owned()
        } else {
            u.arbitrary()?
        };
        map.insert(key, value(u, depth)?);
    }
    Ok(map)
}

fn word(u: &mut Unstructured<'_>) -> Result<String> {
    Ok((*u.choose(WORDS)?).to_owned())
}

fn number(u: &mut Unstructured<'_>) -> Result<Number> {
    Ok(match u.int_in_range(0..=2)? {
        0 => Number::from(u.arbitrary::<i64>()?),
        1 => Number::from(u.arbitrary::<u64>()?),
        _ => Number::from_f64(u.arbitrary::<f64>()?).unwrap_or_else(|| Number::from(0)),
    })
}
