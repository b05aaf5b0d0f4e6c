//! A speed check to run by hand (not a test: timings on a shared machine would be flaky).
//!
//! `cargo run --release -p json-shallow --example speed` times `object_members`
//! against serde_json reading `&RawValue` members (what the bridge did before),
//! on a typical JSON-RPC line and on 64 MiB lines.
//!
//! `speed count <shallow|serde> <n>` only scans the typical line `n` times, for
//! an instruction count: run it under `valgrind --tool=callgrind` for two values
//! of `n` and divide the difference by the difference of `n`.
#![expect(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    reason = "a stand-alone timing tool with no tokio runtime: the clock of the machine is what it measures"
)]

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A response of the fixture server, as the bridge forwards it.
const LINE: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"hello, bridge"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bridge-fixture-server","version":"0.1.0"}}}}"#;

/// Text as a tool result holds it: code with escaped line ends, tabs and quotes.
const ESCAPED_TEXT: &str = r#"fn main() {}\n\t\"x\" "#;

/// The members of an object read by serde_json: borrowed keys and raw values.
struct SerdeMembers<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de> Deserialize<'de> for SerdeMembers<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = SerdeMembers<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<&'de str, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(SerdeMembers(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

fn shallow_count(line: &str) -> usize {
    json_shallow::object_members(line, 64).map_or(0, |members| members.len())
}

fn serde_count(line: &str) -> usize {
    serde_json::from_str::<SerdeMembers<'_>>(line).map_or(0, |members| members.0.len())
}

/// The time of one call of `scan` on `line`, over `rounds` calls.
fn time_per_scan(rounds: u32, line: &str, scan: fn(&str) -> usize) -> Duration {
    let start = Instant::now();
    for _ in 0..rounds {
        black_box(scan(black_box(line)));
    }
    start.elapsed() / rounds
}

fn compare(name: &str, rounds: u32, line: &str) {
    assert_eq!(shallow_count(line), serde_count(line), "{name}");
    // One warm-up round each, then the measure.
    time_per_scan(rounds.div_ceil(10), line, shallow_count);
    time_per_scan(rounds.div_ceil(10), line, serde_count);
    let shallow = time_per_scan(rounds, line, shallow_count);
    let serde = time_per_scan(rounds, line, serde_count);
    let mib_per_second = |time: Duration| line.len() as f64 / time.as_secs_f64() / (1 << 20) as f64;
    println!(
        "{name} ({} bytes): json-shallow {shallow:?} ({:.0} MiB/s), serde_json {serde:?} ({:.0} MiB/s), {:.1}x",
        line.len(),
        mib_per_second(shallow),
        mib_per_second(serde),
        serde.as_secs_f64() / shallow.as_secs_f64(),
    );
}

/// A line with one string value of about `len` bytes made of `unit` repeated.
fn big_line(unit: &str, len: usize) -> String {
    let text = unit.repeat(len / unit.len());
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [count, which, rounds, rest @ ..] = args.as_slice()
        && count == "count"
    {
        let rounds: u64 = rounds.parse().expect("a number of rounds");
        let scan = if which == "serde" {
            serde_count
        } else {
            shallow_count
        };
        // `escapes`: a line with a 64 KiB string of code text (4 escapes in 22 bytes).
        let line = match rest.first().map(String::as_str) {
            Some("escapes") => big_line(ESCAPED_TEXT, 64 << 10),
            _ => LINE.to_owned(),
        };
        let mut total = 0;
        for _ in 0..rounds {
            total += scan(black_box(&line));
        }
        println!("{total}");
        return;
    }

    compare("typical line", 1_000_000, LINE);
    let big = 64 << 20;
    compare(
        "64 MiB plain text",
        20,
        &big_line("lorem ipsum dolor sit amet ", big),
    );
    compare(
        "64 MiB code text (4 escapes in 22 bytes)",
        20,
        &big_line(ESCAPED_TEXT, big),
    );
    let numbers = format!(
        r#"{{"jsonrpc":"2.0","id":8,"result":{{"data":[{}0]}}}}"#,
        "123456,-7.25e3,".repeat(big / 15)
    );
    compare("64 MiB array of numbers", 10, &numbers);
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":9,"result":{{"items":[{}{{}}]}}}}"#,
        r#"{"k":[1,{"a":null,"b":true}],"s":"v"},"#.repeat(big / 38)
    );
    compare("64 MiB array of small objects", 10, &nested);
}
