//! 2: throughput: `echo` calls with 32 in flight, calls per second.
//!
//! A new call goes out as soon as a response comes; all responses that are already
//! there are answered with one write, as a client with a full queue would.

use std::collections::HashSet;

use super::SHORT_TEXT;
use crate::conn::{Reply, check_result};
use crate::report::{Pair, Row, Unit};
use crate::session::{CALL_LIMIT, Session};
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};
use tokio::time::Instant;

/// Calls in flight.
pub const WINDOW: usize = 32;
/// Calls before the measured ones.
const WARMUP: usize = 1000;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let calls = ctx.count(20_000, 3000);
    let mut rates = Pair::default();
    for side in ctx.order(ctx.rounds) {
        ctx.progress(&format!(
            "throughput: {calls} echo calls, {WINDOW} in flight, {}",
            side.name()
        ));
        rates.push(side, run(ctx, side, calls).await?);
    }
    let row = Row::new(
        "throughput",
        "2 echo throughput, 32 in flight",
        Unit::PerSecond,
        rates,
    )
    .with_target(Target::RatioAtLeast { ratio: 0.7 });
    let note = format!(
        "2: {calls} tools/call echo with {WINDOW} in flight after {WARMUP} unmeasured ones; calls per second from the first write to the last response."
    );
    Ok((vec![row], vec![note]))
}

async fn run(ctx: &Ctx, side: Side, calls: usize) -> Result<f64, BenchError> {
    let mut session = Session::start(ctx, side, &[], 0).await?;
    window(&mut session, WARMUP).await?;
    let rate = window(&mut session, calls).await?;
    session.conn.stop().await?;
    Ok(rate)
}

/// `calls` calls with [`WINDOW`] in flight; returns calls per second.
pub async fn window(session: &mut Session, calls: usize) -> Result<f64, BenchError> {
    let echo = session.frames.echo();
    let mut in_flight = HashSet::with_capacity(2 * WINDOW);
    let mut batch = Vec::new();
    let mut sent = 0;
    let mut done = 0;
    let add = |session: &mut Session, batch: &mut Vec<u8>, in_flight: &mut HashSet<i64>| {
        let id = session.take_id();
        echo.render(id, SHORT_TEXT, batch);
        in_flight.insert(id);
    };
    for _ in 0..WINDOW.min(calls) {
        add(session, &mut batch, &mut in_flight);
        sent += 1;
    }
    let start = Instant::now();
    session.conn.send(&[&batch]).await?;
    let mut last = start;
    let take = |reply: Reply, in_flight: &mut HashSet<i64>| -> Result<Instant, BenchError> {
        check_result(&reply, None)?;
        match reply.head.id {
            Some(id) if in_flight.remove(&id) => Ok(reply.at),
            _ => Err(BenchError::Server(format!(
                "a response for no request in flight: {}",
                reply.excerpt()
            ))),
        }
    };
    while done < calls {
        let reply = session.conn.response(CALL_LIMIT).await?;
        last = take(reply, &mut in_flight)?;
        let mut ready = 1;
        while let Some(reply) = session.conn.try_response() {
            last = take(reply, &mut in_flight)?;
            ready += 1;
        }
        done += ready;
        batch.clear();
        let more = ready.min(calls - sent);
        for _ in 0..more {
            add(session, &mut batch, &mut in_flight);
        }
        sent += more;
        if more > 0 {
            session.conn.send(&[&batch]).await?;
        }
    }
    let seconds = last.saturating_duration_since(start).as_secs_f64();
    Ok(calls as f64 / seconds.max(1e-9))
}
