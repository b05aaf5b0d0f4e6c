//! Simulated MCP clients of VS Code.
//!
//! `harness-sim` sends the frames that the two MCP clients of VS Code send, in
//! their order and form, and reacts to a server as they react: the Local
//! harness (the workbench client of VS Code 1.140-1.142) and the Copilot
//! harness (copilot-cli 1.0.89-1.0.95). The behaviour comes from
//! `shared/reference/vscode/clients.md`, its frame files, and the contract
//! (R1-R8, C1-C4, O1-O11, the quirk table, the stop sequence). The simulators
//! drive the bridge in the transcripts, the conformance runner and the
//! benchmarks (`harness-bench`, the crate `bench/`), and a person can point them
//! at any stdio MCP server.
//!
//! # Layout
//! - [`process`]: [`process::StdioPeer`], a server process over its stdio: lines
//!   with times, stderr as it comes, signals, exit timing, the process group.
//! - [`process_group`]: whether the process group of a server is gone;
//!   [`proc_mem`]: the memory of a process (and of its descendants) from `/proc`.
//! - [`server_stdio`]: the stdin, stdout and stderr a client gives a server:
//!   Unix socket pairs as VS Code (libuv) gives them, or pipes ([`StdioKind`]).
//! - [`stdio_probe`]: a server that tells what its stdin, stdout and stderr are.
//! - [`profile`]: [`profile::Profile`], the six client versions and their opening frames.
//! - [`answers`]: [`answers::AnswerPolicy`], what the simulated user answers.
//! - [`client`]: [`client::SimClient`], one client session: opening, lists
//!   with paging and the R4 loop, the R6 checks, tool calls with `_meta`
//!   (run as tasks on the Local harness when the server allows it), answers
//!   (and the Local task manager), cancellation, the MRTR rounds of the modern path, the stop
//!   sequences (and the second stop of VS Code, [`client::SecondStop`]).
//! - [`official_suite`]: the official MCP conformance suite of `interop/`, run and
//!   its `checks.json` read.
//! - [`record`]: the recording format (JSON Lines) and its redaction.
//! - [`report`]: the readable and the JSON report of a session.
//! - [`url_fixture`]: `bridge-fixture-server --https` (or `--http`) started, and its
//!   URL and CA file read.
//! - [`tap`]: `harness-sim tap`, a pass-through recorder between a real client and a server.
//! - [`replay`]: plays the client side of a recording against a server.
//! - [`script`]: a scripted server that plays the server side of a frame file (tests).
//! - [`scripted_upstream`]: a scripted upstream of revision 2026-07-28 that
//!   misbehaves as a process (the bridge's process tests).
//! - [`cli`]: the command line of the binary.
#![forbid(unsafe_code)]

pub mod answers;
pub mod cli;
pub mod client;
pub mod official_suite;
pub mod ports;
pub mod proc_mem;
pub mod process;
pub mod process_group;
pub mod profile;
pub mod record;
pub mod replay;
pub mod report;
pub mod script;
pub mod scripted_upstream;
pub mod secret_service;
pub mod server_stdio;
pub mod stdio_probe;
pub mod tap;
pub mod url_fixture;

pub use answers::AnswerPolicy;
pub use client::{CallOutcome, Negotiated, SimClient, SimError, SimOptions, WirePath};
pub use process::{Received, StdioPeer};
pub use profile::Profile;
pub use server_stdio::StdioKind;
