//! The switches of `toggle`: a tool or a prompt listed only while its switch is on.
//! They belong to the catalog's entries; the session keeps their state, and a
//! handler flips them through its [`crate::context::Host`].

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    Tool,
    Prompt,
    /// The `x-mcp-header` of the parameter `text` of `param_header_echo`, listed
    /// only while this switch is on (its own calls flip it).
    ParamHeader,
}
