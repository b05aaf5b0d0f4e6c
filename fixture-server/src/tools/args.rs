//! Reading the arguments of a tool. A wrong type or a missing required argument is a
//! malformed request: -32602 that names the argument (server/tools.mdx §Error Handling).

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value};

use crate::catalog::ToolCall;

/// The arguments of one call.
pub struct Args<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn of(call: &'a ToolCall) -> Args<'a> {
        Args {
            tool: &call.name,
            map: &call.args,
        }
    }

    fn error(&self, message: String) -> ErrorData {
        ErrorData::new(ErrorCode::INVALID_PARAMS, message, None)
    }

    fn wrong(&self, name: &str, expected: &str) -> ErrorData {
        self.error(format!(
            "The argument '{name}' of the tool {} must be {expected}.",
            self.tool
        ))
    }

    fn missing(&self, name: &str) -> ErrorData {
        self.error(format!(
            "The tool {} needs the argument '{name}'.",
            self.tool
        ))
    }

    /// Refuses arguments other than `allowed` (`additionalProperties: false`).
    pub fn only(&self, allowed: &[&str]) -> Result<&Self, ErrorData> {
        match self.map.keys().find(|key| !allowed.contains(&key.as_str())) {
            Some(key) => {
                Err(self.error(format!("The tool {} has no argument '{key}'.", self.tool)))
            }
            None => Ok(self),
        }
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name)
    }

    pub fn string(&self, name: &str) -> Result<&'a str, ErrorData> {
        match self.map.get(name) {
            Some(Value::String(text)) => Ok(text),
            Some(_) => Err(self.wrong(name, "a string")),
            None => Err(self.missing(name)),
        }
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ErrorData> {
        match self.map.get(name) {
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(_) => Err(self.wrong(name, "a boolean")),
            None => Ok(None),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ErrorData> {
        self.opt_bool(name)?.ok_or_else(|| self.missing(name))
    }

    pub fn int(&self, name: &str) -> Result<i64, ErrorData> {
        match self.map.get(name) {
            Some(value) => value.as_i64().ok_or_else(|| self.wrong(name, "an integer")),
            None => Err(self.missing(name)),
        }
    }

    /// An optional integer from `min` to `max`.
    pub fn opt_int_in(&self, name: &str, min: i64, max: i64) -> Result<Option<i64>, ErrorData> {
        match self.map.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_i64()
                .filter(|n| (min..=max).contains(n))
                .map(Some)
                .ok_or_else(|| self.wrong(name, &format!("an integer from {min} to {max}"))),
        }
    }

    pub fn int_in(&self, name: &str, min: i64, max: i64) -> Result<i64, ErrorData> {
        self.opt_int_in(name, min, max)?
            .ok_or_else(|| self.missing(name))
    }
}
