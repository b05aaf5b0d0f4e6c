//! `subscriptions/listen` (basic/patterns/subscriptions.mdx): a long-lived request whose
//! stream carries the list changes and resource updates that the client asked for.

use rmcp::model::ErrorData;
use serde_json::{Map, Value};

use super::invalid_params;
use crate::meta;
use crate::session::{Filter, Session};
use crate::wire::RequestId;

/// Checks the request and opens the stream; the session writes the acknowledgment. The
/// request gets its response only when the server ends the stream.
pub fn open(
    session: &Session,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
) -> Result<(), ErrorData> {
    meta::check(params)?;
    let filter = match params.and_then(|params| params.get("notifications")) {
        Some(Value::Object(filter)) => filter,
        Some(_) => {
            return Err(invalid_params(
                "The notifications filter must be an object.",
            ));
        }
        None => return Err(invalid_params("The request has no notifications filter.")),
    };
    let flag = |name: &str| match filter.get(name) {
        None => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(_) => Err(invalid_params(format!("{name} must be a boolean."))),
    };
    let uris = match filter.get("resourceSubscriptions") {
        None => None,
        Some(Value::Array(uris)) => Some(
            uris.iter()
                .map(|uri| uri.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid_params("resourceSubscriptions must be an array of URIs."))?,
        ),
        Some(_) => {
            return Err(invalid_params(
                "resourceSubscriptions must be an array of URIs.",
            ));
        }
    };
    let filter = Filter {
        tools: flag("toolsListChanged")?,
        prompts: flag("promptsListChanged")?,
        resources: flag("resourcesListChanged")?,
        uris,
    };
    session.open_listen(id, filter)
}
