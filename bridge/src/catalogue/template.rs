//! A line of the catalogue in its template form: its text with a placeholder for
//! each part that changes, named as docs/troubleshooting.md names it
//! (`request <id> (<method>): no response in <limit>`). The test of the pages
//! compares these with the page.

use super::form::{Level, Prefix, Scope};

/// One line of the catalogue, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// The enum and the variant of the line: `StartInfo::Ready`.
    pub kind: &'static str,
    pub variant: &'static str,
    pub scope: Scope,
    pub level: Level,
    /// The format string of the text: `{name}` for each parameter.
    pub format: &'static str,
    /// Each parameter's name in the format string, and its name on the page when
    /// that is not the parameter's name with spaces for underscores (a page name
    /// can have a dash, or repeat: `<n>` twice in one line).
    pub names: &'static [(&'static str, Option<&'static str>)],
}

impl Template {
    /// The text with `<name>` for each parameter, as on the page.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.format.len());
        let mut rest = self.format;
        while let Some(at) = rest.find(['{', '}']) {
            out.push_str(&rest[..at]);
            let brace = &rest[at..];
            if let Some(after) = brace
                .strip_prefix("{{")
                .or_else(|| brace.strip_prefix("}}"))
            {
                out.push_str(&brace[..1]);
                rest = after;
                continue;
            }
            let end = brace
                .find('}')
                .unwrap_or_else(|| panic!("an open placeholder in {:?}", self.format));
            out.push('<');
            out.push_str(&self.page_name(&brace[1..end]));
            out.push('>');
            rest = &brace[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// The whole line, with its prefix, as the first column of the page has it.
    pub fn line(&self) -> String {
        format!("{}{}", Prefix::of(self.scope, self.level), self.text())
    }

    fn page_name(&self, parameter: &str) -> String {
        let (_, page) = self
            .names
            .iter()
            .find(|(name, _)| *name == parameter)
            .unwrap_or_else(|| panic!("{parameter} is no parameter of {:?}", self.format));
        page.map_or_else(|| parameter.replace('_', " "), str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_the_names_of_the_page() {
        let template = Template {
            kind: "BridgeDebug",
            variant: "UpstreamRound",
            scope: Scope::Bridge,
            level: Level::Debug,
            format: "upstream request {upstream_id} ({method}, round {round}): {outcome} in {{braces}} after {input_method}",
            names: &[
                ("upstream_id", Some("n")),
                ("method", None),
                ("round", Some("n")),
                ("outcome", None),
                ("input_method", None),
            ],
        };
        assert_eq!(
            template.line(),
            "mcp-bridge-vscode: bridge: debug: upstream request <n> (<method>, round <n>): <outcome> in {braces} after <input method>"
        );
    }
}
