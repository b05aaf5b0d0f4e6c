//! The relays of `harness-bench` against real processes: `relay`, the floor of one
//! more process on the path, and `url-relay`, the floor of the URL form, against
//! the fixture over HTTPS.
//!
//! One test executable for these files (autotests are off in Cargo.toml), so that
//! the build links once.

mod common;

mod relay;
mod url_relay;
