//! 10: the memory stays flat. One session per side makes 1,000,000 small
//! echo calls with 32 in flight; the resident memory of the process under test (the
//! bridge; the direct column: the fixture) is read after 10,000 calls and at the end.
//! The target: the bridge's growth between the two is at most 1 MiB. It takes about
//! a minute a side, so it runs only when asked (`--only soak`). The URL form's soak
//! (`url_soak.rs`) takes its readings and rows from here.

use crate::report::{MIB, Pair, Row, Unit};
use crate::session::Session;
use crate::targets::Target;
use crate::{BenchError, Ctx, Side};

use super::throughput::{self, WINDOW};

/// The calls after which the first reading is taken.
pub const EARLY: usize = 10_000;

pub async fn measure(ctx: &Ctx) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    let total = ctx.count(1_000_000, 50_000);
    let mut readings = Readings::default();
    for side in ctx.order(1) {
        ctx.progress(&format!(
            "soak: {total} echo calls, {WINDOW} in flight, {}",
            side.name()
        ));
        let mut session = Session::start(ctx, side, &[], 0).await?;
        let mut got = Vec::new();
        rss_readings(&mut session, total, &mut got).await?;
        session.conn.stop().await?;
        readings.push(side, &got);
    }
    let note = format!(
        "10: one session a side; VmRSS of the process under test (bridged: the bridge, direct: the fixture) after {EARLY} tools/call echo with {WINDOW} in flight, and after {total}."
    );
    Ok((readings.rows("soak", "10", total), vec![note]))
}

/// The readings of one session: `VmRSS` after [`EARLY`] calls with [`WINDOW`] in
/// flight and after `total`, pushed to `got` in that order as they are taken (a
/// session that fails between them leaves the first).
pub async fn rss_readings(
    session: &mut Session,
    total: usize,
    got: &mut Vec<f64>,
) -> Result<(), BenchError> {
    throughput::window(session, EARLY).await?;
    got.push(session.conn.memory()?.rss as f64);
    throughput::window(session, total.saturating_sub(EARLY)).await?;
    got.push(session.conn.memory()?.rss as f64);
    Ok(())
}

/// The readings of the sides: after [`EARLY`] calls, at the end, and the growth.
#[derive(Debug, Default)]
pub struct Readings {
    /// `VmRSS` after [`EARLY`] calls.
    pub early: Pair,
    /// `VmRSS` after all calls.
    pub late: Pair,
    /// The difference: what the target bounds.
    pub growth: Pair,
}

impl Readings {
    /// The two readings of [`rss_readings`] on `side` (both, or nothing is pushed).
    pub fn push(&mut self, side: Side, got: &[f64]) {
        if let [first, last] = *got {
            self.early.push(side, first);
            self.late.push(side, last);
            self.growth.push(side, last - first);
        }
    }

    /// The three rows, keyed `<key>.rss.early` ... and labelled `<number> RSS ...`;
    /// the growth has its target: at most 1 MiB.
    pub fn rows(self, key: &str, number: &str, total: usize) -> Vec<Row> {
        vec![
            Row::new(
                &format!("{key}.rss.early"),
                &format!("{number} RSS after {EARLY} calls"),
                Unit::Bytes,
                self.early,
            )
            .without_ratio(),
            Row::new(
                &format!("{key}.rss.late"),
                &format!("{number} RSS after {total} calls"),
                Unit::Bytes,
                self.late,
            )
            .without_ratio(),
            Row::new(
                &format!("{key}.rss.growth"),
                &format!("{number} RSS growth from {EARLY} to {total} calls"),
                Unit::Bytes,
                self.growth,
            )
            .without_ratio()
            .with_target(Target::AtMost { limit: MIB }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soak_rows_carry_the_growth_and_its_target() {
        let mut readings = Readings::default();
        readings.push(Side::Bridged, &[6.0 * MIB, 6.5 * MIB]);
        readings.push(Side::Direct, &[5.0 * MIB]);
        let rows = readings.rows("url_soak", "11 URL:", 100_000);
        let labels: Vec<&str> = rows.iter().map(|row| row.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "11 URL: RSS after 10000 calls",
                "11 URL: RSS after 100000 calls",
                "11 URL: RSS growth from 10000 to 100000 calls"
            ]
        );
        assert_eq!(rows[2].key, "url_soak.rss.growth");
        assert_eq!(rows[2].bridged, Some(0.5 * MIB));
        assert_eq!(rows[2].direct, None);
        assert_eq!(rows[2].met, Some(true));
    }
}
