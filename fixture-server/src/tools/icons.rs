//! What `--icons` adds besides the icons on the catalog (O10): the tool `link` and
//! the prompt `link`, whose results hold a `resource_link` to the resource notes
//! with the three icons, the one content block that carries icons.

use rmcp::model::{ErrorData, Prompt};
use serde_json::{Value, json};

use super::args::Args;
use crate::catalog::{
    PromptCall, PromptSpec, ToolCall, ToolReply, ToolSpec, no_arguments, three_scheme_icons,
};
use crate::resources::NOTES_URI;

/// The tool `link`.
pub fn link_tool() -> ToolSpec {
    ToolSpec::new(
        "link",
        "Gives a resource_link to the resource notes, with icons of three schemes.",
        no_arguments(),
        |c| Box::pin(link(c)),
    )
}

/// The prompt `link`.
pub fn link_prompt() -> PromptSpec {
    PromptSpec {
        prompt: Prompt::new(
            "link",
            Some(
                "A message with a resource_link to the resource notes, with icons of three schemes.",
            ),
            None,
        ),
        handler: |call| Box::pin(link_message(call)),
        switch: None,
    }
}

/// The `resource_link` content block of the resource notes, with the three icons.
fn notes_link() -> Value {
    json!({
        "type": "resource_link",
        "uri": NOTES_URI,
        "name": "notes",
        "mimeType": "text/plain",
        "icons": three_scheme_icons("notes-link"),
    })
}

async fn link(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(ToolReply::new(
        json!({"content": [notes_link()], "isError": false}),
    ))
}

async fn link_message(_call: PromptCall) -> Result<Value, ErrorData> {
    Ok(json!({"messages": [{"role": "user", "content": notes_link()}]}))
}
