//! No code: this crate only depends on third-party crates with the union of the
//! features that the workspace asks of them (see `.config/hakari.toml`), so that every
//! cargo command of the workspace builds each of them once.
#![forbid(unsafe_code)]
