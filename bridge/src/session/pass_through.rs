//! The hot path of a tools/call result (R8, O10, R5): read one level deep, edited
//! by the same rules, and written out as it came, without a tree of its content.
//! Every other line, and a result that the rules must see whole, takes the full
//! parse of [`event_of_line`].

use super::Session;
use super::forward::log_round;
use super::table::Pending;
use crate::rules::results::{ShallowShape, shape_call_result_shallow};
use crate::upstream::{UpstreamEvent, event_of_line};
use crate::wire::codec::Line;
use crate::wire::raw::{clean_response, encode_result_line};

/// How many members from the start of a line are read for its id: JSON-RPC
/// writers put `jsonrpc` and `id` first.
const ID_WITHIN_MEMBERS: usize = 3;

impl Session {
    /// Answers VS Code from a line that is a complete tools/call result; any other
    /// line comes back parsed (`None` for a blank one, or when it was passed).
    pub(super) async fn pass_call_result(&mut self, line: Vec<u8>) -> Option<UpstreamEvent> {
        if let Some(upstream_id) = self.call_answered_by(&line)
            && self.pass(upstream_id, &line).await
        {
            return None;
        }
        event_of_line(Line::Complete(line))
    }

    /// The upstream id at the start of `line` when it is that of a tools/call in
    /// flight; found without reading the rest of the line.
    fn call_answered_by(&self, line: &[u8]) -> Option<u64> {
        let id = json_shallow::head::leading_members(line)
            .take(ID_WITHIN_MEMBERS)
            .find(|(key, _)| *key == b"id")
            .and_then(|(_, value)| std::str::from_utf8(value?).ok()?.parse::<u64>().ok())?;
        let Some(Pending::Request(key)) = self.requests.upstream.get(&id) else {
            return None;
        };
        let request = self.requests.client.get(key)?;
        (request.method == "tools/call").then_some(id)
    }

    /// Shapes and sends the result of `line`, the answer to `upstream_id`; `false`,
    /// with nothing done, when the line is not a clean result that the rules can
    /// edit one level deep.
    async fn pass(&mut self, upstream_id: u64, line: &[u8]) -> bool {
        let Some(response) = std::str::from_utf8(line).ok().and_then(clean_response) else {
            return false;
        };
        let mut result = response.result;
        let shape = shape_call_result_shallow(&mut result);
        if response.id != upstream_id || shape == ShallowShape::NeedsTree {
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
            let mut frame = Vec::with_capacity(line.len());
            encode_result_line(&request.id, &result, &mut frame);
            self.out.send_line(frame).await;
        }
        true
    }
}
