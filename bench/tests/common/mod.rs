//! Helpers shared by the integration tests of harness-bench.

/// The harness-bench executable of this package.
pub fn harness_bench() -> String {
    env!("CARGO_BIN_EXE_harness-bench").to_owned()
}

/// harness-sim, whose `stdio-probe` tells what a server's stdio is (built when
/// missing).
pub fn harness_sim() -> String {
    workspace_bin::path("harness-sim", "harness-sim")
        .expect("harness-sim")
        .display()
        .to_string()
}

/// The fixture server executable (built when missing).
pub fn fixture() -> String {
    workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("bridge-fixture-server")
        .display()
        .to_string()
}
