//! The lists that VS Code gets through the bridge: the tools (their count, their
//! size, the names that VS Code changes or that collide, the schemas that its
//! draft-07 check omits, those that the bridge repairs (R6) with the lines it
//! writes, those too deep to examine), the icons that the bridge or VS Code drops
//! (O10), the prompts, the resources and their templates.

use super::Context;
use super::report::{Check, Finding, Report, counted};
use super::revision::cause_of;
use super::session::{Listed, Run};
use super::texts::{Section, invalid_schemas_line, schema_fix_line};
use crate::config::UpstreamTarget;
use crate::rules::results::shape_result;
use crate::rules::schema_repair::{MAX_SCHEMA_DEPTH, SchemaFix};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The longest tool id of VS Code (`McpToolName.MaxLength`).
const MAX_TOOL_ID: usize = 64;
/// The characters of the server name in VS Code's tool ids.
const SERVER_NAME_IN_ID: usize = 13;
/// The most tools that VS Code sends with one chat request.
const MAX_TOOLS_PER_REQUEST: usize = 128;
/// How many names a finding lists before it says "and n more".
const SHOWN: usize = 10;

/// The findings of the lists; the run's initialize succeeded.
pub fn findings(context: &Context<'_>, run: &Run, report: &mut Report) {
    let server_name = run
        .initialize_result()
        .and_then(|result| result.get("serverInfo"))
        .and_then(|info| info.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    tools(context, run, report);
    if run.tools.declared && run.tools.error.is_none() {
        report.add(tool_names(&server_name, &run.tools.items));
        report.add(tool_schemas(run));
    } else {
        for check in [Check::ToolNames, Check::ToolSchemas] {
            report.add(Finding::skipped(check, "VS Code gets no tools"));
        }
    }
    report.add(icons(context, run));
    report.add(other_list(
        context,
        Check::Prompts,
        "prompt",
        &run.prompts,
        "prompts",
    ));
    report.add(other_list(
        context,
        Check::Resources,
        "resource",
        &run.resources,
        "resources",
    ));
    report.add(other_list(
        context,
        Check::ResourceTemplates,
        "resource template",
        &run.templates,
        "resources",
    ));
}

/// A list that failed: the error as VS Code shows it, and the lines.
fn list_failed(context: &Context<'_>, check: Check, what: &str, listed: &Listed) -> Finding {
    let error = listed.error.clone().unwrap_or(Value::Null);
    if context.refused_sign_in(&error) {
        return Finding::skipped(check, super::NEEDS_SIGN_IN);
    }
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    let code = error.get("code").and_then(Value::as_i64);
    let mut finding = Finding::fail(
        check,
        format!("VS Code gets an error for the {what} list: MPC {}: {message}", code.map_or("?".into(), |c| c.to_string())),
    )
    .lines(context.lines.warnings_between(listed.mark))
    .advice(
        Section::Errors,
        "Read the lines above and the log of the upstream server; an error with a cause is the bridge's (its table says what to do).",
    );
    if let Some(cause) = cause_of(&error) {
        finding = finding.cause(cause);
    }
    finding
}

fn tools(context: &Context<'_>, run: &Run, report: &mut Report) {
    let listed = &run.tools;
    if !listed.declared {
        report.add(Finding::skipped(
            Check::Tools,
            "the server declares no tools",
        ));
        return;
    }
    if listed.error.is_some() {
        report.add(list_failed(context, Check::Tools, "tool", listed));
        return;
    }
    let count = listed.items.len();
    let summary = format!(
        "{} in {}, {} as VS Code gets them",
        counted(count, "tool"),
        counted(listed.pages, "page"),
        counted(listed.bytes, "byte")
    );
    // The bridge leaves out a tool whose x-mcp-header annotations are not valid.
    let left_out = context.lines.warnings_between(listed.mark);
    let mut finding = if count > MAX_TOOLS_PER_REQUEST {
        Finding::warning(Check::Tools, summary).advice(
            Section::WhatVscodeGets,
            format!("VS Code sends at most {MAX_TOOLS_PER_REQUEST} tools with a chat request: offer fewer tools, or let the user pick them."),
        )
    } else if !left_out.is_empty() {
        Finding::warning(Check::Tools, summary).advice(
            Section::WhatVscodeGets,
            "The bridge left tools out of the list: fix their annotations in the upstream server.",
        )
    } else {
        Finding::pass(Check::Tools, summary)
    };
    finding = finding.lines(left_out);
    report.add(finding);
}

fn name_of(item: &Value) -> &str {
    item.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// The name as VS Code keeps it: a character other than a letter, a digit, `_`
/// or `-` becomes `_` (reference: clients.md, "Tool schema check").
fn vscode_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The tool id of VS Code: `mcp_<the first 13 characters of the server name>_<name>`,
/// cut to 64 characters.
fn tool_id(server_name: &str, name: &str) -> (String, bool) {
    let prefix: String = server_name.chars().take(SERVER_NAME_IN_ID).collect();
    let id = format!("mcp_{prefix}_{}", vscode_name(name)).replace('.', "_");
    let cut = id.chars().count() > MAX_TOOL_ID;
    (id.chars().take(MAX_TOOL_ID).collect(), cut)
}

/// Lists at most [`SHOWN`] items, then how many more.
fn shown(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().take(SHOWN).cloned().collect();
    if items.len() > SHOWN {
        out.push(format!("and {} more", items.len() - SHOWN));
    }
    out
}

/// vscode.tool_names: names that VS Code changes, cuts, or that collide.
pub fn tool_names(server_name: &str, tools: &[Value]) -> Finding {
    let mut empty = 0;
    let mut changed = Vec::new();
    let mut cut = Vec::new();
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for tool in tools {
        let name = name_of(tool);
        if name.is_empty() {
            empty += 1;
            continue;
        }
        let kept = vscode_name(name);
        if kept != name {
            changed.push(format!("'{name}' becomes '{kept}'"));
        }
        let (id, was_cut) = tool_id(server_name, name);
        if was_cut {
            cut.push(format!("'{name}' has the id '{id}'"));
        }
        by_id.entry(id).or_default().push(name.to_owned());
    }
    let collisions: Vec<String> = by_id
        .values()
        .filter(|names| names.len() > 1)
        .map(|names| {
            names
                .iter()
                .map(|name| format!("'{name}'"))
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect();
    if empty > 0 || !collisions.is_empty() {
        let mut details = Vec::new();
        if empty > 0 {
            details.push(format!("{} without a name", counted(empty, "tool")));
        }
        details.extend(collisions.iter().map(|names| format!("{names} get one id")));
        return Finding::fail(
            Check::ToolNames,
            "VS Code cannot tell some tools apart: their ids are the same, or they have no name",
        )
        .details(shown(&details))
        .advice(
            Section::WhatVscodeGets,
            "Give each tool a distinct name of letters, digits, _ and -, short enough that mcp_<server>_<name> stays within 64 characters.",
        );
    }
    if !changed.is_empty() || !cut.is_empty() {
        let mut details = changed.clone();
        details.extend(cut.clone());
        return Finding::warning(
            Check::ToolNames,
            format!(
                "VS Code changes {} tool names and cuts {} tool ids to {MAX_TOOL_ID} characters; the model sees them so",
                changed.len(),
                cut.len()
            ),
        )
        .details(shown(&details))
        .advice(
            Section::WhatVscodeGets,
            "Use only letters, digits, _ and - in tool names, and keep them short.",
        );
    }
    Finding::pass(
        Check::ToolNames,
        format!(
            "{}, each its own id in VS Code",
            counted(tools.len(), "tool name")
        ),
    )
}

/// The input schema as VS Code checks it: `properties: {}` on an object schema
/// without it (reference: clients.md, `_normalizeTool`).
fn normalized_schema(tool: &Value) -> Value {
    let mut schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    if let Some(object) = schema.as_object_mut()
        && !object.contains_key("properties")
    {
        object.insert("properties".into(), Value::Object(Map::new()));
    }
    schema
}

/// The pages of the upstream's list of `method`, as the upstream wrote them.
fn raw_pages(run: &Run, method: &str) -> Vec<Map<String, Value>> {
    run.tap.results(method)
}

/// vscode.tool_schemas: VS Code's draft-07 check (R6 a), the repairs of the bridge
/// (R6 b) with its lines, the schemas too deep, the output schemas that go.
fn tool_schemas(run: &Run) -> Finding {
    let omitted: Vec<String> = run
        .tools
        .items
        .iter()
        .filter(|tool| !jsonschema::draft7::meta::is_valid(&normalized_schema(tool)))
        .map(|tool| format!("'{}'", name_of(tool)))
        .collect();
    // The rules of the bridge on the upstream's own pages: the fixes, and their lines.
    let mut repairs = Vec::new();
    let mut output_schemas_gone = Vec::new();
    for mut page in raw_pages(run, "tools/list") {
        let before: Vec<(String, bool)> = tool_items(&page)
            .map(|tool| (name_of(tool).to_owned(), tool.get("outputSchema").is_some()))
            .collect();
        repairs.extend(shape_result("tools/list", &mut page));
        let after: BTreeSet<String> = tool_items(&page)
            .filter(|tool| tool.get("outputSchema").is_some())
            .map(|tool| name_of(tool).to_owned())
            .collect();
        output_schemas_gone.extend(
            before
                .into_iter()
                .filter(|(name, had)| *had && !after.contains(name))
                .map(|(name, _)| format!("'{name}'")),
        );
    }
    let lines: Vec<String> = repairs.iter().map(schema_fix_line).collect();
    if !omitted.is_empty() {
        return Finding::fail(
            Check::ToolSchemas,
            format!(
                "VS Code omits {}: their input schemas are not valid JSON Schema draft-07",
                counted(omitted.len(), "tool")
            ),
        )
        .details(shown(&omitted))
        .line(format!("VS Code: {}", invalid_schemas_line(omitted.len())))
        .lines(lines)
        .advice(
            Section::WhatVscodeGets,
            "Correct the input schemas in the upstream server: the bridge does not run VS Code's draft-07 check.",
        );
    }
    if !repairs.is_empty() || !output_schemas_gone.is_empty() {
        let mut details = Vec::new();
        if !output_schemas_gone.is_empty() {
            details.push(format!(
                "the output schemas of {} go: their root is not type \"object\"",
                output_schemas_gone.join(", ")
            ));
        }
        let too_deep = repairs
            .iter()
            .filter(|fix| matches!(fix.fix, SchemaFix::TooDeep { .. }))
            .count();
        if too_deep > 0 {
            let schemas = if too_deep == 1 {
                "1 schema is".to_owned()
            } else {
                format!("{too_deep} schemas are")
            };
            details.push(format!(
                "{schemas} deeper than {MAX_SCHEMA_DEPTH} levels: the bridge did not examine the deeper part"
            ));
        }
        return Finding::warning(
            Check::ToolSchemas,
            format!(
                "the bridge repairs {} of the input schemas (R6), so that the Copilot extension does not stop every chat request",
                counted(repairs.len() - too_deep, "place")
            ),
        )
        .details(details)
        .lines(lines)
        .advice(
            Section::WhatVscodeGets,
            "Give each array schema an items schema in the upstream server, flatten schemas deeper than 64 levels, and give output schemas the type object.",
        );
    }
    Finding::pass(
        Check::ToolSchemas,
        format!(
            "{} pass VS Code's draft-07 check and need no repair",
            counted(run.tools.items.len(), "input schema")
        ),
    )
}

fn tool_items(page: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    page.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The icons of the items of a list.
fn icons_of(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| item.get("icons").and_then(Value::as_array))
        .flatten()
        .filter_map(|icon| icon.get("src").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn scheme_is(src: &str, schemes: &[&str]) -> bool {
    let lower = src.get(..8).unwrap_or(src).to_ascii_lowercase();
    schemes.iter().any(|scheme| lower.starts_with(scheme))
}

/// vscode.icons: for a URL upstream, the icons that the bridge drops (O10, only
/// `data:` passes); for a stdio upstream, the `http:` and `https:` icons that
/// VS Code drops itself, since the bridge is a stdio server.
fn icons(context: &Context<'_>, run: &Run) -> Finding {
    let delivered: Vec<String> = [&run.tools, &run.prompts, &run.resources, &run.templates]
        .into_iter()
        .flat_map(|listed| icons_of(&listed.items))
        .chain(
            run.initialize_result()
                .and_then(|result| result.get("serverInfo"))
                .map(|info| icons_of(std::slice::from_ref(info)))
                .unwrap_or_default(),
        )
        .collect();
    let raw: usize = [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ]
    .into_iter()
    .map(|(method, member)| {
        raw_pages(run, method)
            .iter()
            .filter_map(|page| page.get(member).and_then(Value::as_array))
            .map(|items| icons_of(items).len())
            .sum::<usize>()
    })
    .sum::<usize>()
        + run
            .tap
            .results("server/discover")
            .into_iter()
            .filter_map(|discover| {
                discover
                    .get("_meta")
                    .and_then(|meta| meta.get(crate::rules::SERVER_INFO_KEY))
                    .cloned()
            })
            .map(|info| icons_of(std::slice::from_ref(&info)).len())
            .sum::<usize>();
    match &context.config.upstream {
        UpstreamTarget::Url(_) => {
            let dropped = raw.saturating_sub(delivered.len());
            if dropped > 0 {
                Finding::warning(
                    Check::Icons,
                    format!(
                        "the bridge drops {dropped} of {raw} icons: VS Code gets only the data: icons of a server at a URL (O10)"
                    ),
                )
                .advice(
                    Section::WhatVscodeGets,
                    "Give the icons as data: URIs in the upstream server to have VS Code show them.",
                )
            } else if raw == 0 {
                Finding::pass(Check::Icons, "the server sends no icons")
            } else {
                Finding::pass(
                    Check::Icons,
                    format!("VS Code gets the {} (data: URIs)", counted(raw, "icon")),
                )
            }
        }
        UpstreamTarget::Command { .. } => {
            let web = delivered
                .iter()
                .filter(|src| scheme_is(src, &["http:", "https:"]))
                .count();
            if web > 0 {
                Finding::warning(
                    Check::Icons,
                    format!(
                        "VS Code drops {web} of {} icons: it shows no http: or https: icon of a stdio server (O10)",
                        delivered.len()
                    ),
                )
                .advice(
                    Section::WhatVscodeGets,
                    "Give the icons as data: URIs in the upstream server to have VS Code show them.",
                )
            } else if delivered.is_empty() {
                Finding::pass(Check::Icons, "the server sends no icons")
            } else {
                Finding::pass(
                    Check::Icons,
                    format!("VS Code shows the {}", counted(delivered.len(), "icon")),
                )
            }
        }
    }
}

/// vscode.prompts, vscode.resources, vscode.resource_templates.
fn other_list(
    context: &Context<'_>,
    check: Check,
    what: &str,
    listed: &Listed,
    capability: &str,
) -> Finding {
    if !listed.declared {
        return Finding::skipped(check, format!("the server declares no {capability}"));
    }
    if listed.error.is_some() {
        return list_failed(context, check, what, listed);
    }
    let mut seen = BTreeSet::new();
    let key = if check == Check::Prompts {
        "name"
    } else {
        "uri"
    };
    let key = if check == Check::ResourceTemplates {
        "uriTemplate"
    } else {
        key
    };
    let twice: Vec<String> = listed
        .items
        .iter()
        .filter_map(|item| item.get(key).and_then(Value::as_str))
        .filter(|value| !seen.insert(*value))
        .map(|value| format!("'{value}'"))
        .collect();
    let summary = format!(
        "{} in {}, {}",
        counted(listed.items.len(), what),
        counted(listed.pages, "page"),
        counted(listed.bytes, "byte")
    );
    if twice.is_empty() {
        Finding::pass(check, summary)
    } else {
        Finding::warning(check, summary)
            .detail(format!("{} comes more than once", shown(&twice).join(", ")))
            .advice(
                Section::WhatVscodeGets,
                "VS Code shows each of them once: give each its own name or URI.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::report::Status;

    fn tools(names: &[&str]) -> Vec<Value> {
        names.iter().map(|name| json!({"name": name})).collect()
    }

    #[test]
    fn vscode_changes_the_characters_of_a_name_that_are_not_letters_digits_or_dashes() {
        assert_eq!(vscode_name("get_user-2"), "get_user-2");
        assert_eq!(vscode_name("files.read"), "files_read");
        assert_eq!(vscode_name("say hi/now"), "say_hi_now");
        assert_eq!(
            tool_id("bridge-fixture-server", "add"),
            ("mcp_bridge-fixtur_add".into(), false)
        );
        let (id, cut) = tool_id("s", &"x".repeat(70));
        assert!(cut && id.chars().count() == 64);
    }

    #[test]
    fn distinct_names_pass_changed_names_warn_and_ids_that_collide_fail() {
        assert_eq!(
            tool_names("srv", &tools(&["add", "echo"])).status,
            Status::Pass
        );
        let changed = tool_names("srv", &tools(&["files.read", "add"]));
        assert_eq!(changed.status, Status::Warning);
        assert_eq!(changed.details, vec!["'files.read' becomes 'files_read'"]);
        let collide = tool_names("srv", &tools(&["files.read", "files_read"]));
        assert_eq!(collide.status, Status::Fail);
        assert_eq!(
            collide.details,
            vec!["'files.read' and 'files_read' get one id"]
        );
        let long = "a".repeat(60);
        let cut = tool_names("srv", &tools(&[&format!("{long}1"), &format!("{long}2")]));
        assert_eq!(cut.status, Status::Fail);
        assert_eq!(tool_names("srv", &tools(&["", "x"])).status, Status::Fail);
    }

    #[test]
    fn an_object_schema_without_properties_is_checked_as_vscode_checks_it() {
        assert!(jsonschema::draft7::meta::is_valid(&normalized_schema(
            &json!({"name": "x", "inputSchema": {"type": "object"}})
        )));
        assert!(!jsonschema::draft7::meta::is_valid(&normalized_schema(
            &json!({"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}})
        )));
    }
}
