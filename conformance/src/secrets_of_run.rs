//! `expect_no_secret_in_stderr`: no stderr line of any bridge process of the run
//! holds a secret of the run, whole or in part, at `--log-level debug` (the level
//! that writes the most lines).
//!
//! The secrets come from the sides that know them, not from the bridge: the
//! fixture's authorization server gives every state, PKCE verifier, code, access
//! and refresh token and client secret it saw or issued (`GET /fixture/secrets`,
//! read with the fixture's own test browser), and the transcript's command line
//! and environment give the values of `--header` and `--header-env` and the
//! client secret of `MCP_BRIDGE_CLIENT_SECRET`.
//!
//! A line fails when it holds any 16 characters in a row of a secret (a token cut
//! short is still a token), or the whole of a shorter secret of at least
//! [`MIN_SECRET_CHARS`] characters. The state is the one exception, where the
//! contract puts it: the sign-in line (`sign in at <authorization URL>`) carries it
//! in the URL; any other line with it fails.

use crate::format::{Header, Invalid, StepKind, Upstream};
use serde_json::Value;

/// The characters in a row of a secret that a line may not hold.
pub const WINDOW_CHARS: usize = 16;
/// A shorter value is not searched (a header `X-Trace: on` is no secret to find
/// in every line); a transcript gives its secrets at least this long.
pub const MIN_SECRET_CHARS: usize = 6;
/// The variable of the client secret of a pre-registered client.
pub const CLIENT_SECRET_VARIABLE: &str = "MCP_BRIDGE_CLIENT_SECRET";
/// The line that may hold a state: the authorization URL of the sign-in.
const SIGN_IN_LINE: &str = "mcp-bridge-vscode: sign in at ";

/// One secret of the run and what it is, for the failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    pub what: String,
    pub value: String,
    /// A state, which the sign-in line carries in its URL.
    pub in_sign_in_line: bool,
}

impl Secret {
    fn new(what: impl Into<String>, value: &str) -> Secret {
        Secret {
            what: what.into(),
            value: value.to_owned(),
            in_sign_in_line: false,
        }
    }
}

/// The step of the transcript format: `true`, with the fixture over HTTPS and a
/// bridge at `--log-level debug`.
pub fn step_of(header: &Header, value: &Value) -> Result<StepKind, Invalid> {
    if value != &Value::Bool(true) {
        return Err(Invalid::Shape {
            what: "expect_no_secret_in_stderr",
            shape: "true",
        });
    }
    if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
        return Err(Invalid::Needs {
            what: "expect_no_secret_in_stderr".into(),
            needs: "the fixture over HTTPS",
        });
    }
    let debug = header
        .bridge_args
        .windows(2)
        .any(|pair| pair[0] == "--log-level" && pair[1] == "debug")
        || header.bridge_args.iter().any(|a| a == "--log-level=debug");
    if !debug {
        return Err(Invalid::Needs {
            what: "expect_no_secret_in_stderr".into(),
            needs: "--log-level debug in bridge_args",
        });
    }
    Ok(StepKind::ExpectNoSecretInStderr)
}

/// The secrets of the fixture's `GET /fixture/secrets` answer.
pub fn secrets_of_fixture(answer: &Value) -> Vec<Secret> {
    let lists = [
        ("states", "a state"),
        ("code_verifiers", "a PKCE verifier"),
        ("codes", "an authorization code"),
        ("access_tokens", "an access token"),
        ("refresh_tokens", "a refresh token"),
        ("client_secrets", "a client secret"),
    ];
    let mut secrets = Vec::new();
    for (list, what) in lists {
        let values = answer.get(list).and_then(Value::as_array);
        for value in values.into_iter().flatten().filter_map(Value::as_str) {
            let mut secret = Secret::new(what, value);
            secret.in_sign_in_line = list == "states";
            secrets.push(secret);
        }
    }
    secrets
}

/// The secrets of a bridge's command line and environment: each value of a
/// static header (from the runner's [`crate::static_headers::static_header_values`],
/// one value of a repeated name at a time) and the client secret.
pub fn secrets_of_command_line(
    headers: &[(String, String)],
    env: &[(String, String)],
) -> Vec<Secret> {
    let mut secrets = Vec::new();
    for (name, joined) in headers {
        let what = format!("the value of the static header {name}");
        secrets.push(Secret::new(what.clone(), joined));
        for value in joined.split(", ") {
            secrets.push(Secret::new(what.clone(), value));
            // The credential of `Authorization: Bearer <token>` alone.
            if let Some((_, credential)) = value.split_once(' ') {
                secrets.push(Secret::new(what.clone(), credential));
            }
        }
    }
    for (key, value) in env {
        if key == CLIENT_SECRET_VARIABLE {
            secrets.push(Secret::new(CLIENT_SECRET_VARIABLE, value));
        }
    }
    secrets
}

/// Each line that holds a secret, with what it holds: one finding per line.
pub fn findings(lines: &[String], secrets: &[Secret]) -> Vec<String> {
    let mut found = Vec::new();
    for line in lines {
        let hit = secrets.iter().find_map(|secret| {
            if secret.in_sign_in_line && line.starts_with(SIGN_IN_LINE) {
                return None;
            }
            held_part(line, &secret.value).map(|part| (secret, part))
        });
        if let Some((secret, part)) = hit {
            found.push(format!("{} ({part:?}) in: {line}", secret.what));
        }
    }
    found
}

/// The part of `secret` that `line` holds: 16 characters in a row of it, or the
/// whole of a shorter one.
fn held_part(line: &str, secret: &str) -> Option<String> {
    let chars: Vec<char> = secret.trim().chars().collect();
    if chars.len() < MIN_SECRET_CHARS {
        return None;
    }
    if chars.len() <= WINDOW_CHARS {
        let whole: String = chars.iter().collect();
        return line.contains(&whole).then_some(whole);
    }
    chars
        .windows(WINDOW_CHARS)
        .map(|window| window.iter().collect::<String>())
        .find(|window| line.contains(window))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn a_part_of_16_characters_of_a_token_is_found_and_a_shorter_one_is_not() {
        let secrets = secrets_of_fixture(&json!({"access_tokens":["at-0123456789abcdefghij"]}));
        let found = findings(
            &lines(&[
                "mcp-bridge-vscode: bridge: debug: token 0123456789abcdef",
                "mcp-bridge-vscode: bridge: debug: token 0123456789abcde",
            ]),
            &secrets,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("an access token (\"0123456789abcdef\")"));
    }

    #[test]
    fn a_state_may_be_only_in_the_sign_in_line() {
        let secrets = secrets_of_fixture(&json!({"states":["state-abcdefghijklmnop"]}));
        let sign_in =
            "mcp-bridge-vscode: sign in at https://as/authorize?state=state-abcdefghijklmnop";
        assert!(findings(&lines(&[sign_in]), &secrets).is_empty());
        let other = "mcp-bridge-vscode: bridge: debug: state-abcdefghijklmnop";
        assert_eq!(findings(&lines(&[other]), &secrets).len(), 1);
    }

    #[test]
    fn the_command_line_gives_each_header_value_its_credential_and_the_client_secret() {
        let headers = vec![
            ("authorization".to_owned(), "Bearer t-19c4d7e5".to_owned()),
            ("x-trace".to_owned(), "on".to_owned()),
        ];
        let env = vec![
            (CLIENT_SECRET_VARIABLE.to_owned(), "s3cret-value".to_owned()),
            ("OTHER".to_owned(), "not-a-secret".to_owned()),
        ];
        let secrets = secrets_of_command_line(&headers, &env);
        let found = |line: &str| findings(&lines(&[line]), &secrets);
        assert_eq!(found("x t-19c4d7e5 y").len(), 1);
        assert_eq!(found("x s3cret-value y").len(), 1);
        assert!(found("x on not-a-secret y").is_empty());
    }
}
