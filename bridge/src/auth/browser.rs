//! Opens the one-time start URL in a browser, before `notifications/initialized`
//! only (contract, "Sign-in and accounts", step 3). Never through a shell: the
//! program gets the URL as its last argument. `$BROWSER` comes first, as VS Code's
//! remote windows set it; then the opener of the platform.
//!
//! On Windows the opener is `rundll32 url.dll,FileProtocolHandler <url>`: the
//! handler of the URL's scheme (the default browser) opens it. `explorer <url>`
//! opens a folder window instead for some URLs (those with a query), and `cmd /c
//! start` would put a shell between the URL and the browser.

use std::ffi::OsString;
use std::process::Stdio;

/// The environment variables whose values are secrets of the bridge: the opener
/// never inherits them.
pub const SECRET_VARIABLES: [&str; 2] = ["MCP_BRIDGE_TOKEN_KEY", "MCP_BRIDGE_CLIENT_SECRET"];

/// How to open a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opener {
    pub program: OsString,
    /// The arguments before the URL (those of the platform's opener).
    pub args: Vec<OsString>,
    /// Variables removed from the opener's environment: [`SECRET_VARIABLES`] and
    /// those of `--header-env`.
    pub hidden: Vec<String>,
}

impl Opener {
    /// `$BROWSER` (its whole value is the program, which may have spaces), else
    /// `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows and
    /// `xdg-open` elsewhere.
    pub fn of_environment(browser: Option<OsString>, hidden: Vec<String>) -> Self {
        let (program, args) = match browser.filter(|value| !value.is_empty()) {
            Some(program) => (program, Vec::new()),
            None => {
                let (program, args) = platform_opener();
                (program.into(), args.iter().map(OsString::from).collect())
            }
        };
        Self {
            program,
            args,
            hidden,
        }
    }

    /// Starts the opener with `url`, and does not wait for it (a browser may stay
    /// open); the child is reaped by the runtime. `Err` when it did not start.
    pub fn open(&self, url: &str) -> std::io::Result<()> {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(false);
        for name in SECRET_VARIABLES
            .iter()
            .copied()
            .chain(self.hidden.iter().map(String::as_str))
        {
            command.env_remove(name);
        }
        command.spawn().map(drop)
    }
}

/// The program and the arguments before the URL. `rundll32` is found in the
/// system directory before `PATH` (the search order of Windows).
fn platform_opener() -> (&'static str, &'static [&'static str]) {
    if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("rundll32", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_comes_first_and_an_empty_one_counts_as_unset() {
        let opener = Opener::of_environment(Some("/opt/my browser/bin".into()), vec![]);
        assert_eq!(opener.program, OsString::from("/opt/my browser/bin"));
        assert!(opener.args.is_empty());
        let opener = Opener::of_environment(Some("".into()), vec![]);
        assert_eq!(opener.program, OsString::from(platform_opener().0));
    }

    #[test]
    fn the_opener_of_each_platform_is_a_program_that_takes_the_url_without_a_shell() {
        let opener = Opener::of_environment(None, vec![]);
        let command: Vec<OsString> = std::iter::once(opener.program.clone())
            .chain(opener.args.iter().cloned())
            .collect();
        let expected: &[&str] = if cfg!(target_os = "macos") {
            &["open"]
        } else if cfg!(windows) {
            &["rundll32", "url.dll,FileProtocolHandler"]
        } else {
            &["xdg-open"]
        };
        assert_eq!(command, expected);
        for shell in ["cmd", "cmd.exe", "sh", "powershell", "explorer"] {
            assert!(!command.iter().any(|part| part == shell));
        }
    }

    /// On Windows the default opener is a program of the system that starts with
    /// a URL with a query and an `&` in it, without a shell.
    #[cfg(windows)]
    #[tokio::test]
    async fn on_windows_the_default_opener_starts_without_a_shell() {
        let opener = Opener::of_environment(None, vec![]);
        // A scheme that no program handles: no browser opens on the test's machine,
        // and whatever rundll32 shows is ended with it.
        let mut child = tokio::process::Command::new(&opener.program)
            .args(&opener.args)
            .arg("mcp-bridge-test-no-such-scheme://127.0.0.1/start?a=1&b=2")
            .kill_on_drop(true)
            .spawn()
            .expect("rundll32 starts");
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_opener_gets_the_url_as_its_only_argument_without_a_shell_or_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = dir.path().join("browser with space");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s|%s|%s|%s' \"$#\" \"$1\" \"${{HOME:-none}}\" \"${{PATH:+path}}\" > '{}'\n",
                out.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let opener = Opener::of_environment(Some(script.into_os_string()), vec!["HOME".into()]);
        let url = "http://127.0.0.1:1/start/a;touch${IFS}x$(id)`id`";
        opener.open(url).unwrap();
        let mut text = String::new();
        for _ in 0..200 {
            text = std::fs::read_to_string(&out).unwrap_or_default();
            if !text.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // HOME stands for a hidden variable (the tests cannot set one); PATH stays.
        assert_eq!(text, format!("1|{url}|none|path"));
        assert!(!dir.path().join("x").exists());
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let opener = Opener::of_environment(Some("/nonexistent/browser".into()), vec![]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert!(
            runtime
                .block_on(async { opener.open("http://127.0.0.1:1/start/x") })
                .is_err()
        );
    }
}
