//! Capabilities in both directions.

use super::TASKS_EXTENSION;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The client capabilities that go upstream with every request (C2, R3): the input
/// kinds that VS Code declared, and nothing that revision 2026-07-28 lacks.
///
/// `roots` loses `listChanged`; `sampling` keeps `context` and `tools` only when
/// declared (VS Code declares neither); `elicitation` keeps its declared modes;
/// `extensions` loses the Tasks extension (O11); `tasks` and unknown members go.
pub fn upstream_client_capabilities(client: &Object) -> Object {
    let mut out = Object::new();
    if let Some(experimental) = object(client, "experimental") {
        out.insert("experimental".into(), Value::Object(experimental.clone()));
    }
    if object(client, "roots").is_some() {
        out.insert("roots".into(), Value::Object(Object::new()));
    }
    if let Some(sampling) = object(client, "sampling") {
        out.insert(
            "sampling".into(),
            Value::Object(keep_objects(sampling, &["context", "tools"])),
        );
    }
    if let Some(elicitation) = object(client, "elicitation") {
        out.insert(
            "elicitation".into(),
            Value::Object(keep_objects(elicitation, &["form", "url"])),
        );
    }
    if let Some(extensions) = object(client, "extensions") {
        out.insert(
            "extensions".into(),
            Value::Object(without_tasks(extensions)),
        );
    }
    out
}

/// The capabilities of the initialize result (R1, O11), from the discover result:
/// the members that revision 2025-11-25 knows, plus `extensions` without the Tasks
/// extension. Never `tasks`: the bridge does not run tasks for VS Code.
///
/// `logging` always (O5, R2): the bridge answers `logging/setLevel` itself, and
/// VS Code sends one only when the server declares `logging`. A server of revision
/// 2026-07-28 may leave the capability out (the Python SDK deprecates it) and
/// still send `notifications/message`, which the bridge forwards only after a level.
pub fn initialize_capabilities(server: &Object) -> Object {
    let mut out = Object::new();
    for name in [
        "experimental",
        "logging",
        "completions",
        "prompts",
        "resources",
        "tools",
    ] {
        if let Some(value) = object(server, name) {
            out.insert(name.into(), Value::Object(value.clone()));
        } else if name == "logging" {
            out.insert(name.into(), Value::Object(Object::new()));
        }
    }
    if let Some(extensions) = object(server, "extensions") {
        out.insert(
            "extensions".into(),
            Value::Object(without_tasks(extensions)),
        );
    }
    out
}

/// The input kinds that VS Code can answer, from its initialize capabilities (M2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputKinds {
    pub elicitation_form: bool,
    pub elicitation_url: bool,
    pub sampling: bool,
    pub sampling_tools: bool,
    pub roots: bool,
}

impl InputKinds {
    /// `elicitation: {}` means form only, in both revisions.
    pub fn of(client: &Object) -> Self {
        let elicitation = object(client, "elicitation");
        let has = |name: &str| elicitation.is_some_and(|e| object(e, name).is_some());
        let sampling = object(client, "sampling");
        Self {
            elicitation_form: elicitation.is_some() && (has("form") || !has("url")),
            elicitation_url: has("url"),
            sampling: sampling.is_some(),
            sampling_tools: sampling.is_some_and(|s| object(s, "tools").is_some()),
            roots: object(client, "roots").is_some(),
        }
    }
}

/// What the initialize result promised VS Code, which decides the listen stream (R2, O6, O7)
/// and which list changes VS Code gets from outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Declared {
    pub tools_list_changed: bool,
    pub prompts_list_changed: bool,
    pub resources_list_changed: bool,
    pub resources_subscribe: bool,
    /// The lists that VS Code lists: `tools`, `prompts`, `resources` are declared.
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
}

impl Declared {
    pub fn of(capabilities: &Object) -> Self {
        let flag = |list: &str, name: &str| {
            object(capabilities, list)
                .and_then(|o| o.get(name))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        Self {
            tools_list_changed: flag("tools", "listChanged"),
            prompts_list_changed: flag("prompts", "listChanged"),
            resources_list_changed: flag("resources", "listChanged"),
            resources_subscribe: flag("resources", "subscribe"),
            tools: object(capabilities, "tools").is_some(),
            prompts: object(capabilities, "prompts").is_some(),
            resources: object(capabilities, "resources").is_some(),
        }
    }

    /// A listen stream is needed for a list change or for subscriptions (R2).
    pub fn wants_listen_stream(&self) -> bool {
        self.tools_list_changed
            || self.prompts_list_changed
            || self.resources_list_changed
            || self.resources_subscribe
    }
}

fn object<'a>(map: &'a Object, name: &str) -> Option<&'a Object> {
    map.get(name).and_then(Value::as_object)
}

fn keep_objects(map: &Object, names: &[&str]) -> Object {
    names
        .iter()
        .filter_map(|&name| {
            object(map, name).map(|value| (name.to_owned(), Value::Object(value.clone())))
        })
        .collect()
}

fn without_tasks(extensions: &Object) -> Object {
    extensions
        .iter()
        .filter(|(name, _)| name.as_str() != TASKS_EXTENSION)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    /// The initialize capabilities of VS Code 1.140 from the reference study.
    fn vscode_1_140() -> Object {
        obj(
            json!({"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},
            "tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},
            "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},
                          "io.modelcontextprotocol/tasks":{}}}),
        )
    }

    #[test]
    fn c2_r3_upstream_capabilities_of_vscode() {
        assert_eq!(
            Value::Object(upstream_client_capabilities(&vscode_1_140())),
            json!({"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}},
                   "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}})
        );
    }

    #[test]
    fn c2_upstream_capabilities_of_copilot_declare_no_roots() {
        let copilot = obj(json!({"sampling":{},"elicitation":{"form":{},"url":{}}}));
        assert_eq!(
            Value::Object(upstream_client_capabilities(&copilot)),
            json!({"sampling":{},"elicitation":{"form":{},"url":{}}})
        );
    }

    #[test]
    fn c2_sampling_keeps_declared_context_and_tools_and_drops_wrong_shapes() {
        let caps = obj(
            json!({"sampling":{"tools":{},"context":{},"other":1},"roots":true,
                              "elicitation":{"form":true,"url":{}},"experimental":[]}),
        );
        assert_eq!(
            Value::Object(upstream_client_capabilities(&caps)),
            json!({"sampling":{"context":{},"tools":{}},"elicitation":{"url":{}}})
        );
    }

    #[test]
    fn r1_o11_initialize_capabilities_never_have_tasks() {
        let server = obj(
            json!({"tools":{"listChanged":true},"tasks":{"list":{}},"logging":{},
            "completions":{},"unknown":{},"resources":{"subscribe":true},
            "extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{}}}),
        );
        assert_eq!(
            Value::Object(initialize_capabilities(&server)),
            json!({"logging":{},"completions":{},"resources":{"subscribe":true},
                   "tools":{"listChanged":true},"extensions":{"io.modelcontextprotocol/ui":{}}})
        );
    }

    #[test]
    fn o5_initialize_capabilities_always_declare_logging() {
        let without_logging = obj(json!({"tools":{"listChanged":true}}));
        assert_eq!(
            Value::Object(initialize_capabilities(&without_logging)),
            json!({"logging":{},"tools":{"listChanged":true}})
        );
        assert_eq!(
            Value::Object(initialize_capabilities(&obj(json!({"logging":true})))),
            json!({"logging":{}})
        );
        assert_eq!(
            Value::Object(initialize_capabilities(&obj(json!({"logging":{"x":1}})))),
            json!({"logging":{"x":1}})
        );
    }

    #[test]
    fn input_kinds_read_the_elicitation_modes() {
        let kinds = InputKinds::of(&vscode_1_140());
        assert!(kinds.elicitation_form && kinds.elicitation_url && kinds.sampling && kinds.roots);
        assert!(!kinds.sampling_tools);
        let form_only = InputKinds::of(&obj(json!({"elicitation":{}})));
        assert!(form_only.elicitation_form && !form_only.elicitation_url);
        let url_only = InputKinds::of(&obj(json!({"elicitation":{"url":{}}})));
        assert!(!url_only.elicitation_form && url_only.elicitation_url);
        assert_eq!(InputKinds::of(&Object::new()), InputKinds::default());
    }

    #[test]
    fn r2_declared_flags_decide_the_listen_stream() {
        let declared = Declared::of(&obj(json!({"tools":{"listChanged":true},"logging":{}})));
        assert!(declared.tools_list_changed && declared.tools && declared.wants_listen_stream());
        assert!(!declared.prompts && !declared.resources);
        let lists = Declared::of(&obj(json!({"tools":{},"prompts":{},"resources":{}})));
        assert!(lists.tools && lists.prompts && lists.resources);
        assert!(!lists.wants_listen_stream());
    }
}
