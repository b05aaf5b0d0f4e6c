//! The conformance resources and the resource template `test://template/{id}/data`.

use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use super::media::PNG;
use crate::catalog::{ResourceSpec, TemplateSpec};

pub fn resources() -> Vec<ResourceSpec> {
    vec![
        ResourceSpec {
            resource: Resource::new("test://static-text", "static-text")
                .with_title("Static Text Resource")
                .with_description("A static text resource for testing")
                .with_mime_type("text/plain"),
            contents: || {
                vec![ResourceContents::text(
                    "This is the content of the static text resource.",
                    "test://static-text",
                )]
            },
        },
        ResourceSpec {
            resource: Resource::new("test://static-binary", "static-binary")
                .with_title("Static Binary Resource")
                .with_description("A static binary resource (image) for testing")
                .with_mime_type("image/png"),
            contents: || {
                vec![
                    ResourceContents::blob(PNG, "test://static-binary").with_mime_type("image/png"),
                ]
            },
        },
        ResourceSpec {
            resource: Resource::new("test://watched-resource", "watched-resource")
                .with_title("Watched Resource")
                .with_description("A resource that can be subscribed to")
                .with_mime_type("text/plain"),
            contents: || {
                vec![ResourceContents::text(
                    "Watched resource content",
                    "test://watched-resource",
                )]
            },
        },
    ]
}

pub fn templates() -> Vec<TemplateSpec> {
    vec![TemplateSpec {
        template: ResourceTemplate::new("test://template/{id}/data", "template")
            .with_title("Resource Template")
            .with_description("A resource template with parameter substitution")
            .with_mime_type("application/json"),
        read: read_template,
    }]
}

/// `test://template/<id>/data` with a non-empty id without `/`.
fn read_template(uri: &str) -> Option<Vec<ResourceContents>> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
    Some(vec![
        ResourceContents::text(text.to_string(), uri).with_mime_type("application/json"),
    ])
}
