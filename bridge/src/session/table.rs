//! The requests in flight: those of VS Code, the upstream requests that serve them,
//! and the bridge's own requests to VS Code (the input requests of M2).

use super::deadlines::DeadlineKey;
use super::kept::KeptParams;
use crate::rules::input::Ask;
use crate::rules::meta::RequestMeta;
use crate::wire::id::IdKey;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

/// A map keyed by ids of requests in flight. foldhash, not SipHash: the keys come
/// from VS Code and from the bridge itself, not from the network, and SipHash took
/// about 3% of the instructions of a call.
pub(crate) type IdMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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
    /// The upstream request of the current round (stale while VS Code answers).
    pub upstream_id: u64,
    /// Who the request waits for.
    pub phase: RoundPhase,
    /// When the current wait started (the upstream round, or VS Code's answers).
    pub waiting_since: Instant,
    /// The next "still waiting" line, as time since the wait started.
    pub next_notice: Duration,
    pub timer: DeadlineKey,
    /// The upstream request, kept for the next round when the method can ask for
    /// input (M2); shared with the upstream writer, not copied.
    pub kept: Option<KeptRequest>,
    /// Whether the current upstream round carried a `requestState`.
    pub state_sent: bool,
    /// How long VS Code took to answer the last round.
    pub last_input_wait: Duration,
    /// URL steps that VS Code accepted and that are not complete: url → elicitationId (O1).
    pub accepted_urls: Vec<(String, String)>,
}

/// What a request needs for its next round.
#[derive(Debug)]
pub(crate) struct KeptRequest {
    pub params: KeptParams,
    /// The `_meta` of round 1: a request keeps the log level it started with.
    pub meta: RequestMeta,
}

/// Who a request of VS Code waits for.
#[derive(Debug)]
pub(crate) enum RoundPhase {
    /// The upstream answers the current round.
    Upstream,
    /// VS Code answers the input requests of a round.
    Client(ClientRound),
}

/// The input requests of one round that went to VS Code.
#[derive(Debug, Default)]
pub(crate) struct ClientRound {
    /// The bridge's request id (`b-N`) → the input it asks for.
    pub pending: IdMap<String, PendingInput>,
    /// Input key → the answer for the upstream, in the order they come.
    pub answers: Map<String, Value>,
    pub request_state: Option<Value>,
    /// How many inputs the round has, for the time-limit line.
    pub total: usize,
}

/// One input request of the bridge to VS Code.
#[derive(Debug)]
pub(crate) struct PendingInput {
    /// The key of the upstream's `inputRequests`.
    pub key: String,
    pub ask: Ask,
    /// The `elicitationId` of a URL elicitation.
    pub elicitation_id: Option<String>,
}

/// What an upstream id stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pending {
    /// The `server/discover` of initialize.
    Discover,
    /// A round of a request of VS Code.
    Request(IdKey),
    /// A listen stream (M3).
    Listen,
}

/// The timers of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Timer {
    Discover,
    /// The wait before a new listen stream after a loss.
    ListenRetry,
    /// The time limit of the stream of a change of subscriptions.
    ListenChange(u64),
}

/// What a request of the bridge to VS Code serves.
#[derive(Debug)]
pub(crate) enum BridgeRequest {
    /// An input request of a round of this request of VS Code (M2).
    Input(IdKey),
    /// A question of the upstream link that serves no request of VS Code (the URL
    /// elicitation of a sign-in, M4); the answer goes back on the channel.
    Link(tokio::sync::oneshot::Sender<crate::wire::frame::Outcome>),
}
