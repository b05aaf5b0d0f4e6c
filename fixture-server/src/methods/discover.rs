//! `server/discover` (server/discover.mdx): versions, capabilities, instructions, and
//! the `serverInfo` (added to every result by `session::stamp`).

use serde_json::{Value, json};

use crate::meta::SUPPORTED_VERSIONS;
use crate::session::Session;

/// The `DiscoverResult`. `ttlMs` is 0: the fixture makes no promise to caches.
pub fn discover(session: &Session) -> Value {
    let catalog = &session.catalog;
    let mut capabilities = catalog.capabilities();
    if session.config.log_undeclared
        && let Value::Object(capabilities) = &mut capabilities
    {
        capabilities.shift_remove("logging");
    }
    json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": capabilities,
        "instructions": catalog.instructions,
        "ttlMs": 0,
        "cacheScope": "public",
    })
}
