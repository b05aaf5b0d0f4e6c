//! What a sign-in needs of VS Code's side, and what it tells it, in its own types:
//! the HTTP link hands a sign-in a [`UserSide`] and maps each [`Prompt`] to the
//! events it sends the session. The sign-in knows no link and no session, so it can
//! run with any [`UserSide`] (a test's, or a command's that asks nobody).

use crate::wire::frame::Outcome;
use tokio::sync::oneshot;

/// VS Code's side, as far as a sign-in needs to know it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientView {
    /// VS Code sent `notifications/initialized`: a question to the user is then a
    /// URL elicitation, never a browser that the bridge opens (M4).
    pub initialized: bool,
    /// VS Code declared URL elicitation at initialize.
    pub url_elicitation: bool,
}

/// What a sign-in tells VS Code's side.
#[derive(Debug)]
pub enum Prompt {
    /// Asks the user to open `url`, the authorization URL, under the id
    /// `elicitation_id` (a URL elicitation, O1). VS Code's result or error comes on
    /// `answer`; a sign-in that stops waiting drops its end, which tells the side
    /// that the question is void.
    OpenUrl {
        elicitation_id: String,
        url: String,
        answer: oneshot::Sender<Outcome>,
    },
    /// The questions whose answer nobody waits for any more are void, for `reason`.
    Withdraw { reason: String },
    /// The sign-in that `elicitation_id` asked for completed.
    Completed { elicitation_id: String },
    /// New tokens: what waited for a sign-in (a listen stream) may go on.
    SignedIn,
}

/// VS Code's side of the sign-ins of one link.
#[async_trait::async_trait]
pub trait UserSide: Send + Sync {
    /// What VS Code's side is now.
    fn view(&self) -> ClientView;

    /// Hands `prompt` to VS Code's side; a side that is gone drops it.
    async fn prompt(&self, prompt: Prompt);
}
