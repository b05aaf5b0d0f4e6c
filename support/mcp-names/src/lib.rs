//! Names that the specifications fix and that more than one crate of the workspace
//! reads: the bridge (what it passes upstream, what its schema repair walks), the
//! fixture server (what it serves) and harness-sim (what its schema check walks).
//!
//! One copy, so that a name added to a revision is added once. A crate of its own,
//! without dependencies, because those crates must not depend on each other for it:
//! the fixture never depends on the bridge, nor the bridge on the fixture, and the
//! simulator of VS Code stands apart from the bridge it tests.
#![forbid(unsafe_code)]

/// The requests of a 2026-07-28 client that ask for a feature of the server (tools,
/// prompts, resources, completion): what the bridge passes upstream (O8:
/// `completion/complete` always), and what the fixture serves besides
/// `server/discover` and `subscriptions/listen`.
pub const FEATURE_REQUESTS: [&str; 8] = [
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
];

/// The keywords of JSON Schema (draft-07 and 2020-12) whose value holds subschemas.
/// `items` is in none of the lists: it is one schema or a list of schemas (draft-07),
/// and it is the very keyword the readers look at, each in its own way. The order is
/// the order in which a depth-first search visits them.
pub mod schema_keywords {
    /// Keywords whose value is one subschema.
    pub const ONE: [&str; 10] = [
        "additionalProperties",
        "additionalItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    ];
    /// Keywords whose value maps names to subschemas.
    pub const MAP: [&str; 6] = [
        "properties",
        "patternProperties",
        "dependencies",
        "dependentSchemas",
        "$defs",
        "definitions",
    ];
    /// Keywords whose value is a list of subschemas.
    pub const LIST: [&str; 4] = ["anyOf", "allOf", "oneOf", "prefixItems"];
}

#[cfg(test)]
mod tests {
    use super::schema_keywords::{LIST, MAP, ONE};

    #[test]
    fn no_keyword_is_in_two_lists_and_items_is_in_none() {
        let mut all: Vec<&str> = ONE.iter().chain(&MAP).chain(&LIST).copied().collect();
        assert_eq!(all.len(), 20);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 20);
        assert!(!all.contains(&"items"));
    }
}
