//! `expect_no_secret_in_stderr`, checked after the last step (`finish.rs`): the
//! secrets of the run ([`crate::secrets_of_run`]) against every stderr line of
//! every bridge process of the run.

use super::Run;
use crate::outcome::Failure;
use crate::secrets_of_run::{findings, secrets_of_command_line, secrets_of_fixture};

impl Run<'_> {
    /// The failure of the step at `line` when a stderr line holds a secret (or
    /// when the fixture cannot say which secrets it issued).
    pub(super) async fn secrets_in_stderr(
        &self,
        line: usize,
        every_stderr: &[String],
    ) -> Option<Failure> {
        let https = self.https.as_ref()?;
        let issued = match https.issued_secrets().await {
            Ok(issued) => issued,
            Err(error) => {
                return Some(Failure::at(
                    line,
                    format!("the fixture did not give its secrets: {error}"),
                ));
            }
        };
        let args: Vec<String> = (self.transcript.header.bridge_args.iter())
            .map(|arg| https.resolve(arg))
            .collect();
        let env = crate::launch::bridge_environment(self.env, &self.transcript.header, Some(https));
        let headers = crate::static_headers::static_header_values(&args, &env);
        let mut secrets = secrets_of_fixture(&issued);
        secrets.extend(secrets_of_command_line(&headers, &env));
        if secrets.is_empty() {
            // A check that searched for nothing would pass any bridge.
            return Some(Failure::at(
                line,
                "the run has no secret to look for: the fixture issued none, and the command line has none",
            ));
        }
        let found = findings(every_stderr, &secrets);
        (!found.is_empty()).then(|| {
            Failure::at(
                line,
                format!("{} stderr line(s) hold a secret of the run", found.len()),
            )
            .with_detail(found.join("\n"))
        })
    }
}
