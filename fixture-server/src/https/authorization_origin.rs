//! `--separate-authorization-server`: the authorization server on a port of its own,
//! so that its origin and issuer differ from those of `/mcp`. A client that sends the
//! access token (or a header meant for the MCP URL) to the authorization server shows
//! in the `http:` lines of this origin (`--print-exchanges`).

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response};

use super::exchanges::{Origin, Seen};
use super::server::Handler;
use crate::auth::{AuthServer, respond};
use crate::http_body::{PATH, ResponseBody};

/// The listener's handler: every path of the authorization server; `/mcp` is not
/// here.
pub struct AuthorizationOrigin {
    pub auth: Arc<AuthServer>,
    /// `--print-exchanges`: each request gets its `http:` line.
    pub print: bool,
}

impl AuthorizationOrigin {
    async fn answer(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if request.uri().path() == PATH {
            return respond::not_found();
        }
        self.auth.handle(request).await
    }
}

impl Handler for AuthorizationOrigin {
    async fn handle(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if !self.print {
            return self.answer(request).await;
        }
        let seen = Seen::of(Origin::Authorization, &request);
        let response = self.answer(request).await;
        seen.print(response.status());
        response
    }
}
