//! The steps that run a second process to its end beside the bridge under test:
//! `run_bridge` (another command line of the bridge, such as `logout`, its exit
//! code and its whole stderr checked) and `run` (what another program or the user
//! does to the machine between two runs: a token file damaged, a keychain item
//! deleted), each with the transcript's environment and the run's keychain.

use super::Run;
use crate::outcome::Failure;
use std::ffi::OsStr;
use tokio::time::Instant;

impl Run<'_> {
    /// Runs a second bridge process to its end and checks its exit code and its
    /// whole stderr.
    pub(super) async fn run_bridge(
        &mut self,
        line: usize,
        args: &[String],
        code: i32,
        stderr: &[String],
        shapes: Option<&[Option<regex::Regex>]>,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let bridge = self.env.bins.bridge.clone();
        let output = self
            .second_process(line, bridge.as_os_str(), args, deadline)
            .await?;
        let stderr = self.resolved_lines(stderr);
        let got = lines_of(&output.stderr);
        let stderr_differs = match shapes {
            None => got != stderr,
            Some(shapes) => !self.lines_match(line, &got, &stderr, shapes)?,
        };
        if output.status.code() != Some(code) || stderr_differs {
            return Err(Failure::at(
                line,
                format!(
                    "the second bridge process exited with {:?} (expected {code}) or wrote another stderr",
                    output.status.code()
                ),
            )
            .with_detail(format!(
                "expected stderr:\n{}\nactual stderr:\n{}",
                stderr.join("\n"),
                got.join("\n")
            )));
        }
        Ok(())
    }

    /// Whether the lines `got` are the `expected` ones, each of ours by its shape
    /// (in the contract's terms) and each other line exactly.
    fn lines_match(
        &self,
        line: usize,
        got: &[String],
        expected: &[String],
        shapes: &[Option<regex::Regex>],
    ) -> Result<bool, Failure> {
        if got.len() != expected.len() {
            return Ok(false);
        }
        for ((got, expected), shape) in got.iter().zip(expected).zip(shapes) {
            let matches = match shape {
                Some(shape) => self.resolved(line, shape)?.is_match(got),
                None => got == expected,
            };
            if !matches {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Runs `command` to its end: exit code 0, and its whole stdout `stdout` when
    /// the step names one.
    pub(super) async fn run_command(
        &mut self,
        line: usize,
        command: &[String],
        stdout: Option<&[String]>,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| Failure::at(line, "no program to run"))?;
        let output = self
            .second_process(line, OsStr::new(program), args, deadline)
            .await?;
        let stdout = stdout.map(|lines| self.resolved_lines(lines));
        let got = lines_of(&output.stdout);
        let stdout_differs = stdout.as_ref().is_some_and(|expected| got != *expected);
        if !output.status.success() || stdout_differs {
            return Err(Failure::at(
                line,
                format!(
                    "{program} exited with {:?} (expected 0) or wrote another stdout",
                    output.status.code()
                ),
            )
            .with_detail(format!(
                "expected stdout:\n{}\nactual stdout:\n{}\nstderr:\n{}",
                stdout.map(|lines| lines.join("\n")).unwrap_or_default(),
                got.join("\n"),
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(())
    }

    /// Expected lines with the placeholders replaced (`$RUN_DIR/$TOKEN_DIR` in a
    /// path that a line names).
    fn resolved_lines(&self, lines: &[String]) -> Vec<String> {
        lines.iter().map(|line| self.resolved_text(line)).collect()
    }

    /// `program` with `args` (the placeholders of the fixture over HTTPS replaced)
    /// in the bridge's environment, run to its end before `deadline`.
    async fn second_process(
        &self,
        line: usize,
        program: &OsStr,
        args: &[String],
        deadline: Instant,
    ) -> Result<std::process::Output, Failure> {
        let https = self.https_at(line)?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args.iter().map(|arg| https.resolve(arg)))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        command.envs(crate::launch::bridge_environment(
            self.env,
            &self.transcript.header,
            Some(https),
        ));
        // The keychain of the run is the second process's too (logout of a sign-in
        // that the bridge kept there).
        if let Some(service) = &self.secret_service {
            command.envs(service.bridge_env());
        }
        let name = program.to_string_lossy();
        tokio::time::timeout_at(deadline, command.output())
            .await
            .map_err(|_| Failure::at(line, format!("{name} did not end in time")))?
            .map_err(|e| Failure::at(line, format!("cannot start {name}: {e}")))
    }
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect()
}
