//! The hot path of a tools/call or tools/list result (R8, O10, R5; R4, R6): the
//! link read the line one level deep ([`ResultLine`]); the result is edited by the
//! same rules and written out from its members' text, without a tree of its content
//! (of a tools/list, a tree of each tool's schemas only) and without a copy of the
//! members that stay as they came. Any other result, and one that the rules must
//! see whole, becomes a tree built from the same members' text.

use super::Session;
use super::forward::log_round;
use super::requests::Pending;
use crate::catalogue::RequestInfo;
use crate::log::emit;
use crate::rules::icons::may_hold_icons;
use crate::rules::results::{ShallowShape, shape_call_result_shallow};
use crate::rules::tools_list::shape_tools_list_shallow;
use crate::wire::raw::{ResultLine, Unreadable};

/// The methods whose results the rules can edit one level deep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Passed {
    Call,
    List,
}

impl Session {
    /// A clean response of the upstream: passed on from its text when it is a
    /// complete tools/call result, else handled as a message with its tree.
    pub(super) async fn on_result_line(&mut self, line: ResultLine) {
        // The icons of a URL upstream are dropped in the tree (O10, M4); the text
        // is searched only for a result that could take the one-level path.
        if let Some(method) = self.passed_method(line.id())
            && !(self.data_icons_only && may_hold_icons(line.shared_line()))
            && self.pass(&line, method).await
        {
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

    /// Whether `upstream_id` is that of a tools/call or a tools/list in flight.
    fn passed_method(&self, upstream_id: u64) -> Option<Passed> {
        match self.requests.request_of(upstream_id)?.method() {
            "tools/call" => Some(Passed::Call),
            // The fault of a bridge that keeps a null cursor is in the tree path.
            #[cfg(debug_assertions)]
            "tools/list" if super::test_faults::keep_null_cursor() => None,
            "tools/list" => Some(Passed::List),
            _ => None,
        }
    }

    /// Shapes and sends the result of `line`, the answer to a tools/call or a
    /// tools/list in flight; `false`, with nothing done, when the rules cannot edit
    /// it one level deep.
    async fn pass(&mut self, line: &ResultLine, method: Passed) -> bool {
        let upstream_id = line.id();
        let mut result = line.result();
        let shape = match method {
            Passed::Call => shape_call_result_shallow(&mut result),
            Passed::List => shape_tools_list_shallow(&mut result),
        };
        let shaped = match shape {
            ShallowShape::NeedsTree => return false,
            ShallowShape::Invalid(error) => Err(error),
            ShallowShape::Shaped(fixes) => Ok(fixes),
        };
        let Some(Pending::Request(key)) = self.requests.take_pending(upstream_id) else {
            return false;
        };
        let Some(request) = self.requests.get(&key) else {
            return true;
        };
        log_round(&key, upstream_id, request, "result");
        let fixes = match shaped {
            Ok(fixes) => fixes,
            Err(error) => {
                let method = request.method().to_owned();
                self.fail_invalid_result(&key, &method, &error.to_string())
                    .await;
                return true;
            }
        };
        for fix in fixes {
            emit!(RequestInfo: fix.log_line());
        }
        if let Some(mut request) = self.end_request(&key, "the request ended").await {
            // The members stay in the line: a large result is never copied.
            let result = result.into_shared(line.shared_line());
            self.out.send_result(request.take_id(), result).await;
        }
        true
    }
}
