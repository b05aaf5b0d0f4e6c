//! `server/discover` (server/discover.mdx): versions, capabilities, instructions, and
//! the `serverInfo` (added to every result by `session::stamp`).

use serde_json::{Value, json};

use crate::meta::SUPPORTED_VERSIONS;
use crate::session::Session;

/// The `DiscoverResult`. `ttlMs` is 0: the fixture makes no promise to caches.
pub fn discover(session: &Session) -> Value {
    let catalog = &session.catalog;
    json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": catalog.capabilities(),
        "instructions": catalog.instructions,
        "ttlMs": 0,
        "cacheScope": "public",
    })
}
