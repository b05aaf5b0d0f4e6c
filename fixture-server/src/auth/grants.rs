//! What the authorization server has handed out, in memory: the authorization requests
//! waiting for their approval, the codes, the access tokens and the refresh tokens. A
//! code starts a family; every token of a family goes when its code is replayed.
//! `Debug` is never derived here: every key is a secret.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::random;

/// How long a code and an authorization request waiting for approval stay valid.
pub const CODE_LIFETIME: Duration = Duration::from_secs(120);

/// An authorization request that passed every check and waits for the approval step.
#[derive(Clone)]
pub struct Pending {
    pub client_id: String,
    pub redirect_uri: String,
    pub state: String,
    pub code_challenge: String,
    pub scopes: Vec<String>,
    created: Instant,
}

/// What a code stands for.
#[derive(Clone)]
pub struct Code {
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scopes: Vec<String>,
    family: u64,
    created: Instant,
    used: bool,
}

/// What an access token stands for.
#[derive(Clone)]
pub struct Access {
    pub client_id: String,
    pub scopes: Vec<String>,
    pub audience: String,
    pub expires: Instant,
    family: u64,
}

/// What a refresh token stands for: the scopes of the grant (a refresh may narrow the
/// access token, never the grant).
#[derive(Clone)]
pub struct Refresh {
    pub client_id: String,
    pub scopes: Vec<String>,
    family: u64,
}

/// Why a code was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum CodeRefusal {
    Unknown,
    /// A second use: the tokens of the code were revoked.
    Replayed,
    Expired,
}

/// The tokens of one token response.
pub struct Issued {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub scopes: Vec<String>,
}

#[derive(Default)]
struct Inner {
    pending: HashMap<String, Pending>,
    codes: HashMap<String, Code>,
    access: HashMap<String, Access>,
    refresh: HashMap<String, Refresh>,
    families: u64,
}

/// The grants of the server.
#[derive(Default)]
pub struct Grants {
    inner: Mutex<Inner>,
}

impl Grants {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps a checked authorization request; returns its opaque handle.
    pub fn add_pending(
        &self,
        client_id: String,
        redirect_uri: String,
        state: String,
        code_challenge: String,
        scopes: Vec<String>,
    ) -> Option<String> {
        let handle = random::token()?;
        let mut inner = self.lock();
        let now = Instant::now();
        inner
            .pending
            .retain(|_, pending| now.duration_since(pending.created) < CODE_LIFETIME);
        inner.pending.insert(
            handle.clone(),
            Pending {
                client_id,
                redirect_uri,
                state,
                code_challenge,
                scopes,
                created: now,
            },
        );
        Some(handle)
    }

    /// Takes the request of a handle: each handle works once, within [`CODE_LIFETIME`].
    pub fn take_pending(&self, handle: &str) -> Option<Pending> {
        let pending = self.lock().pending.remove(handle)?;
        (pending.created.elapsed() < CODE_LIFETIME).then_some(pending)
    }

    /// Issues a code for an approved request: a random token, padded with `x`s to
    /// `length` characters when that is longer.
    pub fn add_code(&self, pending: &Pending, length: Option<usize>) -> Option<String> {
        let mut code = random::token()?;
        if let Some(padding) = length.and_then(|length| length.checked_sub(code.len())) {
            code.push_str(&"x".repeat(padding));
        }
        let mut inner = self.lock();
        inner.families += 1;
        let family = inner.families;
        inner.codes.insert(
            code.clone(),
            Code {
                client_id: pending.client_id.clone(),
                redirect_uri: pending.redirect_uri.clone(),
                code_challenge: pending.code_challenge.clone(),
                scopes: pending.scopes.clone(),
                family,
                created: Instant::now(),
                used: false,
            },
        );
        Some(code)
    }

    /// Uses a code once. A second use revokes every token issued for it (RFC 6749
    /// §4.1.2: the code was stolen, or the client is broken).
    pub fn use_code(&self, code: &str) -> Result<Code, CodeRefusal> {
        let mut inner = self.lock();
        let entry = inner.codes.get_mut(code).ok_or(CodeRefusal::Unknown)?;
        if entry.used {
            let family = entry.family;
            inner.access.retain(|_, access| access.family != family);
            inner.refresh.retain(|_, refresh| refresh.family != family);
            return Err(CodeRefusal::Replayed);
        }
        entry.used = true;
        if entry.created.elapsed() >= CODE_LIFETIME {
            return Err(CodeRefusal::Expired);
        }
        Ok(entry.clone())
    }

    /// Issues an access token (and a refresh token with `refresh`) for the family of
    /// `code`, or of a refresh token.
    pub fn issue_for_code(
        &self,
        code: &Code,
        audience: &str,
        lifetime: Duration,
        refresh: bool,
    ) -> Option<Issued> {
        self.issue(
            code.family,
            &code.client_id,
            &code.scopes,
            &code.scopes,
            audience,
            lifetime,
            refresh,
        )
    }

    /// Rotates a refresh token: the old one is gone, the new one keeps the grant's
    /// scopes, the access token gets `scopes` (a subset).
    pub fn rotate(
        &self,
        old: &str,
        scopes: &[String],
        audience: &str,
        lifetime: Duration,
    ) -> Option<Issued> {
        let refresh = self.lock().refresh.remove(old)?;
        self.issue(
            refresh.family,
            &refresh.client_id,
            &refresh.scopes,
            scopes,
            audience,
            lifetime,
            true,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn issue(
        &self,
        family: u64,
        client_id: &str,
        grant_scopes: &[String],
        scopes: &[String],
        audience: &str,
        lifetime: Duration,
        refresh: bool,
    ) -> Option<Issued> {
        let access_token = random::token()?;
        let refresh_token = if refresh {
            Some(random::token()?)
        } else {
            None
        };
        let mut inner = self.lock();
        inner.access.insert(
            access_token.clone(),
            Access {
                client_id: client_id.to_owned(),
                scopes: scopes.to_vec(),
                audience: audience.to_owned(),
                expires: Instant::now() + lifetime,
                family,
            },
        );
        if let Some(token) = &refresh_token {
            inner.refresh.insert(
                token.clone(),
                Refresh {
                    client_id: client_id.to_owned(),
                    scopes: grant_scopes.to_vec(),
                    family,
                },
            );
        }
        Some(Issued {
            access_token,
            refresh_token,
            scopes: scopes.to_vec(),
        })
    }

    /// The refresh token's grant, without using it.
    pub fn refresh(&self, token: &str) -> Option<Refresh> {
        self.lock().refresh.get(token).cloned()
    }

    /// The access token's grant while it is valid.
    pub fn access(&self, token: &str) -> Option<Access> {
        let inner = self.lock();
        let access = inner.access.get(token)?;
        (Instant::now() < access.expires).then(|| access.clone())
    }

    /// Every access token issued so far expires now; returns how many.
    pub fn expire_access_tokens(&self) -> usize {
        let now = Instant::now();
        let mut inner = self.lock();
        for access in inner.access.values_mut() {
            access.expires = access.expires.min(now);
        }
        inner.access.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_padded_to_its_length_and_never_cut() {
        let grants = Grants::default();
        let long = grants.add_code(&pending(&grants), Some(4096)).unwrap();
        assert_eq!(long.len(), 4096);
        let short = grants.add_code(&pending(&grants), Some(8)).unwrap();
        assert_eq!(short.len(), 43);
        assert_ne!(long[..43], short[..]);
    }

    fn pending(grants: &Grants) -> Pending {
        let handle = grants
            .add_pending(
                "c".into(),
                "http://127.0.0.1:1/callback".into(),
                "s".into(),
                "ch".into(),
                vec!["mcp:read".into()],
            )
            .unwrap();
        grants.take_pending(&handle).unwrap()
    }

    #[tokio::test]
    async fn a_replayed_code_revokes_its_tokens() {
        let grants = Grants::default();
        let code = grants.add_code(&pending(&grants), None).unwrap();
        let entry = grants.use_code(&code).unwrap();
        let issued = grants
            .issue_for_code(&entry, "aud", Duration::from_secs(60), true)
            .unwrap();
        assert!(grants.access(&issued.access_token).is_some());
        assert_eq!(grants.use_code(&code).err(), Some(CodeRefusal::Replayed));
        assert!(grants.access(&issued.access_token).is_none());
        assert!(grants.refresh(&issued.refresh_token.unwrap()).is_none());
        assert_eq!(grants.use_code("nope").err(), Some(CodeRefusal::Unknown));
    }

    #[tokio::test]
    async fn a_handle_works_once_and_a_rotation_retires_the_old_refresh_token() {
        let grants = Grants::default();
        let handle = grants
            .add_pending("c".into(), "r".into(), "s".into(), "ch".into(), vec![])
            .unwrap();
        assert!(grants.take_pending(&handle).is_some());
        assert!(grants.take_pending(&handle).is_none());
        let code = grants.add_code(&pending(&grants), None).unwrap();
        let entry = grants.use_code(&code).unwrap();
        let first = grants
            .issue_for_code(&entry, "aud", Duration::from_secs(60), true)
            .unwrap();
        let old = first.refresh_token.unwrap();
        let second = grants
            .rotate(&old, &[], "aud", Duration::from_secs(60))
            .unwrap();
        assert!(grants.refresh(&old).is_none());
        let new = second.refresh_token.unwrap();
        assert_eq!(grants.refresh(&new).unwrap().scopes, ["mcp:read"]);
        assert_eq!(grants.expire_access_tokens(), 2);
        assert!(grants.access(&second.access_token).is_none());
    }
}
