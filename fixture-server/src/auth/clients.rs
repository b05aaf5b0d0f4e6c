//! The clients of the authorization server: the two pre-registered ones (study §1.5),
//! those of dynamic client registration, and those of client ID metadata documents;
//! and the rule that matches a redirect URI against the registered ones.

use std::collections::HashMap;
use std::sync::Mutex;

use url::{Host, Url};

/// The confidential pre-registered client.
pub const CONFIDENTIAL_ID: &str = "bridge-fixture-confidential";
/// Its secret (a test value, public on purpose).
pub const CONFIDENTIAL_SECRET: &str = "bridge-fixture-secret-0123456789";
/// The public pre-registered client.
pub const PUBLIC_ID: &str = "bridge-fixture-public";
/// The redirect URI of both pre-registered clients: any port on the loopback.
pub const LOOPBACK_CALLBACK: &str = "http://127.0.0.1/callback";

/// Where a client comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    PreRegistered,
    /// Dynamic client registration: forgotten by `/fixture/forget-clients`.
    Registered,
    /// A client ID metadata document (`--cimd`).
    MetadataDocument,
}

/// One client. `Debug` leaves the secret out.
#[derive(Clone)]
pub struct Client {
    pub id: String,
    /// `None`: a public client (`token_endpoint_auth_method: none`).
    pub secret: Option<String>,
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
    pub origin: Origin,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .field("name", &self.name)
            .field("redirect_uris", &self.redirect_uris)
            .field("origin", &self.origin)
            .finish()
    }
}

impl Client {
    /// The name for the consent page: the registered `client_name`, else the ID.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// Whether `requested` is one of the registered redirect URIs.
    pub fn allows_redirect(&self, requested: &str) -> bool {
        self.redirect_uris
            .iter()
            .any(|registered| redirect_matches(registered, requested))
    }
}

/// The clients known now.
pub struct Clients {
    known: Mutex<HashMap<String, Client>>,
}

impl Default for Clients {
    fn default() -> Clients {
        let pre = |id: &str, secret: Option<&str>, name: &str| Client {
            id: id.to_owned(),
            secret: secret.map(str::to_owned),
            name: Some(name.to_owned()),
            redirect_uris: vec![LOOPBACK_CALLBACK.to_owned()],
            origin: Origin::PreRegistered,
        };
        let known = [
            pre(
                CONFIDENTIAL_ID,
                Some(CONFIDENTIAL_SECRET),
                "bridge-fixture confidential client",
            ),
            pre(PUBLIC_ID, None, "bridge-fixture public client"),
        ]
        .into_iter()
        .map(|client| (client.id.clone(), client))
        .collect();
        Clients {
            known: Mutex::new(known),
        }
    }
}

impl Clients {
    pub fn get(&self, id: &str) -> Option<Client> {
        self.lock().get(id).cloned()
    }

    pub fn insert(&self, client: Client) {
        self.lock().insert(client.id.clone(), client);
    }

    /// Forgets every dynamically registered client; returns how many.
    pub fn forget_registered(&self) -> usize {
        let mut known = self.lock();
        let before = known.len();
        known.retain(|_, client| client.origin != Origin::Registered);
        before - known.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Client>> {
        // A panic elsewhere cannot leave the map half-written: take it as it is.
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether a URL is a loopback `http` URL (RFC 8252 §7.3), where the port is free.
pub fn is_loopback_http(url: &Url) -> bool {
    url.scheme() == "http"
        && match url.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            None => false,
        }
}

/// Whether a redirect URI may be registered: https, or http on the loopback; no
/// fragment, no user information.
pub fn registrable(uri: &str) -> bool {
    let Ok(url) = Url::parse(uri) else {
        return false;
    };
    url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none()
        && url.host().is_some()
        && (url.scheme() == "https" || is_loopback_http(&url))
}

/// A requested loopback `http` redirect URI matches a registered one that differs only
/// in the port (or has none: `http://127.0.0.1/callback` takes any port, RFC 8252
/// §7.3); every other redirect URI must be equal to a registered one, byte for byte.
pub fn redirect_matches(registered: &str, requested: &str) -> bool {
    if registered == requested {
        return true;
    }
    let (Ok(registered), Ok(requested)) = (Url::parse(registered), Url::parse(requested)) else {
        return false;
    };
    is_loopback_http(&requested)
        && is_loopback_http(&registered)
        && requested.fragment().is_none()
        && requested.username().is_empty()
        && requested.password().is_none()
        && registered.host() == requested.host()
        && registered.path() == requested.path()
        && registered.query() == requested.query()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_redirect_matches_with_any_port() {
        assert!(redirect_matches(
            LOOPBACK_CALLBACK,
            "http://127.0.0.1:41894/callback"
        ));
        assert!(redirect_matches(
            "http://127.0.0.1:41894/callback",
            "http://127.0.0.1:5000/callback"
        ));
        assert!(redirect_matches(LOOPBACK_CALLBACK, LOOPBACK_CALLBACK));
        for other in [
            "http://127.0.0.1:41894/other",
            "http://localhost:41894/callback",
            "http://127.0.0.1:41894/callback?x=1",
            "http://127.0.0.1:41894/callback#f",
            "https://127.0.0.1:41894/callback",
            "http://user@127.0.0.1:41894/callback",
        ] {
            assert!(!redirect_matches(LOOPBACK_CALLBACK, other), "{other}");
        }
        assert!(redirect_matches(
            "https://app.example/cb",
            "https://app.example/cb"
        ));
        assert!(!redirect_matches(
            "https://app.example/cb",
            "https://app.example:8443/cb"
        ));
    }

    #[test]
    fn only_https_and_loopback_http_may_be_registered() {
        assert!(registrable("http://127.0.0.1/callback"));
        assert!(registrable("http://[::1]:9/callback"));
        assert!(registrable("https://app.example/cb"));
        for bad in [
            "http://example.com/cb",
            "https://app.example/cb#x",
            "ftp://127.0.0.1/cb",
            "not a url",
            "https://u:p@app.example/cb",
        ] {
            assert!(!registrable(bad), "{bad}");
        }
    }

    #[test]
    fn forgetting_keeps_the_pre_registered_clients_and_the_debug_hides_the_secret() {
        let clients = Clients::default();
        clients.insert(Client {
            id: "dyn".into(),
            secret: Some("s3cret".into()),
            name: None,
            redirect_uris: vec![],
            origin: Origin::Registered,
        });
        assert!(!format!("{:?}", clients.get("dyn").unwrap()).contains("s3cret"));
        assert_eq!(clients.forget_registered(), 1);
        assert!(clients.get("dyn").is_none());
        assert!(clients.get(CONFIDENTIAL_ID).is_some() && clients.get(PUBLIC_ID).is_some());
    }
}
