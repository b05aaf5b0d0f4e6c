//! Helpers shared by the integration tests of harness-bench.

/// The harness-bench executable of this package.
pub fn harness_bench() -> String {
    env!("CARGO_BIN_EXE_harness-bench").to_owned()
}

/// The fixture server executable (built when missing).
pub fn fixture() -> String {
    workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("bridge-fixture-server")
        .display()
        .to_string()
}
