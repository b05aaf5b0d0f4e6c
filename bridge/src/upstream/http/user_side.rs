//! VS Code's side of a sign-in, as the HTTP link gives it: each [`Prompt`] of the
//! sign-in becomes the event of the link that carries it to the session (a URL
//! elicitation, its completion, a withdrawal, the news of new tokens).

use crate::auth::prompt::{ClientView, Prompt, UserSide};
use crate::upstream::{ClientQuestion, ClientState, UpstreamEvent};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};

/// The message of the URL elicitation of a sign-in.
pub const ELICITATION_MESSAGE: &str = "The upstream server needs a new sign-in. Open the URL and sign in at the authorization server.";

/// The session's side of one request's sign-in: the state that the session
/// publishes, and the link's events.
#[derive(Debug, Clone)]
pub struct LinkUserSide {
    pub state: watch::Receiver<ClientState>,
    pub events: mpsc::Sender<UpstreamEvent>,
}

#[async_trait::async_trait]
impl UserSide for LinkUserSide {
    fn view(&self) -> ClientView {
        let state = *self.state.borrow();
        ClientView {
            initialized: state.initialized,
            url_elicitation: state.url_elicitation,
        }
    }

    async fn prompt(&self, prompt: Prompt) {
        let _ = self.events.send(event_of(prompt)).await;
    }
}

/// The event of the link that carries `prompt`.
fn event_of(prompt: Prompt) -> UpstreamEvent {
    match prompt {
        Prompt::OpenUrl {
            elicitation_id,
            url,
            answer,
        } => {
            let mut params = Map::new();
            params.insert("mode".into(), "url".into());
            params.insert("elicitationId".into(), elicitation_id.into());
            params.insert("url".into(), url.into());
            params.insert("message".into(), ELICITATION_MESSAGE.into());
            UpstreamEvent::AskClient(ClientQuestion {
                method: "elicitation/create".into(),
                params,
                answer,
            })
        }
        Prompt::Withdraw { reason } => UpstreamEvent::QuestionsWithdrawn { reason },
        Prompt::Completed { elicitation_id } => {
            let mut params = Map::new();
            params.insert("elicitationId".into(), Value::from(elicitation_id));
            UpstreamEvent::NotifyClient {
                method: "notifications/elicitation/complete",
                params,
            }
        }
        Prompt::SignedIn => UpstreamEvent::SignedIn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::sync::oneshot;

    #[test]
    fn a_url_question_is_a_url_elicitation_with_the_message_of_the_contract() {
        let (answer, _answered) = oneshot::channel();
        let UpstreamEvent::AskClient(question) = event_of(Prompt::OpenUrl {
            elicitation_id: "e-1".into(),
            url: "https://as.example.com/authorize?x=1".into(),
            answer,
        }) else {
            panic!("not a question");
        };
        assert_eq!(question.method, "elicitation/create");
        assert_eq!(
            Value::Object(question.params),
            json!({"mode": "url", "elicitationId": "e-1",
                   "url": "https://as.example.com/authorize?x=1",
                   "message": ELICITATION_MESSAGE})
        );
    }

    #[test]
    fn the_end_of_a_sign_in_is_the_completion_of_its_elicitation_and_the_news_of_tokens() {
        let UpstreamEvent::NotifyClient { method, params } = event_of(Prompt::Completed {
            elicitation_id: "e-1".into(),
        }) else {
            panic!("not a notification");
        };
        assert_eq!(method, "notifications/elicitation/complete");
        assert_eq!(Value::Object(params), json!({"elicitationId": "e-1"}));
        assert!(matches!(
            event_of(Prompt::SignedIn),
            UpstreamEvent::SignedIn
        ));
        assert!(matches!(
            event_of(Prompt::Withdraw { reason: "r".into() }),
            UpstreamEvent::QuestionsWithdrawn { reason } if reason == "r"
        ));
    }
}
