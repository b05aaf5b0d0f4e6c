//! 11: the URL form's memory stays flat. One session through the bridge
//! (`mcp-bridge-vscode --ca-file CA <url>`) and one through mcp-remote, each 100,000
//! small echo calls with 32 in flight to the fixture over HTTPS; `VmRSS` of the
//! process in front of the URL after 10,000 calls and at the end (the readings and
//! rows of `soak.rs`). The target, on the bridge: a growth of at most 1 MiB;
//! mcp-remote's is reported beside it. mcp-remote takes more than a minute for it,
//! so it runs only when asked (`--only url-soak`).

use tokio::time::Duration;

use super::remote_figures::{self, RemoteFigures, limited, record};
use super::soak::{EARLY, Readings, rss_readings};
use super::throughput::WINDOW;
use super::url::{Front, check_echo_call, mcp_remote};
use crate::http::HttpsFixture;
use crate::report::Row;
use crate::{BenchError, Ctx, Side};

/// How long mcp-remote's session may take before it counts as a hang.
const REMOTE_LIMIT: Duration = Duration::from_secs(900);

/// The rows and notes of 11; an error only when the bridged side fails.
pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let fixture = HttpsFixture::start(&ctx.fixture).await?;
    let total = ctx.count(100_000, 20_000);
    ctx.progress(&format!(
        "url-soak: {total} echo calls, {WINDOW} in flight, over HTTPS, bridged"
    ));
    let mut readings = Readings::default();
    let mut got = Vec::new();
    soak_round(ctx, &Front::bridge(ctx, &fixture), total, &mut got).await?;
    readings.push(Side::Bridged, &got);
    ctx.progress(&format!(
        "url-soak: {total} echo calls, {WINDOW} in flight, over HTTPS, mcp-remote"
    ));
    let mut got = Vec::new();
    let failure = match mcp_remote(ctx) {
        Ok(mcp_remote) => {
            let front = Front::remote(&mcp_remote, &fixture);
            limited(REMOTE_LIMIT, soak_round(ctx, &front, total, &mut got)).await
        }
        Err(why) => Some(why),
    };
    let (mut early, mut late, mut growth) = (
        RemoteFigures::default(),
        RemoteFigures::default(),
        RemoteFigures::default(),
    );
    if let [first, last] = got[..] {
        got.push(last - first);
    }
    record(
        &mut [&mut early, &mut late, &mut growth],
        &got,
        failure.as_deref(),
    );
    let rows: Vec<Row> = readings
        .rows("url_soak", "11 URL:", total)
        .into_iter()
        .zip([early, late, growth])
        .map(|(row, figures)| remote_figures::with(row, figures))
        .collect();
    let mut notes = vec![format!(
        "11: the fixture over HTTPS; one session through the bridge and one through mcp-remote (as in 8), {total} tools/call echo with {WINDOW} in flight; VmRSS of the bridge or of the node process after {EARLY} calls and after {total}. The growth target is the bridge's; mcp-remote's is reported."
    )];
    notes.extend(remote_figures::failure_notes(&rows));
    Ok((rows, notes))
}

/// One session through `front`: the two readings of [`rss_readings`], pushed to `got`.
async fn soak_round(
    ctx: &Ctx,
    front: &Front,
    total: usize,
    got: &mut Vec<f64>,
) -> Result<(), BenchError> {
    let mut session = front.start(ctx).await?;
    check_echo_call(&mut session).await?;
    rss_readings(&mut session, total, got).await?;
    session.conn.stop().await?;
    Ok(())
}
