//! 4: a large list: `tools/list` of `--many-tools 10000` across all pages (the
//! bridge walks the schemas of every tool, R6): the total time of one walk.

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::report::{Pair, Row, Unit};
use crate::session::{CALL_LIMIT, Session};
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

/// The many tools of the fixture.
const MANY_TOOLS: &str = "10000";
/// A page is kept whole up to this size.
const KEEP_PAGE: usize = 16 * 1024 * 1024;

#[derive(Deserialize)]
struct PageFrame {
    result: PageResult,
}

#[derive(Deserialize)]
struct PageResult {
    tools: Vec<IgnoredAny>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let walks = ctx.count(3, 1);
    let mut times = Pair::default();
    let mut shape = Vec::new();
    for side in ctx.order(ctx.rounds) {
        ctx.progress(&format!(
            "list: {walks} walks of tools/list with --many-tools {MANY_TOOLS}, {}",
            side.name()
        ));
        let (walk_times, tools, pages) = run(ctx, side, walks).await?;
        for time in walk_times {
            times.push(side, time);
        }
        shape.push((side, tools, pages));
    }
    if let Some((_, tools, pages)) = shape.first()
        && shape.iter().any(|(_, t, p)| (t, p) != (tools, pages))
    {
        return Err(BenchError::Server(format!(
            "the two sides listed different tools: {shape:?}"
        )));
    }
    let (tools, pages) = shape.first().map_or((0, 0), |(_, t, p)| (*t, *p));
    let row = Row::new(
        "list.10000",
        "4 tools/list, 10,000 tools",
        Unit::Seconds,
        times,
    )
    .with_target(Target::RatioAtMost { ratio: 1.3 });
    let note = format!(
        "4: fixture --many-tools {MANY_TOOLS}: {tools} tools in {pages} pages, walked page after page {walks} times per process; the time of one whole walk. The client parses each page only for nextCursor (and counts the tools)."
    );
    Ok((vec![row], vec![note]))
}

/// Walks the list `walks` times: the time of each walk, the tools and the pages.
async fn run(ctx: &Ctx, side: Side, walks: usize) -> Result<(Vec<f64>, usize, usize), BenchError> {
    let mut session = Session::start(ctx, side, &["--many-tools", MANY_TOOLS], KEEP_PAGE).await?;
    let mut times = Vec::new();
    let (mut tools, mut pages) = (0, 0);
    for _ in 0..walks {
        (tools, pages) = (0, 0);
        let mut cursor: Option<String> = None;
        let start = tokio::time::Instant::now();
        let last = loop {
            let id = session.take_id();
            let frame = session.frames.list_page(id, cursor.as_deref());
            session.conn.send(&[&frame]).await?;
            let reply = session.conn.result_of(id, CALL_LIMIT).await?;
            let line = reply.line.as_deref().ok_or_else(|| {
                BenchError::Server(format!("a page longer than {KEEP_PAGE} bytes"))
            })?;
            let page: PageFrame = serde_json::from_slice(line)
                .map_err(|error| BenchError::Server(format!("a page: {error}")))?;
            tools += page.result.tools.len();
            pages += 1;
            match page.result.next_cursor {
                Some(next) => cursor = Some(next),
                None => break reply.at,
            }
            if pages > 100_000 {
                return Err(BenchError::Server("the list does not end".into()));
            }
        };
        times.push(last.saturating_duration_since(start).as_secs_f64());
    }
    session.conn.stop().await?;
    Ok((times, tools, pages))
}
