//! doctor's one-time start URL for a sign-in of the bridge after
//! `notifications/initialized`. The bridge gives VS Code the authorization URL in
//! a URL elicitation (M4); VS Code opens it itself. doctor, which plays VS Code,
//! must open it with the browser opener, whose arguments other users of a POSIX
//! host can read: so it opens a one-time start URL instead, as a start does (M6),
//! served by the receiver of the sign-in on a loopback port of its own. The first
//! request is sent to the authorization URL; a second one gets the page and the
//! line of a start URL opened twice, and doctor then cancels the request whose
//! sign-in it is, which stops that sign-in.

use crate::auth::browser::Opener;
use crate::auth::pkce::Secret;
use crate::auth::receiver::{Gate, Receiver, StartUrl};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// A start URL that is served until it was opened twice or doctor ends.
#[derive(Debug)]
pub struct Served(JoinHandle<()>);

impl Drop for Served {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why no start URL opened: the URL of the sign-in is then written for the user.
#[derive(Debug)]
pub struct NotOpened;

/// Serves a start URL that sends the browser to `authorization_url`, and opens
/// it with `opener`; `reused` hears of a second request. `server_url` is the
/// upstream's, for the lines of the gate.
pub fn open(
    opener: &Opener,
    authorization_url: &str,
    server_url: &str,
    reused: mpsc::UnboundedSender<()>,
) -> Result<Served, NotOpened> {
    let token = Secret::start_token().map_err(|_| NotOpened)?;
    // No redirect comes here (it goes to the bridge's own receiver): a state that
    // nobody knows.
    let state = Secret::random().map_err(|_| NotOpened)?;
    let receiver = Receiver::bind(0).map_err(|_| NotOpened)?;
    let start = StartUrl::new(token, authorization_url.to_owned());
    let url = start.url(receiver.port());
    let mut gate = Gate::new(state, Some(start), server_url);
    let served = Served(tokio::spawn(async move {
        // Only a second request of the start URL ends the serving here.
        if receiver.serve(&mut gate).await.is_err() {
            let _ = reused.send(());
        }
    }));
    opener.open(&url).map_err(|_| NotOpened)?;
    Ok(served)
}
