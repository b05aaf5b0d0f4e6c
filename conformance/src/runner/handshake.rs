//! The step `handshake`: the opening of a client profile, with the answer of a
//! scripted upstream to the bridge's server/discover.

use super::send::{ProfileFrameError, profile_frame};
use super::{Run, at};
use crate::outcome::Failure;
use harness_sim::Profile;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

impl Run<'_> {
    pub(super) async fn handshake(
        &mut self,
        line: usize,
        profile: Option<Profile>,
        discover: Option<&Value>,
        initialized: bool,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let profile = profile
            .or(self.transcript.header.client)
            .ok_or(ProfileFrameError::NoProfile)
            .map_err(at(line))?;
        let id = profile.first_id().max(1);
        self.send(&profile.initialize_request(id))
            .await
            .map_err(at(line))?;
        if let Some(discover) = discover {
            self.upstream_expect(
                line,
                &json!({"jsonrpc":"2.0","id":"$capture:handshake.discover","method":"server/discover","params":{"_meta":"$object"}}),
                deadline,
            )
            .await?;
            let mut result = Map::new();
            result.insert("resultType".into(), "complete".into());
            result.insert("supportedVersions".into(), json!(["2026-07-28"]));
            result.insert("capabilities".into(), json!({}));
            result.insert("ttlMs".into(), 0.into());
            result.insert("cacheScope".into(), "public".into());
            for (key, value) in discover.as_object().into_iter().flatten() {
                result.insert(key.clone(), value.clone());
            }
            let id = self
                .captures
                .get("handshake.discover")
                .cloned()
                .unwrap_or(Value::Null);
            let frame = json!({"jsonrpc":"2.0","id":id,"result":result});
            self.hub()
                .map_err(at(line))?
                .send_line(&frame.to_string())
                .await
                .map_err(at(line))?;
        }
        let response = self.next_frame(line, deadline).await?;
        self.check_frame(
            line,
            &json!({"jsonrpc":"2.0","id":id,"result":{"$partial":true,"protocolVersion":"2025-11-25","capabilities":"$object","serverInfo":"$object"}}),
            &response,
            "bridge stdout",
        )?;
        self.captures
            .set("handshake.result", response["result"].clone());
        if initialized {
            let frame = profile_frame(profile, "initialized", None).map_err(at(line))?;
            self.send(&frame).await.map_err(at(line))?;
        }
        Ok(())
    }
}
