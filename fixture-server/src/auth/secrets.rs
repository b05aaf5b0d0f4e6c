//! Every secret of the OAuth flow that the authorization server handed out or
//! received, for `GET /fixture/secrets`: a test of a client collects them from
//! the side that knows them, and looks for each in the client's whole log.
//!
//! A list keeps each value even after its grant is gone (a rotated refresh token,
//! a used code), because a log line could hold an old one. `Debug` is never
//! derived here.

use std::sync::Mutex;

use serde_json::{Value, json};

#[derive(Default)]
struct Lists {
    states: Vec<String>,
    code_verifiers: Vec<String>,
    codes: Vec<String>,
    access_tokens: Vec<String>,
    refresh_tokens: Vec<String>,
    client_secrets: Vec<String>,
    /// The `authorization_code` requests at `/token`, answered or refused.
    code_exchanges: u64,
}

/// What the server saw and issued.
#[derive(Default)]
pub struct Secrets {
    lists: Mutex<Lists>,
}

/// Which list a secret belongs to.
#[derive(Clone, Copy)]
pub enum Kind {
    State,
    CodeVerifier,
    Code,
    AccessToken,
    RefreshToken,
    ClientSecret,
}

impl Secrets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lists> {
        self.lists
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `value` in its list once.
    pub fn keep(&self, kind: Kind, value: &str) {
        let mut lists = self.lock();
        let list = match kind {
            Kind::State => &mut lists.states,
            Kind::CodeVerifier => &mut lists.code_verifiers,
            Kind::Code => &mut lists.codes,
            Kind::AccessToken => &mut lists.access_tokens,
            Kind::RefreshToken => &mut lists.refresh_tokens,
            Kind::ClientSecret => &mut lists.client_secrets,
        };
        if !value.is_empty() && !list.iter().any(|kept| kept == value) {
            list.push(value.to_owned());
        }
    }

    /// One more `authorization_code` request at `/token`.
    pub fn count_code_exchange(&self) {
        self.lock().code_exchanges += 1;
    }

    /// How many codes were redeemed so far.
    pub fn code_exchanges(&self) -> u64 {
        self.lock().code_exchanges
    }

    /// The body of `GET /fixture/secrets`.
    pub fn to_json(&self) -> Value {
        let lists = self.lock();
        json!({
            "states": lists.states,
            "code_verifiers": lists.code_verifiers,
            "codes": lists.codes,
            "access_tokens": lists.access_tokens,
            "refresh_tokens": lists.refresh_tokens,
            "client_secrets": lists.client_secrets,
            "code_exchanges": lists.code_exchanges,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_secret_is_kept_once_in_its_list() {
        let secrets = Secrets::default();
        secrets.keep(Kind::Code, "c1");
        secrets.keep(Kind::Code, "c1");
        secrets.keep(Kind::State, "");
        secrets.keep(Kind::AccessToken, "a1");
        secrets.count_code_exchange();
        assert_eq!(
            secrets.to_json(),
            json!({"states":[],"code_verifiers":[],"codes":["c1"],"access_tokens":["a1"],
                "refresh_tokens":[],"client_secrets":[],"code_exchanges":1})
        );
    }
}
