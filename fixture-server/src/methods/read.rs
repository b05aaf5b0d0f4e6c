//! `resources/read` (server/resources.mdx). An unknown URI gets -32602 with `data.uri`
//! (2026-07-28 no longer uses -32002).

use rmcp::model::{CacheScope, ErrorCode, ErrorData, ReadResourceResult};
use serde_json::{Value, json};

use super::required_string;
use crate::context::Call;
use crate::input::Prior;
use crate::session::Session;

pub fn read(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let uri = required_string(&call.params, "uri")?;
    // No resource of the fixture asks for input, so any requestState is refused.
    Prior::read(call, uri)?;
    let catalog = &session.catalog;
    let contents = catalog
        .resources
        .iter()
        .find(|spec| spec.resource.uri == uri)
        .map(|spec| (spec.contents)())
        .or_else(|| catalog.templates.iter().find_map(|spec| (spec.read)(uri)))
        .ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "Resource not found",
                Some(json!({"uri": uri})),
            )
        })?;
    let result = ReadResourceResult::new(contents)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Public);
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}
