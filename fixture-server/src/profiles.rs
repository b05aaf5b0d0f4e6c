//! The catalog of a configuration: the profile's tools, prompts and resources, then
//! what the options add on top (`--apps`, `--many-tools`, `--icons`, no completions).
//!
//! It lives apart from `catalog.rs` so that the imports go one way: `catalog` holds
//! the types that every tool, prompt and resource module uses, and this module, which
//! uses those modules, is the only one that puts them together.

use serde_json::json;

use crate::catalog::{Catalog, INSTRUCTIONS, ToolSpec, three_scheme_icons};
use crate::config::{Config, Profile};
use crate::tools::{apps, basic, guarded, icons, input, lists, logging, many, process};

/// The catalog of `config`.
pub fn catalog(config: &Config) -> Catalog {
    let mut catalog = match config.profile {
        Profile::Fixture => fixture(config),
        Profile::Conformance => crate::conformance::catalog(config),
    };
    if config.apps {
        catalog.tools.push(apps::show());
        catalog.resources.extend(crate::resources::app_resources());
        catalog.extensions = Some(apps::extension());
    }
    catalog
        .tools
        .extend((0..config.many_tools).map(many::numbered_tool));
    if !config.completions {
        catalog.completion = None;
    }
    if config.icons {
        for spec in catalog
            .tools
            .iter_mut()
            .filter(|spec| spec.tool.name == "echo")
        {
            spec.tool.icons = Some(three_scheme_icons("echo"));
        }
        for spec in &mut catalog.resources {
            spec.resource.icons = Some(three_scheme_icons("resource"));
        }
        for spec in &mut catalog.prompts {
            spec.prompt.icons = Some(three_scheme_icons("prompt"));
        }
        for spec in &mut catalog.templates {
            spec.template.icons = Some(three_scheme_icons("template"));
        }
        catalog.tools.push(icons::link_tool());
        catalog.prompts.push(icons::link_prompt());
    }
    catalog
}

/// The catalog of the fixture profile.
fn fixture(config: &Config) -> Catalog {
    let mut tools: Vec<ToolSpec> = basic::tools();
    if config.array_output {
        tools.push(basic::array_output());
    }
    if config.stray_param_header {
        tools.push(basic::stray_param_header());
        tools.push(basic::stray_param_header_in_any_of());
    }
    if config.param_header_not_a_token {
        tools.push(basic::param_header_not_a_token());
    }
    if config.param_header_echo {
        tools.push(lists::param_header_echo());
    }
    if config.process_tools {
        tools.extend(process::tools());
    }
    tools.extend(input::tools());
    tools.extend(lists::tools());
    tools.push(logging::log());
    if config.guarded {
        tools.push(guarded::guarded());
    }
    Catalog {
        tools,
        prompts: crate::prompts::prompts(),
        resources: crate::resources::resources(),
        templates: Vec::new(),
        completion: Some(
            |_| json!({"resultType": "complete", "completion": {"values": ["alpha", "beta"], "total": 2, "hasMore": false}}),
        ),
        instructions: INSTRUCTIONS,
        extensions: None,
    }
}
