//! Opens the one-time start URL in a browser, before `notifications/initialized`
//! only (contract, "Sign-in and accounts", step 3). Never through a shell: the
//! program gets the URL as its one argument. `$BROWSER` comes first, as VS Code's
//! remote windows set it; then the opener of the platform.

use std::ffi::OsString;
use std::process::Stdio;

/// The environment variables whose values are secrets of the bridge: the opener
/// never inherits them.
pub const SECRET_VARIABLES: [&str; 2] = ["MCP_BRIDGE_TOKEN_KEY", "MCP_BRIDGE_CLIENT_SECRET"];

/// How to open a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opener {
    pub program: OsString,
    /// Variables removed from the opener's environment: [`SECRET_VARIABLES`] and
    /// those of `--header-env`.
    pub hidden: Vec<String>,
}

impl Opener {
    /// `$BROWSER` (its whole value is the program, which may have spaces), else
    /// `open` on macOS and `xdg-open` elsewhere; `explorer` on Windows opens a URL
    /// given as its argument without a shell.
    pub fn of_environment(browser: Option<OsString>, hidden: Vec<String>) -> Self {
        let program = browser
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| OsString::from(platform_opener()));
        Self { program, hidden }
    }

    /// Starts the opener with `url`, and does not wait for it (a browser may stay
    /// open); the child is reaped by the runtime. `Err` when it did not start.
    pub fn open(&self, url: &str) -> std::io::Result<()> {
        let mut command = tokio::process::Command::new(&self.program);
        command
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

fn platform_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_comes_first_and_an_empty_one_counts_as_unset() {
        let opener = Opener::of_environment(Some("/opt/my browser/bin".into()), vec![]);
        assert_eq!(opener.program, OsString::from("/opt/my browser/bin"));
        let opener = Opener::of_environment(Some("".into()), vec![]);
        assert_eq!(opener.program, OsString::from(platform_opener()));
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
