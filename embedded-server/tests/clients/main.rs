//! `bridge-embedded-server` started as VS Code starts a stdio server: the first line
//! of the client selects the path, the limits and the end of each path, the
//! simulated VS Code clients and the official TypeScript SDK. One test executable,
//! so that the build links once.

mod common;
mod harness;
mod interop;
mod limits;
mod paths;
