//! Client ID metadata documents (`--cimd`): a client ID that is an https URL names a
//! JSON document that the server fetches at `/authorize` (trusting only the fixture's
//! CA and `--auth-ca-file`); and the fixture's own document at `/fixture/client.json`,
//! so that tests have one to use.

use std::time::Duration;

use hyper::{Response, StatusCode};
use serde_json::{Value, json};
use url::Url;

use super::AuthServer;
use super::clients::{Client, Origin};
use super::respond::{self, oauth_error};
use crate::http_body::ResponseBody;

/// The path of the fixture's own document.
pub const OWN_DOCUMENT_PATH: &str = "/fixture/client.json";
/// The `client_name` of the fixture's own document (study §1.5).
pub const OWN_DOCUMENT_NAME: &str = "bridge-fixture metadata client";
/// The largest document.
const MAX_DOCUMENT: usize = 64 << 10;
/// How long a fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a client ID metadata document is not usable.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("the URL is not valid ({0})")]
    Url(url::ParseError),
    #[error(
        "the client ID must be an https URL with a path, without a fragment or user information"
    )]
    NotAClientId,
    #[error("the file {path} cannot be read ({error})")]
    File { path: String, error: std::io::Error },
    #[error("the fetch failed: {0}")]
    Fetch(crate::fetch::FetchError),
    #[error("the fetch got the status {0}")]
    Status(u16),
    #[error("the document is not JSON")]
    NotJson,
    #[error("the client_id of the document is not its URL")]
    ClientId,
    #[error("the document's token_endpoint_auth_method is not none")]
    AuthMethod,
    #[error("the document does not list the redirect_uri")]
    RedirectUri,
}

impl AuthServer {
    /// The client of the document at `client_id`, which must list `redirect_uri`; the
    /// error says why not.
    pub(super) async fn fetch_document(
        &self,
        client_id: &str,
        redirect_uri: &str,
    ) -> Result<Client, DocumentError> {
        let url = Url::parse(client_id).map_err(DocumentError::Url)?;
        if url.scheme() != "https"
            || url.path() == "/"
            || url.fragment().is_some()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(DocumentError::NotAClientId);
        }
        let body = self.document_body(client_id, &url).await?;
        let document: Value = serde_json::from_slice(&body).map_err(|_| DocumentError::NotJson)?;
        if document.get("client_id").and_then(Value::as_str) != Some(client_id) {
            return Err(DocumentError::ClientId);
        }
        let redirect_uris: Vec<String> = document
            .get("redirect_uris")
            .and_then(Value::as_array)
            .map(|uris| {
                uris.iter()
                    .filter_map(|uri| uri.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let method = document
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str);
        if method.is_some_and(|method| method != "none") {
            return Err(DocumentError::AuthMethod);
        }
        let client = Client {
            id: client_id.to_owned(),
            secret: None,
            name: document
                .get("client_name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            redirect_uris,
            origin: Origin::MetadataDocument,
        };
        if !client.allows_redirect(redirect_uri) {
            return Err(DocumentError::RedirectUri);
        }
        Ok(client)
    }

    /// The bytes of the document at `url`: the file of `--cimd-document` for that
    /// URL, else a fetch.
    async fn document_body(&self, client_id: &str, url: &Url) -> Result<Vec<u8>, DocumentError> {
        if let Some((_, path)) = self
            .options
            .cimd_documents
            .iter()
            .rev()
            .find(|(mapped, _)| mapped == client_id)
        {
            let body = std::fs::read(path).map_err(|error| DocumentError::File {
                path: path.display().to_string(),
                error,
            })?;
            crate::info!(
                "auth",
                "/authorize: read the client ID metadata document of {client_id} from {}",
                path.display()
            );
            return Ok(body);
        }
        let fetched = crate::fetch::get(url, &self.tls, MAX_DOCUMENT, FETCH_TIMEOUT)
            .await
            .map_err(DocumentError::Fetch)?;
        if fetched.status != StatusCode::OK {
            return Err(DocumentError::Status(fetched.status.as_u16()));
        }
        crate::info!(
            "auth",
            "/authorize: fetched the client ID metadata document at {client_id}"
        );
        Ok(fetched.body.to_vec())
    }

    /// `GET /fixture/client.json[?port=N]`: the fixture's own document; with `port`, it
    /// lists `http://127.0.0.1:N/callback` instead of the portless loopback URI, and its
    /// `client_id` is the URL with the query.
    pub(super) fn own_document(&self, query: Option<&str>) -> Response<ResponseBody> {
        let url = format!("{}{OWN_DOCUMENT_PATH}", self.issuer);
        let (client_id, redirect_uri) = match query {
            None | Some("") => (url, super::clients::LOOPBACK_CALLBACK.to_owned()),
            Some(query) => {
                let port = query
                    .strip_prefix("port=")
                    .filter(|port| !port.starts_with('+'))
                    .and_then(|port| port.parse::<u16>().ok())
                    .filter(|port| *port != 0);
                let Some(port) = port else {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_request",
                        "The only query is port=N, N from 1 to 65535.",
                    );
                };
                (
                    format!("{url}?port={port}"),
                    format!("http://127.0.0.1:{port}/callback"),
                )
            }
        };
        respond::json(
            StatusCode::OK,
            &json!({
                "client_id": client_id,
                "client_name": OWN_DOCUMENT_NAME,
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "application_type": "native",
            }),
        )
    }
}
