//! The `--profile conformance` surface: the tools, prompts and resources that the
//! official MCP conformance suite (github.com/modelcontextprotocol/conformance,
//! `src/scenarios/server/`, and its reference `examples/servers/typescript/everything-server.ts`)
//! expects of an "everything" server, written anew for 2026-07-28.
//!
//! Where the suite's 2025 scenarios have the server send requests to the client
//! (`test_sampling`, `test_elicitation*`), the tools use the 2026-07-28 equivalent: an
//! `InputRequiredResult` and a retry. `test_elicitation_sep1036_error` (the 2025-only
//! error -32042) and the 2025 `logging/setLevel` and `resources/subscribe` have no
//! 2026-07-28 form and are left out: the per-request log level and
//! `subscriptions/listen` serve the same scenarios.

mod media;
mod mrtr;
mod prompts;
mod resources;
mod stateless;
mod tools;

use serde_json::json;

use crate::catalog::{Catalog, INSTRUCTIONS};
use crate::config::Config;

/// The catalog of the conformance profile; the executable adds crash and shutdown, and
/// `--array-output`, `--apps` and `--many-tools` add their parts as in the fixture profile.
pub fn catalog(config: &Config) -> Catalog {
    let mut all_tools = tools::tools();
    all_tools.extend(mrtr::tools());
    all_tools.extend(stateless::tools());
    if config.array_output {
        all_tools.push(crate::tools::basic::array_output());
    }
    if config.process_tools {
        all_tools.extend(crate::tools::process::tools());
    }
    Catalog {
        tools: all_tools,
        prompts: prompts::prompts(),
        resources: resources::resources(),
        templates: resources::templates(),
        completion: Some(
            |_| json!({"resultType": "complete", "completion": {"values": [], "total": 0, "hasMore": false}}),
        ),
        instructions: INSTRUCTIONS,
        extensions: None,
    }
}
