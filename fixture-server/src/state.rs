//! The `requestState` of multi round-trip requests (basic/patterns/mrtr.mdx).
//!
//! The state comes back from the client, so it is attacker-controlled input. It is
//! sealed with rmcp's `RequestStateCodec` (HMAC-SHA256) under a random key of this
//! process, and bound as associated data to the method and the target (tool name, prompt
//! name or resource URI) of the request that issued it. A changed byte, a state of
//! another process, or a state of another tool fails the HMAC; a state older than
//! [`STATE_LIFETIME`] is expired. Both give -32602.
//!
//! The expiry uses `tokio::time` and not rmcp's wall-clock TTL, so that tests can pause
//! time; the key lives only in this process, so a process-relative clock is enough.

use std::time::Duration;

use rmcp::model::{ErrorCode, ErrorData, RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

/// How long a state stays valid after the server issued it.
pub const STATE_LIFETIME: Duration = Duration::from_secs(600);

/// The message of the -32602 error for a state that is refused.
pub const STATE_REFUSED: &str = "The request state is not valid or has expired.";

/// What the server keeps in a state between two rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// The round whose input requests the client answers (the first is 1).
    pub round: u32,
    /// Data of the tool, for example the answers of earlier rounds.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
    /// Milliseconds since the start of the codec's clock.
    issued: u64,
}

/// Seals and opens states with the key of this process.
pub struct StateCodec {
    codec: RequestStateCodec,
    epoch: Instant,
}

/// Why the codec of `requestState` has no key.
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    #[error("no random key for requestState: {0}")]
    Random(getrandom::Error),
    #[error(transparent)]
    Codec(#[from] RequestStateError),
}

impl StateCodec {
    /// A codec with a fresh random key of 32 bytes.
    pub fn new() -> Result<StateCodec, StateKeyError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(StateKeyError::Random)?;
        let codec = RequestStateCodec::try_new(key.to_vec())?;
        key.fill(0);
        Ok(StateCodec {
            codec,
            epoch: Instant::now(),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A sealed state for `round`, bound to `method` and `target`.
    pub fn seal(&self, method: &str, target: &str, round: u32, data: Value) -> String {
        let saved = Saved {
            round,
            data,
            issued: self.now_ms(),
        };
        let binding = binding(method, target);
        self.codec
            .seal_json_with(&saved, &SealOptions::new().associated_data(&binding))
            // Serializing `Saved` (plain JSON values) cannot fail.
            .unwrap_or_default()
    }

    /// Opens a state that a request of `method` on `target` echoed back.
    pub fn open(&self, method: &str, target: &str, sealed: &str) -> Result<Saved, ErrorData> {
        let binding = binding(method, target);
        let saved: Saved = self
            .codec
            .open_json_with(sealed, &binding)
            .map_err(|_| refused("not_valid"))?;
        if self.now_ms().saturating_sub(saved.issued) > STATE_LIFETIME.as_millis() as u64 {
            return Err(refused("expired"));
        }
        Ok(saved)
    }
}

fn binding(method: &str, target: &str) -> Vec<u8> {
    let mut binding = Vec::with_capacity(method.len() + target.len() + 1);
    binding.extend_from_slice(method.as_bytes());
    binding.push(0);
    binding.extend_from_slice(target.as_bytes());
    binding
}

fn refused(reason: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        STATE_REFUSED,
        Some(json!({"reason": reason})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(error: ErrorData) -> Value {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, STATE_REFUSED);
        error.data.unwrap()["reason"].clone()
    }

    #[tokio::test]
    async fn a_state_opens_for_its_own_tool_only() {
        let codec = StateCodec::new().unwrap();
        let sealed = codec.seal("tools/call", "ask_form", 1, json!({"a": 1}));
        let saved = codec.open("tools/call", "ask_form", &sealed).unwrap();
        assert_eq!((saved.round, saved.data), (1, json!({"a": 1})));
        let other = codec.open("tools/call", "ask_url", &sealed).unwrap_err();
        assert_eq!(reason(other), "not_valid");
        let other = codec.open("prompts/get", "ask_form", &sealed).unwrap_err();
        assert_eq!(reason(other), "not_valid");
    }

    #[tokio::test]
    async fn a_changed_or_foreign_state_is_refused() {
        let codec = StateCodec::new().unwrap();
        let sealed = codec.seal("tools/call", "ask_form", 1, Value::Null);
        let mut bytes = sealed.clone().into_bytes();
        let last = bytes.len() - 2;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(bytes).unwrap();
        assert_eq!(
            reason(codec.open("tools/call", "ask_form", &changed).unwrap_err()),
            "not_valid"
        );
        let foreign = StateCodec::new().unwrap();
        assert_eq!(
            reason(foreign.open("tools/call", "ask_form", &sealed).unwrap_err()),
            "not_valid"
        );
        assert_eq!(
            reason(codec.open("tools/call", "ask_form", "junk").unwrap_err()),
            "not_valid"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_state_expires_after_600_seconds() {
        let codec = StateCodec::new().unwrap();
        let sealed = codec.seal("tools/call", "ask_url", 2, Value::Null);
        tokio::time::advance(STATE_LIFETIME).await;
        assert_eq!(
            codec.open("tools/call", "ask_url", &sealed).unwrap().round,
            2
        );
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(
            reason(codec.open("tools/call", "ask_url", &sealed).unwrap_err()),
            "expired"
        );
    }
}
