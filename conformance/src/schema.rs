//! The vendored MCP schemas (`transcripts/schema/`), as validators of one
//! `$defs` entry each: frames toward VS Code against revision 2025-11-25, frames
//! toward the upstream against revision 2026-07-28.

use jsonschema::Validator;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The two revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Revision {
    /// The side of VS Code.
    Client,
    /// The side of the upstream server.
    Upstream,
}

impl Revision {
    pub fn name(self) -> &'static str {
        match self {
            Self::Client => "2025-11-25",
            Self::Upstream => "2026-07-28",
        }
    }
}

/// Both schema documents and the validators built so far.
pub struct Schemas {
    client: Value,
    upstream: Value,
    validators: Mutex<HashMap<(Revision, String), Arc<Validator>>>,
}

impl Schemas {
    /// Reads `2025-11-25.schema.json` and `2026-07-28.schema.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let read = |name: &str| -> Result<Value, String> {
            let path = dir.join(name);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
        };
        Ok(Self {
            client: read("2025-11-25.schema.json")?,
            upstream: read("2026-07-28.schema.json")?,
            validators: Mutex::new(HashMap::new()),
        })
    }

    fn validator(&self, revision: Revision, def: &str) -> Result<Arc<Validator>, String> {
        let key = (revision, def.to_owned());
        if let Some(validator) = self
            .validators
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(validator.clone());
        }
        let document = match revision {
            Revision::Client => &self.client,
            Revision::Upstream => &self.upstream,
        };
        let Value::Object(mut root) = document.clone() else {
            return Err("the schema is not an object".into());
        };
        if root.get("$defs").and_then(|defs| defs.get(def)).is_none() {
            return Err(format!("the schema {} has no $defs/{def}", revision.name()));
        }
        // The document with a root that refers to the one definition: its
        // references stay inside the same document.
        root.insert("$ref".into(), Value::String(format!("#/$defs/{def}")));
        let validator = jsonschema::validator_for(&Value::Object(root))
            .map_err(|e| format!("the schema $defs/{def} does not compile: {e}"))?;
        let validator = Arc::new(validator);
        self.validators
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, validator.clone());
        Ok(validator)
    }

    /// `Ok` when `instance` is valid for `$defs/<def>`; else the first errors.
    pub fn validate(&self, revision: Revision, def: &str, instance: &Value) -> Result<(), String> {
        let validator = self.validator(revision, def)?;
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .take(3)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at {at}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "not valid for $defs/{def} of {}: {}",
                revision.name(),
                errors.join("; ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> Schemas {
        Schemas::load(&crate::paths::transcripts_dir().join("schema")).unwrap()
    }

    #[test]
    fn an_initialize_result_needs_server_info() {
        let schemas = schemas();
        let good = json!({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}});
        schemas
            .validate(Revision::Client, "InitializeResult", &good)
            .unwrap();
        let bad = json!({"protocolVersion":"2025-11-25","capabilities":{}});
        let error = schemas
            .validate(Revision::Client, "InitializeResult", &bad)
            .unwrap_err();
        assert!(error.contains("serverInfo"), "{error}");
    }

    #[test]
    fn an_upstream_request_needs_its_meta() {
        let schemas = schemas();
        let good = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        schemas
            .validate(Revision::Upstream, "ListToolsRequest", &good)
            .unwrap();
        let bad = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}});
        assert!(
            schemas
                .validate(Revision::Upstream, "ListToolsRequest", &bad)
                .is_err()
        );
        assert!(
            schemas
                .validate(Revision::Upstream, "NoSuchDef", &bad)
                .unwrap_err()
                .contains("NoSuchDef")
        );
    }
}
