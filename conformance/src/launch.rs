//! The start of one run: the upstream hub (scripted or a fixture behind the
//! relay) and the bridge process with the transcript's arguments and environment.
//! Both the runner of steps and the replay of recordings start here.

use crate::bins::{Bins, BinsError};
use crate::format::{Header, Transcript, Upstream};
use crate::https_upstream::{HttpsUpstream, HttpsUpstreamError};
use crate::schema::Schemas;
use crate::upstream::{Mode, UpstreamHub};
use harness_sim::process::{PeerOptions, Received, StdioPeer};
use std::sync::Arc;
use tokio::time::Instant;

/// What every run shares.
#[derive(Clone)]
pub struct Env {
    pub bins: Bins,
    pub schemas: Arc<Schemas>,
    /// Variables for every bridge (for example `MCP_BRIDGE_TEST_FAULT`).
    pub bridge_env: Vec<(String, String)>,
    /// The names of the paths of the implementation under test (`$TOKEN_DIR`,
    /// `$KEYCHAIN_SERVICE`).
    pub product_paths: crate::product_paths::ProductPaths,
}

/// A random token so that only our relay joins our listener.
fn token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", nanos, std::process::id())
}

/// A started run: the bridge and its upstream.
pub struct Launched {
    pub peer: StdioPeer,
    /// A scripted or stdio fixture upstream, behind the relay.
    pub hub: Option<UpstreamHub>,
    /// The fixture over HTTPS of the URL form.
    pub https: Option<HttpsUpstream>,
    /// The Secret Service of the run (`"secret_service": true`).
    pub secret_service: Option<crate::secret_service::SecretService>,
}

/// Why a run did not start.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Https(#[from] HttpsUpstreamError),
    #[error("cannot listen for the relay: {0}")]
    Relay(std::io::Error),
    #[error(transparent)]
    Bins(#[from] BinsError),
    #[error("cannot start the bridge: {0}")]
    Bridge(harness_sim::process::PeerError),
    #[error(transparent)]
    SecretService(#[from] crate::secret_service::SecretServiceError),
}

/// Starts the hub and the bridge of a transcript.
pub async fn start_bridge(transcript: &Transcript, env: &Env) -> Result<Launched, LaunchError> {
    let header = &transcript.header;
    let https = match &header.upstream {
        Upstream::HttpsFixture(args) => Some(
            HttpsUpstream::start(
                &env.bins.fixture,
                args,
                &header.env,
                header.url_host.as_deref(),
                header.url_query.as_deref(),
                env.product_paths.clone(),
            )
            .await?,
        ),
        _ => None,
    };
    let mode = match &header.upstream {
        Upstream::Scripted {
            exit_at_eof,
            ignore_sigterm,
        } => Some(Mode::Scripted {
            exit_at_eof: *exit_at_eof,
            ignore_sigterm: *ignore_sigterm,
        }),
        Upstream::Fixture(args) => Some(Mode::Fixture(env.bins.fixture.clone(), args.clone())),
        Upstream::None | Upstream::HttpsFixture(_) | Upstream::Embedded => None,
    };
    let hub = match mode {
        Some(mode) => Some(
            UpstreamHub::start(mode, token())
                .await
                .map_err(LaunchError::Relay)?,
        ),
        None => None,
    };
    let program = match &header.upstream {
        Upstream::Embedded => env.bins.embedded()?,
        _ => env.bins.bridge.clone(),
    };
    let mut command = vec![program.to_string_lossy().into_owned()];
    command.extend(header.bridge_args.iter().cloned());
    if let Some(hub) = &hub {
        command.push("--".into());
        command.push(env.bins.relay.to_string_lossy().into_owned());
        command.push("relay".into());
        command.push(hub.port.to_string());
        command.push(hub.token.clone());
    }
    if let Some(https) = &https {
        for arg in command.iter_mut().skip(1) {
            *arg = https.resolve(arg);
        }
        command.extend(https.bridge_args());
    }
    let secret_service = match header.secret_service {
        true => Some(crate::secret_service::SecretService::start().await?),
        false => None,
    };
    let mut options = PeerOptions::default();
    let service_env = secret_service
        .iter()
        .flat_map(crate::secret_service::SecretService::bridge_env);
    for (key, value) in bridge_environment(env, header, https.as_ref())
        .into_iter()
        .chain(service_env)
    {
        options.env.push((key.into(), value.into()));
    }
    let peer = StdioPeer::spawn_with(&command, options).map_err(LaunchError::Bridge)?;
    Ok(Launched {
        peer,
        hub,
        https,
        secret_service,
    })
}

/// A bridge of the URL form with other options before the URL (`args`) and the
/// transcript's environment with `more_env` over it: a restart of the server.
pub fn restart_url_bridge(
    env: &Env,
    header: &Header,
    https: &HttpsUpstream,
    args: &[String],
    more_env: &[(String, String)],
) -> Result<StdioPeer, LaunchError> {
    let mut command = vec![env.bins.bridge.to_string_lossy().into_owned()];
    command.extend(args.iter().map(|arg| https.resolve(arg)));
    command.extend(https.bridge_args());
    let mut options = PeerOptions::default();
    for (key, value) in restarted_environment(env, header, https, more_env) {
        options.env.push((key.into(), value.into()));
    }
    StdioPeer::spawn_with(&command, options).map_err(LaunchError::Bridge)
}

/// The environment of a restarted bridge: the transcript's, then `more_env` (a
/// variable of both takes the value of `more_env`).
pub fn restarted_environment(
    env: &Env,
    header: &Header,
    https: &HttpsUpstream,
    more_env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut all = bridge_environment(env, header, Some(https));
    for (key, value) in more_env {
        all.retain(|(k, _)| k != key);
        all.push((key.clone(), https.resolve(value)));
    }
    all
}

/// The environment of a bridge process of the transcript: the run's, then the
/// header's, with the placeholders of the fixture over HTTPS in place.
pub fn bridge_environment(
    env: &Env,
    header: &Header,
    https: Option<&HttpsUpstream>,
) -> Vec<(String, String)> {
    env.bridge_env
        .iter()
        .chain(&header.env)
        .map(|(key, value)| {
            let value = https.map_or_else(|| value.clone(), |https| https.resolve(value));
            (key.clone(), value)
        })
        .collect()
}

/// The next stdout line before `deadline`.
pub async fn recv(peer: &mut StdioPeer, deadline: Instant) -> Option<Received> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    peer.recv(remaining).await
}
