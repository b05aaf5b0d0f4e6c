//! 5: the start, from just before the process is spawned to the opening result
//! (bridged: the initialize result; direct: the fixture's own server/discover
//! result), and 7: the resident memory of the bridge when idle after the start.

use tokio::time::Duration;

use crate::report::{MIB, Pair, Row, Unit};
use crate::session::Session;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

/// How long the session rests after the opening before the memory is read.
const SETTLE: Duration = Duration::from_millis(250);

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let rounds = ctx.count(7, 2).max(ctx.rounds);
    let mut starts = Pair::default();
    let mut idle = Pair::default();
    for side in ctx.order(rounds) {
        ctx.progress(&format!(
            "start: spawn to the opening result, {}",
            side.name()
        ));
        let (start, rss) = run(ctx, side).await?;
        starts.push(side, start);
        idle.push(side, rss);
    }
    let rows = vec![
        Row::new(
            "start",
            "5 start to the opening result",
            Unit::Seconds,
            starts,
        )
        .with_target(Target::DirectPlus { plus: 0.020 }),
        Row::new("idle.rss", "7 idle RSS after start", Unit::Bytes, idle)
            .without_ratio()
            .with_target(Target::AtMost { limit: 10.0 * MIB }),
    ];
    let notes = vec![
        format!(
            "5: {rounds} rounds; from just before the spawn to the read of the opening result: bridged, initialize of the bridge (which starts the fixture and asks it server/discover); direct, server/discover of the fixture, the fixture's own discover time."
        ),
        format!(
            "7: VmRSS of the bridge process {} ms after notifications/initialized (the direct column: the fixture's VmRSS after its discover).",
            SETTLE.as_millis()
        ),
    ];
    Ok((rows, notes))
}

async fn run(ctx: &Ctx, side: Side) -> Result<(f64, f64), BenchError> {
    let session = Session::start(ctx, side, &[], 0).await?;
    let start = session.opening.as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let memory = session.conn.memory()?;
    session.conn.stop().await?;
    Ok((start, memory.rss as f64))
}
