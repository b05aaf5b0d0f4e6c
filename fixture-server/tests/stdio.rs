//! The fixture server over its pipes: each test starts the real executable, speaks MCP
//! 2026-07-28 to it, and asserts exact frames and texts. Every frame the server writes is
//! validated against the vendored schema (`common::schema`).

mod cases;
mod common;
