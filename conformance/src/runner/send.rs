//! The steps that write to the bridge's stdin: a frame, a raw line (once or
//! repeated), a frame of the client profile, and the end of reading stdout.

use super::{Run, at};
use crate::matchers;
use crate::outcome::Failure;
use harness_sim::Profile;
use serde_json::{Value, json};

/// Why a frame of a client profile cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ProfileFrameError {
    #[error("the profile {0} sends no server/discover")]
    NoDiscover(Profile),
    #[error("the profile frame {0:?} is not known: use initialize, discover or initialized")]
    Unknown(String),
    #[error("no client profile")]
    NoProfile,
}

impl Run<'_> {
    /// `send`: a frame, its `$ref:` values substituted.
    pub(super) async fn send_frame(&mut self, line: usize, frame: &Value) -> Result<(), Failure> {
        let frame = matchers::substitute(frame, &self.captures).map_err(at(line))?;
        self.send(&frame).await.map_err(at(line))
    }

    /// `send_raw`: a line as it is, its `${NAME}` substituted; without its line
    /// end when `line_end` is false.
    pub(super) async fn send_raw(
        &mut self,
        line: usize,
        text: &str,
        line_end: bool,
    ) -> Result<(), Failure> {
        let text = matchers::substitute_text(text, &self.captures).map_err(at(line))?;
        let mut bytes = text.into_bytes();
        if line_end {
            bytes.push(b'\n');
        }
        let peer = self.peer().map_err(at(line))?;
        peer.send_raw(&bytes)
            .await
            .map_err(|e| Failure::at(line, format!("send_raw: {e}")))
    }

    /// `send_raw` with `repeat`: the line `count` times, `${seq}` counting from 1.
    pub(super) async fn send_repeated(
        &mut self,
        line: usize,
        text: &str,
        count: u64,
    ) -> Result<(), Failure> {
        for seq in 1..=count {
            self.captures.set("seq", Value::from(seq));
            let text = matchers::substitute_text(text, &self.captures).map_err(at(line))?;
            let mut bytes = text.into_bytes();
            bytes.push(b'\n');
            let peer = self.peer().map_err(at(line))?;
            peer.send_raw(&bytes)
                .await
                .map_err(|e| Failure::at(line, format!("send_raw (time {seq} of {count}): {e}")))?;
        }
        Ok(())
    }

    /// `send_profile`: a frame of the header's client profile.
    pub(super) async fn send_profile(
        &mut self,
        line: usize,
        frame: &str,
        id: Option<i64>,
    ) -> Result<(), Failure> {
        let profile = self
            .transcript
            .header
            .client
            .ok_or(ProfileFrameError::NoProfile)
            .map_err(at(line))?;
        let frame = profile_frame(profile, frame, id).map_err(at(line))?;
        self.send(&frame).await.map_err(at(line))
    }
}

/// A frame of a client profile: `initialize`, `discover` or `initialized`.
pub fn profile_frame(
    profile: Profile,
    name: &str,
    id: Option<i64>,
) -> Result<Value, ProfileFrameError> {
    match name {
        "initialize" => Ok(profile.initialize_request(id.unwrap_or(profile.first_id().max(1)))),
        "discover" => {
            let mut frame = profile
                .discover_request()
                .ok_or(ProfileFrameError::NoDiscover(profile))?;
            if let Some(id) = id {
                frame["id"] = id.into();
            }
            Ok(frame)
        }
        // VS Code builds notifications as {...n, jsonrpc}; copilot-cli (rmcp) puts jsonrpc first.
        "initialized" if profile.is_local() => {
            Ok(json!({"method":"notifications/initialized","jsonrpc":"2.0"}))
        }
        "initialized" => Ok(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
        other => Err(ProfileFrameError::Unknown(other.to_owned())),
    }
}
