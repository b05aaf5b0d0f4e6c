//! `mcp-bridge-vscode`: a stdio MCP server of revision 2025-11-25 for the two MCP
//! clients of VS Code, in front of an MCP server of revision 2026-07-28.
//!
//! # Layout
//!
//! Frames flow one way through the layers; each is a folder with one job.
//!
//! - [`wire`]: JSON-RPC frames as `serde_json::Value`, ids, the line codec with
//!   `--max-line-bytes`, and the error causes. No MCP rules.
//! - [`client`]: VS Code's side: the reader of its lines, the writer of its
//!   frames, and stdin and stdout.
//! - [`session`]: one task owns the connection with VS Code: the lifecycle, the
//!   requests in flight, the timers and the order of frames to stdout.
//! - [`serve`]: the tasks of one connection and the watchdog, under one
//!   cancellation token and one task tracker.
//! - [`rules`]: pure translation functions between the two revisions, each naming
//!   the items of the contract it implements (R1-R8, C1-C4, O1-O11).
//! - [`upstream`]: the upstream server behind one small interface (a child process
//!   over stdio, a server in the same process; a URL in M4).
//! - [`cli`], [`config`], [`log`], [`run`]: the executable around a session.
//! - `embed` (the feature `rmcp`): the bridge inside an rmcp server, in place of
//!   rmcp's stdio serve (M5).
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
// No indexing that can panic on data of a peer (issue 9). The few functions of the
// line codec that index bytes allow it, each with the bound that makes it safe; the
// fuzz target line_codec and the properties of reliability_properties.rs check them.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod auth;
pub mod cli;
pub mod client;
pub mod config;
#[cfg(feature = "rmcp")]
pub mod embed;
pub mod log;
pub mod notify;
pub mod rules;
pub mod run;
pub mod serve;
pub mod session;
#[cfg(test)]
mod troubleshooting_check;
pub mod upstream;
pub mod wire;

pub use serve::{Exit, Serve, serve};
