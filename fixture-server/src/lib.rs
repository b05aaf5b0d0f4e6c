//! The upstream fixture server (work in progress).
#![forbid(unsafe_code)]
