//! The sign-in of the URL form (M4, M6): OAuth 2.1 with PKCE at the authorization
//! server of an upstream server that answers 401 or 403, and the stores that keep
//! its tokens.
//!
//! # Layout
//!
//! - [`store`]: where the tokens of a sign-in live between two starts (the
//!   keychain of the host, encrypted files, memory), behind [`store::TokenStore`].
//!
//! The flow itself (discovery, the client ID, the loopback receiver with its
//! one-time start URL, the browser, the token requests) comes in its own files.

pub mod store;
