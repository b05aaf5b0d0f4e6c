//! The sign-in of the URL form (M4, M6): OAuth 2.1 with PKCE at the authorization
//! server of an upstream server that answers 401 or 403, and the stores that keep
//! its tokens.
//!
//! A leaf of the HTTP link: it is handed its HTTP client (`net/`) and VS Code's side
//! ([`prompt::UserSide`]), and reports through its own types; it imports nothing of
//! the link, the session or the rules.
//!
//! # Layout
//!
//! - [`environment`]: what the sign-in takes from the environment of the process;
//! - [`prompt`]: what it needs of VS Code's side, and tells it;
//! - [`sign_in`]: the tokens of one link, and what a 401 or a 403 starts: a
//!   refresh, else a sign-in in the browser or through VS Code, one at a time;
//! - [`challenge`]: the `WWW-Authenticate` of a refusal;
//! - [`discovery`]: the protected resource metadata and the authorization server
//!   metadata;
//! - [`client_id`]: `--client-id`, a client ID metadata document, or a dynamic
//!   registration;
//! - [`bridge_document`]: the client ID metadata document of the bridge;
//! - [`authorization_url`]: the URL of the browser, checked before anything sees it;
//! - [`pkce`]: the verifier, the state and the start token, from the OS's random source;
//! - [`receiver`]: the loopback receiver of the redirect and the one-time start URL;
//! - [`browser`]: the opener of the start URL, never through a shell;
//! - [`tokens`]: the token endpoint (a code, a refresh);
//! - [`sign_in_url`]: the one rule for every URL of the sign-in;
//! - [`secret_string`]: a secret text, zeroized when it drops;
//! - [`http`]: the requests of the sign-in, on the client it is handed;
//! - [`errors`]: why a sign-in failed, mapped to its cause and line;
//! - [`store`]: where the tokens live between two starts, behind
//!   [`store::TokenStore`].

pub mod authorization_url;
pub mod bridge_document;
pub mod browser;
pub mod challenge;
pub mod client_id;
pub mod discovery;
pub mod environment;
pub mod errors;
pub mod http;
pub mod pkce;
pub mod prompt;
pub mod receiver;
pub mod secret_string;
pub mod sign_in;
pub mod sign_in_url;
pub mod store;
pub mod tokens;
