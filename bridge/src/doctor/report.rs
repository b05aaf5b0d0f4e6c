//! The findings of one run of doctor: one per check, each with its status, what
//! it found, the line of the Output channel or the cause that VS Code would show,
//! and what to do. The ids are stable: a script reads them from `--json`.

use super::texts::Section;
use crate::catalogue::Cause;

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    /// VS Code works, but something deserves a look.
    Warning,
    /// VS Code will not work as it should.
    Fail,
    /// The check could not run (an earlier one failed, or it needs an option).
    Skipped,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Warning => "warning",
            Self::Fail => "fail",
            Self::Skipped => "skipped",
        }
    }
}

/// The groups of checks, in the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Reach,
    SignIn,
    Revision,
    Vscode,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Self::Reach => "Reach",
            Self::SignIn => "Sign-in",
            Self::Revision => "Revision",
            Self::Vscode => "What VS Code will get",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Self::Reach => "reach",
            Self::SignIn => "sign_in",
            Self::Revision => "revision",
            Self::Vscode => "vscode",
        }
    }
}

/// Every check of doctor. [`Check::id`] is the stable id of `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Check {
    Command,
    Stdout,
    Proxy,
    Dns,
    Tcp,
    Tls,
    Post,
    TokenStore,
    Challenge,
    ResourceMetadata,
    AuthorizationServer,
    AuthorizationUrl,
    ClientId,
    RedirectPort,
    StoredSignIn,
    SignIn,
    Discover,
    Capabilities,
    Initialize,
    Tools,
    ToolNames,
    ToolSchemas,
    Icons,
    Prompts,
    Resources,
    ResourceTemplates,
    Ping,
    Listen,
    Logging,
    Call,
}

impl Check {
    /// Every check, in the order of the report.
    pub const ALL: [Check; 30] = [
        Self::Command,
        Self::Stdout,
        Self::Proxy,
        Self::Dns,
        Self::Tcp,
        Self::Tls,
        Self::Post,
        Self::TokenStore,
        Self::Challenge,
        Self::ResourceMetadata,
        Self::AuthorizationServer,
        Self::AuthorizationUrl,
        Self::ClientId,
        Self::RedirectPort,
        Self::StoredSignIn,
        Self::SignIn,
        Self::Discover,
        Self::Capabilities,
        Self::Initialize,
        Self::Tools,
        Self::ToolNames,
        Self::ToolSchemas,
        Self::Icons,
        Self::Prompts,
        Self::Resources,
        Self::ResourceTemplates,
        Self::Ping,
        Self::Listen,
        Self::Logging,
        Self::Call,
    ];

    /// The stable id.
    pub fn id(self) -> &'static str {
        match self {
            Self::Command => "reach.command",
            Self::Stdout => "reach.stdout",
            Self::Proxy => "reach.proxy",
            Self::Dns => "reach.dns",
            Self::Tcp => "reach.tcp",
            Self::Tls => "reach.tls",
            Self::Post => "reach.post",
            Self::TokenStore => "sign_in.token_store",
            Self::Challenge => "sign_in.challenge",
            Self::ResourceMetadata => "sign_in.resource_metadata",
            Self::AuthorizationServer => "sign_in.authorization_server",
            Self::AuthorizationUrl => "sign_in.authorization_url",
            Self::ClientId => "sign_in.client_id",
            Self::RedirectPort => "sign_in.redirect_port",
            Self::StoredSignIn => "sign_in.stored",
            Self::SignIn => "sign_in.sign_in",
            Self::Discover => "revision.discover",
            Self::Capabilities => "revision.capabilities",
            Self::Initialize => "vscode.initialize",
            Self::Tools => "vscode.tools",
            Self::ToolNames => "vscode.tool_names",
            Self::ToolSchemas => "vscode.tool_schemas",
            Self::Icons => "vscode.icons",
            Self::Prompts => "vscode.prompts",
            Self::Resources => "vscode.resources",
            Self::ResourceTemplates => "vscode.resource_templates",
            Self::Ping => "vscode.ping",
            Self::Listen => "vscode.listen",
            Self::Logging => "vscode.logging",
            Self::Call => "vscode.call",
        }
    }

    pub fn group(self) -> Group {
        match self {
            Self::Command | Self::Stdout | Self::Proxy | Self::Dns | Self::Tcp | Self::Tls => {
                Group::Reach
            }
            Self::Post => Group::Reach,
            Self::TokenStore
            | Self::Challenge
            | Self::ResourceMetadata
            | Self::AuthorizationServer
            | Self::AuthorizationUrl
            | Self::ClientId
            | Self::RedirectPort
            | Self::StoredSignIn
            | Self::SignIn => Group::SignIn,
            Self::Discover | Self::Capabilities => Group::Revision,
            _ => Group::Vscode,
        }
    }
}

/// `1 tool`, `3 tools`: a count with its noun.
pub fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// What to do, and the section of docs/troubleshooting.md that says more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    pub text: String,
    pub section: Section,
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub check: Check,
    pub status: Status,
    /// What the check found, in one sentence.
    pub summary: String,
    /// More of what it found: one item a line (names, pointers, addresses).
    pub details: Vec<String>,
    /// The lines of the Output channel that the bridge writes for it.
    pub lines: Vec<String>,
    /// The cause of the error that VS Code gets, when it gets one.
    pub cause: Option<Cause>,
    pub advice: Option<Advice>,
}

impl Finding {
    pub fn new(check: Check, status: Status, summary: impl Into<String>) -> Self {
        Self {
            check,
            status,
            summary: summary.into(),
            details: Vec::new(),
            lines: Vec::new(),
            cause: None,
            advice: None,
        }
    }

    pub fn pass(check: Check, summary: impl Into<String>) -> Self {
        Self::new(check, Status::Pass, summary)
    }

    pub fn warning(check: Check, summary: impl Into<String>) -> Self {
        Self::new(check, Status::Warning, summary)
    }

    pub fn fail(check: Check, summary: impl Into<String>) -> Self {
        Self::new(check, Status::Fail, summary)
    }

    pub fn skipped(check: Check, summary: impl Into<String>) -> Self {
        Self::new(check, Status::Skipped, summary)
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.details.push(detail.into());
        self
    }

    pub fn details(mut self, details: impl IntoIterator<Item = String>) -> Self {
        self.details.extend(details);
        self
    }

    pub fn line(mut self, line: impl Into<String>) -> Self {
        self.lines.push(line.into());
        self
    }

    pub fn lines(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        self.lines.extend(lines);
        self
    }

    pub fn cause(mut self, cause: Cause) -> Self {
        self.cause = Some(cause);
        self
    }

    pub fn advice(mut self, section: Section, text: impl Into<String>) -> Self {
        self.advice = Some(Advice {
            text: text.into(),
            section,
        });
        self
    }
}

/// Every finding of a run, and what the run was about.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The upstream as doctor names it: the URL without its query, or the program.
    pub upstream: String,
    findings: Vec<Finding>,
}

impl Report {
    pub fn new(upstream: String) -> Self {
        Self {
            upstream,
            findings: Vec::new(),
        }
    }

    /// Adds a finding; a second finding of the same check takes the place of the first.
    pub fn add(&mut self, finding: Finding) {
        self.findings.retain(|old| old.check != finding.check);
        self.findings.push(finding);
    }

    /// Whether a check has a finding yet.
    pub fn has(&self, check: Check) -> bool {
        self.findings.iter().any(|finding| finding.check == check)
    }

    /// The status of a check, when it has a finding.
    pub fn status(&self, check: Check) -> Option<Status> {
        self.findings
            .iter()
            .find(|finding| finding.check == check)
            .map(|finding| finding.status)
    }

    /// The findings in the order of the report (by check, so that a run that found
    /// things in another order still prints in one order).
    pub fn findings(&self) -> Vec<&Finding> {
        let mut findings: Vec<&Finding> = self.findings.iter().collect();
        findings.sort_by_key(|finding| finding.check);
        findings
    }

    /// How many findings have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.status == status)
            .count()
    }

    /// Whether doctor saw the start through: the revision was checked, so what
    /// VS Code gets was too (or failed with it).
    pub fn complete(&self) -> bool {
        self.status(Check::Discover)
            .is_some_and(|status| status != Status::Skipped)
    }

    /// The exit code: 0 when VS Code will work, 1 when a check failed.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.count(Status::Fail) > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_check_is_listed_once_with_its_own_id_in_the_order_of_its_group() {
        let ids: BTreeSet<&str> = Check::ALL.iter().map(|check| check.id()).collect();
        assert_eq!(ids.len(), Check::ALL.len());
        for pair in Check::ALL.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
            assert!(pair[0].group() <= pair[1].group(), "{pair:?}");
        }
        for check in Check::ALL {
            assert!(
                check.id().starts_with(&format!("{}.", check.group().key())),
                "{}",
                check.id()
            );
        }
    }

    #[test]
    fn docs_troubleshooting_explains_every_check_by_its_id() {
        let page = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/troubleshooting.md"
        ));
        for check in Check::ALL {
            assert!(
                page.contains(&format!("\n| {} |", check.id())),
                "docs/troubleshooting.md has no row for {}",
                check.id()
            );
        }
    }

    #[test]
    fn a_failed_check_makes_the_exit_code_1_and_a_later_finding_replaces_an_earlier_one() {
        let mut report = Report::new("x".into());
        report.add(Finding::warning(Check::Tools, "many"));
        report.add(Finding::skipped(Check::Call, "no --call"));
        assert_eq!(report.exit_code(), 0);
        report.add(Finding::fail(Check::Dns, "no address"));
        assert_eq!(report.exit_code(), 1);
        report.add(Finding::pass(Check::Dns, "an address"));
        assert_eq!(report.exit_code(), 0);
        let order: Vec<Check> = report.findings().iter().map(|f| f.check).collect();
        assert_eq!(order, vec![Check::Dns, Check::Tools, Check::Call]);
    }
}
