//! The step `run_bridge`: a second bridge process (another command line, such as
//! `logout`) run to its end against the fixture over HTTPS, its exit code and its
//! whole stderr checked.

use super::Run;
use crate::outcome::Failure;
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
        deadline: Instant,
    ) -> Result<(), Failure> {
        let https = self
            .https
            .as_ref()
            .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))?;
        let mut command = tokio::process::Command::new(&self.env.bins.bridge);
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
        let output = tokio::time::timeout_at(deadline, command.output())
            .await
            .map_err(|_| Failure::at(line, "the second bridge process did not end in time"))?
            .map_err(|e| Failure::at(line, format!("cannot start the second bridge: {e}")))?;
        let got: Vec<String> = String::from_utf8_lossy(&output.stderr)
            .lines()
            .map(str::to_owned)
            .collect();
        if output.status.code() != Some(code) || got != stderr {
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
}
