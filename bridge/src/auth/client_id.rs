//! The client ID of the bridge at an authorization server, in the order of the
//! contract ("Sign-in and accounts") and of the 2026-07-28 client registration
//! page: `--client-id`, then a client ID metadata document (`--client-metadata-url`,
//! else the document of the bridge at the default redirect port), then dynamic
//! client registration (RFC 7591).

use super::bridge_document::{DOCUMENT_REDIRECT_PORT, DOCUMENT_URL};
use super::discovery::AuthorizationServer;
use super::errors::SignInError;
use super::http::{HttpError, get_json, post_json};
use super::receiver::redirect_uri;
use super::secret_string::SecretString;
use super::sign_in_url::{self, Role};
use crate::catalogue::SignInInfo;
use crate::log::emit;
use serde::Deserialize;
use serde_json::json;
use std::fmt;
use url::Url;

/// The name that the consent page of an authorization server shows.
pub const CLIENT_NAME: &str = "mcp-bridge-vscode (mcp-bridge-rs)";

/// The client of one sign-in.
#[derive(Clone, PartialEq, Eq)]
pub struct Client {
    pub id: String,
    /// `MCP_BRIDGE_CLIENT_SECRET` for `--client-id`, or the secret of a dynamic
    /// registration.
    pub secret: Option<SecretString>,
    /// The server takes the secret only in the form body (`client_secret_post`).
    pub secret_in_body: bool,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

/// What the command line says of the client.
#[derive(Clone, Default)]
pub struct ClientOptions {
    pub client_id: Option<String>,
    pub client_issuer: Option<Url>,
    pub client_secret: Option<SecretString>,
    pub metadata_url: Option<Url>,
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_id", &self.client_id)
            .field("client_issuer", &self.client_issuer)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("metadata_url", &self.metadata_url)
            .finish()
    }
}

/// A client that an earlier sign-in registered at this issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub issuer: String,
    pub client: Client,
}

/// Where the client ID of a sign-in at a server comes from, in the contract's
/// order, decided before any request: [`resolve`] then checks the document or
/// registers, and `doctor` tells it without doing either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientSource {
    /// `--client-id`, for the issuer of `--client-issuer` when given.
    ClientIdOption,
    /// The client that the stored sign-in registered at the same issuer.
    Registered,
    /// The client ID metadata document of `--client-metadata-url`.
    MetadataUrl,
    /// The document of the bridge (the default redirect port, a server that
    /// announces documents); registration when the bridge finds it not usable.
    BridgeDocument,
    /// Dynamic client registration.
    Registration(WhyRegistration),
}

/// Why no client ID metadata document serves a sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyRegistration {
    /// The server announces no client ID metadata documents.
    NoDocuments,
    /// `--client-metadata-url`, but the server announces no documents.
    MetadataUrlNotTaken,
    /// Another `--redirect-port` than the one the bridge's document lists.
    OtherRedirectPort(u16),
}

impl WhyRegistration {
    /// The info line of the Output channel, for the reasons that have one.
    pub fn line(&self) -> Option<SignInInfo<'static>> {
        match self {
            Self::NoDocuments => None,
            Self::MetadataUrlNotTaken => Some(SignInInfo::NoClientIdMetadataDocuments),
            Self::OtherRedirectPort(redirect_port) => {
                Some(SignInInfo::OwnDocumentOnlyDefaultPort { n: *redirect_port })
            }
        }
    }
}

/// The source of the client ID for `server`, in the contract's order.
/// `registered` is the client of the stored sign-in.
pub fn source(
    server: &AuthorizationServer,
    options: &ClientOptions,
    redirect_port: u16,
    registered: Option<&Registered>,
) -> Result<ClientSource, SignInError> {
    if options.client_id.is_some() {
        if let Some(issuer) = &options.client_issuer
            && !same_issuer(issuer, &server.issuer)
        {
            return Err(SignInError::ClientIdNotForIssuer);
        }
        return Ok(ClientSource::ClientIdOption);
    }
    if registered.is_some_and(|r| r.issuer == server.issuer) {
        return Ok(ClientSource::Registered);
    }
    Ok(if options.metadata_url.is_some() {
        if server.client_id_metadata_document_supported {
            ClientSource::MetadataUrl
        } else {
            ClientSource::Registration(WhyRegistration::MetadataUrlNotTaken)
        }
    } else if redirect_port != DOCUMENT_REDIRECT_PORT {
        ClientSource::Registration(WhyRegistration::OtherRedirectPort(redirect_port))
    } else if server.client_id_metadata_document_supported {
        ClientSource::BridgeDocument
    } else {
        ClientSource::Registration(WhyRegistration::NoDocuments)
    })
}

/// The client for `server`, in the contract's order, for the redirect URI of
/// `redirect_port`. `registered` is the client of the stored sign-in, which a new
/// sign-in at the same issuer uses again.
pub async fn resolve(
    http: &reqwest::Client,
    server: &AuthorizationServer,
    options: &ClientOptions,
    redirect_port: u16,
    registered: Option<&Registered>,
    upstream: &Url,
) -> Result<Client, SignInError> {
    let redirect_uri = &redirect_uri(redirect_port);
    match source(server, options, redirect_port, registered)? {
        ClientSource::ClientIdOption => Ok(client_at(
            server,
            options.client_id.clone().unwrap_or_default(),
            // The secret goes only to the issuer of --client-issuer (the command
            // line refuses a secret without it).
            options
                .client_issuer
                .as_ref()
                .and(options.client_secret.clone()),
        )),
        ClientSource::Registered => match registered {
            // How the secret goes is the server's choice of today, not of the
            // sign-in that stored the client.
            Some(registered) => Ok(client_at(
                server,
                registered.client.id.clone(),
                registered.client.secret.clone(),
            )),
            None => register(http, server, redirect_uri, upstream).await,
        },
        ClientSource::MetadataUrl => {
            let Some(url) = &options.metadata_url else {
                return register(http, server, redirect_uri, upstream).await;
            };
            match check_document(http, url, redirect_uri, upstream).await {
                Checked::Usable => {}
                Checked::Unreachable(error) => {
                    emit!(SignInInfo::ClientMetadataUrlUnreadable { error: &error })
                }
                Checked::NotUsable(detail) => return Err(SignInError::ClientMetadataUrl(detail)),
            }
            Ok(document_client(url.as_str()))
        }
        ClientSource::BridgeDocument => match bridge_document(http, redirect_uri, upstream).await {
            Some(client) => Ok(client),
            None => register(http, server, redirect_uri, upstream).await,
        },
        ClientSource::Registration(why) => {
            if let Some(line) = why.line() {
                emit!(SignInInfo: line);
            }
            register(http, server, redirect_uri, upstream).await
        }
    }
}

/// The client of a client ID metadata document: its URL, without a secret.
fn document_client(url: &str) -> Client {
    Client {
        id: url.to_owned(),
        secret: None,
        secret_in_body: false,
    }
}

/// The document of the bridge, when the bridge finds it usable or cannot read it
/// (the authorization server may reach what the bridge does not); `None` when it
/// answers with something else than the document (not published, changed), and
/// registration takes its place.
async fn bridge_document(
    http: &reqwest::Client,
    redirect_uri: &str,
    upstream: &Url,
) -> Option<Client> {
    let url = Url::parse(DOCUMENT_URL).ok()?;
    match check_document(http, &url, redirect_uri, upstream).await {
        Checked::Usable => {}
        Checked::Unreachable(error) => emit!(SignInInfo::OwnDocumentUnreadable { error: &error }),
        Checked::NotUsable(detail) => {
            emit!(SignInInfo::OwnDocumentNotUsable { detail: &detail });
            return None;
        }
    }
    Some(document_client(DOCUMENT_URL))
}

/// `--client-issuer` names the issuer as the metadata does, maybe with a slash more.
pub fn same_issuer(option: &Url, issuer: &str) -> bool {
    option.as_str().trim_end_matches('/') == issuer.trim_end_matches('/')
}

/// The client `id` with `secret` at `server`, its secret sent as the server takes
/// it ([`takes_secret_only_in_body`]): the one choice of the code exchange and of
/// the refresh, whatever the client's source (`--client-id`, a registration, the
/// client of a stored sign-in).
pub fn client_at(server: &AuthorizationServer, id: String, secret: Option<SecretString>) -> Client {
    Client {
        id,
        secret,
        secret_in_body: takes_secret_only_in_body(server),
    }
}

/// The server takes a client secret only in the form body (`client_secret_post`).
fn takes_secret_only_in_body(server: &AuthorizationServer) -> bool {
    server
        .token_endpoint_auth_methods_supported
        .as_ref()
        .is_some_and(|methods| {
            !methods.iter().any(|m| m == "client_secret_basic")
                && methods.iter().any(|m| m == "client_secret_post")
        })
}

/// What the bridge found at the URL of a client ID metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Checked {
    /// JSON whose `client_id` is its URL and whose `redirect_uris` list the
    /// redirect URI of the bridge.
    Usable,
    /// No answer (a transport failure): the document may still be one that the
    /// authorization server reaches (another network, a name only it resolves),
    /// so the server decides.
    Unreachable(String),
    /// An answer that is not such a document, or a URL that breaks the rule of
    /// every URL of the sign-in.
    NotUsable(String),
}

async fn check_document(
    http: &reqwest::Client,
    url: &Url,
    redirect_uri: &str,
    upstream: &Url,
) -> Checked {
    if let Err(refused) = sign_in_url::check(url.as_str(), Role::ClientMetadataDocument, upstream) {
        return Checked::NotUsable(refused.to_string());
    }
    #[derive(Deserialize)]
    struct Document {
        client_id: String,
        #[serde(default)]
        redirect_uris: Vec<String>,
    }
    let document: Document = match get_json(http, url).await {
        Ok(document) => document,
        Err(HttpError::Transport(error)) => return Checked::Unreachable(error),
        Err(error) => return Checked::NotUsable(format!("the document cannot be read: {error}")),
    };
    if document.client_id != url.as_str() {
        return Checked::NotUsable("the client_id of the document is not its URL".into());
    }
    if !document.redirect_uris.iter().any(|uri| uri == redirect_uri) {
        return Checked::NotUsable(format!(
            "the document does not list the redirect URI {redirect_uri}"
        ));
    }
    Checked::Usable
}

/// Dynamic client registration (RFC 7591): a public native client with the
/// redirect URI of the bridge.
async fn register(
    http: &reqwest::Client,
    server: &AuthorizationServer,
    redirect_uri: &str,
    upstream: &Url,
) -> Result<Client, SignInError> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(SignInError::NoClientRegistration);
    };
    let endpoint = sign_in_url::check(endpoint, Role::RegistrationEndpoint, upstream)
        .map_err(|refused| SignInError::Discovery(refused.to_string()))?;
    #[derive(Deserialize)]
    struct Registration {
        client_id: String,
        #[serde(default)]
        client_secret: Option<SecretString>,
    }
    let body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    let registration: Registration =
        post_json(http, &endpoint, &body)
            .await
            .map_err(|error| match error {
                HttpError::Status { .. } => SignInError::RegistrationRefused(error.to_string()),
                other => SignInError::RegistrationRefused(other.to_string()),
            })?;
    if registration.client_id.is_empty() {
        return Err(SignInError::RegistrationRefused(
            "the registration has no client_id".into(),
        ));
    }
    Ok(client_at(
        server,
        registration.client_id,
        registration.client_secret,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A public client that [`server`]'s authorization server registered.
    fn registered_at_the_server() -> Registered {
        Registered {
            issuer: "https://as.example.com".into(),
            client: Client {
                id: "dyn-1".into(),
                secret: None,
                secret_in_body: false,
            },
        }
    }

    fn server(methods: Option<Vec<&str>>) -> AuthorizationServer {
        AuthorizationServer {
            issuer: "https://as.example.com".into(),
            authorization_endpoint: "https://as.example.com/authorize".into(),
            token_endpoint: "https://as.example.com/token".into(),
            registration_endpoint: None,
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            authorization_response_iss_parameter_supported: true,
            client_id_metadata_document_supported: false,
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.into_iter().map(String::from).collect()),
        }
    }

    fn resolve_now(
        server: &AuthorizationServer,
        options: &ClientOptions,
        registered: Option<&Registered>,
    ) -> Result<Client, SignInError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let http = crate::net::client_for_tests();
        runtime.block_on(resolve(
            &http,
            server,
            options,
            1,
            registered,
            &Url::parse("https://mcp.example.com/mcp").unwrap(),
        ))
    }

    #[test]
    fn the_source_of_the_client_id_follows_the_order_of_the_contract() {
        let mut documents = server(None);
        documents.client_id_metadata_document_supported = true;
        let none = ClientOptions::default();
        let id = ClientOptions {
            client_id: Some("c1".into()),
            ..ClientOptions::default()
        };
        let document = ClientOptions {
            metadata_url: Some(Url::parse("https://d.example/c.json").unwrap()),
            ..ClientOptions::default()
        };
        let registered = registered_at_the_server();
        let default_port = DOCUMENT_REDIRECT_PORT;
        let cases = [
            (
                &documents,
                &id,
                default_port,
                Some(&registered),
                ClientSource::ClientIdOption,
            ),
            (
                &documents,
                &none,
                default_port,
                Some(&registered),
                ClientSource::Registered,
            ),
            (
                &documents,
                &document,
                41895,
                None,
                ClientSource::MetadataUrl,
            ),
            (
                &server(None),
                &document,
                default_port,
                None,
                ClientSource::Registration(WhyRegistration::MetadataUrlNotTaken),
            ),
            (
                &documents,
                &none,
                41895,
                None,
                ClientSource::Registration(WhyRegistration::OtherRedirectPort(41895)),
            ),
            (
                &documents,
                &none,
                default_port,
                None,
                ClientSource::BridgeDocument,
            ),
            (
                &server(None),
                &none,
                default_port,
                None,
                ClientSource::Registration(WhyRegistration::NoDocuments),
            ),
        ];
        for (server, options, port, registered, expected) in cases {
            assert_eq!(source(server, options, port, registered), Ok(expected));
        }
        assert!(WhyRegistration::NoDocuments.line().is_none());
        assert!(
            WhyRegistration::OtherRedirectPort(41895)
                .line()
                .unwrap()
                .to_string()
                .ends_with(
                    "With --redirect-port 41895, the bridge uses dynamic client registration"
                )
        );
    }

    #[test]
    fn the_client_id_option_comes_first_and_its_secret_goes_only_to_its_issuer() {
        let options = ClientOptions {
            client_id: Some("c1".into()),
            client_issuer: Some(Url::parse("https://as.example.com/").unwrap()),
            client_secret: Some("s".into()),
            metadata_url: None,
        };
        let client = resolve_now(&server(None), &options, None).unwrap();
        assert_eq!(
            (
                client.id.as_str(),
                client.secret.as_ref().map(SecretString::expose)
            ),
            ("c1", Some("s"))
        );
        assert!(!client.secret_in_body);
        let other = ClientOptions {
            client_issuer: Some(Url::parse("https://other.example.com").unwrap()),
            ..options.clone()
        };
        assert_eq!(
            resolve_now(&server(None), &other, None),
            Err(SignInError::ClientIdNotForIssuer)
        );
        let post_only = server(Some(vec!["client_secret_post"]));
        assert!(
            resolve_now(&post_only, &options, None)
                .unwrap()
                .secret_in_body
        );
        assert!(!format!("{options:?}").contains("\"s\""));
    }

    #[test]
    fn a_registered_client_of_the_same_issuer_is_used_again_and_without_registration_there_is_none()
    {
        let registered = registered_at_the_server();
        let client = resolve_now(&server(None), &ClientOptions::default(), Some(&registered));
        assert_eq!(client.unwrap().id, "dyn-1");
        let elsewhere = Registered {
            issuer: "https://old.example.com".into(),
            ..registered
        };
        assert_eq!(
            resolve_now(&server(None), &ClientOptions::default(), Some(&elsewhere)),
            Err(SignInError::NoClientRegistration)
        );
    }

    #[test]
    fn a_stored_registered_client_sends_its_secret_as_the_server_takes_it() {
        // The client that an earlier sign-in registered, with a secret, as the
        // sign-in hands it over (without a choice of its own).
        let confidential = Registered {
            client: Client {
                secret: Some("registered-secret".into()),
                ..registered_at_the_server().client
            },
            ..registered_at_the_server()
        };
        let none = ClientOptions::default();
        let post_only = server(Some(vec!["client_secret_post"]));
        let client = resolve_now(&post_only, &none, Some(&confidential)).unwrap();
        assert_eq!((client.id.as_str(), client.secret_in_body), ("dyn-1", true));
        for methods in [
            None,
            Some(vec!["client_secret_basic", "client_secret_post"]),
        ] {
            let client = resolve_now(&server(methods), &none, Some(&confidential)).unwrap();
            assert!(!client.secret_in_body);
        }
    }
}
