//! What the handler of one request can do besides answering: progress with the
//! request's token, log messages at or above the request's level, noticing a
//! cancellation, and the few effects on its session that [`Host`] names. A
//! handler never sees the session itself, which owns the catalog of handlers.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ErrorData;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::meta::{LogLevel, Need, RequestMeta};
use crate::state::StateCodec;
use crate::switch::Switch;
use crate::wire::{self, RequestId};

/// The request is cancelled: the handler stops, and no response goes out.
#[derive(Debug)]
pub struct Cancelled;

/// What a handler may do to the session that runs it.
pub trait Host: Send + Sync {
    /// Writes `frame` as a message of the request `id`, while it is in flight.
    fn notify_for(&self, id: &RequestId, frame: String);
    /// Whether the entries of `switch` are listed.
    fn enabled(&self, switch: Switch) -> bool;
    /// Sets `switch` for the request `by`; returns whether it changed (the lists then
    /// changed).
    fn set_enabled(&self, by: &RequestId, switch: Switch, enabled: bool) -> bool;
    /// The request `by` changed the resource `uri`: the listen streams that watch it
    /// hear of it; returns how many.
    fn resource_updated(&self, by: &RequestId, uri: &str) -> usize;
    /// Ends the server with `code`.
    fn exit(&self, code: i32);
    /// Ends every listen stream with `reason`; returns how many.
    fn end_listens(&self, reason: &str) -> usize;
    /// The sealing of the `requestState` of a round of input.
    fn states(&self) -> &StateCodec;
}

/// One request being handled.
#[derive(Clone)]
pub struct Call {
    pub host: Arc<dyn Host>,
    pub id: RequestId,
    pub method: &'static str,
    pub params: Map<String, Value>,
    pub meta: RequestMeta,
    pub token: CancellationToken,
}

impl Call {
    /// `notifications/progress` with the request's token; nothing when the request has
    /// no token (basic/patterns/progress.mdx).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = &self.meta.progress_token else {
            return;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), message.into());
        }
        self.host.notify_for(
            &self.id,
            wire::notification("notifications/progress", Some(Value::Object(params))),
        );
    }

    /// `notifications/message` when the request asked for messages at `level` or below
    /// (server/utilities/logging.mdx); returns whether it was sent.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        if self.meta.log_level.is_none_or(|wanted| level < wanted) {
            return false;
        }
        let mut params = Map::new();
        params.insert("level".into(), level.as_str().into());
        if let Some(logger) = logger {
            params.insert("logger".into(), logger.into());
        }
        params.insert("data".into(), data);
        self.host.notify_for(
            &self.id,
            wire::notification("notifications/message", Some(Value::Object(params))),
        );
        true
    }

    /// -32021 unless the request declared the input kinds of `needs`.
    pub fn require(&self, needs: &[Need]) -> Result<(), ErrorData> {
        self.meta.client.require(needs)
    }

    /// Sleeps unless the request is cancelled first.
    pub async fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        tokio::select! {
            _ = tokio::time::sleep(duration) => Ok(()),
            _ = self.token.cancelled() => Err(Cancelled),
        }
    }
}

/// Integers stay integers on the wire (`1`, not `1.0`).
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}
