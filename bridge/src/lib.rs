//! `mcp-bridge-vscode`: a stdio MCP server of revision 2025-11-25 for the two MCP
//! clients of VS Code, in front of an MCP server of revision 2026-07-28.
//!
//! # The API
//!
//! - `embed::serve_stdio` and `embed::EmbedOptions` (the feature `rmcp`): the
//!   bridge inside an rmcp server, in place of rmcp's stdio serve (M5).
//! - [`Serve`]: one connection of VS Code served in front of a [`Connector`] (the
//!   one [`run::connector`] makes of a [`config::Config`], or the embedding's).
//! - [`cli`], [`config`], [`log`], [`run`]: the executable around a session, which
//!   `main.rs` puts together: parse the command line, start the logs, open the token
//!   store, serve stdin and stdout, map the end to an exit code.
//!
//! # Layout
//!
//! Frames flow one way through the layers; each is a private folder with one job
//! (docs/architecture.md walks a request through them).
//!
//! - `wire`: JSON-RPC frames as `serde_json::Value`, ids, the line reader (with
//!   `--max-line-bytes`) and the line writer. No MCP rules.
//! - `catalogue`: what the user sees, as data: every line of the Output channel
//!   (scope, level, text), the errors and the usage of the command line, and the
//!   causes of the contract's errors with their codes and messages. Each layer
//!   maps its own events to an entry; `log::emit!` writes a line.
//! - `client`: VS Code's side: the reader of its lines, the writer of its frames,
//!   and stdin and stdout.
//! - `session`: one task owns the connection with VS Code: the lifecycle, the
//!   requests in flight, the timers and the order of frames to stdout.
//! - `serve`: the tasks of one connection and the watchdog, under one cancellation
//!   token and one task tracker.
//! - `rules`: pure translation functions between the two revisions, each naming the
//!   items of the contract it implements (R1-R8, C1-C4, O1-O11).
//! - `notify`: the listen stream as a pure state machine (R2, O5-O7).
//! - `upstream`: the upstream server behind one small interface (a child process
//!   over stdio, a URL, a server in the same process).
//! - `auth`: the sign-in of the URL form and the token stores (M4, M6).
//! - `doctor`: `mcp-bridge-vscode doctor`, which runs the layers above against an
//!   upstream and tells whether VS Code will be able to use it.
//!
//! What only the fuzz targets and the tests reach (the pure rules, the line
//! reading, the in-process upstream, the token stores) is re-exported by the hidden
//! module `internals`, which is no part of the API.
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
// No indexing that can panic on data of a peer: a line of VS Code or of the upstream
// must never stop the bridge. The fuzz target line_codec and the properties of
// reliability_properties.rs check the line reading.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

mod auth;
mod catalogue;
pub mod cli;
mod client;
pub mod config;
mod doctor;
#[cfg(feature = "rmcp")]
pub mod embed;
#[doc(hidden)]
pub mod internals;
pub mod log;
mod net;
mod notify;
mod rules;
pub mod run;
mod serve;
mod session;
mod upstream;
mod wire;

pub use serve::{Serve, serve};
pub use session::Exit;
pub use upstream::Connector;
