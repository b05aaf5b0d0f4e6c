//! 9: the bridge inside a server: the same small `echo` calls on three
//! paths of `bridge-embedded-server` (see [`EmbedPath`]): the server alone on the
//! modern path, the legacy path inside it (the bridge in the same process), and the
//! same server behind the separate bridge process. Per round and path, one
//! session: the p50 of sequential calls, calls per second with 32 in flight, and
//! then the peak resident memory of the processes under test (the server; the
//! bridge and the server behind it). The issue expects the legacy path to cost less
//! than the separate bridge process; the table says whether it does.

use std::ffi::OsString;
use std::path::Path;

use super::throughput::WINDOW;
use super::{LATENCY_WARMUP, SHORT_TEXT, THROUGHPUT_WARMUP, small_calls};
use crate::embed_table::{Better, EmbedPath, EmbedRow, Trio};
use crate::report::Unit;
use crate::session::Session;
use crate::{BenchError, Ctx, Side};

pub async fn measure(ctx: &Ctx) -> Result<(Vec<EmbedRow>, Vec<String>), BenchError> {
    let embedded = ctx
        .embedded
        .as_deref()
        .ok_or_else(|| BenchError::Setup("no bridge-embedded-server to measure".into()))?;
    let calls = ctx.count(2000, 300);
    let rate_calls = ctx.count(20_000, 3000);
    let mut p50 = Trio::default();
    let mut rates = Trio::default();
    let mut peaks = Trio::default();
    for path in order(ctx.rounds) {
        ctx.progress(&format!(
            "embedded: {calls} sequential echo calls, then {rate_calls} with {WINDOW} in flight, {}",
            path.name()
        ));
        let argv = argv(path, &ctx.bridge, embedded);
        let mut session = Session::start_command(ctx, side(path), &argv, 0).await?;
        let (p, rate) = small_calls(&mut session, calls, rate_calls).await?;
        let peak = session.conn.tree_memory()?.peak as f64;
        session.conn.stop().await?;
        p50.push(path, p);
        rates.push(path, rate);
        peaks.push(path, peak);
    }
    let rows = vec![
        EmbedRow::new(
            "embedded.p50",
            "9 small echo, p50",
            Unit::Seconds,
            Better::Lower,
            p50,
        ),
        EmbedRow::new(
            "embedded.throughput",
            "9 echo throughput, 32 in flight",
            Unit::PerSecond,
            Better::Higher,
            rates,
        ),
        EmbedRow::new(
            "embedded.peak",
            "9 peak RSS of the processes",
            Unit::Bytes,
            Better::Lower,
            peaks,
        ),
    ];
    let notes = vec![format!(
        "9: bridge-embedded-server ({}) on three paths, one session per round and path, the paths in the order modern, legacy, separate and back (ABBA): modern, copilot-cli 1.0.95 on the 2026-07-28 path (server/discover answered by the server, then the calls: rmcp's transport, no bridge); legacy, the same client on the 2025-11-25 path (initialize selects the bridge inside the server); separate, the 2025-11-25 client in front of mcp-bridge-vscode -- bridge-embedded-server. {calls} sequential tools/call echo of {SHORT_TEXT:?} after {LATENCY_WARMUP} (p50), then {rate_calls} with {WINDOW} in flight after {THROUGHPUT_WARMUP} (calls per second); then the peak RSS, VmHWM, of the processes under test: the server process, and on the separate path the bridge plus the server it started (the sum of their peaks). The ratios compare the medians; legacy cheaper: lower time and memory, higher throughput than separate.",
        embedded.display()
    )];
    Ok((rows, notes))
}

/// The paths of `rounds` rounds: modern, legacy, separate in even rounds and the
/// reverse in odd ones (ABBA), so that a linear drift of the load falls on all three.
pub fn order(rounds: usize) -> Vec<EmbedPath> {
    (0..rounds)
        .flat_map(|round| {
            let mut paths = EmbedPath::ALL.to_vec();
            if round % 2 == 1 {
                paths.reverse();
            }
            paths
        })
        .collect()
}

/// The command of the server of `path`.
pub fn argv(path: EmbedPath, bridge: &Path, embedded: &Path) -> Vec<OsString> {
    match path {
        EmbedPath::Modern | EmbedPath::Legacy => vec![embedded.into()],
        EmbedPath::Separate => vec![bridge.into(), "--".into(), embedded.into()],
    }
}

/// The client of `path`: the 2026-07-28 frames on the modern path, the 2025-11-25
/// frames (initialize first) on the other two.
pub fn side(path: EmbedPath) -> Side {
    match path {
        EmbedPath::Modern => Side::Direct,
        EmbedPath::Legacy | EmbedPath::Separate => Side::Bridged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EmbedPath::{Legacy as L, Modern as M, Separate as S};

    #[test]
    fn rounds_alternate_the_order_of_the_paths() {
        assert_eq!(order(1), vec![M, L, S]);
        assert_eq!(order(2), vec![M, L, S, S, L, M]);
        assert_eq!(order(3).len(), 9);
    }

    #[test]
    fn only_the_separate_path_starts_the_bridge() {
        let (bridge, embedded) = (Path::new("/b"), Path::new("/e"));
        assert_eq!(argv(M, bridge, embedded), [OsString::from("/e")]);
        assert_eq!(argv(L, bridge, embedded), [OsString::from("/e")]);
        assert_eq!(
            argv(S, bridge, embedded),
            ["/b", "--", "/e"].map(OsString::from)
        );
    }

    #[test]
    fn only_the_modern_path_skips_initialize() {
        assert_eq!(side(M), Side::Direct);
        assert_eq!(side(L), Side::Bridged);
        assert_eq!(side(S), Side::Bridged);
    }
}
