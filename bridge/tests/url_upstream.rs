//! The bridge executable in front of an upstream server at a URL: the URL form, the
//! proxy, reliability, the sign-in, the token stores, logout, the TypeScript SDK 2.x,
//! the official suite's client mode, and doctor at a URL.
//!
//! One test executable for these files (autotests are off in Cargo.toml): each
//! executable links the bridge and its dependencies once, which is most of the
//! build time of the tests.

mod doctor_run;
mod https_fixture;
mod pipes;
mod recording_proxy;
mod scripted_oauth;
mod tiny_http;

mod doctor_url;
mod interop_url;
mod logout;
mod official_suite_client;
mod reliability_url;
mod sign_in;
mod sign_in_client_document;
mod sign_in_security;
mod sign_in_urls;
mod token_store_file;
// The Secret Service of Linux (gnome-keyring in a D-Bus session of its own).
#[cfg(target_os = "linux")]
mod token_store_keychain;
mod token_store_keychain_native;
mod token_store_start;
mod url_form;
mod url_proxy;
