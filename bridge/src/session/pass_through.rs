//! The hot path of a tools/call result (R8, O10, R5): the link read the line one
//! level deep ([`ResultLine`]); the result is edited by the same rules and written
//! out from its members' text, without a tree of its content and without a copy of
//! the members that stay as they came. Any other result, and one that the rules
//! must see whole, becomes a tree built from the same members' text.

use super::Session;
use super::forward::log_round;
use super::table::Pending;
use crate::rules::results::{ShallowShape, shape_call_result_shallow};
use crate::wire::raw::{ResultLine, Unreadable};

impl Session {
    /// A clean response of the upstream: passed on from its text when it is a
    /// complete tools/call result, else handled as a message with its tree.
    pub(super) async fn on_result_line(&mut self, line: ResultLine) {
        // The icons of a URL upstream need the tree (O10, M4).
        if !self.data_icons_only && self.answers_a_call(line.id()) && self.pass(&line).await {
            return;
        }
        match line.into_message() {
            Ok(message) => self.on_upstream_message(message).await,
            Err((bytes, failure)) => {
                let Unreadable { frame, reason, id } = Unreadable::of_line(&bytes, failure);
                self.on_unreadable(frame, reason, id).await;
            }
        }
    }

    /// Whether `upstream_id` is that of a tools/call in flight.
    fn answers_a_call(&self, upstream_id: u64) -> bool {
        let Some(Pending::Request(key)) = self.requests.upstream.get(&upstream_id) else {
            return false;
        };
        self.requests
            .client
            .get(key)
            .is_some_and(|request| request.method == "tools/call")
    }

    /// Shapes and sends the result of `line`, the answer to a tools/call in
    /// flight; `false`, with nothing done, when the rules cannot edit it one
    /// level deep.
    async fn pass(&mut self, line: &ResultLine) -> bool {
        let upstream_id = line.id();
        let mut result = line.result();
        let shape = shape_call_result_shallow(&mut result);
        if shape == ShallowShape::NeedsTree {
            return false;
        }
        let Some(Pending::Request(key)) = self.requests.upstream.remove(&upstream_id) else {
            return false;
        };
        let Some(request) = self.requests.client.get(&key) else {
            return true;
        };
        log_round(&key, upstream_id, request, "result");
        if let ShallowShape::Invalid(error) = shape {
            self.fail_invalid_result(&key, "tools/call", &error.to_string())
                .await;
        } else if let Some(request) = self.end_request(&key, "the request ended").await {
            // The members stay in the line: a large result is never copied.
            let result = result.into_shared(line.shared_line());
            self.out.send_result(request.id, result).await;
        }
        true
    }
}
