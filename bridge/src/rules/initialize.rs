//! The initialize result that VS Code gets, made from the discover result (R1, O10, O11).

use super::capabilities::initialize_capabilities;
use super::{CLIENT_PROTOCOL_VERSION, SERVER_INFO_KEY};
use serde_json::{Map, Value};
use std::path::Path;

type Object = Map<String, Value>;

/// The members of `Implementation` that VS Code reads (O10).
const SERVER_INFO_MEMBERS: [&str; 6] = [
    "name",
    "title",
    "version",
    "icons",
    "description",
    "websiteUrl",
];

/// The identity of the bridge when the upstream server sends none (R1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackIdentity {
    pub name: String,
    pub version: String,
}

/// The fallback name (R1): `--name`, else the file name of the upstream command
/// without its extension. VS Code makes the ids of the tools from this name.
pub fn fallback_name(name_option: Option<&str>, command: &Path) -> String {
    if let Some(name) = name_option.filter(|name| !name.is_empty()) {
        return name.to_owned();
    }
    command
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| "mcp-bridge-vscode".to_owned())
}

/// The initialize result (R1): `protocolVersion` 2025-11-25 (VS Code ignores it),
/// the capabilities of the discover result without tasks (O11), `serverInfo` from the
/// upstream's `_meta` or the fallback, and `instructions` (O10).
pub fn initialize_result(discover: &Object, fallback: &FallbackIdentity) -> Object {
    let capabilities = discover
        .get("capabilities")
        .and_then(Value::as_object)
        .map(initialize_capabilities)
        .unwrap_or_default();
    let mut result = Object::new();
    result.insert("protocolVersion".into(), CLIENT_PROTOCOL_VERSION.into());
    result.insert("capabilities".into(), Value::Object(capabilities));
    result.insert(
        "serverInfo".into(),
        Value::Object(server_info(discover, fallback)),
    );
    if let Some(instructions) = discover.get("instructions").filter(|i| i.is_string()) {
        result.insert("instructions".into(), instructions.clone());
    }
    result
}

/// The upstream's `Implementation` when it has a name and a version, with only the
/// members that VS Code reads; else the fallback.
fn server_info(discover: &Object, fallback: &FallbackIdentity) -> Object {
    let upstream = discover
        .get("_meta")
        .and_then(|meta| meta.get(SERVER_INFO_KEY))
        .and_then(Value::as_object)
        .filter(|info| {
            info.get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| !name.is_empty())
                && info.get("version").is_some_and(Value::is_string)
        });
    match upstream {
        Some(info) => SERVER_INFO_MEMBERS
            .iter()
            .filter_map(|&name| info.get(name).map(|value| (name.to_owned(), value.clone())))
            .collect(),
        None => {
            let mut info = Object::new();
            info.insert("name".into(), fallback.name.clone().into());
            info.insert("version".into(), fallback.version.clone().into());
            info
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fallback() -> FallbackIdentity {
        FallbackIdentity {
            name: "my-server".into(),
            version: "0.1.0".into(),
        }
    }

    fn obj(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn r1_o10_result_from_a_discover_result_with_server_info() {
        let discover = obj(json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "public",
            "capabilities": {"tools": {"listChanged": true}, "tasks": {}},
            "instructions": "Use the tools.",
            "_meta": {"io.modelcontextprotocol/serverInfo": {
                "name": "fixture", "title": "Fixture", "version": "1.2.3", "extra": true,
                "icons": [{"src": "data:image/png;base64,AA=="}], "websiteUrl": "https://example.com"}}
        }));
        assert_eq!(
            Value::Object(initialize_result(&discover, &fallback())),
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "fixture", "title": "Fixture", "version": "1.2.3",
                               "icons": [{"src": "data:image/png;base64,AA=="}], "websiteUrl": "https://example.com"},
                "instructions": "Use the tools."
            })
        );
    }

    #[test]
    fn r1_without_server_info_the_fallback_names_the_server() {
        for discover in [
            json!({"capabilities": {}}),
            json!({"capabilities": {}, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": ""}}}),
            json!({"capabilities": {}, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x"}}}),
            json!({"_meta": {"io.modelcontextprotocol/serverInfo": "x"}, "instructions": 5}),
        ] {
            let result = initialize_result(&obj(discover), &fallback());
            assert_eq!(
                result["serverInfo"],
                json!({"name": "my-server", "version": "0.1.0"})
            );
            assert_eq!(result["capabilities"], json!({}));
            assert!(!result.contains_key("instructions"));
        }
    }

    #[test]
    fn r1_fallback_name_is_the_option_or_the_file_stem() {
        assert_eq!(fallback_name(Some("demo"), Path::new("/x/y")), "demo");
        assert_eq!(
            fallback_name(None, Path::new("/abs/bridge-fixture-server")),
            "bridge-fixture-server"
        );
        assert_eq!(
            fallback_name(None, Path::new("C:/tools/server.exe")),
            "server"
        );
        assert_eq!(fallback_name(Some(""), Path::new("node")), "node");
        assert_eq!(fallback_name(None, Path::new("")), "mcp-bridge-vscode");
    }
}
