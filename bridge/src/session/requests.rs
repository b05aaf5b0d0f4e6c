//! The table of the requests in flight, both ways: those of VS Code, the upstream
//! requests that serve them, and the bridge's own requests to VS Code (the input
//! requests of M2, the link's questions).
//!
//! The table keeps its own invariants: a request of VS Code is opened, moved from
//! one round to the next and closed only here, so that its upstream id, its
//! progress token, its next moment and the ids of its input requests are always
//! in the maps while it is in flight, and gone with it. The session reads a
//! request and edits only what belongs to no map (the kept params, the accepted
//! URL steps, the answers of a round).

use super::deadlines::{DeadlineKey, Deadlines};
use super::kept::KeptParams;
use crate::rules::input::Ask;
use crate::rules::meta::RequestMeta;
use crate::wire::frame::Outcome;
use crate::wire::id::IdKey;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// A map keyed by ids of requests in flight. foldhash, not SipHash: the keys come
/// from VS Code and from the bridge itself, not from the network, and SipHash took
/// about 3% of the instructions of a call.
type IdMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The tables of the requests in flight, and the counters of the ids the bridge
/// chooses.
#[derive(Debug)]
pub(crate) struct Requests {
    client: IdMap<IdKey, InFlight>,
    upstream: IdMap<u64, Pending>,
    /// The bridge's progress tokens upstream, by the request of VS Code they serve.
    progress: IdMap<u64, IdKey>,
    /// The bridge's requests to VS Code (`b-N`), by what they serve.
    bridge: IdMap<String, BridgeRequest>,
    /// The next moments of the requests of VS Code.
    deadlines: Deadlines,
    /// Upstream ids: integers from 1, one per round, never reused.
    next_upstream_id: u64,
    /// The number of the last request of the bridge to VS Code (`b-N`), never reused.
    last_bridge_number: u64,
}

/// One request of VS Code that the bridge forwards.
#[derive(Debug)]
pub(crate) struct InFlight {
    /// The id as VS Code wrote it.
    id: Value,
    method: String,
    /// VS Code's progress token (C3: `0` too).
    client_token: Option<Value>,
    /// The bridge's token for the upstream, the same in every round.
    progress_token: Option<u64>,
    /// The round of the request: 1, then one more for each round of input (M2).
    round: u32,
    /// The upstream request of the current round (stale while VS Code answers).
    upstream_id: u64,
    /// Who the request waits for.
    phase: RoundPhase,
    /// When the current wait started (the upstream round, or VS Code's answers).
    waiting_since: Instant,
    /// The next "still waiting" line, as time since the wait started.
    next_notice: Duration,
    timer: DeadlineKey,
    /// Whether the current upstream round carried a `requestState`.
    state_sent: bool,
    /// How long VS Code took to answer the last round.
    last_input_wait: Duration,
    /// The upstream request, kept for the next round when the method can ask for
    /// input (M2); shared with the upstream writer, not copied.
    pub(super) kept: Option<KeptRequest>,
    /// URL steps that VS Code accepted and that are not complete: url → elicitationId (O1).
    pub(super) accepted_urls: Vec<(String, String)>,
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
    /// VS Code answers the input requests of a round. Boxed: a request in flight
    /// is moved whole on the way of every call (into the table and out of it),
    /// and most never have a round of input.
    Client(Box<ClientRound>),
}

/// The input requests of one round that went to VS Code.
#[derive(Debug, Default)]
pub(crate) struct ClientRound {
    /// The bridge's request id (`b-N`) → the input it asks for; each is in the
    /// bridge's table too, so only the table adds or takes one.
    pending: IdMap<String, PendingInput>,
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

/// What a request of the bridge to VS Code serves.
#[derive(Debug)]
enum BridgeRequest {
    /// An input request of a round of this request of VS Code (M2).
    Input(IdKey),
    /// A question of the upstream link that serves no request of VS Code (the URL
    /// elicitation of a sign-in, M4); the answer goes back on the channel.
    Link(oneshot::Sender<Outcome>),
}

/// What an answer of VS Code to a request of the bridge answers.
#[derive(Debug)]
pub(crate) enum Answered {
    /// An input request of the request of VS Code `key`; `input` is `None` when
    /// that request no longer waits for it.
    Input {
        key: IdKey,
        input: Option<PendingInput>,
    },
    /// A question of the link.
    Link(oneshot::Sender<Outcome>),
}

impl InFlight {
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The id, for the response that ends a closed request.
    pub fn take_id(&mut self) -> Value {
        std::mem::take(&mut self.id)
    }

    pub fn method(&self) -> &str {
        &self.method
    }

    pub fn client_token(&self) -> Option<&Value> {
        self.client_token.as_ref()
    }

    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn upstream_id(&self) -> u64 {
        self.upstream_id
    }

    pub fn phase(&self) -> &RoundPhase {
        &self.phase
    }

    pub fn waiting_since(&self) -> Instant {
        self.waiting_since
    }

    pub fn state_sent(&self) -> bool {
        self.state_sent
    }

    pub fn last_input_wait(&self) -> Duration {
        self.last_input_wait
    }

    /// The round of input that VS Code answers now.
    pub fn client_round_mut(&mut self) -> Option<&mut ClientRound> {
        match &mut self.phase {
            RoundPhase::Client(round) => Some(round.as_mut()),
            RoundPhase::Upstream => None,
        }
    }

    /// The next moment is `next_notice` after the wait started, or the time limit
    /// when that comes first.
    fn schedule(&mut self, key: &IdKey, deadlines: &mut Deadlines, limit: Duration) {
        let at = self.waiting_since + self.next_notice.min(limit);
        self.timer = deadlines.insert(at, key.clone());
    }
}

impl ClientRound {
    /// A round of `total` inputs, none asked yet.
    pub fn new(request_state: Option<Value>, total: usize) -> Self {
        Self {
            pending: IdMap::default(),
            answers: Map::new(),
            request_state,
            total,
        }
    }

    /// How many of its input requests VS Code has not answered.
    pub fn unanswered(&self) -> usize {
        self.pending.len()
    }

    /// The ids of the input requests that VS Code has not answered, in the order
    /// they were sent.
    pub fn unanswered_ids(&self) -> Vec<String> {
        let mut ids: Vec<_> = self.pending.keys().cloned().collect();
        ids.sort_by_key(|id| bridge_number(id));
        ids
    }
}

impl Requests {
    pub fn new() -> Self {
        Self {
            client: IdMap::default(),
            upstream: IdMap::default(),
            progress: IdMap::default(),
            bridge: IdMap::default(),
            deadlines: Deadlines::new(),
            next_upstream_id: 1,
            last_bridge_number: 0,
        }
    }

    pub fn next_upstream_id(&mut self) -> u64 {
        let id = self.next_upstream_id;
        self.next_upstream_id += 1;
        id
    }

    /// Whether the bridge ever sent an upstream request with this id.
    pub fn issued(&self, upstream_id: u64) -> bool {
        upstream_id < self.next_upstream_id
    }

    /// `b-1`, `b-2`, ...: strings, which never equal an id of VS Code (quirk table).
    fn next_bridge_id(&mut self) -> String {
        self.last_bridge_number += 1;
        format!("b-{}", self.last_bridge_number)
    }

    /// How many requests of VS Code are in flight.
    pub fn len(&self) -> usize {
        self.client.len()
    }

    pub fn contains(&self, key: &IdKey) -> bool {
        self.client.contains_key(key)
    }

    pub fn get(&self, key: &IdKey) -> Option<&InFlight> {
        self.client.get(key)
    }

    pub fn get_mut(&mut self, key: &IdKey) -> Option<&mut InFlight> {
        self.client.get_mut(key)
    }

    /// What the upstream id `upstream_id` stands for, while it waits for an answer.
    pub fn pending(&self, upstream_id: u64) -> Option<&Pending> {
        self.upstream.get(&upstream_id)
    }

    /// The request of VS Code whose current round is `upstream_id`.
    pub fn request_of(&self, upstream_id: u64) -> Option<&InFlight> {
        match self.upstream.get(&upstream_id)? {
            Pending::Request(key) => self.client.get(key),
            Pending::Discover | Pending::Listen => None,
        }
    }

    /// The request of VS Code that the bridge's progress token `token` serves.
    pub fn by_progress_token(&self, token: u64) -> Option<&InFlight> {
        self.client.get(self.progress.get(&token)?)
    }

    /// The upstream id no longer waits for an answer (it came, it failed, or the
    /// bridge stopped waiting): what it stood for.
    pub fn take_pending(&mut self, upstream_id: u64) -> Option<Pending> {
        self.upstream.remove(&upstream_id)
    }

    /// The upstream id of the `server/discover` of initialize waits for its answer.
    pub fn open_discover(&mut self, upstream_id: u64) {
        self.upstream.insert(upstream_id, Pending::Discover);
    }

    /// The upstream id of a listen stream waits for its end.
    pub fn open_listen(&mut self, upstream_id: u64) {
        self.upstream.insert(upstream_id, Pending::Listen);
    }

    /// The link is gone: no upstream id waits for an answer any more.
    pub fn forget_upstream(&mut self) {
        self.upstream.clear();
    }

    /// A request of VS Code goes upstream as `upstream_id`, its first round: its
    /// first "still waiting" line comes after `first_notice`, or its time limit
    /// `limit` first. The request is built here, in its place in the table: the
    /// record of a request is large, and a copy of it on the way of every call
    /// costs more than these arguments.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        &mut self,
        key: IdKey,
        id: Value,
        method: String,
        client_token: Option<Value>,
        progress_token: Option<u64>,
        upstream_id: u64,
        kept: Option<KeptRequest>,
        first_notice: Duration,
        limit: Duration,
    ) {
        let now = Instant::now();
        let timer = self
            .deadlines
            .insert(now + first_notice.min(limit), key.clone());
        self.upstream
            .insert(upstream_id, Pending::Request(key.clone()));
        if let Some(token) = progress_token {
            self.progress.insert(token, key.clone());
        }
        self.client.insert(
            key,
            InFlight {
                id,
                method,
                client_token,
                progress_token,
                round: 1,
                upstream_id,
                phase: RoundPhase::Upstream,
                waiting_since: now,
                next_notice: first_notice,
                timer,
                kept,
                state_sent: false,
                last_input_wait: Duration::ZERO,
                accepted_urls: Vec::new(),
            },
        );
    }

    /// An input request of `round` of the request `key` goes to VS Code: its id.
    pub fn ask_input(
        &mut self,
        key: &IdKey,
        round: &mut ClientRound,
        input: PendingInput,
    ) -> String {
        let bridge_id = self.next_bridge_id();
        self.bridge
            .insert(bridge_id.clone(), BridgeRequest::Input(key.clone()));
        round.pending.insert(bridge_id.clone(), input);
        bridge_id
    }

    /// A question of the link goes to VS Code: its id. The answer goes back on
    /// `answer`.
    pub fn ask_for_link(&mut self, answer: oneshot::Sender<Outcome>) -> String {
        let bridge_id = self.next_bridge_id();
        self.bridge
            .insert(bridge_id.clone(), BridgeRequest::Link(answer));
        bridge_id
    }

    /// The request `key` waits for VS Code's answers to `round` (its input
    /// requests are in the table): a new wait from now, with its first
    /// "still waiting" line after `first_notice`, or at `limit`. `false` for a
    /// round that asks VS Code nothing, whose next upstream round goes at once.
    pub fn await_answers(
        &mut self,
        key: &IdKey,
        round: ClientRound,
        first_notice: Duration,
        limit: Duration,
    ) -> bool {
        let Some(request) = self.client.get_mut(key) else {
            return false;
        };
        let asks = !round.pending.is_empty();
        request.phase = RoundPhase::Client(Box::new(round));
        if asks {
            request.waiting_since = Instant::now();
            request.next_notice = first_notice;
            self.deadlines.remove(request.timer);
            request.schedule(key, &mut self.deadlines, limit);
        }
        asks
    }

    /// The answer of VS Code to the bridge's request `bridge_id`, taken out of the
    /// table (and out of its round).
    pub fn take_answered(&mut self, bridge_id: &str) -> Option<Answered> {
        match self.bridge.remove(bridge_id)? {
            BridgeRequest::Link(answer) => Some(Answered::Link(answer)),
            BridgeRequest::Input(key) => {
                let input = self
                    .client
                    .get_mut(&key)
                    .and_then(InFlight::client_round_mut)
                    .and_then(|round| round.pending.remove(bridge_id));
                Some(Answered::Input { key, input })
            }
        }
    }

    /// The questions of the link for which `ended` holds, taken out of the table:
    /// their ids, in the order they were sent.
    pub fn take_link_questions(
        &mut self,
        ended: impl Fn(&oneshot::Sender<Outcome>) -> bool,
    ) -> Vec<String> {
        let mut questions: Vec<String> = self
            .bridge
            .iter()
            .filter(|(_, owner)| matches!(owner, BridgeRequest::Link(answer) if ended(answer)))
            .map(|(id, _)| id.clone())
            .collect();
        questions.sort_by_key(|id| bridge_number(id));
        for bridge_id in &questions {
            self.bridge.remove(bridge_id);
        }
        questions
    }

    /// VS Code answered the round of `key`: its next upstream round goes as
    /// `upstream_id`, with the first "still waiting" line after `first_notice`, or
    /// at `limit`. The answered round comes back for the upstream frame; `None`
    /// when the request waits for no answers of VS Code.
    pub fn next_round(
        &mut self,
        key: &IdKey,
        upstream_id: u64,
        first_notice: Duration,
        limit: Duration,
    ) -> Option<ClientRound> {
        let request = self.client.get_mut(key)?;
        let RoundPhase::Client(round) = std::mem::replace(&mut request.phase, RoundPhase::Upstream)
        else {
            return None;
        };
        request.state_sent = round.request_state.is_some();
        request.last_input_wait = request.waiting_since.elapsed();
        request.round += 1;
        request.upstream_id = upstream_id;
        request.waiting_since = Instant::now();
        request.next_notice = first_notice;
        self.deadlines.remove(request.timer);
        request.schedule(key, &mut self.deadlines, limit);
        self.upstream
            .insert(upstream_id, Pending::Request(key.clone()));
        Some(*round)
    }

    /// The "still waiting" line of `key` is written: the next one comes `every`
    /// later, or the time limit `limit` when that comes first.
    pub fn next_notice(&mut self, key: &IdKey, every: Duration, limit: Duration) {
        let Some(request) = self.client.get_mut(key) else {
            return;
        };
        request.next_notice += every;
        request.schedule(key, &mut self.deadlines, limit);
    }

    /// A complete result comes next for the upstream request `upstream_id`: the
    /// request needs no other round, so its kept params go.
    pub fn release_kept(&mut self, upstream_id: u64) {
        if let Some(Pending::Request(key)) = self.upstream.get(&upstream_id)
            && let Some(request) = self.client.get_mut(key)
        {
            request.kept = None;
        }
    }

    /// The next request of VS Code whose moment has come. Cancel-safe: the state
    /// is in the table.
    pub fn next_due(&mut self) -> impl Future<Output = IdKey> + '_ {
        self.deadlines.next()
    }

    /// Closes a request of VS Code: it leaves the table with its upstream id, its
    /// token, its moment and its requests to VS Code.
    pub fn close(&mut self, key: &IdKey) -> Option<InFlight> {
        let request = self.client.remove(key)?;
        self.deadlines.remove(request.timer);
        if matches!(request.phase, RoundPhase::Upstream) {
            self.upstream.remove(&request.upstream_id);
        }
        if let Some(token) = request.progress_token {
            self.progress.remove(&token);
        }
        if let RoundPhase::Client(round) = &request.phase {
            for bridge_id in round.pending.keys() {
                self.bridge.remove(bridge_id);
            }
        }
        Some(request)
    }

    /// The requests of VS Code in flight, oldest id first, so that the frames come
    /// in a stable order.
    pub fn keys_in_flight(&self) -> Vec<IdKey> {
        let mut keys: Vec<_> = self.client.keys().cloned().collect();
        keys.sort_by_key(|key| key.to_string());
        keys
    }
}

/// The number of a request id `b-N`, for a stable order of cancellations.
fn bridge_number(id: &str) -> u64 {
    id.trim_start_matches("b-")
        .parse::<u64>()
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINUTE: Duration = Duration::from_secs(60);

    fn open(requests: &mut Requests, id: i64, upstream_id: u64, progress: bool) {
        requests.open(
            key(id),
            json!(id),
            "tools/call".into(),
            progress.then(|| json!("t")),
            progress.then_some(upstream_id),
            upstream_id,
            None,
            MINUTE,
            2 * MINUTE,
        );
    }

    fn key(id: i64) -> IdKey {
        IdKey::of(&json!(id)).unwrap()
    }

    fn input(key: &str) -> PendingInput {
        PendingInput {
            key: key.into(),
            ask: Ask::Roots,
            elicitation_id: None,
        }
    }

    fn is_empty(requests: &Requests) -> bool {
        requests.client.is_empty()
            && requests.upstream.is_empty()
            && requests.progress.is_empty()
            && requests.bridge.is_empty()
            && requests.deadlines.is_empty()
    }

    #[tokio::test]
    async fn a_closed_request_leaves_nothing_behind() {
        let mut requests = Requests::new();
        let upstream_id = requests.next_upstream_id();
        open(&mut requests, 7, upstream_id, true);
        assert_eq!(requests.request_of(upstream_id).unwrap().id(), &json!(7));
        assert_eq!(requests.by_progress_token(upstream_id).unwrap().round(), 1);
        let mut closed = requests.close(&key(7)).unwrap();
        assert_eq!(closed.take_id(), json!(7));
        assert!(is_empty(&requests));
        assert!(requests.issued(upstream_id) && !requests.issued(upstream_id + 1));
    }

    #[tokio::test]
    async fn a_round_of_input_moves_the_request_to_a_new_upstream_id() {
        let mut requests = Requests::new();
        let first = requests.next_upstream_id();
        open(&mut requests, 1, first, true);
        assert_eq!(requests.take_pending(first), Some(Pending::Request(key(1))));
        let mut round = ClientRound::default();
        let asked = requests.ask_input(&key(1), &mut round, input("a"));
        assert_eq!(asked, "b-1");
        assert!(requests.await_answers(&key(1), round, MINUTE, MINUTE));
        let Some(Answered::Input { key: owner, input }) = requests.take_answered("b-1") else {
            panic!("b-1 is an input request of request 1");
        };
        assert_eq!((owner, input.unwrap().key), (key(1), "a".to_owned()));
        let second = requests.next_upstream_id();
        let round = requests
            .next_round(&key(1), second, MINUTE, MINUTE)
            .unwrap();
        assert_eq!(round.unanswered(), 0);
        let request = requests.request_of(second).unwrap();
        assert_eq!((request.round(), request.upstream_id()), (2, second));
        // The progress token stays the first upstream id (C3).
        assert!(requests.by_progress_token(first).is_some());
        requests.close(&key(1));
        assert!(is_empty(&requests));
    }

    #[tokio::test]
    async fn a_request_closed_during_its_round_of_input_takes_its_input_requests() {
        let mut requests = Requests::new();
        let upstream_id = requests.next_upstream_id();
        open(&mut requests, 3, upstream_id, false);
        requests.take_pending(upstream_id);
        let mut round = ClientRound::default();
        requests.ask_input(&key(3), &mut round, input("a"));
        requests.ask_input(&key(3), &mut round, input("b"));
        requests.await_answers(&key(3), round, MINUTE, MINUTE);
        let closed = requests.close(&key(3)).unwrap();
        let RoundPhase::Client(round) = closed.phase() else {
            panic!("the request waited for VS Code");
        };
        assert_eq!(round.unanswered_ids(), ["b-1", "b-2"]);
        assert!(is_empty(&requests));
        assert!(requests.take_answered("b-1").is_none());
    }

    #[tokio::test]
    async fn a_round_that_asks_nothing_does_not_wait() {
        let mut requests = Requests::new();
        let upstream_id = requests.next_upstream_id();
        open(&mut requests, 4, upstream_id, false);
        requests.take_pending(upstream_id);
        assert!(!requests.await_answers(&key(4), ClientRound::default(), MINUTE, MINUTE));
        assert!(matches!(
            requests.get(&key(4)).unwrap().phase(),
            RoundPhase::Client(_)
        ));
    }

    #[tokio::test]
    async fn the_questions_of_the_link_leave_in_the_order_they_were_asked() {
        let mut requests = Requests::new();
        let mut answers = Vec::new();
        for _ in 0..11 {
            let (sender, receiver) = oneshot::channel();
            requests.ask_for_link(sender);
            answers.push(receiver);
        }
        // The link no longer waits for the answer of b-2.
        drop(answers.remove(1));
        assert_eq!(
            requests.take_link_questions(oneshot::Sender::is_closed),
            ["b-2"]
        );
        let left = requests.take_link_questions(|_| true);
        assert_eq!(left.first().map(String::as_str), Some("b-1"));
        assert_eq!(left.last().map(String::as_str), Some("b-11"));
        assert!(is_empty(&requests));
    }
}
