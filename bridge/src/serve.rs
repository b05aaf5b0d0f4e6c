//! The tasks of one connection with VS Code, and the watchdog.
//!
//! [`Serve`] wires the stdin reader, the stdout writer and the session together
//! under one [`TaskTracker`] and one [`CancellationToken`]: the upstream link
//! spawns its tasks there too, and when the session ends, or the watchdog fires,
//! the token stops every task that is left. No task is detached.

use crate::catalogue::{ExecutableError, ExecutableWarning};
use crate::client::{self, ClientSink};
use crate::config::Config;
use crate::log::emit;
use crate::session::{Exit, Session};
use crate::upstream::{Connector, UpstreamSlot};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Serves VS Code on `input` and `output` (stdin and stdout in the executable) until
/// the end of input or the end of the upstream.
pub async fn serve<R, W>(
    config: &Config,
    connector: Arc<dyn Connector>,
    input: R,
    output: W,
) -> Exit
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    Serve::new(config, connector).run(input, output).await
}

/// How to serve one connection: the configuration, the upstream, and the hooks of
/// the executable around it (an embedding sets its own).
pub struct Serve<'a> {
    config: &'a Config,
    connector: Arc<dyn Connector>,
    input_hangup: Pin<Box<dyn Future<Output = ()> + Send>>,
    on_end_of_input: Box<dyn FnOnce() + Send>,
    watchdog_line: Box<dyn FnOnce(Duration) + Send>,
}

impl<'a> Serve<'a> {
    pub fn new(config: &'a Config, connector: Arc<dyn Connector>) -> Self {
        Self {
            config,
            connector,
            input_hangup: Box::pin(std::future::pending()),
            on_end_of_input: Box::new(|| {}),
            watchdog_line: Box::new(|limit| emit!(ExecutableWarning: watchdog_line(limit))),
        }
    }

    /// Resolves when the writer of the input has closed it, before its last lines
    /// are read (the end of a pipe): the end of input is seen even while the
    /// session takes no lines.
    pub fn input_hangup(mut self, hangup: impl Future<Output = ()> + Send + 'static) -> Self {
        self.input_hangup = Box::pin(hangup);
        self
    }

    /// Runs as soon as the input ends or hangs up, outside the session: the
    /// executable arms its last-resort watchdog there.
    pub fn on_end_of_input(mut self, action: impl FnOnce() + Send + 'static) -> Self {
        self.on_end_of_input = Box::new(action);
        self
    }

    /// The line of the watchdog when it fires, given its limit: the executable's
    /// warning by default; the embedding, whose bound is its shutdown grace, writes
    /// its own.
    pub fn watchdog_line(mut self, line: impl FnOnce(Duration) + Send + 'static) -> Self {
        self.watchdog_line = Box::new(line);
        self
    }

    /// Serves VS Code on `input` and `output` until the end of input or the end of
    /// the upstream.
    pub async fn run<R, W>(self, input: R, output: W) -> Exit
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let Self {
            config,
            connector,
            input_hangup,
            on_end_of_input,
            watchdog_line,
        } = self;
        let tasks = TaskTracker::new();
        let stop = CancellationToken::new();
        let (client_sender, client_events) = mpsc::channel(1024);
        let (sink, write_client) = ClientSink::new(Box::new(output), 1024);
        let end_of_input = Arc::new(Notify::new());
        let end = end_of_input.clone();
        let reader = client::read_client(
            input,
            config.max_line_bytes,
            client_sender,
            input_hangup,
            move || {
                end.notify_one();
                on_end_of_input();
            },
        );
        tasks.spawn(stop.clone().run_until_cancelled_owned(reader));
        let writer = tasks.spawn(write_client);
        let slot = UpstreamSlot::default();
        let session = Session::new(
            config,
            connector,
            sink,
            slot.clone(),
            tasks.clone(),
            stop.clone(),
        );
        let mut session = tasks.spawn(session.run(client_events));
        tasks.close();

        let watchdog_limit = config.limits.watchdog;
        let watchdog = async {
            end_of_input.notified().await;
            tokio::time::sleep(watchdog_limit).await;
        };
        tokio::pin!(watchdog);
        let exit = tokio::select! {
            outcome = &mut session => match outcome {
                Ok(exit) => {
                    // The session dropped its sink: the writer ends after the last frame.
                    tokio::select! {
                        _ = writer => {}
                        _ = &mut watchdog => fire_watchdog(watchdog_limit, &slot, watchdog_line),
                    }
                    exit
                }
                Err(error) => {
                    emit!(ExecutableError::InternalError { error: &error });
                    slot.kill_now();
                    Exit::Failure
                }
            },
            _ = &mut watchdog => {
                fire_watchdog(watchdog_limit, &slot, watchdog_line);
                session.abort();
                Exit::EndOfInput
            }
        };
        // Whatever is left (the stdin reader, the link's tasks) stops now.
        stop.cancel();
        exit
    }
}

fn fire_watchdog(limit: Duration, slot: &UpstreamSlot, line: Box<dyn FnOnce(Duration) + Send>) {
    line(limit);
    slot.kill_now();
}

/// The watchdog's warning line.
pub fn watchdog_line(limit: Duration) -> ExecutableWarning {
    ExecutableWarning::WatchdogStops { n: limit.as_secs() }
}
