//! The requests of the sign-in: JSON documents fetched with GET, forms POSTed to
//! the token endpoint, JSON POSTed to the registration endpoint. They use the
//! client of the URL form (its proxy, its CA certificates, no redirects) and
//! read at most [`MAX_DOCUMENT_BYTES`].

use crate::net::describe;
use reqwest::header::{ACCEPT, CACHE_CONTROL, HeaderValue};
use serde::de::DeserializeOwned;
use std::time::Duration;
use url::Url;
use zeroize::Zeroizing;

/// A metadata document or a token response is small; a larger one is refused.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// How long one request of the sign-in may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a request of the sign-in failed. The text has no query of a URL and no
/// body: a body can carry a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("{0}")]
    Transport(String),
    /// A status that is not a success, with the `error` of an OAuth error body
    /// (RFC 6749 §5.2) where there is one.
    #[error("{}", status_text(*.status, .error.as_deref()))]
    Status { status: u16, error: Option<String> },
    #[error("{0}")]
    Unreadable(String),
}

fn status_text(status: u16, error: Option<&str>) -> String {
    match error {
        Some(error) => format!("the error {error} (HTTP status {status})"),
        None => format!("HTTP status {status}"),
    }
}

/// `GET url`, answered with a JSON document of type `T`.
pub async fn get_json<T: DeserializeOwned>(
    client: &reqwest::Client,
    url: &Url,
) -> Result<T, HttpError> {
    let response = client
        .get(url.clone())
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| HttpError::Transport(describe(error)))?;
    read_json(response).await
}

/// `POST url` with a form (the token endpoint), with HTTP Basic authentication
/// when `basic` has a client ID and secret.
pub async fn post_form<T: DeserializeOwned>(
    client: &reqwest::Client,
    url: &Url,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<T, HttpError> {
    // The form carries a code, a verifier or a refresh token; the HTTP client
    // keeps its own copy of the body, which this buffer cannot reach.
    let body = Zeroizing::new(
        url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish(),
    );
    let mut request = client
        .post(url.clone())
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .header(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        )
        .header(CACHE_CONTROL, HeaderValue::from_static("no-store"))
        .timeout(REQUEST_TIMEOUT)
        .body(body.as_bytes().to_vec());
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: both parts form-encoded before the Basic encoding.
        let encode =
            |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        request = request.basic_auth(encode(id), Some(encode(secret)));
    }
    let response = request
        .send()
        .await
        .map_err(|error| HttpError::Transport(describe(error)))?;
    read_json(response).await
}

/// `POST url` with a JSON body (dynamic client registration, RFC 7591).
pub async fn post_json<T: DeserializeOwned>(
    client: &reqwest::Client,
    url: &Url,
    body: &serde_json::Value,
) -> Result<T, HttpError> {
    let response = client
        .post(url.clone())
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .header(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )
        .timeout(REQUEST_TIMEOUT)
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| HttpError::Transport(describe(error)))?;
    read_json(response).await
}

/// Reads the body (a token response carries tokens: the buffer is zeroized).
async fn read_json<T: DeserializeOwned>(mut response: reqwest::Response) -> Result<T, HttpError> {
    let status = response.status();
    let mut body = Zeroizing::new(Vec::new());
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| HttpError::Transport(describe(error)))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(HttpError::Unreadable(
                "the response is longer than 1 MiB".into(),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        #[derive(serde::Deserialize)]
        struct OAuthError {
            error: String,
        }
        let error = serde_json::from_slice::<OAuthError>(&body)
            .ok()
            .map(|body| body.error)
            // Only a plain error code goes into a line.
            .filter(|error| {
                error.len() <= 64
                    && error
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
        return Err(HttpError::Status {
            status: status.as_u16(),
            error,
        });
    }
    serde_json::from_slice(&body).map_err(|_| {
        HttpError::Unreadable("the response is not the JSON document it should be".into())
    })
}
