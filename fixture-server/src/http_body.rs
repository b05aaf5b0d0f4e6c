//! The two things that the Streamable HTTP endpoint (`https`) and the authorization
//! server (`auth`) both name: the body type of a response and the path of MCP. A
//! module of their own, so that `https`, which routes to `auth`, is imported by
//! nothing it uses.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;

/// The path of MCP; every other path belongs to the authorization server or is 404.
pub const PATH: &str = "/mcp";

/// The body of every response of the HTTP modes.
pub type ResponseBody = BoxBody<Bytes, Infallible>;
