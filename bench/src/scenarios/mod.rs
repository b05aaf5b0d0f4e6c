//! One file per measurement. Each returns its rows and notes.

mod embedded;
mod large;
mod latency;
mod list;
mod remote_figures;
mod soak;
mod start;
mod stop;
mod throughput;
mod url;
mod url_soak;

use super::embed_table::EmbedRow;
use super::report::Row;
use super::session::Session;
use super::stats::percentile;
use super::{BenchError, Ctx, Scenario};

/// The short text of the small calls.
pub const SHORT_TEXT: &str = "hello, bridge";
/// Sequential calls before the measured ones in [`small_calls`], as in 1.
pub const LATENCY_WARMUP: usize = 200;
/// Calls with 32 in flight before the measured ones in [`small_calls`], as in 2.
pub const THROUGHPUT_WARMUP: usize = 1000;

/// What one measurement gives: rows of the direct and bridged table, rows of the
/// embedded table, and notes.
#[derive(Debug, Default)]
pub struct Measured {
    pub rows: Vec<Row>,
    pub embedded: Vec<EmbedRow>,
    pub notes: Vec<String>,
}

impl From<(Vec<Row>, Vec<String>)> for Measured {
    fn from((rows, notes): (Vec<Row>, Vec<String>)) -> Self {
        Self {
            rows,
            embedded: Vec::new(),
            notes,
        }
    }
}

/// Runs one measurement.
pub async fn measure(ctx: &Ctx, scenario: Scenario) -> Result<Measured, BenchError> {
    let (rows, notes) = match scenario {
        Scenario::Latency => latency::measure(ctx).await?,
        Scenario::Throughput => throughput::measure(ctx).await?,
        Scenario::Large => large::measure(ctx).await?,
        Scenario::List => list::measure(ctx).await?,
        Scenario::Start => start::measure(ctx).await?,
        Scenario::Stop => stop::measure(ctx).await?,
        Scenario::Url => url::measure(ctx).await?,
        Scenario::Soak => soak::measure(ctx).await?,
        Scenario::UrlSoak => url_soak::measure(ctx).await?,
        Scenario::Embedded => {
            let (embedded, notes) = embedded::measure(ctx).await?;
            return Ok(Measured {
                rows: Vec::new(),
                embedded,
                notes,
            });
        }
    };
    Ok((rows, notes).into())
}

/// The small calls of one session: `calls` sequential echo calls after
/// [`LATENCY_WARMUP`] (their p50 in seconds), then `rate_calls` with 32 in flight
/// after [`THROUGHPUT_WARMUP`] (calls per second).
pub async fn small_calls(
    session: &mut Session,
    calls: usize,
    rate_calls: usize,
) -> Result<(f64, f64), BenchError> {
    let p50 = sequential_p50(session, calls).await?;
    let rate = rate(session, rate_calls).await?;
    Ok((p50, rate))
}

/// `calls` sequential echo calls after [`LATENCY_WARMUP`]: their p50 in seconds.
pub async fn sequential_p50(session: &mut Session, calls: usize) -> Result<f64, BenchError> {
    let echo = session.frames.echo();
    let mut line = Vec::new();
    for _ in 0..LATENCY_WARMUP {
        session.call(&echo, SHORT_TEXT, &mut line).await?;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let (_, time) = session.call(&echo, SHORT_TEXT, &mut line).await?;
        times.push(time.as_secs_f64());
    }
    Ok(percentile(&times, 50.0).unwrap_or(f64::NAN))
}

/// `rate_calls` echo calls with 32 in flight after [`THROUGHPUT_WARMUP`]: calls per second.
pub async fn rate(session: &mut Session, rate_calls: usize) -> Result<f64, BenchError> {
    throughput::window(session, THROUGHPUT_WARMUP).await?;
    throughput::window(session, rate_calls).await
}
