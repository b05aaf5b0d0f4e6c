//! A started session on one side: the process, its opening, and calls.

use std::ffi::OsString;

use tokio::time::{Duration, Instant};

use super::conn::{Conn, Reply};
use super::frames::{Frames, Side, Template};
use super::{BenchError, Ctx};

/// How long the opening may take.
const OPENING_LIMIT: Duration = Duration::from_secs(60);
/// How long one call may take (a 64 MiB echo on a loaded machine included).
pub const CALL_LIMIT: Duration = Duration::from_secs(120);

/// One client session with a server process.
pub struct Session {
    pub conn: Conn,
    pub frames: Frames,
    pub side: Side,
    /// From just before the process was spawned to the opening result
    /// (`server/discover` direct, `initialize` bridged).
    pub opening: Duration,
    next_id: i64,
}

impl Session {
    /// Starts the server of `side` (the fixture with `fixture_args`), sends the
    /// opening at once and waits for its result. Lines up to `keep` bytes are kept.
    pub async fn start(
        ctx: &Ctx,
        side: Side,
        fixture_args: &[&str],
        keep: usize,
    ) -> Result<Self, BenchError> {
        Self::start_command(ctx, side, &ctx.argv(side, fixture_args), keep).await
    }

    /// Starts `argv` as the server of `side` (the URL form of the bridge, for one),
    /// with the opening of [`start`](Self::start).
    pub async fn start_command(
        ctx: &Ctx,
        side: Side,
        argv: &[OsString],
        keep: usize,
    ) -> Result<Self, BenchError> {
        Self::start_command_with_env(ctx, side, argv, &[], keep).await
    }

    /// [`start_command`](Self::start_command) with `env` added to the environment of
    /// the process (mcp-remote in front of the fixture).
    pub async fn start_command_with_env(
        ctx: &Ctx,
        side: Side,
        argv: &[OsString],
        env: &[(OsString, OsString)],
        keep: usize,
    ) -> Result<Self, BenchError> {
        let frames = Frames::new(side);
        let mut conn = Conn::spawn_with_env(argv, env, ctx.stdio, keep)?;
        conn.send(&[&frames.opening()]).await?;
        let reply = conn.result_of(0, OPENING_LIMIT).await?;
        let opening = reply.at.saturating_duration_since(conn.spawned_at);
        if let Some(after) = frames.after_opening() {
            conn.send(&[&after]).await?;
        }
        Ok(Self {
            conn,
            frames,
            side,
            opening,
            next_id: 1,
        })
    }

    /// A new request id (also the progress token of the request).
    pub fn take_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// One call of `template` with a small `text`, alone in flight: its result and
    /// the time from the write to the read of the response. `line` is a reused buffer.
    pub async fn call(
        &mut self,
        template: &Template,
        text: &str,
        line: &mut Vec<u8>,
    ) -> Result<(Reply, Duration), BenchError> {
        let id = self.take_id();
        line.clear();
        template.render(id, text, line);
        let sent = Instant::now();
        self.conn.send(&[line]).await?;
        let reply = self.conn.result_of(id, CALL_LIMIT).await?;
        let time = reply.at.saturating_duration_since(sent);
        Ok((reply, time))
    }

    /// One call of `template` with a large `text`, written around it without a copy.
    pub async fn call_large(
        &mut self,
        template: &Template,
        text: &[u8],
    ) -> Result<(Reply, Duration), BenchError> {
        let id = self.take_id();
        let (before, after) = template.render_around_text(id);
        let sent = Instant::now();
        self.conn.send(&[&before, text, &after]).await?;
        let reply = self.conn.result_of(id, CALL_LIMIT).await?;
        let time = reply.at.saturating_duration_since(sent);
        Ok((reply, time))
    }
}
