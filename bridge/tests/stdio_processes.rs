//! The bridge executable over pipes in front of a child process upstream: the command
//! line, notifications, the kinds of stdio, the stop sequence, load, failing upstreams,
//! the TypeScript SDK, the official conformance suite, and doctor over stdio.
//!
//! One test executable for these files (autotests are off in Cargo.toml): each
//! executable links the bridge and its dependencies once, which is most of the
//! build time of the tests.

mod doctor_run;
mod pipes;

mod doctor_stdio;
mod interop;
mod official_suite;
mod process_cli;
mod process_crlf;
mod process_notify;
mod process_stdio_kinds;
mod process_stop;
mod reliability_load;
mod reliability_upstream_process;
