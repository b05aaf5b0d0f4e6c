//! The requests in flight: those of VS Code, and the upstream requests that serve them.

use crate::wire::id::IdKey;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::time::delay_queue;

/// One request of VS Code that the bridge forwards.
#[derive(Debug)]
pub(crate) struct InFlight {
    /// The id as VS Code wrote it.
    pub id: Value,
    pub method: String,
    /// VS Code's progress token (C3: `0` too).
    pub client_token: Option<Value>,
    /// The bridge's token for the upstream, the same in every round.
    pub progress_token: Option<u64>,
    /// The round of the request: 1, then one more for each round of input (M2).
    pub round: u32,
    /// The upstream request of the current round.
    pub upstream_id: u64,
    pub round_started: Instant,
    /// The next "still waiting" line, as time since the round started.
    pub next_notice: Duration,
    pub timer: delay_queue::Key,
    /// The upstream params, kept for the next round when the method can ask for
    /// input (M2); shared with the upstream writer, not copied.
    #[allow(dead_code)] // The input rounds (M2) read it.
    pub params: Option<Arc<Map<String, Value>>>,
}

/// What an upstream id stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pending {
    /// The `server/discover` of initialize.
    Discover,
    /// A round of a request of VS Code.
    Request(IdKey),
}

/// The timers of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Timer {
    Discover,
    Request(IdKey),
}

#[derive(Debug, Default)]
pub(crate) struct Table {
    pub client: HashMap<IdKey, InFlight>,
    pub upstream: HashMap<u64, Pending>,
    /// The bridge's progress tokens upstream, by the request of VS Code they serve.
    pub progress: HashMap<u64, IdKey>,
}

impl Table {
    /// Removes a request of VS Code and its upstream id.
    pub fn remove(&mut self, key: &IdKey) -> Option<InFlight> {
        let request = self.client.remove(key)?;
        self.upstream.remove(&request.upstream_id);
        Some(request)
    }
}
