//! `mcp-conformance`: replays the transcripts of `transcripts/` against the
//! bridge executable and prints the conformance matrix, every item of the
//! contract against the milestones M1-M6.
//!
//! `cargo run -p mcp-conformance` builds the bridge, the fixture server and the
//! embedded server (in one cargo build, in the profile of the tests) and prints the
//! matrix; `cargo test -p mcp-conformance` runs each
//! transcript as its own named test. The format of the transcripts is in
//! `transcripts/README.md`.
//!
//! # Layout
//!
//! - [`catalog`]: the items, their one-line requirements and milestones (`catalog.json`).
//! - [`format`]: the transcript files (JSON Lines), read into steps, with errors
//!   that name the file and line; harness-sim recordings are read too.
//! - [`matchers`]: expected frames with placeholders and captures.
//! - [`relay`]: the bridge's upstream command, a pipe to the runner over loopback TCP.
//! - [`upstream`]: the runner's end of the relay: scripted answers, or a proxy to
//!   the fixture server; every upstream frame recorded.
//! - [`https_upstream`]: the fixture over HTTPS of a transcript of the URL form (M4).
//! - [`proxy`]: the CONNECT proxy of the transcripts of Q10.
//! - [`secret_service`]: a D-Bus session and a gnome-keyring of a run's own, for the
//!   keychain store.
//! - [`launch`]: the start of a run, the hub and the bridge (for the runner and the replay).
//! - [`runner`]: one transcript against one bridge process, one file per kind of step.
//! - [`replay`]: a harness-sim recording against the bridge, first difference as a diff.
//! - [`checks`] and [`schema`]: the wire checks of every transcript (both schemas,
//!   the rules of the reference), one file for each side (`client`, `upstream`), and
//!   for the URL form's HTTP traffic (`http`, with [`static_headers`]) and the
//!   browser of its sign-in (`browser`).
//! - [`suite`], [`matrix`], [`outcome`]: many transcripts, their matrix, their failures.
//! - [`junit`]: the outcomes as JUnit XML (`--junit FILE`); [`mode`]: the mode of a
//!   run, which every output names.
//! - [`bins`], [`paths`], [`cli`]: the executables, the data folder, the command line;
//!   [`product_paths`]: the names of the implementation's own paths (`$TOKEN_DIR`).
//! - [`contract_page`]: docs/contract.md from the catalog and a recorded run.
//! - [`contract_texts`]: the texts the contract fixes (its Output-channel rows, causes,
//!   options), read from the contract the suite carries; [`reword`]: the rewording
//!   rule of the tests, how another implementation could word the rest.
#![forbid(unsafe_code)]

pub mod bins;
pub mod catalog;
pub mod checks;
pub mod cli;
pub mod contract_page;
pub mod contract_texts;
pub mod format;
pub mod https_upstream;
pub mod junit;
pub mod launch;
pub mod marks_check;
pub mod matchers;
pub mod matrix;
pub mod mode;
pub mod outcome;
pub mod paths;
pub mod product_paths;
pub mod proxy;
pub mod regex_sample;
pub mod relay;
pub mod replay;
pub mod reword;
pub mod runner;
pub mod schema;
pub mod secret_service;
pub mod secrets_of_run;
pub mod static_headers;
pub mod suite;
pub mod upstream;
