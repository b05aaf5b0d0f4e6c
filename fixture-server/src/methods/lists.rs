//! The list requests: `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`. Each answers one page (see `pagination`) with the
//! caching hints that 2026-07-28 requires (`ttlMs` 0: the lists change with `toggle`).

use rmcp::model::{
    CacheScope, ErrorData, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ResultType,
};
use serde_json::Value;

use crate::context::Call;
use crate::pagination::page;
use crate::session::Session;
use crate::switch::Switch;
use crate::tools::lists::as_listed;

fn to_value(result: impl serde::Serialize) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

pub fn tools(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let tools: Vec<_> = session
        .catalog
        .tools
        .iter()
        .filter(|spec| spec.switch.is_none_or(|switch| session.enabled(switch)))
        .map(|spec| as_listed(&spec.tool, session.enabled(Switch::ParamHeader)).into_owned())
        .collect();
    let (tools, next_cursor) = page("tools", &tools, &call.params)?;
    Ok(to_value(ListToolsResult {
        result_type: Some(ResultType::COMPLETE),
        meta: None,
        next_cursor,
        ttl_ms: Some(0),
        cache_scope: Some(CacheScope::Public),
        tools,
    }))
}

pub fn prompts(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let prompts: Vec<_> = session
        .catalog
        .prompts
        .iter()
        .filter(|spec| spec.switch.is_none_or(|switch| session.enabled(switch)))
        .map(|spec| spec.prompt.clone())
        .collect();
    let (prompts, next_cursor) = page("prompts", &prompts, &call.params)?;
    Ok(to_value(ListPromptsResult {
        result_type: Some(ResultType::COMPLETE),
        meta: None,
        next_cursor,
        ttl_ms: Some(0),
        cache_scope: Some(CacheScope::Public),
        prompts,
    }))
}

pub fn resources(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let resources: Vec<_> = session
        .catalog
        .resources
        .iter()
        .map(|spec| spec.resource.clone())
        .collect();
    let (resources, next_cursor) = page("resources", &resources, &call.params)?;
    Ok(to_value(ListResourcesResult {
        result_type: Some(ResultType::COMPLETE),
        meta: None,
        next_cursor,
        ttl_ms: Some(0),
        cache_scope: Some(CacheScope::Public),
        resources,
    }))
}

pub fn templates(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let templates: Vec<_> = session
        .catalog
        .templates
        .iter()
        .map(|spec| spec.template.clone())
        .collect();
    let (resource_templates, next_cursor) = page("templates", &templates, &call.params)?;
    Ok(to_value(ListResourceTemplatesResult {
        result_type: Some(ResultType::COMPLETE),
        meta: None,
        next_cursor,
        ttl_ms: Some(0),
        cache_scope: Some(CacheScope::Public),
        resource_templates,
    }))
}
