//! The listen stream: list changes and subscriptions (M3; docs/troubleshooting.md,
//! "The listen stream"). The listen machine returns these lines as actions, so
//! they own their parameters.

lines! {
    group LISTEN;

    /// A stream that fails or is refused.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum ListenWarning: Bridge Warning {
        /// The first stream after `notifications/initialized` was refused.
        CannotStart { code: String, message: String }
            => "cannot start the listen stream: the error {code}: {message}. The client gets no list changes.",
        /// The same over HTTP, with a status that is no reason to try again.
        CannotStartWithStatus { n: u16 }
            => "cannot start the listen stream: the HTTP status {n}. The client gets no list changes.",
        Ended { error: String, time: String }
            => "the listen stream ended: {error}. A new stream follows in {time}.",
        EndedWithStatus { n: u16, time: String }
            => "the listen stream ended with the HTTP status {n}. A new stream follows in {time}.",
        /// 401 or 403: a sign-in that did not complete.
        FailedWithStatus { n: u16 }
            => "the listen stream failed with the HTTP status {n}. A new stream follows after the next sign-in.",
        RefusedWithError { code: String, message: String }
            => "the upstream server refused the listen stream with the error {code}: {message}. The bridge sends no more list changes.",
        RefusedWithStatus { n: u16 }
            => "the upstream server refused the listen stream with the HTTP status {n}. The bridge sends no more list changes.",
        ChangeFailed { error: String }
            => "the listen stream for a change of the subscriptions failed: {error}",
    }

    /// A stream that ends well, and one that opens again after a sign-in.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum ListenInfo: Bridge Info {
        ServerEnded { time: String }
            => "the upstream server ended the listen stream. A new stream follows in {time}.",
        SignInCompleted => "a sign-in completed. The bridge opens the listen stream again.",
    }
}
