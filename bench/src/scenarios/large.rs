//! 3: large messages: `echo` of 1 MiB, 16 MiB and 64 MiB texts: the time per call,
//! and the peak resident memory (`VmHWM`) of the bridge process.
//!
//! Each size runs in fresh processes, so that the peak belongs to that size. The
//! "64 MiB" text is the largest whose frames fit the bridge's default line limit
//! (67,108,864 bytes) in both directions: the limit less the JSON around the text
//! in the longest frame, the fixture's response.

use super::SHORT_TEXT;
use crate::report::{MIB, Pair, Row, Unit};
use crate::session::Session;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

/// The default `--max-line-bytes` of the bridge.
pub const LINE_LIMIT: usize = 64 * 1024 * 1024;
/// Room for longer ids than the probe's.
const ID_SLACK: usize = 16;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let overhead = frame_overhead(ctx).await?;
    let largest = LINE_LIMIT - overhead;
    let sizes = [
        (1024 * 1024, "1 MiB", ctx.count(20, 3)),
        (16 * 1024 * 1024, "16 MiB", ctx.count(5, 2)),
        (largest, "64 MiB", ctx.count(3, 1)),
    ];
    let text = vec![b'a'; largest];
    let mut rows = Vec::new();
    for (size, name, calls) in sizes {
        let mut times = Pair::default();
        let mut peaks = Pair::default();
        for side in ctx.order(ctx.rounds) {
            ctx.progress(&format!(
                "large: {calls} echo calls of {name}, {}",
                side.name()
            ));
            let (time, peak) = run(ctx, side, &text[..size], calls).await?;
            times.push(side, time);
            peaks.push(side, peak);
        }
        let key = name.replace(' ', "").to_lowercase();
        let mut time = Row::new(
            &format!("large.{key}.time"),
            &format!("3 echo {name}, time per call"),
            Unit::Seconds,
            times,
        );
        let mut peak = Row::new(
            &format!("large.{key}.peak"),
            &format!("3 echo {name}, peak RSS"),
            Unit::Bytes,
            peaks,
        )
        .per_message(size as f64);
        if size == largest {
            time = time.with_target(Target::RatioAtMost { ratio: 2.0 });
            peak = peak.with_target(Target::TimesMessage {
                times: 3.0,
                message: size as f64,
            });
        }
        rows.push(time);
        rows.push(peak);
    }
    let notes = vec![
        format!(
            "3: the \"64 MiB\" text is {largest} bytes ({:.4} MiB): the line limit 67108864 less {overhead} bytes, the JSON around the text in the longest frame (the fixture's response, with room for longer ids), so every frame fits the bridge's default --max-line-bytes in both directions.",
            largest as f64 / MIB
        ),
        "3: each size runs in fresh processes; time per call is the median of the calls of a process, from the first byte written to the newline of the response read. Peak RSS is VmHWM of /proc/<pid>/status after the calls: bridged, of the bridge process alone (not the fixture); the direct column shows the fixture's own peak for comparison. The ratio of a peak row is bridged peak / message size.".to_owned(),
    ];
    Ok((rows, notes))
}

/// The bytes of JSON around the text in the longest frame of an echo call: the
/// requests of both clients and the fixture's response (measured with a probe).
async fn frame_overhead(ctx: &Ctx) -> Result<usize, BenchError> {
    let mut session = Session::start(ctx, Side::Direct, &[], 0).await?;
    let echo = session.frames.echo();
    let (reply, _) = session.call(&echo, SHORT_TEXT, &mut Vec::new()).await?;
    session.conn.stop().await?;
    let response = reply.len.saturating_sub(SHORT_TEXT.len());
    let requests = [Side::Direct, Side::Bridged]
        .map(|side| crate::frames::Frames::new(side).echo().line_len(1, 0));
    Ok(requests.into_iter().fold(response, usize::max) + ID_SLACK)
}

/// One process pair: `calls` echo calls of `text`; the median time per call and
/// the peak memory of the server process (the bridge, or the fixture direct).
async fn run(ctx: &Ctx, side: Side, text: &[u8], calls: usize) -> Result<(f64, f64), BenchError> {
    let mut session = Session::start(ctx, side, &[], 0).await?;
    let echo = session.frames.echo();
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let (reply, time) = session.call_large(&echo, text).await?;
        if reply.len < text.len() {
            return Err(BenchError::Server(format!(
                "the echo of {} bytes came back with {} bytes",
                text.len(),
                reply.len
            )));
        }
        times.push(time.as_secs_f64());
    }
    let memory = session.conn.memory()?;
    session.conn.stop().await?;
    let time = crate::stats::median(&times).unwrap_or(f64::NAN);
    Ok((time, memory.peak as f64))
}
