//! O10, M4: VS Code shows an icon with a `data:` URI always, drops the `http:` and
//! `https:` icons of a stdio server, and gives `file:` icons the trust of a local
//! process. For an upstream server at a URL, VS Code gets only the icons with a
//! `data:` URI: a `file:` icon of a remote server would be trusted as local.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Whether [`result_data_icons_only`] may change a result whose whole JSON text
/// is `json`: only when the text may spell `icons`. The rest of a URL upstream's
/// results needs no tree for O10.
pub fn may_hold_icons(json: &str) -> bool {
    json_shallow::may_spell(json.as_bytes(), &["icons"])
}

/// Keeps only the `data:` icons of an `icons` array (O10, M4).
fn keep_data_icons(owner: &mut Object) {
    if let Some(Value::Array(icons)) = owner.get_mut("icons") {
        icons.retain(|icon| {
            icon.get("src").and_then(Value::as_str).is_some_and(|src| {
                src.get(..5)
                    .is_some_and(|scheme| scheme.eq_ignore_ascii_case("data:"))
            })
        });
    }
}

/// The icons of an initialize result: those of `serverInfo` (O10, M4).
pub fn initialize_data_icons_only(result: &mut Object) {
    if let Some(Value::Object(info)) = result.get_mut("serverInfo") {
        keep_data_icons(info);
    }
}

/// The icons of a result of `method`: of each tool, prompt, resource and template
/// of a list, and of each content block of a call, a prompt or a read (O10, M4).
/// `structuredContent` stays as it is (O11).
pub fn result_data_icons_only(method: &str, result: &mut Object) {
    let for_each = |result: &mut Object, member: &str, edit: &dyn Fn(&mut Object)| {
        if let Some(Value::Array(items)) = result.get_mut(member) {
            for item in items.iter_mut().filter_map(Value::as_object_mut) {
                edit(item);
            }
        }
    };
    match method {
        "tools/list" => for_each(result, "tools", &keep_data_icons),
        "prompts/list" => for_each(result, "prompts", &keep_data_icons),
        "resources/list" => for_each(result, "resources", &keep_data_icons),
        "resources/templates/list" => for_each(result, "resourceTemplates", &keep_data_icons),
        "resources/read" => for_each(result, "contents", &keep_data_icons),
        "tools/call" => for_each(result, "content", &keep_data_icons),
        "prompts/get" => for_each(result, "messages", &|message| {
            if let Some(Value::Object(content)) = message.get_mut("content") {
                keep_data_icons(content);
            }
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn icons(srcs: &[&str]) -> Value {
        Value::Array(
            srcs.iter()
                .map(|src| json!({"src":src,"mimeType":"image/png"}))
                .collect(),
        )
    }

    const ALL: [&str; 4] = [
        "data:image/png;base64,AAAA",
        "https://x.example/i.png",
        "file:///i.png",
        "DATA:image/png;base64,BB",
    ];

    #[test]
    fn a_result_whose_text_names_no_icons_has_none_to_drop() {
        for (text, holds) in [
            (r#"{"content":[{"type":"text","text":"x"}]}"#, false),
            (
                r#"{"content":[{"type":"resource_link","uri":"u","name":"n","icons":[]}]}"#,
                true,
            ),
            (
                r#"{"content":[{"type":"resource_link","uri":"u","name":"n","ic\u006fns":[]}]}"#,
                true,
            ),
            (r#"{"content":[{"type":"text","text":"caf\u00e9"}]}"#, true),
        ] {
            assert_eq!(may_hold_icons(text), holds, "{text}");
            if !holds {
                let mut result: Object = serde_json::from_str(text).unwrap();
                let before = result.clone();
                for method in ["tools/call", "tools/list", "resources/read", "prompts/get"] {
                    result_data_icons_only(method, &mut result);
                    assert_eq!(result, before, "{method} {text}");
                }
            }
        }
    }

    #[test]
    fn o10_m4_only_data_icons_reach_vscode_from_a_url_upstream() {
        let kept = icons(&["data:image/png;base64,AAAA", "DATA:image/png;base64,BB"]);
        let mut initialize = json!({"serverInfo":{"name":"s","version":"1","icons":icons(&ALL)}});
        initialize_data_icons_only(initialize.as_object_mut().unwrap());
        assert_eq!(initialize["serverInfo"]["icons"], kept);
        for (method, member) in [
            ("tools/list", "tools"),
            ("prompts/list", "prompts"),
            ("resources/list", "resources"),
            ("resources/templates/list", "resourceTemplates"),
            ("tools/call", "content"),
            ("resources/read", "contents"),
        ] {
            let mut result = json!({ member: [{"name":"a","icons":icons(&ALL)}, {"name":"b"}], "structuredContent": {"icons": icons(&ALL)} });
            result_data_icons_only(method, result.as_object_mut().unwrap());
            assert_eq!(result[member][0]["icons"], kept, "{method}");
            assert!(result[member][1].get("icons").is_none());
            assert_eq!(
                result["structuredContent"]["icons"],
                icons(&ALL),
                "O11: {method}"
            );
        }
        let mut prompt = json!({"messages":[{"role":"user","content":{"type":"resource_link","uri":"x:y","name":"n","icons":icons(&ALL)}}]});
        result_data_icons_only("prompts/get", prompt.as_object_mut().unwrap());
        assert_eq!(prompt["messages"][0]["content"]["icons"], kept);
    }
}
