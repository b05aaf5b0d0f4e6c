//! The tools of the fixture profile (study section 1.2), one file per group.
//!
//! The stdio executable lists 21 tools: echo, add, slow, progress, bare_array,
//! structured, crash, shutdown, ask_form, ask_url, ask_url_twice, ask_bad_url, sample,
//! sample_tools, list_roots, multi, many_inputs, toggle, toggled, touch, log.
//! `array_output` (`--array-output`), `show` (`--apps`), `guarded` (`--auth`) and
//! `tool_<n>` (`--many-tools`) and `link` (`--icons`) come on top. Only `readOnlyHint: true` is ever set as an annotation.

pub mod apps;
pub mod args;
pub mod basic;
pub mod guarded;
pub mod icons;
pub mod input;
pub mod lists;
pub mod logging;
pub mod many;
pub mod process;

use rmcp::model::{CallToolResult, ContentBlock};

use crate::catalog::ToolReply;

/// A `CallToolResult` with one text block.
pub fn text(text: impl Into<String>) -> ToolReply {
    ToolReply::new(CallToolResult::success(vec![ContentBlock::text(text)]))
}
