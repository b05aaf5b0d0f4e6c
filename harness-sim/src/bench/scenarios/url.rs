//! 8: the URL form (issue 14): small `echo` calls to the fixture over HTTPS, direct
//! (a client of revision 2026-07-28 over HTTP, [`DirectClient`]) and bridged (the
//! stdio client of 2025-11-25 in front of `mcp-bridge-vscode --ca-file CA <url>`):
//! the p50 of sequential calls, calls per second with 32 in flight, and the peak
//! resident memory of the bridge. One fixture process serves every round.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::throughput::WINDOW;
use super::{LATENCY_WARMUP, SHORT_TEXT, THROUGHPUT_WARMUP, small_calls};
use crate::bench::frames::Frames;
use crate::bench::http::{DirectClient, HttpsFixture};
use crate::bench::report::{Pair, Row, Unit};
use crate::bench::session::Session;
use crate::bench::stats::percentile;
use crate::bench::{BenchError, Ctx, Side, order};
use tokio::time::Instant;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let fixture = HttpsFixture::start(&ctx.fixture).await?;
    let direct = DirectClient::new(&fixture)?;
    let calls = ctx.count(2000, 300);
    let rate_calls = ctx.count(20_000, 3000);
    let mut p50 = Pair::default();
    let mut rates = Pair::default();
    let mut peaks = Pair::default();
    // The relay of --floor is a stdio process: it has no place on an HTTP path.
    for side in order(ctx.rounds, false) {
        ctx.progress(&format!(
            "url: {calls} sequential echo calls, then {rate_calls} with {WINDOW} in flight, over HTTPS, {}",
            side.name()
        ));
        match side {
            Side::Direct => {
                p50.push(side, direct_p50(&direct, calls).await?);
                rates.push(side, direct_rate(&direct, rate_calls).await?);
            }
            Side::Bridged => {
                let (p, rate, peak) = bridged(ctx, &fixture, calls, rate_calls).await?;
                p50.push(side, p);
                rates.push(side, rate);
                peaks.push(side, peak);
            }
            Side::Relay => {}
        }
    }
    let rows = vec![
        Row::new("url.p50", "8 URL: 1 small echo, p50", Unit::Seconds, p50),
        Row::new(
            "url.throughput",
            "8 URL: echo throughput, 32 in flight",
            Unit::PerSecond,
            rates,
        ),
        Row::new("url.peak", "8 URL: bridge peak RSS", Unit::Bytes, peaks).without_ratio(),
    ];
    let note = format!(
        "8: the fixture over HTTPS (bridge-fixture-server --https, HTTP/1.1, its test CA). Direct: a 2026-07-28 client POSTing tools/call echo of {SHORT_TEXT:?} with reqwest and rustls, the stack of the bridge's URL form; bridged: the 2025-11-25 stdio client in front of mcp-bridge-vscode --ca-file CA <url>. {calls} sequential calls after {LATENCY_WARMUP} (p50 from the send to the whole response), then {rate_calls} calls with {WINDOW} in flight after {THROUGHPUT_WARMUP}; the peak RSS (VmHWM) of the bridge after both. No target: the issue asks for the figures."
    );
    Ok((rows, vec![note]))
}

fn direct_echo(frames: &Frames, id: i64) -> Vec<u8> {
    let mut body = Vec::new();
    frames.echo().render(id, SHORT_TEXT, &mut body);
    body
}

/// A direct answer must be the echo's result.
fn check_echo(body: &[u8]) -> Result<(), BenchError> {
    let text = format!("\"text\":\"{SHORT_TEXT}\"");
    if contains(body, text.as_bytes()) {
        Ok(())
    } else {
        Err(BenchError::Server(format!(
            "not the echo result: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

async fn direct_p50(client: &DirectClient, calls: usize) -> Result<f64, BenchError> {
    let frames = Frames::new(Side::Direct);
    let mut times = Vec::with_capacity(calls);
    for id in 0..(LATENCY_WARMUP + calls) as i64 {
        let (time, body) = client.call("echo", direct_echo(&frames, id)).await?;
        check_echo(&body)?;
        if id as usize >= LATENCY_WARMUP {
            times.push(time.as_secs_f64());
        }
    }
    Ok(percentile(&times, 50.0).unwrap_or(f64::NAN))
}

/// `calls` calls from [`WINDOW`] tasks, each with one call in flight; calls per second.
async fn direct_rate(client: &DirectClient, calls: usize) -> Result<f64, BenchError> {
    direct_window(client, THROUGHPUT_WARMUP).await?;
    direct_window(client, calls).await
}

async fn direct_window(client: &DirectClient, calls: usize) -> Result<f64, BenchError> {
    let next = Arc::new(AtomicUsize::new(0));
    let frames = Arc::new(Frames::new(Side::Direct));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..WINDOW {
        let (client, next, frames) = (client.clone(), next.clone(), frames.clone());
        tasks.spawn(async move {
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id >= calls {
                    return Ok::<(), BenchError>(());
                }
                let (_, body) = client.call("echo", direct_echo(&frames, id as i64)).await?;
                check_echo(&body)?;
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.map_err(|error| BenchError::Setup(format!("a client task: {error}")))??;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(calls as f64 / seconds.max(1e-9))
}

/// The bridge in its URL form: p50, calls per second, and its peak RSS in bytes.
async fn bridged(
    ctx: &Ctx,
    fixture: &HttpsFixture,
    calls: usize,
    rate_calls: usize,
) -> Result<(f64, f64, f64), BenchError> {
    let argv = fixture.bridge_argv(&ctx.bridge);
    let mut session = Session::start_command(ctx, Side::Bridged, &argv, 0).await?;
    let (p50, rate) = small_calls(&mut session, calls, rate_calls).await?;
    let peak = session.conn.memory()?.peak as f64;
    session.conn.stop().await?;
    Ok((p50, rate, peak))
}
