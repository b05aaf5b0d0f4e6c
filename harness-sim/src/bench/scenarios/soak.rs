//! 10 (issue 20): the memory stays flat. One session per side makes 1,000,000 small
//! echo calls with 32 in flight; the resident memory of the process under test (the
//! bridge; the direct column: the fixture) is read after 10,000 calls and at the end.
//! The target: the bridge's growth between the two is at most 1 MiB. It takes about
//! a minute a side, so it runs only when asked (`--only soak`).

use crate::bench::report::{MIB, Pair, Row, Unit};
use crate::bench::session::Session;
use crate::bench::targets::Target;
use crate::bench::{BenchError, Ctx, Side};

use super::throughput::{self, WINDOW};

/// The calls after which the first reading is taken.
const EARLY: usize = 10_000;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let total = ctx.count(1_000_000, 50_000);
    let (mut early, mut late, mut growth) = (Pair::default(), Pair::default(), Pair::default());
    for side in ctx.order(1) {
        ctx.progress(&format!(
            "soak: {total} echo calls, {WINDOW} in flight, {}",
            side.name()
        ));
        let (first, last) = run(ctx, side, total).await?;
        early.push(side, first);
        late.push(side, last);
        growth.push(side, last - first);
    }
    let rows = vec![
        Row::new(
            "soak.rss.early",
            &format!("10 RSS after {EARLY} calls"),
            Unit::Bytes,
            early,
        )
        .without_ratio(),
        Row::new(
            "soak.rss.late",
            &format!("10 RSS after {total} calls"),
            Unit::Bytes,
            late,
        )
        .without_ratio(),
        Row::new(
            "soak.rss.growth",
            &format!("10 RSS growth from {EARLY} to {total} calls"),
            Unit::Bytes,
            growth,
        )
        .without_ratio()
        .with_target(Target::AtMost { limit: MIB }),
    ];
    let note = format!(
        "10: one session a side; VmRSS of the process under test (bridged: the bridge, direct: the fixture) after {EARLY} tools/call echo with {WINDOW} in flight, and after {total}."
    );
    Ok((rows, vec![note]))
}

/// The resident memory after [`EARLY`] calls and after `total` calls.
async fn run(ctx: &Ctx, side: Side, total: usize) -> Result<(f64, f64), BenchError> {
    let mut session = Session::start(ctx, side, &[], 0).await?;
    throughput::window(&mut session, EARLY).await?;
    let first = session.conn.memory()?.rss as f64;
    throughput::window(&mut session, total.saturating_sub(EARLY)).await?;
    let last = session.conn.memory()?.rss as f64;
    session.conn.stop().await?;
    Ok((first, last))
}
