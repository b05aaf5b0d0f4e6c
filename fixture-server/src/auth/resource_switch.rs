//! `POST /fixture/resource`: the switch that gives the protected resource metadata
//! another `resource` while the server runs, so that a test can see what a client
//! does when the metadata it reads later no longer covers the URL it signed in to.
//! Tokens keep their audience, the MCP URL: only the document changes.

use std::sync::Mutex;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::{AuthServer, respond};
use crate::http_body::ResponseBody;

/// The `resource` that replaces the server's own in the metadata, once set.
#[derive(Default)]
pub struct ResourceSwitch {
    resource: Mutex<Option<String>>,
}

impl ResourceSwitch {
    /// The resource set by the switch, if any.
    pub fn get(&self) -> Option<String> {
        self.lock().clone()
    }

    fn set(&self, resource: String) {
        *self.lock() = Some(resource);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        // A panic while holding the lock leaves a plain value: still usable.
        self.resource
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl AuthServer {
    /// Sets the metadata's `resource` to the body (an absolute URL, surrounding
    /// whitespace ignored): 204, or 400 with the reason.
    pub async fn switch_resource(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        let Some(body) = respond::body(request.into_body()).await else {
            return respond::text(
                StatusCode::BAD_REQUEST,
                "The body is too large or unreadable.",
            );
        };
        let Some(resource) = resource_of(&body) else {
            return respond::text(
                StatusCode::BAD_REQUEST,
                "The body must be the new resource, an absolute URL.",
            );
        };
        crate::info!(
            "auth",
            "/fixture/resource: the protected resource metadata names the resource {resource}"
        );
        self.resource_switch.set(resource);
        respond::empty(StatusCode::NO_CONTENT)
    }
}

/// The resource that `body` names: its text, trimmed, when it is an absolute URL.
fn resource_of(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?.trim();
    url::Url::parse(text).ok()?;
    Some(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_names_an_absolute_url_or_nothing() {
        assert_eq!(
            resource_of(b"https://127.0.0.1:1/other\n").as_deref(),
            Some("https://127.0.0.1:1/other")
        );
        assert_eq!(resource_of(b"/other"), None);
        assert_eq!(resource_of(b""), None);
        assert_eq!(resource_of(&[0xff, 0xfe]), None);
    }

    #[test]
    fn the_switch_keeps_the_last_resource_set() {
        let switch = ResourceSwitch::default();
        assert_eq!(switch.get(), None);
        switch.set("https://a.test/mcp".into());
        switch.set("https://b.test/mcp".into());
        assert_eq!(switch.get().as_deref(), Some("https://b.test/mcp"));
    }
}
