//! The fixture server over its pipes: each test starts the real executable, speaks MCP
//! 2026-07-28 to it, and asserts exact frames and texts. Every frame the server writes is
//! validated against the vendored schema (`common::schema`).

mod discover;
mod framing;
mod input;
mod lifecycle;
mod lists;
mod logging_progress;
mod meta;
mod notify;
mod profiles;
mod schema_check;
mod tools;
