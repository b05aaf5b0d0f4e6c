//! Pre-serialized frames of the two bench clients.
//!
//! Both clients are copilot-cli (1.0.95) as harness-sim simulates it, so that the
//! calls are the same but for the revision: **direct** speaks 2026-07-28 to the
//! fixture (the `_meta` of the modern path on every request, no handshake), and
//! **bridged** speaks 2025-11-25 to the bridge (`initialize`, then requests with a
//! `_meta` that holds only the progress token). A frame is serialized once into a
//! [`Template`]; a call only writes its id (and keeps its large text apart).

use serde_json::{Map, Value, json};

use harness_sim::client::frames;
use harness_sim::profile::{Harness, Profile};

/// The client profile of both sides.
pub const PROFILE: Profile = Profile::Copilot095;

/// Which path a measurement takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// A 2026-07-28 client talking to the fixture server.
    Direct,
    /// A 2025-11-25 client talking to the bridge in front of the fixture server.
    Bridged,
    /// The direct client through `harness-bench relay`, a process that passes bytes
    /// through unchanged: the floor of one more process on the path (`--floor`).
    Relay,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Direct => "direct",
            Side::Bridged => "bridged",
            Side::Relay => "relay",
        }
    }

    /// Whether the client speaks 2026-07-28 (to the fixture, maybe through the relay).
    pub fn modern(self) -> bool {
        self != Side::Bridged
    }
}

const ID_MARK: &str = "\u{1}bench-id\u{1}";
const TEXT_MARK: &str = "\u{1}bench-text\u{1}";

/// One piece of a [`Template`].
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Bytes(Vec<u8>),
    Id,
    Text,
}

/// A serialized frame with holes for the request id (also its progress token) and
/// for one text, which is written apart so that a 64 MiB text is never copied.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// The frame of `frame`, where the string [`ID_MARK`] stands for the id and the
    /// string [`TEXT_MARK`] for the text, with its newline.
    fn of(frame: &Value) -> Self {
        let mut line = frame.to_string();
        line.push('\n');
        let id_mark = Value::from(ID_MARK).to_string();
        let text_mark = Value::from(TEXT_MARK).to_string();
        // Both marks are whole strings: the id replaces its string, the text goes
        // between the quotes of its string.
        let mut pieces = Vec::new();
        let mut rest = line.as_str();
        loop {
            let next_id = rest.find(&id_mark);
            let next_text = rest.find(&text_mark);
            let (at, len, piece) = match (next_id, next_text) {
                (Some(i), Some(t)) if t < i => (t, text_mark.len(), Piece::Text),
                (Some(i), _) => (i, id_mark.len(), Piece::Id),
                (None, Some(t)) => (t, text_mark.len(), Piece::Text),
                (None, None) => break,
            };
            if at > 0 {
                pieces.push(Piece::Bytes(rest.as_bytes()[..at].to_vec()));
            }
            if piece == Piece::Text {
                // Keep the quotes of the string around the text.
                pieces.push(Piece::Bytes(b"\"".to_vec()));
                pieces.push(Piece::Text);
                pieces.push(Piece::Bytes(b"\"".to_vec()));
            } else {
                pieces.push(piece);
            }
            rest = &rest[at + len..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Bytes(rest.as_bytes().to_vec()));
        }
        Self { pieces }
    }

    /// The frame with `id`, the text written in place: for small texts.
    pub fn render(&self, id: i64, text: &str, out: &mut Vec<u8>) {
        for piece in &self.pieces {
            match piece {
                Piece::Bytes(bytes) => out.extend_from_slice(bytes),
                Piece::Id => out.extend_from_slice(id.to_string().as_bytes()),
                Piece::Text => out.extend_from_slice(text.as_bytes()),
            }
        }
    }

    /// The frame with `id` as the bytes before and after the text.
    pub fn render_around_text(&self, id: i64) -> (Vec<u8>, Vec<u8>) {
        let mut before = Vec::new();
        let mut after = Vec::new();
        let mut seen_text = false;
        for piece in &self.pieces {
            let out = if seen_text { &mut after } else { &mut before };
            match piece {
                Piece::Bytes(bytes) => out.extend_from_slice(bytes),
                Piece::Id => out.extend_from_slice(id.to_string().as_bytes()),
                Piece::Text => seen_text = true,
            }
        }
        (before, after)
    }

    /// The length of the frame without its newline, for `id` and a text of `text_len` bytes.
    pub fn line_len(&self, id: i64, text_len: usize) -> usize {
        let (before, after) = self.render_around_text(id);
        before.len() + text_len + after.len() - 1
    }
}

/// The frames of one side.
#[derive(Clone, Debug)]
pub struct Frames {
    side: Side,
    /// The `_meta` of the modern path, without the progress token.
    modern_meta: Value,
}

impl Frames {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            modern_meta: frames::modern_meta_base(PROFILE),
        }
    }

    /// The opening request (id 0): `server/discover` or `initialize`.
    pub fn opening(&self) -> Vec<u8> {
        let request = if self.side.modern() {
            PROFILE.discover_request()
        } else {
            Some(PROFILE.initialize_request(0))
        };
        line_of(&request.unwrap_or(Value::Null))
    }

    /// What follows the opening result: `notifications/initialized` on the bridged side.
    pub fn after_opening(&self) -> Option<Vec<u8>> {
        (!self.side.modern()).then(|| {
            line_of(&frames::notification(
                Harness::Copilot,
                "notifications/initialized",
                None,
            ))
        })
    }

    /// `_meta` of a request with the progress token `token`.
    fn meta(&self, token: Value) -> Value {
        if self.side.modern() {
            let mut meta = self.modern_meta.clone();
            if let Some(map) = meta.as_object_mut() {
                map.insert("progressToken".into(), token);
            }
            meta
        } else {
            json!({"progressToken": token})
        }
    }

    /// A request with params in rmcp's sorted key order.
    fn request(&self, method: &str, mut params: Map<String, Value>, token: Value) -> Value {
        params.insert("_meta".into(), self.meta(token));
        json!({
            "jsonrpc": "2.0",
            "id": ID_MARK,
            "method": method,
            "params": frames::sorted(Value::Object(params)),
        })
    }

    /// `tools/call` of `echo` with a text hole.
    pub fn echo(&self) -> Template {
        self.call("echo", json!({"text": TEXT_MARK}))
    }

    /// `tools/call` of `tool` with `arguments` (where [`TEXT_MARK`] may stand for the text).
    pub fn call(&self, tool: &str, arguments: Value) -> Template {
        let mut params = Map::new();
        params.insert("name".into(), tool.into());
        params.insert("arguments".into(), arguments);
        Template::of(&self.request("tools/call", params, ID_MARK.into()))
    }

    /// `tools/call` of `slow`: a call that stays in flight for `ms` milliseconds.
    pub fn slow(&self, ms: u64) -> Template {
        self.call("slow", json!({"ms": ms}))
    }

    /// One page of `tools/list` (no `cursor` on the first page).
    pub fn list_page(&self, id: i64, cursor: Option<&str>) -> Vec<u8> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        let frame = self.request("tools/list", params, id.into());
        let mut line = Vec::new();
        Template::of(&frame).render(id, "", &mut line);
        line
    }
}

fn line_of(frame: &Value) -> Vec<u8> {
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_ids_and_texts() {
        let direct = Frames::new(Side::Direct).echo();
        let mut line = Vec::new();
        direct.render(42, "hi", &mut line);
        let frame: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(frame["id"], 42);
        assert_eq!(frame["params"]["arguments"]["text"], "hi");
        assert_eq!(frame["params"]["_meta"]["progressToken"], 42);
        assert_eq!(
            frame["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(direct.line_len(42, 2), line.len() - 1);

        let bridged = Frames::new(Side::Bridged).echo();
        let (before, after) = bridged.render_around_text(7);
        let mut joined = before.clone();
        joined.extend_from_slice(b"abc");
        joined.extend_from_slice(&after);
        let frame: Value = serde_json::from_slice(&joined).unwrap();
        assert_eq!(
            frame["params"],
            json!({"_meta": {"progressToken": 7}, "arguments": {"text": "abc"}, "name": "echo"})
        );
        assert_eq!(
            serde_json::to_string(&frame["params"]).unwrap(),
            r#"{"_meta":{"progressToken":7},"arguments":{"text":"abc"},"name":"echo"}"#
        );
    }

    #[test]
    fn openings_and_pages() {
        let opening: Value = serde_json::from_slice(&Frames::new(Side::Direct).opening()).unwrap();
        assert_eq!(opening["method"], "server/discover");
        let bridged = Frames::new(Side::Bridged);
        let opening: Value = serde_json::from_slice(&bridged.opening()).unwrap();
        assert_eq!(opening["method"], "initialize");
        assert_eq!(opening["params"]["protocolVersion"], "2025-11-25");
        assert!(bridged.after_opening().is_some());
        let page: Value = serde_json::from_slice(&bridged.list_page(3, Some("c1"))).unwrap();
        assert_eq!(
            page,
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"progressToken":3},"cursor":"c1"}})
        );
    }
}
