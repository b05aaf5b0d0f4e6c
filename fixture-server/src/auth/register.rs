//! `POST /register`: dynamic client registration (RFC 7591). A client registers its
//! redirect URIs (https, or http on the loopback) and its name for the consent page;
//! `token_endpoint_auth_method` `none` (the default) makes a public client, the two
//! secret methods a confidential one that gets a `client_secret`.

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{Map, Value, json};

use super::clients::{self, Client, Origin};
use super::respond::{self, oauth_error};
use super::{AuthServer, parse_scopes, random};
use crate::http_body::ResponseBody;

const AUTH_METHODS: [&str; 3] = ["none", "client_secret_basic", "client_secret_post"];
const GRANT_TYPES: [&str; 2] = ["authorization_code", "refresh_token"];

fn bad(error: &str, description: &str) -> Response<ResponseBody> {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

fn metadata_error(description: &str) -> Response<ResponseBody> {
    bad("invalid_client_metadata", description)
}

impl AuthServer {
    pub(super) async fn register(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if let Some(error) = &self.options.refuse_registration_with {
            crate::info!(
                "auth",
                "--refuse-registration-with: a registration gets 400"
            );
            return bad(
                error,
                "--refuse-registration-with: this server registers no client.",
            );
        }
        if self.options.refuse_registration {
            crate::info!("auth", "--refuse-registration: a registration gets 400");
            return metadata_error("--refuse-registration: this server registers no client.");
        }
        let Some(body) = respond::body(request.into_body()).await else {
            return metadata_error("The body is too large or unreadable.");
        };
        let Ok(Value::Object(metadata)) = serde_json::from_slice::<Value>(&body) else {
            return metadata_error("The body is not a JSON object.");
        };
        match self.registered(metadata) {
            Ok(answer) | Err(answer) => answer,
        }
    }

    fn registered(
        &self,
        mut metadata: Map<String, Value>,
    ) -> Result<Response<ResponseBody>, Response<ResponseBody>> {
        let redirect_uris = match metadata.get("redirect_uris") {
            Some(Value::Array(uris)) if !uris.is_empty() => uris
                .iter()
                .map(|uri| uri.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| {
                    bad(
                        "invalid_redirect_uri",
                        "Each redirect URI must be a string.",
                    )
                })?,
            _ => {
                return Err(bad(
                    "invalid_redirect_uri",
                    "The metadata needs redirect_uris: a non-empty array.",
                ));
            }
        };
        if let Some(uri) = redirect_uris.iter().find(|uri| !clients::registrable(uri)) {
            return Err(bad(
                "invalid_redirect_uri",
                &format!(
                    "The redirect URI {uri} is neither https nor http on the loopback, or has a fragment."
                ),
            ));
        }
        let name = match metadata.get("client_name") {
            None => None,
            Some(Value::String(name)) if !name.is_empty() => Some(name.clone()),
            Some(_) => {
                return Err(metadata_error(
                    "The client_name must be a non-empty string.",
                ));
            }
        };
        let method = match metadata.get("token_endpoint_auth_method") {
            None => "none",
            Some(Value::String(method)) if AUTH_METHODS.contains(&method.as_str()) => {
                method.as_str()
            }
            Some(_) => {
                return Err(metadata_error(
                    "The token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.",
                ));
            }
        }
        .to_owned();
        check_list(&metadata, "grant_types", &GRANT_TYPES)?;
        check_list(&metadata, "response_types", &["code"])?;
        if let Some(scope) = metadata.get("scope")
            && scope.as_str().and_then(parse_scopes).is_none()
        {
            return Err(metadata_error("The scope names an unknown scope."));
        }
        let id = random::token().ok_or_else(no_random)?;
        let secret = if method == "none" && !self.options.registration_secret {
            None
        } else {
            Some(random::token().ok_or_else(no_random)?)
        };
        let issued_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        self.clients.insert(Client {
            id: id.clone(),
            secret: secret.clone(),
            name: name.clone(),
            redirect_uris,
            origin: Origin::Registered,
        });
        crate::info!(
            "auth",
            "/register: the client {id} ({}, {method})",
            name.as_deref().unwrap_or("no name")
        );
        metadata.insert("client_id".into(), json!(id));
        metadata.insert("client_id_issued_at".into(), json!(issued_at));
        metadata.insert("token_endpoint_auth_method".into(), json!(method));
        metadata
            .entry("grant_types")
            .or_insert_with(|| json!(GRANT_TYPES));
        metadata
            .entry("response_types")
            .or_insert_with(|| json!(["code"]));
        if let Some(secret) = secret {
            self.secrets
                .keep(super::secrets::Kind::ClientSecret, &secret);
            metadata.insert("client_secret".into(), json!(secret));
            metadata.insert("client_secret_expires_at".into(), json!(0));
        }
        Ok(respond::json(StatusCode::CREATED, &Value::Object(metadata)))
    }
}

/// A list of strings out of `allowed`, when present.
fn check_list(
    metadata: &Map<String, Value>,
    key: &str,
    allowed: &[&str],
) -> Result<(), Response<ResponseBody>> {
    let Some(value) = metadata.get(key) else {
        return Ok(());
    };
    let good = value.as_array().is_some_and(|items| {
        items
            .iter()
            .all(|item| item.as_str().is_some_and(|item| allowed.contains(&item)))
    });
    if good {
        Ok(())
    } else {
        Err(metadata_error(&format!(
            "The {key} must be a list of {}.",
            allowed.join(", ")
        )))
    }
}

fn no_random() -> Response<ResponseBody> {
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "The server has no random data.",
    )
}
