//! The steps of the bridge's stderr (the Output channel): a line, or a line
//! that matches, in order after the last one matched. `expect_no_stderr_match`
//! is checked after the last step (`finish.rs`).

use super::{Run, at};
use crate::outcome::Failure;
use tokio::time::{Duration, Instant};

impl Run<'_> {
    pub(super) async fn expect_stderr(
        &mut self,
        line: usize,
        deadline: Instant,
        what: &str,
        matches: impl Fn(&str) -> bool,
    ) -> Result<(), Failure> {
        loop {
            let lines = self.peer().map_err(at(line))?.stderr_lines();
            if let Some(offset) = lines.iter().skip(self.stderr_pos).position(|l| matches(l)) {
                self.stderr_pos += offset + 1;
                return Ok(());
            }
            if Instant::now() >= deadline {
                let recent: Vec<&String> = lines.iter().skip(self.stderr_pos).collect();
                return Err(
                    Failure::at(line, format!("{what} did not come in time")).with_detail(format!(
                        "stderr after the last matched line:\n{}",
                        recent
                            .iter()
                            .map(|l| l.as_str())
                            .collect::<Vec<_>>()
                            .join("\n")
                    )),
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
