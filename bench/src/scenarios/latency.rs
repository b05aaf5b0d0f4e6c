//! 1: the latency of small calls: sequential `echo` calls of a short text, p50 and p99.

use super::SHORT_TEXT;
use crate::report::{Pair, Row, Unit};
use crate::session::Session;
use crate::stats::percentile;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

/// Calls before the measured ones: the allocators and caches settle.
const WARMUP: usize = 200;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let calls = ctx.count(2000, 300);
    let mut p50 = Pair::default();
    let mut p99 = Pair::default();
    for side in ctx.order(ctx.rounds) {
        ctx.progress(&format!(
            "latency: {calls} sequential echo calls, {}",
            side.name()
        ));
        let times = run(ctx, side, calls).await?;
        p50.push(side, percentile(&times, 50.0).unwrap_or(f64::NAN));
        p99.push(side, percentile(&times, 99.0).unwrap_or(f64::NAN));
    }
    let rows = vec![
        Row::new("latency.p50", "1 small echo, p50", Unit::Seconds, p50).with_target(
            Target::RatioAndAbove {
                ratio: 1.5,
                above: 100e-6,
            },
        ),
        Row::new("latency.p99", "1 small echo, p99", Unit::Seconds, p99),
    ];
    let note = format!(
        "1: {calls} sequential tools/call echo of {:?} after {WARMUP} unmeasured ones, from the write of the request to the read of the response's newline.",
        SHORT_TEXT
    );
    Ok((rows, vec![note]))
}

async fn run(ctx: &Ctx, side: Side, calls: usize) -> Result<Vec<f64>, BenchError> {
    let mut session = Session::start(ctx, side, &[], 0).await?;
    let echo = session.frames.echo();
    let mut line = Vec::new();
    for _ in 0..WARMUP {
        session.call(&echo, SHORT_TEXT, &mut line).await?;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let (_, time) = session.call(&echo, SHORT_TEXT, &mut line).await?;
        times.push(time.as_secs_f64());
    }
    session.conn.stop().await?;
    Ok(times)
}
