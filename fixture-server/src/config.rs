//! What a server serves: the tool surface and its options. The command line fills it
//! (`cli`), tests in the same process build it directly.

/// The tool surface of the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// The fixture of the bridge tests (study section 1): 21 tools and 3 prompts over
    /// stdio.
    #[default]
    Fixture,
    /// The tools, prompts and resources that the official MCP conformance suite expects
    /// of an "everything" server.
    Conformance,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Fixture => "fixture",
            Profile::Conformance => "conformance",
        }
    }

    pub fn parse(text: &str) -> Option<Profile> {
        match text {
            "fixture" => Some(Profile::Fixture),
            "conformance" => Some(Profile::Conformance),
            _ => None,
        }
    }
}

/// The options of a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub profile: Profile,
    /// Adds `tool_0` .. `tool_<n-1>`.
    pub many_tools: usize,
    /// Adds the MCP Apps parts: the extension `io.modelcontextprotocol/ui`, the tool
    /// `show`, the resources `ui://fixture/view` and `file:///fixture/readme.txt`.
    pub apps: bool,
    /// Adds `array_output` (an `outputSchema` of type array), for in-process tests.
    pub array_output: bool,
    /// `--stray-param-header`: adds `stray_param_header`, whose `x-mcp-header` is on
    /// the `items` of an array, and `stray_param_header_in_any_of`, whose
    /// `x-mcp-header` is in a branch of `anyOf`: neither on a chain of `properties`.
    pub stray_param_header: bool,
    /// `--param-header-echo`: adds `param_header_echo`, whose `x-mcp-header` its own
    /// calls take out of the list and put back.
    pub param_header_echo: bool,
    /// `--param-header-not-a-token`: adds `param_header_not_a_token`, whose
    /// `x-mcp-header` has a space, which an HTTP field name cannot have.
    pub param_header_not_a_token: bool,
    /// Declares `completions` and answers `completion/complete`; without it
    /// `completion/complete` gets -32601.
    pub completions: bool,
    /// Adds `crash` and `shutdown`, which end the process: the executable always sets it.
    pub process_tools: bool,
    /// Adds `guarded` (`--auth` sets it): the tool of the step-up to the scope
    /// `mcp:write`. Not on by default, so that the plain lists keep their 21 tools.
    pub guarded: bool,
    /// `--anonymous`: no `serverInfo` in any result, as a server that does not name
    /// itself (a client then names it: the bridge takes `--name`, the command's file
    /// stem or the URL's host, R1).
    pub anonymous: bool,
    /// `--icons`: the server information and the tool `echo` carry icons of three
    /// schemes (`data:`, `https:`, `file:`), for the icon rules of a client (O10).
    pub icons: bool,
    /// `--log-undeclared`: no `logging` capability, and the tool `log` still logs (a
    /// server of revision 2026-07-28 may leave the capability out).
    pub log_undeclared: bool,
    /// `--list-change-in-response`: the list changes of `toggle` and the updates of
    /// `touch` go in the response stream of the call, untagged, and not on the listen
    /// streams (FastMCP's way).
    pub list_change_in_response: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            profile: Profile::Fixture,
            many_tools: 0,
            apps: false,
            array_output: false,
            stray_param_header: false,
            param_header_echo: false,
            param_header_not_a_token: false,
            completions: true,
            process_tools: false,
            guarded: false,
            anonymous: false,
            icons: false,
            log_undeclared: false,
            list_change_in_response: false,
        }
    }
}
