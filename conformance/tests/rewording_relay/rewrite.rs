//! What the relay does to one line of the bridge: the texts that the contract
//! does not fix reworded ([`crate::reword`]), everything else byte for byte, its
//! line end kept. A break variant changes one text that the contract fixes too.

use mcp_conformance::contract_texts::{ContractTexts, LINE_PREFIX};
use mcp_conformance::reword::{reword, reword_bridge_line, reword_cause};
use serde_json::Value;

/// A text that the contract fixes, changed on purpose (`--break`): a run in the
/// contract's terms must fail behind such a relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// One row of the Output-channel table reworded: [`BROKEN_ROW`].
    Row,
    /// The cause that the contract names, [`BROKEN_CAUSE`], reversed.
    Cause,
    /// The error code -32601 (the method is not known) turned into -32600.
    Code,
}

impl Break {
    pub const ALL: [Break; 3] = [Break::Row, Break::Cause, Break::Code];

    /// The name of the option `--break`.
    pub fn name(self) -> &'static str {
        match self {
            Break::Row => "row",
            Break::Cause => "cause",
            Break::Code => "code",
        }
    }

    pub fn parse(name: &str) -> Option<Break> {
        Break::ALL.into_iter().find(|one| one.name() == name)
    }
}

/// The row of the Output-channel table that `--break row` rewords.
pub const BROKEN_ROW: &str = "mcp-bridge-vscode: bridge: info: the upstream server is ready";
/// The cause that `--break cause` reverses.
pub const BROKEN_CAUSE: &str = "upstream_exited";
/// The code that `--break code` changes, and what it becomes.
pub const BROKEN_CODE: (i64, i64) = (-32601, -32600);

/// How the relay treats the lines of the bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rewording {
    /// Reword what the contract does not fix (off: a relay that passes all).
    pub reword: bool,
    pub broken: Option<Break>,
}

impl Rewording {
    /// Whether every line passes as it is (`--no-rewording` and no break).
    fn passes_all(&self) -> bool {
        !self.reword && self.broken.is_none()
    }

    /// A line of the bridge's stdout (with its end, if any) as the relay passes it.
    pub fn stdout_line(&self, line: &[u8]) -> Vec<u8> {
        if self.passes_all() {
            return line.to_vec();
        }
        rewritten(line, |text| self.stdout_text(text))
    }

    /// A line of the bridge's stderr (with its end, if any) as the relay passes it.
    pub fn stderr_line(&self, line: &[u8]) -> Vec<u8> {
        if self.passes_all() {
            return line.to_vec();
        }
        rewritten(line, |text| self.stderr_text(text))
    }

    /// A stdout line without its end: `None` when it stays as it is. Only a
    /// frame that names an `error` is parsed (a frame may be 64 MiB).
    fn stdout_text(&self, text: &str) -> Option<String> {
        if text.trim_start().starts_with(['{', '[']) {
            if !text.contains("\"error\"") {
                return None;
            }
            // A frame that is not valid JSON is the client's to judge, as it is.
            let mut frame = serde_json::from_str::<Value>(text).ok()?;
            return self
                .error_response(&mut frame)
                .then(|| serde_json::to_string(&frame).ok())
                .flatten();
        }
        match self.reword {
            true => changed(text, reword(text)),
            false => None,
        }
    }

    /// The top-level `error` of a response, its texts that the contract does not
    /// fix reworded; whether anything changed.
    fn error_response(&self, frame: &mut Value) -> bool {
        let texts = ContractTexts::of_contract();
        let Some(error) = frame
            .as_object_mut()
            .filter(|frame| frame.contains_key("id") && !frame.contains_key("method"))
            .and_then(|frame| frame.get_mut("error"))
            .and_then(Value::as_object_mut)
        else {
            return false;
        };
        let mut changed = false;
        let mut set = |slot: Option<&mut Value>, new: &dyn Fn(&str) -> Option<String>| {
            if let Some(slot) = slot
                && let Some(text) = slot.as_str()
                && let Some(new) = new(text)
                && new != text
            {
                *slot = Value::String(new);
                changed = true;
            }
        };
        let prose = |text: &str| (self.reword && !texts.fixes_text(text)).then(|| reword(text));
        let cause = |cause: &str| {
            let ours = self.reword && !texts.fixes_cause(cause);
            let broken = self.broken == Some(Break::Cause) && cause == BROKEN_CAUSE;
            (ours || broken).then(|| reword_cause(cause))
        };
        set(error.get_mut("message"), &prose);
        if let Some(data) = error.get_mut("data").and_then(Value::as_object_mut) {
            set(data.get_mut("cause"), &cause);
            set(data.get_mut("detail"), &prose);
        }
        if self.broken == Some(Break::Code)
            && error.get("code").and_then(Value::as_i64) == Some(BROKEN_CODE.0)
        {
            error.insert("code".into(), BROKEN_CODE.1.into());
            changed = true;
        }
        changed
    }

    /// A stderr line without its end: `None` when it stays as it is.
    fn stderr_text(&self, text: &str) -> Option<String> {
        if !text.starts_with(LINE_PREFIX) {
            return None;
        }
        if self.broken == Some(Break::Row) && text == BROKEN_ROW {
            return Some(reword_bridge_line(text));
        }
        if !self.reword || ContractTexts::of_contract().fixes_line(text) {
            return None;
        }
        changed(text, reword_bridge_line(text))
    }
}

fn changed(old: &str, new: String) -> Option<String> {
    (new != old).then_some(new)
}

/// `line` with its text (without its end `\n` or `\r\n`) rewritten by `text`; a
/// line that is not UTF-8, or that `text` keeps, byte for byte.
fn rewritten(line: &[u8], text: impl Fn(&str) -> Option<String>) -> Vec<u8> {
    let end = if line.ends_with(b"\r\n") {
        2
    } else if line.ends_with(b"\n") {
        1
    } else {
        0
    };
    let (body, ending) = line.split_at(line.len() - end);
    match std::str::from_utf8(body).ok().and_then(text) {
        Some(new) => [new.as_bytes(), ending].concat(),
        None => line.to_vec(),
    }
}

/// The unit tests of the rewriting of lines, as trials of this harness.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    use crate::check_eq;
    use libtest_mimic::Trial;
    const REWORD: Rewording = Rewording {
        reword: true,
        broken: None,
    };
    const PASS: Rewording = Rewording {
        reword: false,
        broken: None,
    };
    let out = |rewording: Rewording, line: &str| {
        String::from_utf8(rewording.stdout_line(line.as_bytes())).unwrap()
    };
    let err = |rewording: Rewording, line: &str| {
        String::from_utf8(rewording.stderr_line(line.as_bytes())).unwrap()
    };
    let broken = |broken| Rewording {
        reword: true,
        broken: Some(broken),
    };
    vec![
        Trial::test(
            "rewrite: an error response's message, cause and detail",
            move || {
                check_eq(
                    out(
                        REWORD,
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"The server does not have this method.\",\"data\":{\"cause\":\"method_not_found\",\"detail\":\"tools/x is not known\"}}}\r\n",
                    ),
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"The revres seod ton evah siht dohtem.\",\"data\":{\"cause\":\"dnuof_ton_dohtem\",\"detail\":\"tools/x si ton nwonk\"}}}\r\n",
                )
            },
        ),
        Trial::test(
            "rewrite: the cause that the contract names stays",
            move || {
                let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"M\",\"data\":{\"cause\":\"upstream_exited\"}}}\n";
                check_eq(out(REWORD, line), line)
            },
        ),
        Trial::test(
            "rewrite: a result, a request and a broken frame stay byte for byte",
            move || {
                for line in [
                    "{\"jsonrpc\":\"2.0\",  \"id\":1,\"result\":{\"message\":\"the text\"}}\n",
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"error\":{\"message\":\"the text\"}}\n",
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"the\n",
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                ] {
                    check_eq(out(REWORD, line), line)?;
                }
                Ok(())
            },
        ),
        Trial::test(
            "rewrite: a raw stdout line is reworded, its indent and end kept",
            move || {
                check_eq(
                    out(REWORD, "  --log-level <LEVEL>  how much to write\r\n"),
                    "  --log-level <LEVEL>  woh hcum ot etirw\r\n",
                )
            },
        ),
        Trial::test(
            "rewrite: a stderr line of ours keeps its scope and level",
            move || {
                check_eq(
                    err(
                        REWORD,
                        "mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid: use err\n",
                    ),
                    "mcp-bridge-vscode: vscode: error: eht eulav fo eht noitpo --log-level si ton dilav: esu rre\n",
                )
            },
        ),
        Trial::test(
            "rewrite: the contract's rows and the upstream's lines stay",
            move || {
                for line in [
                    "mcp-bridge-vscode: bridge: info: the upstream server is ready\n",
                    "mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code 1.141.0\n",
                    "mcp-bridge-vscode: sign in at https://a.test/authorize?x=1\n",
                    "the upstream's own line\n",
                ] {
                    check_eq(err(REWORD, line), line)?;
                }
                Ok(())
            },
        ),
        Trial::test(
            "rewrite: without rewording every line passes as it is",
            move || {
                let line = "mcp-bridge-vscode: vscode: error: the value is not valid\n";
                check_eq(err(PASS, line), line)?;
                check_eq(out(PASS, "Usage: the bridge\n"), "Usage: the bridge\n")
            },
        ),
        Trial::test(
            "rewrite: each break changes one text that the contract fixes",
            move || {
                check_eq(
                    err(
                        broken(Break::Row),
                        "mcp-bridge-vscode: bridge: info: the upstream server is ready\n",
                    ),
                    "mcp-bridge-vscode: bridge: info: eht maertspu revres si ydaer\n",
                )?;
                check_eq(
                    out(
                        broken(Break::Cause),
                        "{\"id\":1,\"error\":{\"code\":-32603,\"message\":\"M\",\"data\":{\"cause\":\"upstream_exited\"}}}",
                    ),
                    "{\"id\":1,\"error\":{\"code\":-32603,\"message\":\"M\",\"data\":{\"cause\":\"detixe_maertspu\"}}}",
                )?;
                check_eq(
                    out(
                        broken(Break::Code),
                        "{\"id\":0,\"error\":{\"code\":-32601,\"message\":\"M\"}}",
                    ),
                    "{\"id\":0,\"error\":{\"code\":-32600,\"message\":\"M\"}}",
                )
            },
        ),
    ]
}
