//! The sign-in of one upstream at a URL: the tokens that the requests carry, and
//! what happens when the upstream refuses one (401, or 403 `insufficient_scope`):
//! a refresh, else a sign-in in the browser, one at a time (contract, "Sign-in
//! and accounts"; the 2026-07-28 authorization pages).
//!
//! Who asks the user depends on VS Code's side: before `notifications/initialized`
//! the bridge opens the one-time start URL in the browser (M6); after it, VS Code
//! gets a URL elicitation and the bridge never opens a browser itself (M4).

use super::authorization_url::{self, AuthorizationRequest};
use super::browser::Opener;
use super::challenge::Challenge;
use super::client_id::{self, Client, ClientOptions, Registered};
use super::discovery::{self, AuthorizationServer, ProtectedResource};
use super::errors::SignInError;
use super::pkce::{AuthorizationSecrets, Secret};
use super::prompt::{Prompt, UserSide};
use super::receiver::{self, Gate, Lingering, Receiver, Redirect, StartUrl};
use super::secret_string::SecretString;
use super::sign_in_url::{self, Role};
use super::store::{EntryKey, StoredSignIn, TokenStore};
use super::tokens::{self, Refreshed, TokenResponse};
use crate::catalogue::{BridgeDebug, SignInInfo, SignInLine, SignInWarning, TokenStoreWarning};
use crate::log::emit;
use crate::wire::frame::Outcome;
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;
use tokio::time::Instant;
use url::Url;

/// A token that expires within this margin counts as expired: it could expire on
/// the way, and "a sign-in can start" when no token is valid for longer.
const EXPIRY_MARGIN: Duration = Duration::from_secs(60);
/// After a declined URL elicitation, no new question for this long.
const DECLINE_PAUSE: Duration = Duration::from_secs(60);

/// What a sign-in needs to know besides its store.
#[derive(Debug, Clone)]
pub struct SignInSettings {
    pub server_url: Url,
    pub redirect_port: u16,
    pub sign_in_timeout: Duration,
    /// `--no-browser`: the sign-in line only, before `notifications/initialized`.
    pub no_browser: bool,
    /// `SANDBOX_RUNTIME=1`: the sandbox of VS Code blocks the browser and the port.
    pub sandbox: bool,
    pub client: ClientOptions,
    pub opener: Opener,
    /// The receiver that serves on after the last sign-in of this URL.
    pub lingering: Lingering,
}

/// The access token that a request carries, and which sign-in gave it.
#[derive(Debug, Clone)]
pub struct Bearer {
    pub token: SecretString,
    pub generation: u64,
}

/// How the upstream refused a request.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub challenge: Challenge,
    /// The generation of the token that the request carried, if any.
    pub used: Option<u64>,
}

/// The tokens and the sign-ins of one link.
#[derive(Debug)]
pub struct Authorizer {
    settings: SignInSettings,
    http: reqwest::Client,
    store: Arc<dyn TokenStore>,
    key: EntryKey,
    current: Mutex<Current>,
    /// One refresh or sign-in at a time: the requests that a 401 stops wait here,
    /// then go on with the new token.
    flight: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Current {
    sign_in: Option<StoredSignIn>,
    /// Counts the tokens this process got, so that a request refused with an
    /// older one just goes again.
    generation: u64,
    declined_until: Option<Instant>,
    /// The scopes asked for so far: a step-up asks for these and the new ones.
    scope: Option<String>,
}

impl Authorizer {
    /// The authorizer of a link, with the sign-in that the store keeps (a store
    /// that fails counts as empty: the sign-in comes again).
    pub fn new(
        settings: SignInSettings,
        http: reqwest::Client,
        store: Arc<dyn TokenStore>,
        key: EntryKey,
    ) -> Self {
        let sign_in = match store.load(&key) {
            Ok(sign_in) => sign_in,
            Err(error) => {
                emit!(TokenStoreWarning::LoadFailed { error: &error });
                None
            }
        };
        let scope = sign_in.as_ref().and_then(|s| s.scope.clone());
        Self {
            settings,
            http,
            store,
            key,
            current: Mutex::new(Current {
                sign_in,
                scope,
                ..Current::default()
            }),
            flight: tokio::sync::Mutex::new(()),
        }
    }

    fn current(&self) -> MutexGuard<'_, Current> {
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The token for the next request.
    pub fn bearer(&self) -> Option<Bearer> {
        let current = self.current();
        current.sign_in.as_ref().map(|sign_in| Bearer {
            token: sign_in.access_token.clone(),
            generation: current.generation,
        })
    }

    /// Whether a sign-in can start: no access token valid for more than a minute
    /// (contract, "Options of the bridge": server/discover then waits for the
    /// sign-in too).
    pub fn sign_in_can_start(&self) -> bool {
        !self
            .current()
            .sign_in
            .as_ref()
            .is_some_and(|sign_in| valid_beyond_margin(sign_in.expires_at, now_unix()))
    }

    /// The upstream refused a request: new tokens (a refresh, or a sign-in), so
    /// that the request can go again; or why there are none.
    pub async fn on_refused(
        &self,
        refusal: Refusal,
        client: &dyn UserSide,
    ) -> Result<(), SignInError> {
        let _one_at_a_time = self.flight.lock().await;
        let (generation, has_refresh) = {
            let current = self.current();
            let refresh = current
                .sign_in
                .as_ref()
                .is_some_and(|s| s.refresh_token.is_some());
            (current.generation, refresh)
        };
        let step_up = refusal.challenge.is_insufficient_scope();
        let newer = refusal.used != Some(generation) && self.bearer().is_some();
        if newer && (!step_up || self.scope_covers(refusal.challenge.scope.as_deref())) {
            // Another request got new tokens (with the scopes) while this one waited.
            return Ok(());
        }
        if !step_up && has_refresh && self.refresh().await? {
            return Ok(());
        }
        self.sign_in(&refusal.challenge, step_up, client).await
    }

    /// Whether the scopes asked for so far include every scope of `needed`.
    fn scope_covers(&self, needed: Option<&str>) -> bool {
        let current = self.current();
        let have: Vec<&str> = current
            .scope
            .as_deref()
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default();
        needed.is_none_or(|needed| needed.split_whitespace().all(|scope| have.contains(&scope)))
    }

    /// A refresh with the stored refresh token; `false` when there is none that
    /// the server takes (a new sign-in follows).
    async fn refresh(&self) -> Result<bool, SignInError> {
        let Some(stored) = self.current().sign_in.clone() else {
            return Ok(false);
        };
        let Some(refresh_token) = stored.refresh_token.clone() else {
            return Ok(false);
        };
        let Some(secret) = self.stored_secret(&stored) else {
            return Ok(false);
        };
        let upstream = &self.settings.server_url;
        let server = discovery::authorization_server(&self.http, &stored.issuer, upstream).await?;
        let token_endpoint = endpoint(&server.token_endpoint, upstream)?;
        let client = client_id::client_at(&server, stored.client_id.clone(), secret);
        match tokens::refresh(
            &self.http,
            &token_endpoint,
            &client,
            refresh_token.expose(),
            &stored.resource,
        )
        .await
        {
            Ok(Refreshed::Tokens(tokens)) => {
                self.keep(
                    &server,
                    &stored.resource,
                    &client,
                    tokens,
                    Some(refresh_token),
                )
                .await;
                Ok(true)
            }
            Ok(Refreshed::Refused) => {
                emit!(SignInInfo::RefreshRefused);
                if let Some(sign_in) = self.current().sign_in.as_mut() {
                    sign_in.refresh_token = None;
                }
                Ok(false)
            }
            Err(error) => {
                // The line of the failure itself, as the detail.
                match error.log_line() {
                    Some(line) => emit!(SignInWarning::RefreshFailed { detail: &line }),
                    None => emit!(SignInWarning::RefreshFailed { detail: &"" }),
                }
                Ok(false)
            }
        }
    }

    /// The secret for a refresh of the stored sign-in (`Some(None)`: a client
    /// without one): that of `--client-id`, or the registered one. `None` when the
    /// stored sign-in is of an issuer other than `--client-issuer`: the secret goes
    /// only to that issuer, so no refresh, and the new sign-in checks the issuer.
    fn stored_secret(&self, stored: &StoredSignIn) -> Option<Option<SecretString>> {
        let options = &self.settings.client;
        if options.client_id.as_deref() != Some(stored.client_id.as_str()) {
            return Some(stored.client_secret.clone());
        }
        match &options.client_issuer {
            Some(issuer) if client_id::same_issuer(issuer, &stored.issuer) => {
                Some(options.client_secret.clone())
            }
            Some(_) => None,
            // The command line refuses a secret without --client-issuer.
            None => Some(None),
        }
    }

    /// A sign-in in the browser.
    async fn sign_in(
        &self,
        challenge: &Challenge,
        step_up: bool,
        client_side: &dyn UserSide,
    ) -> Result<(), SignInError> {
        let state = client_side.view();
        if self.settings.sandbox {
            if state.initialized {
                emit!(SignInWarning::SandboxLater);
            } else {
                emit!(SignInWarning::SandboxAtStart);
            }
            return Err(SignInError::Sandbox);
        }
        if self
            .current()
            .declined_until
            .is_some_and(|until| Instant::now() < until)
        {
            return Err(SignInError::Declined);
        }
        if state.initialized && !state.url_elicitation {
            return Err(SignInError::NoUrlElicitation);
        }
        let resource =
            discovery::protected_resource(&self.http, &self.settings.server_url, challenge).await?;
        let issuer = resource
            .authorization_servers
            .first()
            .cloned()
            .unwrap_or_default();
        let upstream = &self.settings.server_url;
        let server = discovery::authorization_server(&self.http, &issuer, upstream).await?;
        // Every endpoint passes the rule before the user signs in at the browser
        // (the registration endpoint before the registration, in `resolve`): a
        // sign-in that could not end must not ask the user for one.
        let token_endpoint = endpoint(&server.token_endpoint, upstream)?;
        let redirect_uri = receiver::redirect_uri(self.settings.redirect_port);
        let registered = self.registered();
        let client = client_id::resolve(
            &self.http,
            &server,
            &self.settings.client,
            self.settings.redirect_port,
            registered.as_ref(),
            upstream,
        )
        .await?;
        let scope = self.scope_to_ask(challenge, &resource, step_up);
        let secrets =
            AuthorizationSecrets::new().map_err(|error| SignInError::Failed(error.to_string()))?;
        let url = authorization_url::build(
            &server.authorization_endpoint,
            &AuthorizationRequest {
                client_id: &client.id,
                redirect_uri: &redirect_uri,
                code_challenge: &secrets.verifier.s256_challenge(),
                state: secrets.state.expose(),
                resource: &resource.resource,
                scope: scope.as_deref(),
            },
            upstream,
        )
        .map_err(|error| {
            emit!(SignInWarning::AuthorizationUrlNotValid { error: &error });
            SignInError::UnsafeAuthorizationUrl(error)
        })?;
        self.settings.lingering.stop().await;
        let receiver = Receiver::bind(self.settings.redirect_port).inspect_err(|_| {
            emit!(SignInWarning::RedirectPortInUse {
                n: self.settings.redirect_port
            });
        })?;
        emit!(SignInLine::At { url: &url });
        let mut asked = Asked::default();
        let start = if state.initialized {
            asked = self.ask_client(url.as_str(), client_side).await;
            None
        } else {
            self.open_browser(url.as_str(), receiver.port())
        };
        let mut gate = Gate::new(
            secrets.state.clone(),
            start,
            self.settings.server_url.as_str(),
        );
        let timeout = self.settings.sign_in_timeout;
        let deadline = Instant::now() + timeout;
        let redirect = tokio::select! {
            outcome = receiver.serve(&mut gate) => outcome,
            () = tokio::time::sleep(timeout) => {
                emit!(SignInWarning::Timeout {
                    n: timeout.as_secs()
                });
                Err(SignInError::Timeout(timeout))
            }
            refusal = asked.refusal() => {
                if refusal == SignInError::Declined {
                    emit!(SignInInfo::Declined);
                    self.pause_questions();
                }
                Err(refusal)
            }
        };
        let (code, iss) = match redirect {
            Ok(Redirect {
                code: Ok(code),
                iss,
            }) => (code, iss),
            Ok(Redirect {
                code: Err(error),
                iss,
            }) => {
                // An error redirect is believed only from the issuer (RFC 9207 §2.4).
                let error = check_issuer(iss.as_deref(), &server).err().unwrap_or(error);
                asked.withdraw(&error, client_side).await;
                return Err(error);
            }
            Err(error) => {
                asked.withdraw(&error, client_side).await;
                return Err(error);
            }
        };
        let exchanged = match check_issuer(iss.as_deref(), &server) {
            Ok(()) => tokio::select! {
                tokens = tokens::exchange_code(
                    &self.http,
                    &token_endpoint,
                    &client,
                    code.expose(),
                    &redirect_uri,
                    secrets.verifier.expose(),
                    &resource.resource,
                ) => tokens,
                () = receiver.serve_after(&mut gate) => Err(SignInError::Canceled),
            },
            Err(error) => Err(error),
        };
        self.linger(receiver, gate, deadline);
        let tokens = exchanged?;
        let granted_scope = tokens.scope.clone().or_else(|| scope.clone());
        self.current().scope = granted_scope.or(scope);
        self.keep(&server, &resource.resource, &client, tokens, None)
            .await;
        if let Some(elicitation_id) = asked.elicitation_id {
            client_side
                .prompt(Prompt::Completed { elicitation_id })
                .await;
        }
        client_side.prompt(Prompt::SignedIn).await;
        Ok(())
    }

    /// After the redirect of a sign-in that opened a start URL, the receiver serves
    /// on until `deadline` ([`Lingering`]); without a start URL it closes now.
    fn linger(&self, receiver: Receiver, gate: Gate, deadline: Instant) {
        if gate.has_start_url() {
            self.settings.lingering.start(receiver, gate, deadline);
        }
    }

    /// The client that an earlier sign-in registered, for the same issuer (how its
    /// secret goes, [`client_id::resolve`] decides for the server).
    fn registered(&self) -> Option<Registered> {
        if self.settings.client.client_id.is_some() {
            return None;
        }
        let current = self.current();
        let stored = current.sign_in.as_ref()?;
        Some(Registered {
            issuer: stored.issuer.clone(),
            client: Client {
                id: stored.client_id.clone(),
                secret: stored.client_secret.clone(),
                secret_in_body: false,
            },
        })
    }

    /// The scope of the challenge, else the resource's `scopes_supported`; a
    /// step-up adds the challenge's scopes to those asked before.
    fn scope_to_ask(
        &self,
        challenge: &Challenge,
        resource: &ProtectedResource,
        step_up: bool,
    ) -> Option<String> {
        let asked_before = self.current().scope.clone();
        let new = challenge.scope.clone().or_else(|| {
            resource
                .scopes_supported
                .as_ref()
                .filter(|scopes| !scopes.is_empty())
                .map(|scopes| scopes.join(" "))
        });
        if !step_up {
            return new;
        }
        union(asked_before.as_deref(), new.as_deref())
    }

    /// Before `notifications/initialized`: the one-time start URL in the browser,
    /// unless `--no-browser`. Only the start URL reaches the opener.
    fn open_browser(&self, authorization_url: &str, port: u16) -> Option<StartUrl> {
        if self.settings.no_browser {
            return None;
        }
        let Ok(token) = Secret::start_token() else {
            emit!(SignInWarning::NoRandomData);
            emit!(SignInWarning::BrowserDidNotOpen);
            return None;
        };
        let start = StartUrl::new(token, authorization_url.to_owned());
        if let Err(error) = self.settings.opener.open(&start.url(port)) {
            emit!(BridgeDebug::OpenerDidNotStart {
                error_kind: &error.kind()
            });
            emit!(SignInWarning::BrowserDidNotOpen);
        }
        Some(start)
    }

    /// After a declined URL elicitation: for [`DECLINE_PAUSE`] each sign-in fails
    /// at once, without a question.
    fn pause_questions(&self) {
        self.current().declined_until = Some(Instant::now() + DECLINE_PAUSE);
    }

    /// After `notifications/initialized`: a URL elicitation with the
    /// authorization URL (O1, M4).
    async fn ask_client(&self, url: &str, client_side: &dyn UserSide) -> Asked {
        let elicitation_id = uuid::Uuid::new_v4().to_string();
        let (answer, answered) = oneshot::channel();
        client_side
            .prompt(Prompt::OpenUrl {
                elicitation_id: elicitation_id.clone(),
                url: url.to_owned(),
                answer,
            })
            .await;
        Asked {
            elicitation_id: Some(elicitation_id),
            answer: Some(answered),
        }
    }

    /// Keeps new tokens: in memory for the next requests, and in the store (which
    /// blocks: a keychain answers over D-Bus, a file is synced).
    async fn keep(
        &self,
        server: &AuthorizationServer,
        resource: &str,
        client: &Client,
        tokens: TokenResponse,
        old_refresh_token: Option<SecretString>,
    ) {
        let from_option = self.settings.client.client_id.is_some();
        let scope = tokens
            .scope
            .clone()
            .or_else(|| self.current().scope.clone());
        let sign_in = StoredSignIn {
            issuer: server.issuer.clone(),
            resource: resource.to_owned(),
            client_id: client.id.clone(),
            // MCP_BRIDGE_CLIENT_SECRET stays in the environment, never in a store.
            client_secret: if from_option {
                None
            } else {
                client.secret.clone()
            },
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token.or(old_refresh_token),
            expires_at: tokens
                .expires_in
                .map(|seconds| now_unix().saturating_add(seconds)),
            scope,
        };
        {
            let mut current = self.current();
            current.sign_in = Some(sign_in.clone());
            current.generation += 1;
        }
        let (store, key) = (self.store.clone(), self.key.clone());
        let saved = tokio::task::spawn_blocking(move || store.save(&key, &sign_in)).await;
        match saved {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                emit!(TokenStoreWarning::SaveFailed { error: &error });
            }
            Err(_) => {
                emit!(TokenStoreWarning::SaveTaskStopped)
            }
        }
    }
}

/// The question of a sign-in to VS Code, if one was asked.
#[derive(Debug, Default)]
struct Asked {
    elicitation_id: Option<String>,
    answer: Option<oneshot::Receiver<Outcome>>,
}

impl Asked {
    /// Resolves only when VS Code will not open the URL: a decline or a cancel,
    /// an error, or the end of the question (the end of stdin). An accept means
    /// that VS Code opened the URL: the redirect comes next.
    async fn refusal(&mut self) -> SignInError {
        let Some(answer) = self.answer.take() else {
            return std::future::pending().await;
        };
        match answer.await {
            Ok(Outcome::Result(result)) => match result.get("action").and_then(Value::as_str) {
                Some("accept") => std::future::pending().await,
                _ => SignInError::Declined,
            },
            Ok(Outcome::Error(_)) => SignInError::Declined,
            Err(_) => SignInError::Canceled,
        }
    }

    /// A sign-in that ends before VS Code answered its URL elicitation (the time
    /// limit) withdraws the question, so that VS Code closes its dialog. The
    /// answer's channel is closed by now (the `select!` dropped [`Self::refusal`]);
    /// after an answer the session holds no entry, and nothing is cancelled.
    async fn withdraw(self, error: &SignInError, client_side: &dyn UserSide) {
        if self.elicitation_id.is_none() || matches!(error, SignInError::Canceled) {
            return;
        }
        drop(self.answer);
        let reason = error.to_string();
        client_side.prompt(Prompt::Withdraw { reason }).await;
    }
}

/// RFC 9207 §2.4, for a redirect with a code and for an error redirect alike,
/// with the revision's rule for a present `iss`: compared to the issuer as it is;
/// absent only when the server does not announce it.
fn check_issuer(iss: Option<&str>, server: &AuthorizationServer) -> Result<(), SignInError> {
    match (iss, server.authorization_response_iss_parameter_supported) {
        (Some(iss), _) if iss != server.issuer => Err(SignInError::AuthorizationError(
            "the iss of the redirect is not the issuer of the authorization server".into(),
        )),
        (None, true) => Err(SignInError::AuthorizationError(
            "the redirect has no iss, which the authorization server announces".into(),
        )),
        _ => Ok(()),
    }
}

/// The token endpoint, under the rule of every URL of the sign-in.
fn endpoint(text: &str, upstream: &Url) -> Result<Url, SignInError> {
    sign_in_url::check(text, Role::TokenEndpoint, upstream)
        .map_err(|refused| SignInError::Discovery(refused.to_string()))
}

/// The scopes of `a`, then those of `b` that `a` lacks.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Whether a token that expires at `expires_at` is valid for more than the margin
/// after `now` (both in seconds since the Unix epoch). A token without an expiry
/// counts as valid: the server tells when it is not.
fn valid_beyond_margin(expires_at: Option<u64>, now: u64) -> bool {
    expires_at.is_none_or(|at| at > now.saturating_add(EXPIRY_MARGIN.as_secs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::prompt::ClientView;
    use crate::auth::store::{ClientOption, MemoryStore};

    /// VS Code's side of a test: a fixed view, and every prompt kept.
    #[derive(Default)]
    struct RecordingSide {
        view: ClientView,
        prompts: Mutex<Vec<String>>,
    }

    impl RecordingSide {
        /// A client after `notifications/initialized` that cannot open a URL: a
        /// sign-in stops at that check, before it asks the network.
        fn without_url_elicitation() -> Self {
            Self {
                view: ClientView {
                    initialized: true,
                    url_elicitation: false,
                },
                ..Self::default()
            }
        }
    }

    #[async_trait::async_trait]
    impl UserSide for RecordingSide {
        fn view(&self) -> ClientView {
            self.view
        }

        async fn prompt(&self, prompt: Prompt) {
            self.prompts.lock().unwrap().push(format!("{prompt:?}"));
        }
    }

    /// An authorizer for an upstream that nothing serves: a sign-in that asks the
    /// network at all fails on it, not on the check under test.
    fn authorizer(sandbox: bool) -> Authorizer {
        let server_url = Url::parse("https://127.0.0.1:9/mcp").unwrap();
        let settings = SignInSettings {
            server_url: server_url.clone(),
            redirect_port: 1,
            sign_in_timeout: Duration::from_secs(5),
            no_browser: true,
            sandbox,
            client: ClientOptions::default(),
            opener: Opener::of_environment(None, Vec::new()),
            lingering: Lingering::default(),
        };
        let key = EntryKey::new(
            server_url.as_str(),
            "default",
            "http://127.0.0.1:1/callback",
            ClientOption::Default,
        );
        Authorizer::new(
            settings,
            crate::net::client_for_tests(),
            Arc::new(MemoryStore::default()),
            key,
        )
    }

    fn refusal() -> Refusal {
        Refusal {
            challenge: Challenge::default(),
            used: None,
        }
    }

    #[tokio::test]
    async fn without_url_elicitation_a_later_sign_in_fails_at_once_and_asks_nobody() {
        let side = RecordingSide::without_url_elicitation();
        let error = authorizer(false)
            .on_refused(refusal(), &side)
            .await
            .unwrap_err();
        assert_eq!(error, SignInError::NoUrlElicitation);
        assert!(side.prompts.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn in_the_sandbox_a_sign_in_fails_at_once_before_and_after_initialized() {
        for initialized in [false, true] {
            let side = RecordingSide {
                view: ClientView {
                    initialized,
                    url_elicitation: true,
                },
                ..RecordingSide::default()
            };
            let error = authorizer(true)
                .on_refused(refusal(), &side)
                .await
                .unwrap_err();
            assert_eq!(error, SignInError::Sandbox);
            assert!(side.prompts.lock().unwrap().is_empty());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_declined_sign_in_fails_at_once_for_a_minute_and_then_goes_on() {
        // A client without URL elicitation: once the pause is over, the sign-in
        // stops at its next check, without the network.
        let side = RecordingSide::without_url_elicitation();
        let authorizer = authorizer(false);
        authorizer.pause_questions();
        tokio::time::advance(Duration::from_secs(59)).await;
        let error = authorizer.on_refused(refusal(), &side).await.unwrap_err();
        assert_eq!(error, SignInError::Declined);
        // The pause ends at its minute, not a tick after it.
        tokio::time::advance(Duration::from_secs(1)).await;
        let error = authorizer.on_refused(refusal(), &side).await.unwrap_err();
        assert_eq!(error, SignInError::NoUrlElicitation);
        assert!(side.prompts.lock().unwrap().is_empty());
    }

    /// A request refused with an older token goes again with a newer one only when
    /// that one has the scopes the refusal asks for; else a step-up follows.
    #[tokio::test]
    async fn a_newer_token_serves_a_step_up_only_when_it_has_the_scopes_asked_for() {
        let side = RecordingSide::without_url_elicitation();
        let authorizer = authorizer(false);
        {
            let mut current = authorizer.current();
            current.sign_in = Some(StoredSignIn::for_tests("https://127.0.0.1:9/mcp", "newer"));
            current.generation = 2;
            current.scope = Some("mcp:read".into());
        }
        let step_up = |scope: &str| Refusal {
            challenge: Challenge::parse([format!(
                r#"Bearer error="insufficient_scope", scope="{scope}""#
            )
            .as_str()]),
            used: Some(1),
        };
        // The newer token lacks mcp:write: the step-up's sign-in, which this
        // client cannot open.
        let error = authorizer
            .on_refused(step_up("mcp:read mcp:write"), &side)
            .await
            .unwrap_err();
        assert_eq!(error, SignInError::NoUrlElicitation);
        // It has mcp:read: the request goes again with it.
        assert_eq!(
            authorizer.on_refused(step_up("mcp:read"), &side).await,
            Ok(())
        );
        assert!(side.prompts.lock().unwrap().is_empty());
    }

    #[test]
    fn a_step_up_asks_for_the_scopes_before_and_the_new_ones() {
        assert_eq!(
            union(Some("mcp:read"), Some("mcp:read mcp:write")).as_deref(),
            Some("mcp:read mcp:write")
        );
        assert_eq!(union(None, Some("a")).as_deref(), Some("a"));
        assert_eq!(union(Some("a b"), None).as_deref(), Some("a b"));
        assert_eq!(union(None, None), None);
    }

    #[test]
    fn the_issuer_of_a_redirect_is_checked_as_rfc_9207_says() {
        let mut server = AuthorizationServer {
            issuer: "https://as.example.com".into(),
            authorization_endpoint: String::new(),
            token_endpoint: String::new(),
            registration_endpoint: None,
            code_challenge_methods_supported: None,
            authorization_response_iss_parameter_supported: true,
            client_id_metadata_document_supported: false,
            token_endpoint_auth_methods_supported: None,
        };
        assert!(check_issuer(Some("https://as.example.com"), &server).is_ok());
        assert!(check_issuer(Some("https://as.example.com/"), &server).is_err());
        assert!(check_issuer(None, &server).is_err());
        server.authorization_response_iss_parameter_supported = false;
        assert!(check_issuer(None, &server).is_ok());
        assert!(check_issuer(Some("https://evil.example.com"), &server).is_err());
    }

    #[test]
    fn a_token_is_valid_until_a_minute_before_it_expires() {
        let now = 1_800_000_000;
        assert!(valid_beyond_margin(None, now));
        assert!(valid_beyond_margin(Some(now + 120), now));
        assert!(valid_beyond_margin(Some(now + 61), now));
        // Exactly a minute left is not more than a minute.
        assert!(!valid_beyond_margin(Some(now + 60), now));
        assert!(!valid_beyond_margin(Some(now + 30), now));
        assert!(!valid_beyond_margin(Some(0), now));
        assert!(!valid_beyond_margin(Some(0), u64::MAX));
    }
}
