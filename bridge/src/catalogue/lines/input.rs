//! The input requests of the upstream (M2; docs/troubleshooting.md, "Input requests
//! of the upstream").

use std::fmt::Display;

lines! {
    group INPUT;

    /// A round of input that takes its time, and a refusal of VS Code.
    pub enum InputInfo<'a>: Bridge Info {
        StillWaitingForAnswers { method: &'a str, id: &'a dyn Display, n: u64 }
            => "still waiting for the answers of the client to the input requests of {method} (request {id}, {n} s)",
        ClientAnsweredWithError { id: &'a dyn Display, method: &'a str, message: &'a dyn Display }
            => "request {id} ({method}): the client answered an input request with an error: {message}",
    }

    /// A round of input that fails.
    pub enum InputWarning<'a>: Bridge Warning {
        UrlRefused { key: &'a dyn Display }
            => "input request '{key}': the bridge refused the URL of a URL elicitation, and the upstream server gets decline",
        InputRequestsFailed { id: &'a dyn Display, method: &'a str, detail: &'a dyn Display }
            => "request {id} ({method}): the input requests of the upstream server failed: {detail}",
        NoAnswers {
            id: &'a dyn Display,
            method: &'a str,
            limit: &'a str,
            left as "n": usize,
            total as "m": usize,
        } => "request {id} ({method}): no answers of the client in {limit} (input requests without an answer: {left} of {total})",
        TooManyRounds { id: &'a dyn Display, method: &'a str, rounds as "n": u32 }
            => "request {id} ({method}): the upstream server asked for input in {rounds} rounds",
        StateRefused { id: &'a dyn Display, method: &'a str, time: &'a str }
            => "request {id} ({method}): the upstream server refused the request state after an input wait of {time}",
    }
}
