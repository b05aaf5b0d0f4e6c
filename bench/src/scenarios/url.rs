//! 8: the URL form: small `echo` calls to the fixture over HTTPS
//! in three columns of the same run: direct (a client of revision 2026-07-28 over
//! HTTP, [`DirectClient`]), bridged (the stdio client of 2025-11-25 in front of
//! `mcp-bridge-vscode --ca-file CA <url>`) and mcp-remote (the same stdio client in
//! front of `node proxy.js <url> --protocol auto`, see [`McpRemote`]). Per round and
//! column: the p50 of sequential calls, calls per second with 32 in flight, and the
//! peak resident memory of the process in front of the URL; then rounds of the start
//! alone: from just before the spawn to the `initialize` result (direct: a fresh
//! client's new TLS connection and its `server/discover` answered), and the resident
//! memory right after. With `--floor`, a fourth column: the direct client's frames
//! through `harness-bench url-relay` (see [`crate::url_relay`]), one more
//! process with the same HTTP stack that only POSTs each line. One fixture process
//! serves every round.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::remote_figures::{self, RemoteFigures, limited, record};
use super::throughput::WINDOW;
use super::{LATENCY_WARMUP, SHORT_TEXT, THROUGHPUT_WARMUP, rate, sequential_p50};
use crate::frames::Frames;
use crate::http::{DirectClient, HttpsFixture};
use crate::remote::{self, McpRemote};
use crate::report::{MIB, Pair, Row, Unit};
use crate::session::Session;
use crate::stats::percentile;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};
use std::ffi::OsString;
use tokio::time::{Duration, Instant};

/// How long one round of mcp-remote may take before it counts as a hang: the
/// bridge takes a few seconds for one, mcp-remote in the runs so far well under a
/// minute.
const REMOTE_ROUND_LIMIT: Duration = Duration::from_secs(300);
/// How long a session rests after its start before its memory is read (as in 7).
const SETTLE: Duration = Duration::from_millis(250);

/// The columns of the URL form. Not [`Side`]: mcp-remote has no place on the
/// stdio measurements, and its failures are figures of the table, not of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The 2026-07-28 HTTP client in the bench process.
    Direct,
    /// The 2026-07-28 stdio client through `harness-bench url-relay` (`--floor`).
    Relay,
    /// The 2025-11-25 stdio client through the bridge.
    Bridged,
    /// The 2025-11-25 stdio client through mcp-remote.
    Remote,
}

impl Column {
    fn name(self) -> &'static str {
        match self {
            Column::Direct => "direct",
            Column::Relay => "relay",
            Column::Bridged => "bridged",
            Column::Remote => "mcp-remote",
        }
    }
}

/// The columns of `rounds` rounds: direct, the relay with `floor`, bridged,
/// mcp-remote, then the other way round (as [`crate::order`]), so that a
/// linear drift of the load falls on all.
pub fn columns(rounds: usize, floor: bool) -> Vec<Column> {
    let forward: Vec<Column> = [
        Column::Direct,
        Column::Relay,
        Column::Bridged,
        Column::Remote,
    ]
    .into_iter()
    .filter(|column| floor || *column != Column::Relay)
    .collect();
    (0..rounds)
        .flat_map(|round| {
            let mut columns = forward.clone();
            if round % 2 == 1 {
                columns.reverse();
            }
            columns
        })
        .collect()
}

/// A stdio process in front of the fixture's URL: its command, its environment and
/// the revision of its client, so that the relay, the bridge and mcp-remote go
/// through the same rounds.
pub struct Front {
    pub argv: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub side: Side,
}

impl Front {
    /// `mcp-bridge-vscode --ca-file CA <url>`.
    pub fn bridge(ctx: &Ctx, fixture: &HttpsFixture) -> Self {
        Self {
            argv: fixture.bridge_argv(&ctx.bridge),
            env: Vec::new(),
            side: Side::Bridged,
        }
    }

    /// `harness-bench url-relay CA <url>`, with the direct client's frames.
    pub fn relay(ctx: &Ctx, fixture: &HttpsFixture) -> Self {
        Self {
            argv: vec![
                ctx.relay.clone().into_os_string(),
                "url-relay".into(),
                fixture.ca_file.clone().into(),
                fixture.url.clone().into(),
            ],
            env: Vec::new(),
            side: Side::Relay,
        }
    }

    /// `node proxy.js <url> --protocol auto ...` with the CA and its state directory.
    pub fn remote(remote: &McpRemote, fixture: &HttpsFixture) -> Self {
        Self {
            argv: remote.argv(&fixture.url),
            env: remote.env(&fixture.ca_file),
            side: Side::Bridged,
        }
    }

    /// Starts it and opens the session of its side (2025-11-25: `initialize`, then
    /// `notifications/initialized`; the relay: `server/discover`).
    pub async fn start(&self, ctx: &Ctx) -> Result<Session, BenchError> {
        Session::start_command_with_env(ctx, self.side, &self.argv, &self.env, 0).await
    }
}

/// The stdio processes in front of the URL that every run has (mcp-remote may not).
struct Fronts {
    relay: Front,
    bridge: Front,
}

impl Fronts {
    fn new(ctx: &Ctx, fixture: &HttpsFixture) -> Self {
        Self {
            relay: Front::relay(ctx, fixture),
            bridge: Front::bridge(ctx, fixture),
        }
    }

    /// The process of the relay's column, else the bridge.
    fn of(&self, column: Column) -> &Front {
        if column == Column::Relay {
            &self.relay
        } else {
            &self.bridge
        }
    }
}

/// mcp-remote, or why it cannot run (every one of its rounds then fails with that).
pub fn mcp_remote(ctx: &Ctx) -> Result<McpRemote, String> {
    McpRemote::new(&ctx.mcp_remote).map_err(|error| error.to_string())
}

/// The rows and notes of 8; an error only when the direct or the bridged side fails.
pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let fixture = HttpsFixture::start(&ctx.fixture).await?;
    let direct = DirectClient::new(&fixture)?;
    let mcp_remote = mcp_remote(ctx);
    let fronts = Fronts::new(ctx, &fixture);
    let calls = ctx.count(2000, 300);
    let rate_calls = ctx.count(20_000, 3000);
    let (mut p50, mut rates, mut peaks) = (Pair::default(), Pair::default(), Pair::default());
    let (mut remote_p50, mut remote_rates, mut remote_peaks) = Default::default();
    for column in columns(ctx.rounds, ctx.floor) {
        ctx.progress(&format!(
            "url: {calls} sequential echo calls, then {rate_calls} with {WINDOW} in flight, over HTTPS, {}",
            column.name()
        ));
        match column {
            Column::Direct => {
                p50.push(Side::Direct, direct_p50(&direct, calls).await?);
                rates.push(Side::Direct, direct_rate(&direct, rate_calls).await?);
            }
            Column::Relay | Column::Bridged => {
                let front = fronts.of(column);
                let mut got = Vec::new();
                small_round(ctx, front, calls, rate_calls, &mut got).await?;
                for (pair, value) in [&mut p50, &mut rates, &mut peaks].into_iter().zip(got) {
                    pair.push(front.side, value);
                }
            }
            Column::Remote => {
                let mut got = Vec::new();
                let failure = match &mcp_remote {
                    Ok(mcp_remote) => {
                        let front = Front::remote(mcp_remote, &fixture);
                        let round = small_round(ctx, &front, calls, rate_calls, &mut got);
                        limited(REMOTE_ROUND_LIMIT, round).await
                    }
                    Err(why) => Some(why.clone()),
                };
                record(
                    &mut [&mut remote_p50, &mut remote_rates, &mut remote_peaks],
                    &got,
                    failure.as_deref(),
                );
            }
        }
    }
    let (starts, remote_starts, idle, remote_idle) =
        start_rounds(ctx, &fixture, &fronts, &mcp_remote).await?;
    let rows = vec![
        remote_figures::with(
            Row::new("url.p50", "8 URL: 1 small echo, p50", Unit::Seconds, p50)
                .with_target(Target::RatioAtMost { ratio: 1.2 }),
            remote_p50,
        ),
        remote_figures::with(
            Row::new(
                "url.throughput",
                "8 URL: echo throughput, 32 in flight",
                Unit::PerSecond,
                rates,
            )
            .with_target(Target::RatioAtLeast { ratio: 0.9 }),
            remote_rates,
        ),
        remote_figures::with(
            Row::new(
                "url.peak",
                "8 URL: peak RSS after the calls",
                Unit::Bytes,
                peaks,
            )
            .without_ratio()
            .with_target(Target::AtMost { limit: 15.0 * MIB }),
            remote_peaks,
        ),
        remote_figures::with(
            Row::new(
                "url.start",
                "8 URL: start to the opening result",
                Unit::Seconds,
                starts,
            )
            .with_target(Target::DirectPlus { plus: 0.005 }),
            remote_starts,
        ),
        remote_figures::with(
            Row::new("url.start.rss", "8 URL: RSS after start", Unit::Bytes, idle).without_ratio(),
            remote_idle,
        ),
    ];
    let mut notes = vec![format!(
        "8: the fixture over HTTPS (bridge-fixture-server --https, HTTP/1.1, its test CA). Direct: a 2026-07-28 client POSTing tools/call echo of {SHORT_TEXT:?} with reqwest and rustls, the stack of the bridge's URL form; bridged: the 2025-11-25 stdio client in front of mcp-bridge-vscode --ca-file CA <url>; mcp-remote: the same stdio client in front of mcp-remote {} (node {} <url> --protocol auto --transport http-only --silent, NODE_EXTRA_CA_CERTS=CA, its state in a temporary directory). {calls} sequential calls after {LATENCY_WARMUP} (p50 from the send to the whole response), then {rate_calls} calls with {WINDOW} in flight after {THROUGHPUT_WARMUP}; the peak RSS (VmHWM) of the bridge or of the node process after both. The columns alternate direct, the relay (with --floor), bridged, mcp-remote and back. vs mcp-remote: whether the bridged figure is better than mcp-remote's.",
        remote::VERSION,
        ctx.mcp_remote.display()
    )];
    if ctx.floor {
        notes.push(
            "8 relay (--floor): the direct client's 2026-07-28 frames over stdio through harness-bench url-relay CA <url>, a process on one thread that POSTs each line with the direct client's reqwest and writes each answer, without a session or a translation: the floor of one more process in front of the URL.".into(),
        );
    }
    notes.push(format!(
        "8 start: {} rounds; from just before the spawn to the read of the initialize result (bridged and mcp-remote: each opens a TLS connection and asks server/discover upstream first); direct: a fresh reqwest client (a new TLS connection) and its server/discover answered. RSS after start: VmRSS {} ms after notifications/initialized.",
        start_rounds_count(ctx),
        SETTLE.as_millis()
    ));
    notes.extend(remote_figures::failure_notes(&rows));
    Ok((rows, notes))
}

/// One round of the small calls through `front` (the bridge or mcp-remote), its
/// figures pushed to `got` as they are taken: p50, calls per second, peak RSS.
async fn small_round(
    ctx: &Ctx,
    front: &Front,
    calls: usize,
    rate_calls: usize,
    got: &mut Vec<f64>,
) -> Result<(), BenchError> {
    let mut session = front.start(ctx).await?;
    check_echo_call(&mut session).await?;
    got.push(sequential_p50(&mut session, calls).await?);
    got.push(rate(&mut session, rate_calls).await?);
    got.push(session.conn.memory()?.peak as f64);
    session.conn.stop().await?;
    Ok(())
}

/// One echo call whose answer must carry the text: a result that is not the echo's
/// is a wrong answer, not a figure.
pub async fn check_echo_call(session: &mut Session) -> Result<(), BenchError> {
    let echo = session.frames.echo();
    let mut line = Vec::new();
    let (reply, _) = session.call(&echo, SHORT_TEXT, &mut line).await?;
    check_echo(&reply.first)
}

fn start_rounds_count(ctx: &Ctx) -> usize {
    ctx.count(7, 2).max(ctx.rounds)
}

/// The rounds of the start alone, and the memory after it.
async fn start_rounds(
    ctx: &Ctx,
    fixture: &HttpsFixture,
    fronts: &Fronts,
    mcp_remote: &Result<McpRemote, String>,
) -> Result<(Pair, RemoteFigures, Pair, RemoteFigures), BenchError> {
    let (mut starts, mut idle) = (Pair::default(), Pair::default());
    let (mut remote_starts, mut remote_idle) = Default::default();
    for column in columns(start_rounds_count(ctx), ctx.floor) {
        ctx.progress(&format!(
            "url: start to the opening result, {}",
            column.name()
        ));
        match column {
            Column::Direct => starts.push(Side::Direct, direct_start(fixture).await?),
            Column::Relay | Column::Bridged => {
                let front = fronts.of(column);
                let mut got = Vec::new();
                start_round(ctx, front, &mut got).await?;
                for (pair, value) in [&mut starts, &mut idle].into_iter().zip(got) {
                    pair.push(front.side, value);
                }
            }
            Column::Remote => {
                let mut got = Vec::new();
                let failure = match mcp_remote {
                    Ok(mcp_remote) => {
                        let front = Front::remote(mcp_remote, fixture);
                        limited(REMOTE_ROUND_LIMIT, start_round(ctx, &front, &mut got)).await
                    }
                    Err(why) => Some(why.clone()),
                };
                record(
                    &mut [&mut remote_starts, &mut remote_idle],
                    &got,
                    failure.as_deref(),
                );
            }
        }
    }
    Ok((starts, remote_starts, idle, remote_idle))
}

/// One start through `front`: the time to the initialize result, then VmRSS after
/// [`SETTLE`].
async fn start_round(ctx: &Ctx, front: &Front, got: &mut Vec<f64>) -> Result<(), BenchError> {
    let mut session = front.start(ctx).await?;
    let opening = session.opening.as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let rss = session.conn.memory()?.rss as f64;
    // After the reading, so that the memory is that of the start alone.
    check_echo_call(&mut session).await?;
    got.extend([opening, rss]);
    session.conn.stop().await?;
    Ok(())
}

/// A fresh client (so a new TLS connection) and its `server/discover` answered.
async fn direct_start(fixture: &HttpsFixture) -> Result<f64, BenchError> {
    let started = Instant::now();
    let client = DirectClient::new(fixture)?;
    let (_, body) = client
        .post("server/discover", None, Frames::new(Side::Direct).opening())
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    if !contains(&body, b"\"result\"") {
        return Err(BenchError::Server(format!(
            "not a server/discover result: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )));
    }
    Ok(seconds)
}

fn direct_echo(frames: &Frames, id: i64) -> Vec<u8> {
    let mut body = Vec::new();
    frames.echo().render(id, SHORT_TEXT, &mut body);
    body
}

/// An answer must be the echo's result.
fn check_echo(body: &[u8]) -> Result<(), BenchError> {
    let text = format!("\"text\":\"{SHORT_TEXT}\"");
    if contains(body, text.as_bytes()) {
        Ok(())
    } else {
        Err(BenchError::Server(format!(
            "not the echo result: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_alternate() {
        use Column::{Bridged as B, Direct as D, Relay as F, Remote as R};
        assert_eq!(columns(1, false), [D, B, R]);
        assert_eq!(columns(3, false), [D, B, R, R, B, D, D, B, R]);
        assert_eq!(columns(2, true), [D, F, B, R, R, B, F, D]);
    }

    #[test]
    fn only_the_echo_text_is_an_echo_answer() {
        let echo = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello, bridge"}],"isError":false}}"#;
        assert!(check_echo(echo).is_ok());
        let wrong = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#;
        assert_eq!(
            check_echo(wrong).unwrap_err().to_string(),
            format!(
                "unexpected answer: not the echo result: {}",
                String::from_utf8_lossy(wrong)
            )
        );
    }
}
