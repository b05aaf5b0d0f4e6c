//! One file per measurement of issue 8. Each returns its rows and notes.

mod large;
mod latency;
mod list;
mod start;
mod stop;
mod throughput;
mod url;

use super::report::Row;
use super::{BenchError, Ctx, Scenario};

/// The short text of the small calls.
pub const SHORT_TEXT: &str = "hello, bridge";

/// Runs one measurement.
pub async fn measure(ctx: &Ctx, scenario: Scenario) -> Result<(Vec<Row>, Vec<String>), BenchError> {
    match scenario {
        Scenario::Latency => latency::measure(ctx).await,
        Scenario::Throughput => throughput::measure(ctx).await,
        Scenario::Large => large::measure(ctx).await,
        Scenario::List => list::measure(ctx).await,
        Scenario::Start => start::measure(ctx).await,
        Scenario::Stop => stop::measure(ctx).await,
        Scenario::Url => url::measure(ctx).await,
    }
}
