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

/// Why a schema cannot be read, or an instance is not valid for it.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("{path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Parse {
        path: String,
        error: serde_json::Error,
    },
    #[error("the schema is not an object")]
    NotAnObject,
    #[error("the schema {revision} has no $defs/{def}")]
    NoDefinition { revision: &'static str, def: String },
    #[error("the schema $defs/{def} does not compile: {error}")]
    Compile { def: String, error: String },
    #[error("not valid for $defs/{def} of {revision}: {errors}")]
    NotValid {
        def: String,
        revision: &'static str,
        errors: String,
    },
}

/// Both schema documents and the validators built so far.
pub struct Schemas {
    client: Value,
    upstream: Value,
    validators: Mutex<HashMap<(Revision, String), Arc<Validator>>>,
}

impl Schemas {
    /// Reads `2025-11-25.schema.json` and `2026-07-28.schema.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, SchemaError> {
        let read = |name: &str| -> Result<Value, SchemaError> {
            let path = dir.join(name).display().to_string();
            let text =
                std::fs::read_to_string(dir.join(name)).map_err(|error| SchemaError::Read {
                    path: path.clone(),
                    error,
                })?;
            serde_json::from_str(&text).map_err(|error| SchemaError::Parse { path, error })
        };
        Ok(Self {
            client: read("2025-11-25.schema.json")?,
            upstream: read("2026-07-28.schema.json")?,
            validators: Mutex::new(HashMap::new()),
        })
    }

    fn validator(&self, revision: Revision, def: &str) -> Result<Arc<Validator>, SchemaError> {
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
            return Err(SchemaError::NotAnObject);
        };
        if root.get("$defs").and_then(|defs| defs.get(def)).is_none() {
            return Err(SchemaError::NoDefinition {
                revision: revision.name(),
                def: def.to_owned(),
            });
        }
        // The document with a root that refers to the one definition: its
        // references stay inside the same document.
        root.insert("$ref".into(), Value::String(format!("#/$defs/{def}")));
        let validator = jsonschema::validator_for(&Value::Object(root)).map_err(|error| {
            SchemaError::Compile {
                def: def.to_owned(),
                error: error.to_string(),
            }
        })?;
        let validator = Arc::new(validator);
        self.validators
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, validator.clone());
        Ok(validator)
    }

    /// `Ok` when `instance` is valid for `$defs/<def>`; else the first errors.
    pub fn validate(
        &self,
        revision: Revision,
        def: &str,
        instance: &Value,
    ) -> Result<(), SchemaError> {
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
            Err(SchemaError::NotValid {
                def: def.to_owned(),
                revision: revision.name(),
                errors: errors.join("; "),
            })
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
        assert!(error.to_string().contains("serverInfo"), "{error}");
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
                .to_string()
                .contains("NoSuchDef")
        );
    }
}
