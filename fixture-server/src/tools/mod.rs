//! The tools of the fixture profile (study section 1.2), one file per group.
//!
//! The stdio executable lists 21 tools: echo, add, slow, progress, bare_array,
//! structured, crash, shutdown, ask_form, ask_url, ask_url_twice, ask_bad_url, sample,
//! sample_tools, list_roots, multi, many_inputs, toggle, toggled, touch, log.
//! `array_output` (`--array-output`), `show` (`--apps`), `guarded` (`--auth`) and
//! `tool_<n>` (`--many-tools`) come on top. Only `readOnlyHint: true` is ever set as an annotation.

pub mod apps;
pub mod args;
pub mod basic;
pub mod guarded;
pub mod input;
pub mod lists;
pub mod logging;
pub mod many;
pub mod process;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use crate::catalog::{Catalog, INSTRUCTIONS, ToolReply, ToolSpec};
use crate::config::Config;

/// A `CallToolResult` with one text block.
pub fn text(text: impl Into<String>) -> ToolReply {
    ToolReply::new(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// The catalog of the fixture profile.
pub fn fixture_catalog(config: &Config) -> Catalog {
    let mut tools: Vec<ToolSpec> = basic::tools();
    if config.array_output {
        tools.push(basic::array_output());
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
