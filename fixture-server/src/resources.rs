//! The resources of the fixture profile (study section 1.3) and of `--apps`. No resource
//! templates.

use rmcp::model::{Resource, ResourceContents};

use crate::catalog::ResourceSpec;
use crate::tools::apps::{APP_MIME_TYPE, VIEW_URI};

/// The notes of the fixture.
pub const NOTES_URI: &str = "file:///fixture/notes.txt";
/// The text of `--apps`.
pub const README_URI: &str = "file:///fixture/readme.txt";

/// `file:///fixture/notes.txt`.
pub fn resources() -> Vec<ResourceSpec> {
    vec![ResourceSpec {
        resource: Resource::new(NOTES_URI, "notes").with_mime_type("text/plain"),
        contents: || {
            vec![ResourceContents::text(
                "The notes of the fixture.",
                NOTES_URI,
            )]
        },
    }]
}

/// The resources of `--apps`: `file:///fixture/readme.txt` and the view
/// `ui://fixture/view`.
pub fn app_resources() -> Vec<ResourceSpec> {
    vec![
        ResourceSpec {
            resource: Resource::new(README_URI, "readme").with_mime_type("text/plain"),
            contents: || {
                vec![ResourceContents::text(
                    "The text of the fixture.",
                    README_URI,
                )]
            },
        },
        ResourceSpec {
            resource: Resource::new(VIEW_URI, "view").with_mime_type(APP_MIME_TYPE),
            contents: || {
                vec![
                    ResourceContents::text("<p>The view of the fixture.</p>", VIEW_URI)
                        .with_mime_type(APP_MIME_TYPE),
                ]
            },
        },
    ]
}
