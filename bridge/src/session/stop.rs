//! The two ends of a session: the end of stdin (the stop sequence of VS Code) and
//! the end of the upstream ("When the upstream server stops").

use super::requests::RoundPhase;
use super::{Phase, Session, Step};
use crate::catalogue::{BridgeError, Cause, UpstreamLost, UpstreamStopped};
use crate::log::emit;
use crate::upstream::LinkEnd;
use crate::wire::frame::{self, Outcome};

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The end of stdin (also when the watchdog stopped the bridge): exit code 0.
    EndOfInput,
    /// The upstream command stopped, or an internal error: exit code 1.
    Failure,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Self::EndOfInput => 0,
            Self::Failure => 1,
        }
    }
}

impl Session {
    /// The end of stdin: every request in flight is cancelled without a response,
    /// the upstream's input ends, and the upstream gets `shutdown_grace` before the
    /// signals. Exit code 0.
    pub(super) async fn stop_at_end_of_input(mut self) -> Exit {
        for key in self.requests.keys_in_flight() {
            let request = self
                .close_request(&key, "the bridge stops at the end of its input", None)
                .await;
            if let Some(request) = request.filter(|r| matches!(r.phase(), RoundPhase::Upstream)) {
                self.cancel_upstream(request.upstream_id(), "The client closed the connection.");
            }
        }
        self.stop_listening().await;
        self.cancel_link_questions("the bridge stops at the end of its input")
            .await;
        if let Phase::Initializing { discover_id, .. } = self.phase {
            self.cancel_upstream(discover_id, "The client closed the connection.");
        }
        #[cfg(debug_assertions)]
        super::test_faults::block_at_end();
        #[cfg(debug_assertions)]
        if super::test_faults::hang_at_end() {
            std::future::pending::<()>().await;
        }
        if let Some(connected) = self.upstream.take() {
            connected.close(self.limits.shutdown_grace).await;
        }
        Exit::EndOfInput
    }

    /// The link ended while stdin is open. When the session ends with it (a stdio
    /// upstream stopped): the error line, `upstream_exited` for every request in
    /// flight, and exit code 1; the bridge never starts the upstream again, and VS
    /// Code starts the bridge again at the next tool call. Otherwise the requests in
    /// flight fail, and the next ones get `not_connected`.
    pub(super) async fn link_ended(&mut self, end: LinkEnd) -> Step {
        let error = match &end {
            LinkEnd::Stopped(line) => {
                emit!(UpstreamStopped: line);
                BridgeError::with_detail(Cause::UpstreamExited, line.to_string())
            }
            LinkEnd::Lost(line) => {
                emit!(UpstreamLost: line);
                BridgeError::with_detail(Cause::TransportFailed, line.to_string())
            }
        };
        if matches!(self.phase, Phase::Initializing { .. })
            && let Phase::Initializing { client_id, .. } =
                std::mem::replace(&mut self.phase, Phase::AwaitingInitialize)
        {
            self.client = None;
            self.out
                .send(frame::error_frame(client_id, error.to_object()))
                .await;
        }
        let reason = if end.ends_session() {
            "the upstream server stopped"
        } else {
            "the connection to the upstream server ended"
        };
        for key in self.requests.keys_in_flight() {
            self.close_request(&key, reason, Some(Outcome::Error(error.to_object())))
                .await;
        }
        if !end.ends_session() {
            self.disconnect();
            return Step::Continue;
        }
        if let Some(connected) = self.upstream.take() {
            connected.close(self.limits.shutdown_grace).await;
        }
        Step::Exit(Exit::Failure)
    }
}
