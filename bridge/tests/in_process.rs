//! The session of the bridge in this process, its upstream in memory: forwarding, the
//! lifecycle, lines, link events, notifications, rounds, and the reliability
//! properties.
//!
//! One test executable for these files (autotests are off in Cargo.toml): each
//! executable links the bridge and its dependencies once, which is most of the
//! build time of the tests.

mod common;
mod layout;

mod catalogue_pages;
mod forward;
mod lifecycle;
mod lines;
mod link_events;
mod module_graph;
mod notify;
mod reliability_client_lines;
mod reliability_properties;
mod reliability_upstream;
mod rounds;
