//! The wire checks of the browser of the sign-in (M6): what each browser script of
//! the URL form got from the bridge's opener, against the sign-in lines.
//!
//! - each script ended as it was written to (it refuses a URL that is not a
//!   one-time start URL: only the start URL may reach the opener);
//! - each start URL's token is new: never the `state` of a sign-in line (the
//!   authorization URL, which other users of the host must not get), and never the
//!   token of another start URL.

use super::WireFailure;
use crate::https_upstream::{BROWSER_OK, BrowserRun};

/// The beginning of the sign-in line (LOG-SIGN-IN-AT).
const SIGN_IN_LINE: &str = "mcp-bridge-vscode: sign in at ";

fn failure(rule: &str, message: String, frame: &str) -> WireFailure {
    WireFailure {
        rule: rule.into(),
        message,
        frame: frame.into(),
    }
}

/// The checks of the browser runs of a transcript; `stderr` holds the lines of every
/// bridge process of the run.
pub fn check_browser(runs: &[BrowserRun], stderr: &[String]) -> Vec<WireFailure> {
    let mut failures = Vec::new();
    for run in runs {
        match run.verdict.as_deref() {
            Some(BROWSER_OK) => {}
            Some(verdict) => failures.push(failure(
                "browser",
                format!("the browser script {} failed: {verdict}", run.script),
                &run.url,
            )),
            None => failures.push(failure(
                "browser",
                format!("the browser script {} did not end", run.script),
                &run.url,
            )),
        }
    }
    let states: Vec<String> = stderr
        .iter()
        .filter_map(|line| line.strip_prefix(SIGN_IN_LINE))
        .filter_map(state_of)
        .collect();
    let mut tokens: Vec<&str> = Vec::new();
    for run in runs {
        let Some(token) = start_token(&run.url) else {
            continue;
        };
        if states.iter().any(|state| state == token) {
            failures.push(failure(
                "M6 start token",
                "the token of the start URL is the state of the authorization URL".into(),
                &run.url,
            ));
        }
        if tokens.contains(&token) {
            failures.push(failure(
                "M6 start token",
                "the token of the start URL is that of an earlier start URL".into(),
                &run.url,
            ));
        }
        tokens.push(token);
    }
    failures
}

/// The token of a start URL `http://127.0.0.1:<port>/start/<token>`.
fn start_token(url: &str) -> Option<&str> {
    url.split_once("/start/")
        .map(|(_, token)| token)
        .filter(|token| !token.is_empty())
}

/// The `state` of an authorization URL, as its query spells it (the bridge's states
/// and tokens are base64url: nothing to decode).
fn state_of(url: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("state="))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(url: &str, verdict: Option<&str>) -> BrowserRun {
        BrowserRun {
            script: "browser".into(),
            url: url.into(),
            verdict: verdict.map(str::to_owned),
        }
    }

    fn rules(runs: &[BrowserRun], stderr: &[&str]) -> Vec<String> {
        let stderr: Vec<String> = stderr.iter().map(|l| (*l).to_owned()).collect();
        check_browser(runs, &stderr)
            .into_iter()
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect()
    }

    #[test]
    fn start_urls_with_new_tokens_that_signed_in_pass() {
        let stderr = [
            "mcp-bridge-vscode: sign in at https://a/authorize?state=s1&x=1",
            "mcp-bridge-vscode: sign in at https://a/authorize?state=s2",
        ];
        let runs = [
            run("http://127.0.0.1:1/start/t1", Some("ok")),
            run("http://127.0.0.1:1/start/t2", Some("ok")),
        ];
        assert_eq!(rules(&runs, &stderr), Vec::<String>::new());
    }

    #[test]
    fn a_failed_script_a_state_as_token_and_a_token_again_fail() {
        let stderr = ["mcp-bridge-vscode: sign in at https://a/authorize?state=s1"];
        let runs = [
            run(
                "https://a/authorize?state=s1",
                Some("refused: not a start URL"),
            ),
            run("http://127.0.0.1:1/start/s1", Some("ok")),
            run("http://127.0.0.1:1/start/s1", None),
        ];
        assert_eq!(
            rules(&runs, &stderr),
            [
                "browser: the browser script browser failed: refused: not a start URL",
                "browser: the browser script browser did not end",
                "M6 start token: the token of the start URL is the state of the authorization URL",
                "M6 start token: the token of the start URL is the state of the authorization URL",
                "M6 start token: the token of the start URL is that of an earlier start URL",
            ]
        );
    }
}
