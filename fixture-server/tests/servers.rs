//! The fixture server over stdio and over Streamable HTTP, and the official conformance
//! suite of revision 2026-07-28 against it.
//!
//! One test executable for these files (autotests are off in Cargo.toml), so that
//! the build links once.

mod cases;
mod common;
mod http;

mod https;
mod official_suite;
