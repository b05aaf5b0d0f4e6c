//! The simulators of the two VS Code clients against real processes: behaviour, the
//! bridge, the fixture, frames, the opening waits, the kinds of stdio, stop and tap,
//! tasks. The relays of the benchmarks are tested in `bench/tests/`.
//!
//! One test executable for these files (autotests are off in Cargo.toml), so that
//! the build links once.

mod common;

mod behaviour;
mod bridge;
mod fixture;
mod frames;
mod opening_waits;
mod stdio_kinds;
mod stop_and_tap;
mod tasks;
