//! The network pieces that the URL form and its sign-in share: the HTTP client
//! (rustls with the system's CA certificates and those of `--ca-file`, the proxy of
//! the environment), the text of a client error, and the rules for a URL by its
//! host and scheme. Nothing here knows MCP, a link or a sign-in: the HTTP link
//! (`upstream/http/`) and the sign-in (`auth/`) are each handed what they need.
//!
//! # Layout
//!
//! - [`client`]: [`client::build`] and the proxy variables;
//! - [`resolve`]: `localhost` and the names under it answered here, with loopback
//!   addresses; the system's resolver for the rest;
//! - [`trust`]: the CA certificates of `--ca-file` first, the system's when needed;
//! - [`url`]: loopback hosts, and the URLs that may leave the bridge.

pub mod client;
pub mod resolve;
pub mod trust;
pub mod url;

pub use client::{
    ConfigurationError, ProxyEnvironment, build as build_client, builder as client_builder,
    describe, uses_proxy,
};

/// A client with the system's CA certificates and no proxy, for unit tests.
#[cfg(test)]
pub(crate) fn client_for_tests() -> reqwest::Client {
    build_client(&[], &ProxyEnvironment::default()).unwrap()
}
