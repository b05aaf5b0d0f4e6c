//! Sign-in readiness of a server at a URL, step by step as the sign-in of the
//! bridge takes them, without a browser and without writing anything: the token
//! store that a start opens, the challenge of the 401, the protected resource
//! metadata, the authorization server's, the authorization URL, the client ID and
//! why, the redirect port, and the stored sign-in. It decides whether the session
//! may run: without `--sign-in` doctor signs nobody in.

use super::Context;
use super::local_harness::Reply;
use super::reach_url::Reached;
use super::report::{Check, Finding, Report, Status};
use super::revision::{cause_of, is_sign_in_cause};
use super::session::Run;
use super::store::ReadOnly;
use super::texts::{Section, registration_line, sign_in_line};
use super::tls;
use crate::auth::authorization_url::{self, AuthorizationRequest};
use crate::auth::bridge_document::DOCUMENT_URL;
use crate::auth::client_id::{self, ClientSource, Registered};
use crate::auth::discovery::{self, AuthorizationServer, ProtectedResource};
use crate::auth::environment::SignInEnvironment;
use crate::auth::errors::SignInError;
use crate::auth::receiver::{Receiver, redirect_uri};
use crate::auth::sign_in::Authorizer;
use crate::auth::sign_in_url::{self, Role};
use crate::auth::store::{EntryKey, OpenedStore, StoreKind, StoredSignIn, TokenStore};
use crate::catalogue::Cause;
use crate::config::{HttpTarget, TokenStoreChoice};
use crate::upstream::http::entry_key;
use std::sync::Arc;

/// How the session runs, or why it does not.
pub struct Plan {
    /// The store that the session's sign-in gets.
    pub store: Option<Arc<dyn TokenStore>>,
    pub environment: SignInEnvironment,
    /// Why the session does not run.
    pub skip: Option<String>,
    /// The sign-in of the session fails at once instead of asking the user
    /// (without `--sign-in`, through the rule of the sandbox).
    pub no_sign_in: bool,
    /// The stored sign-in before the session, to tell whether `--sign-in` stored one.
    pub before: Option<StoredSignIn>,
    /// The store as it opened, and the entry of this URL and account.
    pub opened: Option<(Arc<dyn TokenStore>, EntryKey)>,
    /// No stored access token is valid for more than a minute: a start then
    /// waits for `--discover-timeout` and `--sign-in-timeout` together.
    pub sign_in_can_start: bool,
}

/// The readiness of the sign-in, and the plan of the session.
pub async fn check(
    context: &Context<'_>,
    target: &HttpTarget,
    reached: &Reached,
    report: &mut Report,
) -> Plan {
    let process = SignInEnvironment::of_process();
    let static_authorization = target
        .headers
        .iter()
        .any(|header| header.name == "authorization");
    let mut plan = Plan {
        store: None,
        environment: process.clone(),
        skip: None,
        no_sign_in: false,
        before: None,
        opened: None,
        sign_in_can_start: false,
    };
    if static_authorization {
        for check in SIGN_IN_CHECKS {
            report.add(Finding::skipped(
                check,
                "a static Authorization header (--header-env or --header) disables the sign-in",
            ));
        }
        return plan;
    }
    // The store, as the start of the bridge opens it.
    let mark = context.lines.mark();
    let access = if context.sign_in {
        crate::auth::store::Access::ReadWrite
    } else {
        crate::auth::store::Access::ReadOnly
    };
    let opened = match crate::run::token_store_for(context.config, access) {
        Ok(Some(opened)) => opened,
        Ok(None) => return plan,
        Err(_) => {
            report.add(
                Finding::fail(Check::TokenStore, "the token store does not open: the bridge exits with code 2 at its start")
                    .lines(context.lines.warnings_since(mark))
                    .advice(
                        Section::TokenStores,
                        "Correct what the line names: the key of the file store (MCP_BRIDGE_TOKEN_KEY or --token-key-file), or choose another --token-store.",
                    ),
            );
            for check in &SIGN_IN_CHECKS[1..] {
                report.add(Finding::skipped(*check, "the token store does not open"));
            }
            plan.skip = Some("the bridge does not start: its token store does not open".into());
            return plan;
        }
    };
    report.add(store_finding(
        context,
        target,
        &opened,
        mark,
        reached.asks_for_sign_in(),
    ));
    let key = entry_key(target);
    let store = opened.store.clone();
    let stored = load(&store, &key).await;
    plan.before = stored.clone();
    plan.opened = Some((store.clone(), key.clone()));
    let client = reached.client.clone();
    // As the connector of a start decides it, with the same store and entry.
    let usable = match (&stored, &client) {
        (Some(_), Some(client)) => {
            let settings = process.settings(target);
            !Authorizer::new(settings, client.clone(), store.clone(), key.clone())
                .sign_in_can_start()
        }
        _ => false,
    };
    plan.sign_in_can_start = !usable;

    if !reached.asks_for_sign_in() {
        let why = match reached.status {
            Some(status) => format!("the server asked for no sign-in (HTTP status {status})"),
            None => "the server did not answer".to_owned(),
        };
        for check in &SIGN_IN_CHECKS[1..] {
            report.add(Finding::skipped(*check, why.clone()));
        }
        plan_session(context, &mut plan, &process, store);
        return plan;
    }
    report.add(challenge_finding(reached));
    let Some(client) = client else {
        plan.skip = Some("no HTTP client".into());
        return plan;
    };
    let mut ready = true;
    let found =
        discovery::protected_resource_found_at(&client, &target.url, &reached.challenge).await;
    let resource = match found {
        Ok((resource, at)) => {
            report.add(resource_finding(
                &resource,
                &at,
                &reached.challenge,
                &target.url,
            ));
            Some(resource)
        }
        Err(error) => {
            report.add(failed(
                Check::ResourceMetadata,
                "the bridge finds no usable protected resource metadata",
                &error,
            ));
            ready = false;
            None
        }
    };
    let server = match &resource {
        Some(resource) => {
            let issuer = resource
                .authorization_servers
                .first()
                .cloned()
                .unwrap_or_default();
            match discovery::authorization_server(&client, &issuer, &target.url).await {
                Ok(server) => {
                    let finding = server_finding(&server, &target.url);
                    ready &= finding.status != Status::Fail;
                    report.add(finding);
                    Some(server)
                }
                Err(error) => {
                    report.add(failed(
                        Check::AuthorizationServer,
                        "the bridge finds no usable metadata of the authorization server",
                        &error,
                    ));
                    ready = false;
                    None
                }
            }
        }
        None => {
            report.add(Finding::skipped(
                Check::AuthorizationServer,
                "no protected resource metadata",
            ));
            None
        }
    };
    match (&server, &resource) {
        (Some(server), Some(resource)) => {
            let url_finding = authorization_url_finding(server, resource, target);
            ready &= url_finding.status != Status::Fail;
            report.add(url_finding);
            let client_finding = client_id_finding(server, target, stored.as_ref(), &process);
            ready &= client_finding.status != Status::Fail;
            report.add(client_finding);
        }
        _ => {
            for check in [Check::AuthorizationUrl, Check::ClientId] {
                report.add(Finding::skipped(
                    check,
                    "no metadata of the authorization server",
                ));
            }
        }
    }
    let port_finding = redirect_port_finding(target, !usable);
    ready &= port_finding.status != Status::Fail;
    report.add(port_finding);
    report.add(stored_finding(
        context,
        target,
        stored.as_ref(),
        (usable, ready),
        server.as_ref(),
        &opened,
        &process,
    ));
    if process.sandbox && !usable {
        plan.skip = Some(
            "initialize fails at once in the sandbox of VS Code without a usable stored sign-in"
                .into(),
        );
    } else if !usable && !ready {
        plan.skip = Some("the sign-in cannot complete: a check above failed".into());
    } else if !usable && !context.sign_in {
        plan.skip = Some(
            "the server needs a sign-in: run doctor again with --sign-in to sign in and check what VS Code will get"
                .into(),
        );
    }
    plan_session(context, &mut plan, &process, store);
    plan
}

/// The checks of this module, the store first.
const SIGN_IN_CHECKS: [Check; 8] = [
    Check::TokenStore,
    Check::Challenge,
    Check::ResourceMetadata,
    Check::AuthorizationServer,
    Check::AuthorizationUrl,
    Check::ClientId,
    Check::RedirectPort,
    Check::StoredSignIn,
];

/// The store and the environment of the session: as a server start has them with
/// `--sign-in`; else read only, and a sign-in that fails at once.
fn plan_session(
    context: &Context<'_>,
    plan: &mut Plan,
    process: &SignInEnvironment,
    store: Arc<dyn TokenStore>,
) {
    if context.sign_in {
        plan.store = Some(store);
        plan.environment = process.clone();
    } else {
        plan.store = Some(Arc::new(ReadOnly(store)));
        plan.environment = SignInEnvironment {
            sandbox: true,
            ..process.clone()
        };
        plan.no_sign_in = true;
    }
}

/// The stored sign-in of `key` (a store that fails counts as empty, as at a start).
async fn load(store: &Arc<dyn TokenStore>, key: &EntryKey) -> Option<StoredSignIn> {
    let (store, key) = (store.clone(), key.clone());
    tokio::task::spawn_blocking(move || store.load(&key).ok().flatten())
        .await
        .ok()
        .flatten()
}

/// A failed step of the sign-in: its line and its cause.
fn failed(check: Check, summary: &str, error: &SignInError) -> Finding {
    let mut finding = Finding::fail(check, format!("{summary}: {error}"))
        .cause(error.cause())
        .advice(Section::SignIn, "This is for the administrator of the server: the detail says which document or URL is wrong.");
    if let Some(line) = sign_in_line(error) {
        finding = finding.line(line);
    }
    finding
}

/// sign_in.token_store. Where the server asked for no sign-in (`asks` false),
/// the store keeps nothing: it is told without a word of the sign-in (no start
/// line, no warning of a memory store), unless the store itself warns.
fn store_finding(
    context: &Context<'_>,
    target: &HttpTarget,
    opened: &OpenedStore,
    mark: usize,
    asks: bool,
) -> Finding {
    // The start line of the store, and what the store warns of.
    let lowest = if asks {
        tracing::Level::INFO
    } else {
        tracing::Level::WARN
    };
    let lines: Vec<String> = context
        .lines
        .since(mark)
        .into_iter()
        .filter(|line| line.level <= lowest)
        .map(|line| line.text)
        .collect();
    let summary = format!("a start opens the store: {}", opened_summary(opened));
    let finding = if asks
        && opened.store.kind() == StoreKind::Memory
        && target.sign_in.token_store == TokenStoreChoice::Auto
    {
        Finding::warning(Check::TokenStore, summary).advice(
            Section::TokenStores,
            "No keychain and no key of the file store: each start signs in again. Give MCP_BRIDGE_TOKEN_KEY from a password input to keep the sign-in.",
        )
    } else {
        Finding::pass(Check::TokenStore, summary)
    };
    finding.lines(lines)
}

fn opened_summary(opened: &OpenedStore) -> &'static str {
    match opened.store.kind() {
        StoreKind::Keychain => "the keychain of the host",
        StoreKind::File => "the encrypted files of the token directory",
        StoreKind::Memory => "memory (the tokens end with the process)",
    }
}

fn challenge_finding(reached: &Reached) -> Finding {
    let challenge = &reached.challenge;
    let metadata = match &challenge.resource_metadata {
        Some(url) => format!(
            "it names its protected resource metadata ({})",
            origin_and_path(url)
        ),
        None => "it names no resource_metadata: the bridge asks the well-known URIs".into(),
    };
    let scope = challenge
        .scope
        .as_ref()
        .map(|scope| format!(", the scope {scope}"))
        .unwrap_or_default();
    Finding::pass(
        Check::Challenge,
        format!(
            "HTTP status {} with a Bearer challenge: {metadata}{scope}",
            reached.status.unwrap_or_default()
        ),
    )
}

/// A URL without its query, for a report.
fn origin_and_path(text: &str) -> String {
    url::Url::parse(text).map_or_else(
        |_| "not a URL".into(),
        |url| format!("{}{}", url.origin().ascii_serialization(), url.path()),
    )
}

fn resource_finding(
    resource: &ProtectedResource,
    at: &url::Url,
    challenge: &crate::auth::challenge::Challenge,
    server_url: &url::Url,
) -> Finding {
    let from = if challenge.resource_metadata.is_some() {
        "named by the challenge"
    } else if at.path().trim_end_matches('/') == "/.well-known/oauth-protected-resource" {
        "the well-known URI at the root"
    } else {
        "the well-known URI at the path of the URL"
    };
    let exact =
        resource.resource.trim_end_matches('/') == server_url.as_str().trim_end_matches('/');
    Finding::pass(
        Check::ResourceMetadata,
        format!(
            "found at {} ({from}); its resource {} {} the URL",
            origin_and_path(at.as_str()),
            resource.resource,
            if exact { "is" } else { "covers" }
        ),
    )
    .detail(format!(
        "authorization servers: {}",
        resource.authorization_servers.join(", ")
    ))
    .detail(match &resource.scopes_supported {
        Some(scopes) if !scopes.is_empty() => format!("scopes: {}", scopes.join(" ")),
        _ => "scopes: none named".into(),
    })
}

fn server_finding(server: &AuthorizationServer, upstream: &url::Url) -> Finding {
    let yes_no = |value: bool| if value { "yes" } else { "no" };
    let mut finding = Finding::pass(
        Check::AuthorizationServer,
        format!("issuer {}: PKCE with S256", server.issuer),
    )
    .detail(format!(
        "iss in the redirect (RFC 9207): {}",
        if server.authorization_response_iss_parameter_supported {
            "announced, and the bridge checks it"
        } else {
            "not announced"
        }
    ))
    .detail(format!(
        "dynamic client registration: {}",
        yes_no(server.registration_endpoint.is_some())
    ))
    .detail(format!(
        "client ID metadata documents: {}",
        yes_no(server.client_id_metadata_document_supported)
    ));
    let mut endpoints = vec![(server.token_endpoint.as_str(), Role::TokenEndpoint)];
    if let Some(registration) = &server.registration_endpoint {
        endpoints.push((registration, Role::RegistrationEndpoint));
    }
    for (endpoint, role) in endpoints {
        if let Err(refused) = sign_in_url::check(endpoint, role, upstream) {
            let error = SignInError::Discovery(refused.to_string());
            finding = failed(
                Check::AuthorizationServer,
                "an endpoint of the authorization server breaks the rule of the URLs of the sign-in",
                &error,
            );
        }
    }
    finding
}

/// The authorization URL that the bridge would open, made as the sign-in makes it
/// (with stand-ins for the secrets of one sign-in), and checked by its rule.
fn authorization_url_finding(
    server: &AuthorizationServer,
    resource: &ProtectedResource,
    target: &HttpTarget,
) -> Finding {
    let redirect = redirect_uri(target.sign_in.redirect_port);
    let request = AuthorizationRequest {
        client_id: "doctor",
        redirect_uri: &redirect,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        state: "doctor",
        resource: &resource.resource,
        scope: None,
    };
    match authorization_url::build(&server.authorization_endpoint, &request, &target.url) {
        Ok(url) => Finding::pass(
            Check::AuthorizationUrl,
            format!(
                "the bridge can open the authorization URL at {}",
                origin_and_path(url.as_str())
            ),
        ),
        Err(unsafe_url) => failed(
            Check::AuthorizationUrl,
            "the bridge would refuse the authorization URL",
            &SignInError::UnsafeAuthorizationUrl(unsafe_url),
        ),
    }
}

fn client_id_finding(
    server: &AuthorizationServer,
    target: &HttpTarget,
    stored: Option<&StoredSignIn>,
    process: &SignInEnvironment,
) -> Finding {
    let options = process.settings(target).client;
    let port = target.sign_in.redirect_port;
    // The client of the stored sign-in, as the sign-in takes it again.
    let registered = stored
        .filter(|_| options.client_id.is_none())
        .map(|stored| Registered {
            issuer: stored.issuer.clone(),
            client: client_id::Client {
                id: stored.client_id.clone(),
                secret: stored.client_secret.clone(),
                secret_in_body: false,
            },
        });
    match client_id::source(server, &options, port, registered.as_ref()) {
        Err(error) => failed(
            Check::ClientId,
            "the bridge has no client ID for this server",
            &error,
        ),
        Ok(ClientSource::ClientIdOption) => Finding::pass(
            Check::ClientId,
            format!(
                "--client-id{}",
                if options.client_issuer.is_some() {
                    ", for the issuer of --client-issuer"
                } else {
                    ""
                }
            ),
        ),
        Ok(ClientSource::Registered) => Finding::pass(
            Check::ClientId,
            "the client that the stored sign-in registered at this issuer",
        ),
        Ok(ClientSource::MetadataUrl) => Finding::pass(
            Check::ClientId,
            format!(
                "the client ID metadata document of --client-metadata-url ({}); the bridge reads it at the sign-in",
                options
                    .metadata_url
                    .as_ref()
                    .map(|url| origin_and_path(url.as_str()))
                    .unwrap_or_default()
            ),
        ),
        Ok(ClientSource::BridgeDocument) => Finding::pass(
            Check::ClientId,
            format!(
                "the client ID metadata document of the bridge ({DOCUMENT_URL}): the server takes documents, and the redirect port is the document's; when the bridge finds it not usable, it registers"
            ),
        ),
        Ok(ClientSource::Registration(why)) => {
            // The line of the reason comes first, as the sign-in writes it first.
            let reason: Vec<String> = registration_line(&why).into_iter().collect();
            match &server.registration_endpoint {
                Some(endpoint) => Finding::pass(
                    Check::ClientId,
                    format!(
                        "dynamic client registration at {}",
                        origin_and_path(endpoint)
                    ),
                )
                .lines(reason),
                None => {
                    let mut finding = failed(
                        Check::ClientId,
                        "the bridge would register a client, but the server has no registration endpoint",
                        &SignInError::NoClientRegistration,
                    );
                    finding.lines.splice(0..0, reason);
                    finding
                }
            }
        }
    }
}

/// The redirect port must be free when a sign-in starts: a fail when one starts
/// at the next start, a warning when the stored sign-in serves for now.
fn redirect_port_finding(target: &HttpTarget, sign_in_now: bool) -> Finding {
    let port = target.sign_in.redirect_port;
    match Receiver::bind(port) {
        Ok(receiver) => {
            drop(receiver);
            Finding::pass(
                Check::RedirectPort,
                format!("the redirect port {port} is free"),
            )
        }
        Err(error) => {
            let summary = format!("another program listens on the redirect port {port}");
            let finding = if sign_in_now {
                Finding::fail(Check::RedirectPort, summary)
            } else {
                Finding::warning(
                    Check::RedirectPort,
                    format!("{summary}: the next sign-in fails while it does"),
                )
            };
            finding
                .cause(error.cause())
                .advice(
                    Section::SignIn,
                    "Give each server with a sign-in its own --redirect-port (another bridge that signs in holds its port until the sign-in ends).",
                )
        }
    }
}

fn stored_finding(
    context: &Context<'_>,
    target: &HttpTarget,
    stored: Option<&StoredSignIn>,
    (usable, ready): (bool, bool),
    server: Option<&AuthorizationServer>,
    opened: &OpenedStore,
    process: &SignInEnvironment,
) -> Finding {
    let account = &target.sign_in.account;
    let Some(stored) = stored else {
        if process.sandbox {
            return Finding::fail(
                Check::StoredSignIn,
                format!("no stored sign-in for this URL and the account {account}, and the sandbox of VS Code blocks a sign-in (SANDBOX_RUNTIME=1)"),
            )
            .cause(Cause::SignInSandbox)
            .advice(Section::SignIn, "Disable the sandbox for this server.");
        }
        let how = if target.sign_in.no_browser {
            "writes the URL of the sign-in to the Output channel (--no-browser)"
        } else {
            "opens the browser"
        };
        let memory = if opened.store.kind() == StoreKind::Memory {
            ", at each start (the store is memory)"
        } else {
            ""
        };
        let finding = Finding::pass(
            Check::StoredSignIn,
            format!(
                "no stored sign-in for this URL and the account {account}: the start signs in and {how}{memory}"
            ),
        );
        if !ready {
            return finding;
        }
        return finding.advice(
            Section::SignIn,
            if context.sign_in {
                "doctor signs in now, as a start would (--sign-in)."
            } else {
                "Run doctor again with --sign-in to sign in now, as a start would."
            },
        );
    };
    let expiry = stored
        .expires_at
        .and_then(|at| i64::try_from(at).ok())
        .map(|at| {
            format!(
                "its access token expires {} ({})",
                tls::from_now(at),
                tls::date(at)
            )
        })
        .unwrap_or_else(|| "its access token names no expiry".into());
    let refresh = if stored.refresh_token.is_some() {
        "with a refresh token"
    } else {
        "without a refresh token"
    };
    let summary = format!(
        "a stored sign-in for this URL and the account {account} at {}: {expiry}, {refresh}",
        stored.issuer
    );
    let mut finding = if usable {
        Finding::pass(Check::StoredSignIn, summary)
    } else if process.sandbox {
        Finding::fail(
            Check::StoredSignIn,
            format!("{summary}; it is not usable, and the sandbox of VS Code blocks a sign-in"),
        )
        .cause(Cause::SignInSandbox)
        .advice(Section::SignIn, "Disable the sandbox for this server.")
    } else {
        Finding::warning(
            Check::StoredSignIn,
            format!(
                "{summary}; a start {}",
                if stored.refresh_token.is_some() {
                    "refreshes it, or signs in again"
                } else {
                    "signs in again"
                }
            ),
        )
        .advice(
            Section::SignIn,
            "doctor does not refresh without --sign-in (a refresh can replace the stored refresh token): run it with --sign-in to do what a start does.",
        )
    };
    if let Some(scope) = &stored.scope {
        finding = finding.detail(format!("scope: {scope}"));
    }
    if let Some(server) = server
        && server.issuer.trim_end_matches('/') != stored.issuer.trim_end_matches('/')
    {
        finding = finding.detail(format!(
            "the server now names the authorization server {}: the next sign-in goes there",
            server.issuer
        ));
    }
    if !discovery::resource_covers(&stored.resource, &target.url) {
        finding = finding.detail(format!(
            "its resource {} does not cover the URL",
            stored.resource
        ));
    }
    finding
}

/// sign_in.sign_in after the session: what the sign-in of the start did.
pub async fn after_session(
    context: &Context<'_>,
    plan: &Plan,
    run: Option<&Run>,
    report: &mut Report,
) {
    let Some(run) = run else {
        if !report.has(Check::SignIn) {
            let why = plan.skip.clone().unwrap_or_default();
            report.add(Finding::skipped(Check::SignIn, why));
        }
        return;
    };
    let error_cause = match &run.initialize {
        Reply::Error(error) => cause_of(error),
        _ => None,
    };
    if let Some(cause) = error_cause.filter(|cause| is_sign_in_cause(*cause)) {
        let lines = context.lines.warnings_between(run.initialize_lines);
        if plan.no_sign_in && cause == Cause::SignInSandbox {
            report.add(
                Finding::warning(
                    Check::SignIn,
                    "the server refused the stored sign-in: a start signs in again; doctor signs in only with --sign-in",
                )
                .advice(Section::SignIn, "Run doctor again with --sign-in."),
            );
            return;
        }
        report.add(
            Finding::fail(Check::SignIn, "the sign-in of the start failed")
                .lines(lines)
                .cause(cause)
                .advice(
                    Section::SignInLines,
                    "The line above and the table of the sign-in lines say what to do.",
                ),
        );
        return;
    }
    if !context.sign_in {
        report.add(Finding::skipped(
            Check::SignIn,
            "doctor signs in only with --sign-in; the stored sign-in served, or none was needed",
        ));
        return;
    }
    let after = match &plan.opened {
        Some((store, key)) => load(store, key).await,
        None => None,
    };
    let stored_now = after.is_some() && after != plan.before;
    let finding = if stored_now {
        let kind = plan
            .opened
            .as_ref()
            .map_or("the store", |(store, _)| match store.kind() {
                StoreKind::Keychain => "the keychain of the host",
                StoreKind::File => "the encrypted files",
                StoreKind::Memory => "memory only",
            });
        Finding::pass(
            Check::SignIn,
            format!(
                "signed in as a start signs in; the sign-in is kept in {kind}, under the entry of this URL and account that a start reads"
            ),
        )
    } else {
        Finding::pass(
            Check::SignIn,
            "no sign-in was needed: the stored sign-in served, or the server asked for none",
        )
    };
    report.add(finding);
}
