//! The item catalog (`transcripts/catalog.json`): every item of the contract with
//! its one-line requirement and the milestones that added behaviour for it.
//!
//! The matrix has one cell for each (item, milestone) pair of the catalog, so an
//! item of a later milestone shows as "not covered" until its transcripts land.

use serde::Deserialize;
use std::path::Path;

/// One row of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Item {
    /// `R1`, `C3`, `Q5`, `STOP`, ...: what a transcript names in its header.
    pub id: String,
    /// What the contract asks, in one line.
    pub requirement: String,
    /// The milestones that added behaviour for the item, in order.
    pub milestones: Vec<String>,
    /// requirement, client, feature, quirk, behaviour, option, log or documentation.
    #[serde(default)]
    pub kind: String,
    /// The parts of the item that no transcript can check, each with the test of
    /// `cargo test` that does: the contract page names them, so that a cell never
    /// claims a transcript it does not have.
    #[serde(default)]
    pub tests: Vec<BackingTest>,
}

/// A test of `cargo test` that checks a part of an item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BackingTest {
    /// The part of the requirement, in a few words.
    pub covers: String,
    /// `path/of/the/file.rs::the_test_function`, from the workspace's root.
    pub test: String,
}

/// The whole catalog.
#[derive(Debug, Clone, Deserialize)]
pub struct Catalog {
    /// The columns of the matrix, in order (`M1` .. `M6`).
    pub milestones: Vec<String>,
    /// The rows, in the order of the contract.
    pub items: Vec<Item>,
}

/// Why the catalog could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: not a valid catalog: {error}")]
    Parse {
        path: String,
        error: serde_json::Error,
    },
    #[error("{path}: {problem}")]
    Invalid {
        path: String,
        problem: CatalogProblem,
    },
}

/// What is wrong in a catalog that parses.
#[derive(Debug, thiserror::Error)]
pub enum CatalogProblem {
    #[error("the item {0} occurs twice")]
    Twice(String),
    #[error("the item {0} has no milestone")]
    NoMilestone(String),
    #[error("the item {item} names the milestone {milestone}, which is not a column")]
    NoColumn { item: String, milestone: String },
}

impl Catalog {
    /// Reads and checks `catalog.json`.
    pub fn load(path: &Path) -> Result<Self, CatalogError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| CatalogError::Read {
            path: name.clone(),
            error,
        })?;
        let catalog: Catalog =
            serde_json::from_str(&text).map_err(|error| CatalogError::Parse {
                path: name.clone(),
                error,
            })?;
        catalog.check().map_err(|problem| CatalogError::Invalid {
            path: name,
            problem,
        })?;
        Ok(catalog)
    }

    /// Ids are unique, and every milestone of an item is a column.
    pub fn check(&self) -> Result<(), CatalogProblem> {
        let mut seen = std::collections::HashSet::new();
        for item in &self.items {
            if !seen.insert(item.id.as_str()) {
                return Err(CatalogProblem::Twice(item.id.clone()));
            }
            if item.milestones.is_empty() {
                return Err(CatalogProblem::NoMilestone(item.id.clone()));
            }
            for milestone in &item.milestones {
                if !self.milestones.contains(milestone) {
                    return Err(CatalogProblem::NoColumn {
                        item: item.id.clone(),
                        milestone: milestone.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The item with this id.
    pub fn item(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|item| item.id == id)
    }

    /// Whether a transcript of `milestone` may name `id`: the item exists and has
    /// a cell in that milestone's column.
    pub fn has_cell(&self, id: &str, milestone: &str) -> bool {
        self.item(id)
            .is_some_and(|item| item.milestones.iter().any(|m| m == milestone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::load(&crate::paths::transcripts_dir().join("catalog.json")).unwrap()
    }

    /// Every item of the contract is a row: the requirements, the two clients, the
    /// features, the ten rows of the quirk table, the two endings, the options and
    /// the rows of M4-M6.
    #[test]
    fn every_contract_item_is_in_the_catalog() {
        let catalog = catalog();
        let mut expected: Vec<String> = Vec::new();
        expected.extend((1..=8).map(|n| format!("R{n}")));
        expected.extend((1..=4).map(|n| format!("C{n}")));
        expected.extend((1..=11).map(|n| format!("O{n}")));
        expected.extend((1..=10).map(|n| format!("Q{n}")));
        for id in [
            "UPSTREAM-STOP",
            "UPSTREAM-URL",
            "STOP",
            "CLI",
            "LOG",
            "URL",
            "SIGN-IN",
            "TOKEN-STORE",
            "LOGOUT",
            "EMBED",
            "START-URL",
        ] {
            expected.push(id.into());
        }
        // The rows of M4-M6 that the contract names beyond its tables.
        expected.extend(
            [
                "LISTEN-HTTP",
                "SIGN-IN-TIME",
                "SANDBOX",
                "START-URL-ONE-TIME",
                "START-URL-SECOND-REQUEST",
                "START-URL-WRONG-TOKEN",
                "START-URL-AFTER-REDIRECT",
                "EMBED-LIMITS",
                "EMBED-END",
            ]
            .map(String::from),
        );
        for id in &expected {
            assert!(catalog.item(id).is_some(), "{id} is missing");
        }
        // Each line of the Output channel table that the bridge writes, and each
        // cause of the cause table (30, sign-in causes as one row, and
        // sign_in_start_reused).
        let of_kind = |kind: &str| catalog.items.iter().filter(|i| i.kind == kind).count();
        assert_eq!(of_kind("log"), 49 + 1);
        assert_eq!(of_kind("cause"), 32);
        for (id, milestone) in [
            ("LOG-WATCHDOG", "M1"),
            ("LOG-LISTEN-CANNOT-START", "M3"),
            ("LOG-TOO-MANY-ROUNDS", "M2"),
            ("CAUSE-duplicate_id", "M1"),
            ("CAUSE-too_many_rounds", "M2"),
            ("CAUSE-sign_in_start_reused", "M6"),
        ] {
            assert!(catalog.has_cell(id, milestone), "{id} in {milestone}");
        }
        assert_eq!(
            catalog.items.len(),
            expected.len() + of_kind("log") - 1 + of_kind("cause")
        );
        assert_eq!(catalog.milestones, ["M1", "M2", "M3", "M4", "M5", "M6"]);
    }

    #[test]
    fn each_backing_test_exists_where_the_catalog_says() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let catalog = catalog();
        let tests: Vec<&BackingTest> = catalog.items.iter().flat_map(|i| &i.tests).collect();
        assert!(!tests.is_empty());
        for test in tests {
            let (file, name) = test.test.split_once("::").unwrap();
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            assert!(text.contains(&format!("fn {name}(")), "{}", test.test);
        }
    }

    #[test]
    fn milestones_follow_the_contract() {
        let catalog = catalog();
        let milestones = |id: &str| catalog.item(id).unwrap().milestones.join(",");
        assert_eq!(milestones("R1"), "M1,M4");
        assert_eq!(milestones("R8"), "M2");
        assert_eq!(milestones("C2"), "M1,M2");
        assert_eq!(milestones("O1"), "M2,M4");
        assert_eq!(milestones("Q1"), "M1,M2");
        assert_eq!(milestones("Q6"), "M3");
        assert_eq!(milestones("EMBED"), "M5");
        assert_eq!(milestones("START-URL"), "M6");
        assert!(catalog.has_cell("R1", "M4"));
        assert!(!catalog.has_cell("R4", "M2"));
    }

    #[test]
    fn a_duplicate_or_an_unknown_milestone_is_refused() {
        let mut catalog = catalog();
        catalog.items.push(catalog.items[0].clone());
        assert!(catalog.check().unwrap_err().to_string().contains("twice"));
        let mut catalog = self::tests::catalog();
        catalog.items[0].milestones.push("M9".into());
        assert!(catalog.check().unwrap_err().to_string().contains("M9"));
    }
}
