//! The shapes of the authorization server's answers: RFC 6749 §5.2 JSON errors, the
//! HTML error page (where no redirect is allowed), redirects, and the parsing of query
//! strings, forms and bodies.

use std::collections::HashMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, LOCATION, PRAGMA};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use crate::http_body::ResponseBody;

/// The largest body of a request to the authorization server.
pub const MAX_BODY: usize = 64 << 10;

/// A JSON answer with `Cache-Control: no-store` (RFC 6749 §5.1: token responses and
/// their errors must not be cached; the other JSON answers lose nothing by it).
pub fn json(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// An error of RFC 6749 §5.2 (and of RFC 7591 §3.2.2) as JSON.
pub fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<ResponseBody> {
    json(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

/// `invalid_client` with 401, and the `Basic` challenge that RFC 6749 §5.2 asks for.
pub fn invalid_client(description: &str) -> Response<ResponseBody> {
    let mut response = oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description);
    response.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"bridge-fixture-server\""),
    );
    response
}

/// An HTML page of the browser's part of the flow.
pub fn html(status: StatusCode, page: String) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(page)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// The error page of `/authorize` when the redirect URI cannot be trusted (an unknown
/// client, a redirect URI it did not register): RFC 6749 §4.1.2.1 forbids a redirect.
pub fn error_page(description: &str) -> Response<ResponseBody> {
    let text = escape(description);
    html(
        StatusCode::BAD_REQUEST,
        format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Sign-in error</title></head>\n<body><h1>The sign-in cannot go on</h1>\n<p id=\"error\">{text}</p>\n</body></html>\n"
        ),
    )
}

/// A 302 to `location`, never cached.
pub fn redirect(location: &str) -> Response<ResponseBody> {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = StatusCode::FOUND;
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(LOCATION, value);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// 307 to `location` (a redirect that keeps the method and the body).
pub fn temporary_redirect(location: &str) -> Response<ResponseBody> {
    let mut response = redirect(location);
    *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
    response
}

pub fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = status;
    response
}

pub fn not_found() -> Response<ResponseBody> {
    text(StatusCode::NOT_FOUND, "Not Found")
}

/// A line of plain text.
pub fn text(status: StatusCode, message: &str) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub fn method_not_allowed(allow: &'static str) -> Response<ResponseBody> {
    let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
    response
        .headers_mut()
        .insert(hyper::header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// A parameter of a query string or a form given twice (RFC 6749 §3.1, §3.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The parameter {0} is given more than once.")]
pub struct DuplicateParameter(pub String);

/// The parameters of a query string or a form; a parameter given twice is an error.
pub fn parameters(text: &str) -> Result<HashMap<String, String>, DuplicateParameter> {
    let mut map = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(text.as_bytes()) {
        if map.insert(name.to_string(), value.into_owned()).is_some() {
            return Err(DuplicateParameter(name.into_owned()));
        }
    }
    Ok(map)
}

/// The body of a request, up to [`MAX_BODY`]; `None` when it is larger or unreadable.
pub async fn body(body: Incoming) -> Option<Bytes> {
    Limited::new(body, MAX_BODY)
        .collect()
        .await
        .ok()
        .map(|body| body.to_bytes())
}

/// Text for HTML, in an element or an attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_given_twice_is_refused() {
        assert_eq!(
            parameters("a=1&b=2&a=3"),
            Err(DuplicateParameter("a".to_owned()))
        );
        let map = parameters("scope=mcp%3Aread+mcp%3Awrite&x=").unwrap();
        assert_eq!(map["scope"], "mcp:read mcp:write");
        assert_eq!(map["x"], "");
    }

    #[test]
    fn html_text_is_escaped() {
        assert_eq!(
            escape("<b>\"Tom\" & 'Jerry'</b>"),
            "&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;"
        );
    }
}
