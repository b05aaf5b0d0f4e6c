//! The time limits and "still waiting" lines of the requests in flight.
//!
//! Every request has one next moment: a "still waiting" line or its time limit. A
//! timer per request registers with the runtime's timer on every call, which wakes
//! the timer's driver (an eventfd write and one more `epoll_wait` per call). Here
//! one sleep serves all requests, and it is armed again only when it fires or when
//! a new moment comes before the armed one: a steady stream of calls never touches
//! it. A sleep that fires before any moment is due is armed again for the next one.

use crate::wire::id::IdKey;
use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::time::{Instant, Sleep, sleep_until};

/// Where a request's moment is in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DeadlineKey {
    at: Instant,
    /// Two requests with the same moment are two entries.
    seq: u64,
}

/// The next moments of the requests in flight, earliest first.
#[derive(Debug)]
pub(crate) struct Deadlines {
    queue: BTreeMap<DeadlineKey, IdKey>,
    sleep: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    next_seq: u64,
}

impl Deadlines {
    pub(crate) fn new() -> Self {
        Self {
            queue: BTreeMap::new(),
            sleep: Box::pin(sleep_until(Instant::now())),
            armed: None,
            next_seq: 0,
        }
    }

    /// The moment `at` of the request `key`.
    pub(crate) fn insert(&mut self, at: Instant, key: IdKey) -> DeadlineKey {
        let entry = DeadlineKey {
            at,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        self.queue.insert(entry, key);
        entry
    }

    pub(crate) fn remove(&mut self, entry: DeadlineKey) {
        self.queue.remove(&entry);
    }

    /// Whether no moment waits (the tests' check that a closed request left none).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The next request whose moment has come. Cancel-safe: the state is here.
    pub(crate) async fn next(&mut self) -> IdKey {
        poll_fn(|cx| self.poll_next(cx)).await
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<IdKey> {
        loop {
            let Some(&first) = self.queue.keys().next() else {
                // Nothing to wait for; the session polls again after any change.
                return Poll::Pending;
            };
            if first.at <= Instant::now()
                && let Some((_, key)) = self.queue.pop_first()
            {
                return Poll::Ready(key);
            }
            if self.armed.is_none_or(|armed| armed > first.at) {
                self.sleep.as_mut().reset(first.at);
                self.armed = Some(first.at);
            }
            match self.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => self.armed = None,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key(n: u64) -> IdKey {
        IdKey::Number(n.into())
    }

    #[tokio::test(start_paused = true)]
    async fn moments_come_in_order_and_removed_ones_never() {
        let mut deadlines = Deadlines::new();
        let start = Instant::now();
        deadlines.insert(start + Duration::from_secs(10), key(1));
        let second = deadlines.insert(start + Duration::from_secs(5), key(2));
        deadlines.insert(start + Duration::from_secs(7), key(3));
        deadlines.remove(second);
        assert_eq!(deadlines.next().await, key(3));
        assert_eq!(start.elapsed(), Duration::from_secs(7));
        assert_eq!(deadlines.next().await, key(1));
        assert_eq!(start.elapsed(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn a_later_moment_does_not_rearm_and_an_earlier_one_does() {
        let mut deadlines = Deadlines::new();
        let start = Instant::now();
        let first = deadlines.insert(start + Duration::from_secs(10), key(1));
        // Arm the sleep at 10 s.
        assert!(
            tokio::time::timeout(Duration::from_secs(1), deadlines.next())
                .await
                .is_err()
        );
        assert_eq!(deadlines.armed, Some(start + Duration::from_secs(10)));
        deadlines.remove(first);
        deadlines.insert(start + Duration::from_secs(20), key(2));
        assert!(
            tokio::time::timeout(Duration::from_secs(1), deadlines.next())
                .await
                .is_err()
        );
        assert_eq!(
            deadlines.armed,
            Some(start + Duration::from_secs(10)),
            "a later moment keeps the armed sleep"
        );
        deadlines.insert(start + Duration::from_secs(3), key(3));
        assert_eq!(deadlines.next().await, key(3));
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        // Then the sleep is armed for the moment at 20 s.
        assert_eq!(deadlines.next().await, key(2));
        assert_eq!(start.elapsed(), Duration::from_secs(20));
    }
}
