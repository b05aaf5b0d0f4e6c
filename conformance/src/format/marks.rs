//! The marks of this implementation's own texts: a step's member `"ours"` says
//! that an exact expectation is this bridge's wording and not the contract's, and
//! gives the shape check that stays when another implementation words it its own
//! way.
//!
//! ```text
//! {"expect_stderr":"mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid: use err, warn, info or debug",
//!  "ours":"^mcp-bridge-vscode: vscode: error: .*--log-level"}
//! {"expect":{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"The server does not have this method.","data":{"cause":"method_not_found"}}},
//!  "ours":{"/error/message":"^.+$","/error/data/cause":"^[a-z_]+$"}}
//! ```
//!
//! On `expect_stderr`, `expect_stderr_match` and `expect_raw` the mark is the
//! regex of the line's shape (a path with this project's name, for example);
//! on a frame (`expect`, `expect_unordered`, `upstream_expect`,
//! `upstream_expect_http`, `expect_report`) it maps JSON pointers into the frame
//! to the regex of each marked string's shape. A strict run checks the step as
//! written and ignores the mark; a run with `--contract` checks the shapes in
//! place of the marked texts. The shape must accept the exact text it relaxes
//! (checked when the transcript is read), so a mark never hides a text that its
//! own shape refuses.

use super::StepKind;
use crate::matchers::literal;
use regex::Regex;
use serde_json::{Map, Value};

/// Why a mark `"ours"` is not valid.
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    #[error(
        "\"ours\" goes only with expect_stderr, expect_stderr_match, expect_raw, expect_raw_block, run_bridge, expect, expect_unordered, upstream_expect, upstream_expect_http and expect_report"
    )]
    NotAnExpectation,
    #[error("\"ours\" of a line is the regex of its shape, a string")]
    LineShape,
    #[error("\"ours\" of a frame is an object of JSON pointers to the regexes of their shapes")]
    FrameShapes,
    #[error(
        "\"ours\" of run_bridge is a list with the shape of each stderr line (null: the line stays exact)"
    )]
    LinesShapes,
    #[error("\"ours\" of expect_raw_block is {{\"names\":[...]}}: the names its text must have")]
    BlockNames,
    #[error("\"ours\" of expect_raw_block names {0}, which its lines do not have")]
    BlockLacks(String),
    #[error("\"ours\" names {0}, which the expected frame does not have")]
    NoSuchMember(String),
    #[error("\"ours\" names {0}, which is not a string of the expected frame")]
    NotAString(String),
    #[error("the shape {pattern:?} is not a valid regex: {error}")]
    Regex {
        pattern: String,
        error: regex::Error,
    },
    #[error("the shape {shape:?} does not accept the text it relaxes: {text:?}")]
    RefusesItsText { shape: String, text: String },
}

/// The kind of a marked step in `--contract` mode: `kind` with each marked text
/// in place of its shape check.
pub fn relaxed(kind: &StepKind, ours: &Value) -> Result<StepKind, MarkError> {
    match kind {
        StepKind::ExpectStderr(line) => {
            let shape = line_shape(ours)?;
            accepts(&shape, line)?;
            Ok(StepKind::ExpectStderrMatch(shape))
        }
        // Regexes, which have no text of their own to check the shape against.
        StepKind::ExpectStderrMatch(_) => Ok(StepKind::ExpectStderrMatch(line_shape(ours)?)),
        StepKind::ExpectRaw(_) => Ok(StepKind::ExpectRaw(line_shape(ours)?)),
        StepKind::ExpectRawBlock(lines) => Ok(StepKind::ExpectRawNames(block_names(lines, ours)?)),
        StepKind::RunBridge {
            args, code, stderr, ..
        } => Ok(StepKind::RunBridge {
            args: args.clone(),
            code: *code,
            stderr: stderr.clone(),
            shapes: Some(lines_shapes(stderr, ours)?),
        }),
        StepKind::Expect(frame) => Ok(StepKind::Expect(relax_frame(frame, ours)?)),
        StepKind::UpstreamExpect(frame) => Ok(StepKind::UpstreamExpect(relax_frame(frame, ours)?)),
        StepKind::UpstreamExpectHttp(record) => {
            Ok(StepKind::UpstreamExpectHttp(relax_frame(record, ours)?))
        }
        StepKind::ExpectReport(report) => Ok(StepKind::ExpectReport(relax_frame(report, ours)?)),
        StepKind::ExpectUnordered(frames) => {
            match relax_frame(&Value::Array(frames.clone()), ours)? {
                Value::Array(frames) => Ok(StepKind::ExpectUnordered(frames)),
                _ => Err(MarkError::FrameShapes),
            }
        }
        _ => Err(MarkError::NotAnExpectation),
    }
}

/// How many texts a mark relaxes: one for a line, one per pointer of a frame,
/// one per shape of the lines of `run_bridge`, each line of a block.
pub fn count(kind: &StepKind, ours: &Value) -> usize {
    match (kind, ours) {
        (StepKind::ExpectRawBlock(lines), _) => lines.len(),
        (_, Value::Array(shapes)) => shapes.iter().filter(|shape| !shape.is_null()).count(),
        (_, Value::Object(pointers)) => pointers.len(),
        _ => 1,
    }
}

/// The shapes of the stderr lines of `run_bridge`: one for each line, a regex
/// that must accept it or null for a line that stays exact.
fn lines_shapes(lines: &[String], ours: &Value) -> Result<Vec<Option<Regex>>, MarkError> {
    let shapes = ours.as_array().ok_or(MarkError::LinesShapes)?;
    if shapes.len() != lines.len() {
        return Err(MarkError::LinesShapes);
    }
    lines
        .iter()
        .zip(shapes)
        .map(|(line, shape)| match shape {
            Value::Null => Ok(None),
            Value::String(pattern) => {
                let shape = regex(pattern)?;
                accepts(&shape, line)?;
                Ok(Some(shape))
            }
            _ => Err(MarkError::LinesShapes),
        })
        .collect()
}

/// The names that the text of an `expect_raw_block` must have in `--contract`:
/// each must be in one of its lines (a line of the block is a regex; its
/// literal text when it is one).
fn block_names(lines: &[Regex], ours: &Value) -> Result<Vec<String>, MarkError> {
    let names: Vec<String> = ours
        .get("names")
        .and_then(Value::as_array)
        .filter(|names| !names.is_empty())
        .ok_or(MarkError::BlockNames)?
        .iter()
        .map(|name| {
            name.as_str()
                .map(str::to_owned)
                .ok_or(MarkError::BlockNames)
        })
        .collect::<Result<_, _>>()?;
    let text: Vec<String> = lines
        .iter()
        .map(|line| {
            crate::marks_check::literal_line(line.as_str())
                .unwrap_or_else(|| line.as_str().to_owned())
        })
        .collect();
    match names
        .iter()
        .find(|name| !text.iter().any(|line| line.contains(name.as_str())))
    {
        Some(lacking) => Err(MarkError::BlockLacks(lacking.clone())),
        None => Ok(names),
    }
}

fn regex(pattern: &str) -> Result<Regex, MarkError> {
    Regex::new(pattern).map_err(|error| MarkError::Regex {
        pattern: pattern.to_owned(),
        error,
    })
}

fn line_shape(ours: &Value) -> Result<Regex, MarkError> {
    regex(ours.as_str().ok_or(MarkError::LineShape)?)
}

fn accepts(shape: &Regex, text: &str) -> Result<(), MarkError> {
    if shape.is_match(text) {
        Ok(())
    } else {
        Err(MarkError::RefusesItsText {
            shape: shape.as_str().to_owned(),
            text: text.to_owned(),
        })
    }
}

/// `frame` with the string at each pointer of `ours` replaced by `$regex:` of its
/// shape. A marked string that is a literal must match its shape; one that is
/// already a matcher (`$regex:...`) has no text to check.
fn relax_frame(frame: &Value, ours: &Value) -> Result<Value, MarkError> {
    let pointers: &Map<String, Value> = ours.as_object().ok_or(MarkError::FrameShapes)?;
    if pointers.is_empty() {
        return Err(MarkError::FrameShapes);
    }
    let mut relaxed = frame.clone();
    for (pointer, shape) in pointers {
        let shape = shape.as_str().ok_or(MarkError::FrameShapes)?;
        let compiled = regex(shape)?;
        let member = relaxed
            .pointer_mut(pointer)
            .ok_or_else(|| MarkError::NoSuchMember(pointer.clone()))?;
        let Value::String(text) = member else {
            return Err(MarkError::NotAString(pointer.clone()));
        };
        if let Some(literal) = literal(text) {
            accepts(&compiled, literal)?;
        }
        *member = Value::String(format!("$regex:{shape}"));
    }
    Ok(relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_marked_stderr_line_becomes_its_shape() {
        let line =
            "mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid";
        let kind = StepKind::ExpectStderr(line.into());
        let StepKind::ExpectStderrMatch(shape) = relaxed(
            &kind,
            &json!("^mcp-bridge-vscode: vscode: error: .*--log-level"),
        )
        .unwrap() else {
            panic!("not a regex of stderr");
        };
        assert!(shape.is_match("mcp-bridge-vscode: vscode: error: --log-level takes err or warn"));
        assert!(!shape.is_match("mcp-bridge-vscode: bridge: error: --log-level is bad"));
    }

    #[test]
    fn a_marked_regex_of_stderr_becomes_its_shape() {
        let kind = StepKind::ExpectStderrMatch(
            Regex::new("^x: info: the tokens are in $RUN_DIR/mcp-bridge-rs/vscode/tokens$")
                .unwrap(),
        );
        let StepKind::ExpectStderrMatch(shape) = relaxed(
            &kind,
            &json!("^x: info: the tokens are in $RUN_DIR/.+/tokens$"),
        )
        .unwrap() else {
            panic!("not a regex of stderr");
        };
        assert_eq!(
            shape.as_str(),
            "^x: info: the tokens are in $RUN_DIR/.+/tokens$"
        );
    }

    #[test]
    fn a_shape_that_refuses_its_own_text_is_an_error() {
        let kind = StepKind::ExpectStderr("mcp-bridge-vscode: vscode: error: x".into());
        let error = relaxed(&kind, &json!("^mcp-bridge-vscode: bridge: ")).unwrap_err();
        assert!(matches!(error, MarkError::RefusesItsText { .. }), "{error}");
        let frame = StepKind::Expect(json!({"error": {"message": "Gone."}}));
        let error = relaxed(&frame, &json!({"/error/message": "^[a-z]+$"})).unwrap_err();
        assert!(matches!(error, MarkError::RefusesItsText { .. }), "{error}");
    }

    #[test]
    fn a_marked_frame_gets_a_regex_at_each_pointer_and_keeps_the_rest() {
        let frame = json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601,
            "message": "The server does not have this method.", "data": {"cause": "method_not_found"}}});
        let ours = json!({"/error/message": "^.+$", "/error/data/cause": "^[a-z_]+$"});
        let StepKind::Expect(relaxed) = relaxed(&StepKind::Expect(frame), &ours).unwrap() else {
            panic!("not an expect");
        };
        assert_eq!(
            relaxed,
            json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601,
                "message": "$regex:^.+$", "data": {"cause": "$regex:^[a-z_]+$"}}})
        );
        assert_eq!(count(&StepKind::CloseStdin, &ours), 2);
    }

    #[test]
    fn marks_of_frames_in_any_order_point_into_the_list() {
        let kind = StepKind::ExpectUnordered(vec![json!({"id": 1}), json!({"m": "$$x"})]);
        let StepKind::ExpectUnordered(frames) = relaxed(&kind, &json!({"/1/m": "^\\$x$"})).unwrap()
        else {
            panic!("not unordered");
        };
        assert_eq!(frames[1], json!({"m": "$regex:^\\$x$"}));
    }

    #[test]
    fn a_marked_block_becomes_the_names_its_text_must_have() {
        let lines = vec![
            Regex::new(r"^Usage:\ mcp\-bridge\-vscode\ \[options\]$").unwrap(),
            Regex::new(r"^\ \ \-\-name\ <name>\ \ The\ name$").unwrap(),
        ];
        let kind = StepKind::ExpectRawBlock(lines);
        let ours = json!({"names": ["mcp-bridge-vscode", "--name"]});
        let StepKind::ExpectRawNames(names) = relaxed(&kind, &ours).unwrap() else {
            panic!("not the names");
        };
        assert_eq!(names, ["mcp-bridge-vscode", "--name"]);
        assert_eq!(count(&kind, &ours), 2);
        assert!(matches!(
            relaxed(&kind, &json!({"names": ["--log-level"]})),
            Err(MarkError::BlockLacks(_))
        ));
        assert!(matches!(
            relaxed(&kind, &json!(["--name"])),
            Err(MarkError::BlockNames)
        ));
    }

    #[test]
    fn marked_lines_of_run_bridge_get_their_shapes_and_the_others_stay() {
        let kind = StepKind::RunBridge {
            args: vec!["logout".into()],
            code: 0,
            stderr: vec!["a: x: info: ours".into(), "a: x: info: theirs".into()],
            shapes: None,
        };
        let ours = json!(["^a: x: info: ", null]);
        let StepKind::RunBridge {
            shapes: Some(shapes),
            ..
        } = relaxed(&kind, &ours).unwrap()
        else {
            panic!("no shapes");
        };
        assert_eq!(shapes[0].as_ref().map(Regex::as_str), Some("^a: x: info: "));
        assert!(shapes[1].is_none());
        assert_eq!(count(&kind, &ours), 1);
        assert!(matches!(
            relaxed(&kind, &json!(["^a: "])),
            Err(MarkError::LinesShapes)
        ));
        assert!(matches!(
            relaxed(&kind, &json!(["^b", null])),
            Err(MarkError::RefusesItsText { .. })
        ));
    }

    #[test]
    fn a_mark_names_strings_of_the_frame_of_an_expectation() {
        let frame = StepKind::Expect(json!({"id": 1, "error": {"code": -32601}}));
        assert!(matches!(
            relaxed(&frame, &json!({"/error/message": ".+"})),
            Err(MarkError::NoSuchMember(_))
        ));
        assert!(matches!(
            relaxed(&frame, &json!({"/error/code": ".+"})),
            Err(MarkError::NotAString(_))
        ));
        assert!(matches!(
            relaxed(&frame, &json!("^.+$")),
            Err(MarkError::FrameShapes)
        ));
        assert!(matches!(
            relaxed(&StepKind::CloseStdin, &json!("x")),
            Err(MarkError::NotAnExpectation)
        ));
        assert!(matches!(
            relaxed(&StepKind::ExpectStderr("x".into()), &json!("(")),
            Err(MarkError::Regex { .. })
        ));
    }
}
