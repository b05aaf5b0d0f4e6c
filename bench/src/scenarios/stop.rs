//! 6: the stop, from the end of stdin to the exit of the server process: idle, and
//! with 32 calls in flight (`slow` calls of 60 s that the server holds).

use tokio::time::Duration;

use super::SHORT_TEXT;
use crate::report::{Pair, Row, Unit};
use crate::session::Session;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

/// The calls in flight at the end of stdin.
const IN_FLIGHT: usize = 32;
/// How long each of them would take.
const SLOW_MS: u64 = 60_000;
/// How long an idle session rests before its stdin closes.
const REST: Duration = Duration::from_millis(100);

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let rounds = ctx.count(7, 2).max(ctx.rounds);
    let mut idle = Pair::default();
    let mut busy = Pair::default();
    for side in ctx.order(rounds) {
        ctx.progress(&format!(
            "stop: idle and with {IN_FLIGHT} calls in flight, {}",
            side.name()
        ));
        idle.push(side, run(ctx, side, 0).await?);
        busy.push(side, run(ctx, side, IN_FLIGHT).await?);
    }
    let rows = vec![
        Row::new("stop.idle", "6 stop, idle", Unit::Seconds, idle)
            .with_target(Target::AtMost { limit: 0.050 }),
        Row::new(
            "stop.in_flight",
            "6 stop, 32 calls in flight",
            Unit::Seconds,
            busy,
        ),
    ];
    let note = format!(
        "6: {rounds} rounds; from the close of the server's stdin to its exit (as the parent sees it). Idle: after a few calls and {} ms of rest. In flight: {IN_FLIGHT} calls of slow ({SLOW_MS} ms) that the fixture holds (an echo after them has come back); direct, the fixture gives calls in flight its end-of-input grace of 500 ms; bridged, the bridge cancels them upstream first.",
        REST.as_millis()
    );
    Ok((rows, vec![note]))
}

/// One session that stops with `in_flight` slow calls in flight; the stop time.
async fn run(ctx: &Ctx, side: Side, in_flight: usize) -> Result<f64, BenchError> {
    let mut session = Session::start(ctx, side, &[], 0).await?;
    let echo = session.frames.echo();
    let mut line = Vec::new();
    for _ in 0..5 {
        session.call(&echo, SHORT_TEXT, &mut line).await?;
    }
    if in_flight == 0 {
        tokio::time::sleep(REST).await;
    } else {
        let slow = session.frames.slow(SLOW_MS);
        let mut batch = Vec::new();
        for _ in 0..in_flight {
            let id = session.take_id();
            slow.render(id, "", &mut batch);
        }
        session.conn.send(&[&batch]).await?;
        // The server reads in order: once this echo is back, the slow calls are its.
        session.call(&echo, SHORT_TEXT, &mut line).await?;
    }
    Ok(session.conn.stop().await?.as_secs_f64())
}
