//! [`Profile`]: which client is simulated, and its opening frames.
//!
//! The frames follow `shared/reference/vscode/clients.md` and its frame files,
//! key order included (serde_json keeps insertion order in this workspace).

use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};
use tokio::time::Duration;

/// The protocol revision of `initialize` (both clients).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// The revision of `server/discover` and of the modern path.
pub const MODERN_VERSION: &str = "2026-07-28";

/// One simulated client version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Profile {
    /// The Local harness (workbench client) of VS Code 1.140.
    Local140,
    /// The Local harness of VS Code 1.141 (adds the MCP Apps extension).
    Local141,
    /// The Local harness of VS Code 1.142.
    Local142,
    /// The Copilot harness, copilot-cli 1.0.89 (no MRTR).
    Copilot089,
    /// The Copilot harness, copilot-cli 1.0.92 (MRTR on the modern path).
    Copilot092,
    /// The Copilot harness, copilot-cli 1.0.95.
    Copilot095,
}

/// The two clients of VS Code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Harness {
    /// The workbench client: `initialize` only, revision 2025-11-25.
    Local,
    /// copilot-cli (rmcp in runtime.node): `server/discover` first, then `initialize`.
    Copilot,
}

/// The error of [`Profile::from_str`].
#[derive(Debug, thiserror::Error)]
#[error("unknown profile {0:?}; the profiles are {list}", list = Profile::names().join(", "))]
pub struct UnknownProfile(pub String);

impl Profile {
    /// Every profile, Local first.
    pub fn all() -> &'static [Profile] {
        &[
            Profile::Local140,
            Profile::Local141,
            Profile::Local142,
            Profile::Copilot089,
            Profile::Copilot092,
            Profile::Copilot095,
        ]
    }

    /// The names of every profile.
    pub fn names() -> Vec<&'static str> {
        Self::all().iter().map(|p| p.name()).collect()
    }

    /// The command-line name, e.g. `local-1.141` or `copilot-1.0.92`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Local140 => "local-1.140",
            Profile::Local141 => "local-1.141",
            Profile::Local142 => "local-1.142",
            Profile::Copilot089 => "copilot-1.0.89",
            Profile::Copilot092 => "copilot-1.0.92",
            Profile::Copilot095 => "copilot-1.0.95",
        }
    }

    /// Which client this is.
    pub fn harness(self) -> Harness {
        match self {
            Profile::Local140 | Profile::Local141 | Profile::Local142 => Harness::Local,
            Profile::Copilot089 | Profile::Copilot092 | Profile::Copilot095 => Harness::Copilot,
        }
    }

    /// Whether this is a Local harness profile.
    pub fn is_local(self) -> bool {
        self.harness() == Harness::Local
    }

    /// The `clientInfo.version` the client sends.
    pub fn client_version(self) -> &'static str {
        match self {
            Profile::Local140 => "1.140.0",
            Profile::Local141 => "1.141.0",
            Profile::Local142 => "1.142.0",
            Profile::Copilot089 => "1.0.89",
            Profile::Copilot092 => "1.0.92",
            Profile::Copilot095 => "1.0.95",
        }
    }

    /// `clientInfo`: `Visual Studio Code` (productService.nameLong) or `copilot-cli`.
    pub fn client_info(self) -> Value {
        let name = match self.harness() {
            Harness::Local => "Visual Studio Code",
            Harness::Copilot => "copilot-cli",
        };
        json!({"name": name, "version": self.client_version()})
    }

    /// Whether the client does the rounds of an `InputRequiredResult` on the
    /// modern path (seed: 1.0.89 has none; 1.0.92 was observed doing them).
    pub fn has_mrtr(self) -> bool {
        matches!(self, Profile::Copilot092 | Profile::Copilot095)
    }

    /// How long after `notifications/initialized` the first `tools/list` goes
    /// out. copilot-cli: 60-300 ms observed (120 ms in
    /// frames/copilot-1.0.92-start.jsonl); the Local harness lists in the same tick.
    pub fn tools_list_delay(self) -> Duration {
        match self.harness() {
            Harness::Local => Duration::ZERO,
            Harness::Copilot => Duration::from_millis(120),
        }
    }

    /// The capabilities of `initialize`.
    ///
    /// Local: roots with listChanged, sampling, elicitation form+url, tasks
    /// (mcpServerRequestHandler.ts), and from 1.141 the MCP Apps extension
    /// (seed O11; its value shape is inferred in the frame file). Copilot:
    /// sampling and elicitation form+url, no roots (C2).
    pub fn capabilities(self) -> Value {
        match self {
            Profile::Local140 => json!({
                "roots": {"listChanged": true},
                "sampling": {},
                "elicitation": {"form": {}, "url": {}},
                "tasks": local_tasks()
            }),
            Profile::Local141 | Profile::Local142 => json!({
                "roots": {"listChanged": true},
                "sampling": {},
                "elicitation": {"form": {}, "url": {}},
                "tasks": local_tasks(),
                "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
            }),
            Profile::Copilot089 | Profile::Copilot092 | Profile::Copilot095 => json!({
                "sampling": {},
                "elicitation": {"form": {}, "url": {}}
            }),
        }
    }

    /// The `initialize` request with `id`: 1 for Local (its counter starts at 1),
    /// 1 for Copilot (after discover's 0).
    pub fn initialize_request(self, id: i64) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": self.capabilities(),
                "clientInfo": self.client_info()
            }
        })
    }

    /// The `_meta` of revision 2026-07-28 that copilot-cli sends with
    /// `server/discover` (observed key order).
    pub fn discover_meta(self) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientInfo": self.client_info(),
            "io.modelcontextprotocol/clientCapabilities": self.capabilities()
        })
    }

    /// `server/discover` with id 0 (Copilot only; the Local harness never sends it).
    pub fn discover_request(self) -> Option<Value> {
        match self.harness() {
            Harness::Local => None,
            Harness::Copilot => Some(json!({
                "jsonrpc": "2.0",
                "id": 0,
                "method": "server/discover",
                "params": {"_meta": self.discover_meta()}
            })),
        }
    }

    /// The id of the first request of a connection.
    pub fn first_id(self) -> i64 {
        match self.harness() {
            Harness::Local => 1,
            Harness::Copilot => 0,
        }
    }
}

fn local_tasks() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}})
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::all()
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProfile(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for profile in Profile::all() {
            assert_eq!(profile.name().parse::<Profile>().unwrap(), *profile);
        }
        let error = "local-9".parse::<Profile>().unwrap_err().to_string();
        assert!(error.contains("local-1.141"), "{error}");
    }

    #[test]
    fn extension_only_from_1_141() {
        assert!(Profile::Local140.capabilities().get("extensions").is_none());
        assert!(Profile::Local141.capabilities().get("extensions").is_some());
        assert!(Profile::Copilot092.capabilities().get("roots").is_none());
    }

    #[test]
    fn only_copilot_waits_before_tools_list() {
        for profile in Profile::all() {
            let delay = profile.tools_list_delay();
            if profile.is_local() {
                assert_eq!(delay, Duration::ZERO);
            } else {
                let observed = Duration::from_millis(60)..=Duration::from_millis(300);
                assert!(observed.contains(&delay), "{profile}: {delay:?}");
            }
        }
    }
}
