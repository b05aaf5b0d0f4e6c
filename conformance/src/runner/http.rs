//! The steps of the URL form: the POSTs of the bridge to the fixture over HTTPS,
//! the test browser that opens a URL, and the log of the proxy.

use super::{Run, at};
use crate::matchers;
use crate::outcome::Failure;
use regex::Regex;
use serde_json::Value;
use tokio::time::{Duration, Instant};

impl Run<'_> {
    /// The next POST of the bridge to the fixture over HTTPS that matches
    /// `expected` (a record `{"post":N,"headers":{...},"body":...}`); the others
    /// pass by, as the frames of a fixture on stdio do.
    pub(super) async fn http_expect(
        &mut self,
        line: usize,
        expected: &Value,
        deadline: Instant,
    ) -> Result<(), Failure> {
        let mut seen = Vec::new();
        loop {
            let https = self
                .https
                .as_mut()
                .ok_or_else(|| Failure::at(line, "no upstream over HTTPS"))?;
            let Some(record) = https.next_exchange(deadline).await else {
                return Err(Failure::at(
                    line,
                    format!("no POST of the bridge matches {expected} in time"),
                )
                .with_detail(format!("the POSTs that passed:\n{}", seen.join("\n"))));
            };
            if matchers::check(expected, &record, &mut self.captures.clone()).is_ok() {
                return self.check_frame(line, expected, &record, "the bridge's POSTs");
            }
            seen.push(record.to_string());
        }
    }

    /// `expect_http_requests`: exactly `count` HTTP requests of the run so far match
    /// `expected` (waits for them until `deadline`; more fail at once).
    pub(super) async fn expect_http_requests(
        &mut self,
        line: usize,
        expected: &Value,
        count: usize,
        deadline: Instant,
    ) -> Result<(), Failure> {
        loop {
            let https = self.https_at(line)?;
            let requests = https.traffic().requests;
            let matching: Vec<String> = requests
                .iter()
                .filter(|(_, request)| {
                    matchers::check(expected, request, &mut self.captures.clone()).is_ok()
                })
                .map(|(_, request)| request.to_string())
                .collect();
            if matching.len() > count || (matching.len() < count && Instant::now() >= deadline) {
                return Err(Failure::at(
                    line,
                    format!(
                        "{} HTTP requests match {expected}, expected {count}",
                        matching.len()
                    ),
                )
                .with_detail(matching.join("\n")));
            }
            if matching.len() == count {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `open_url`: the fixture's test browser opens the URL, as a user who
    /// accepts a URL elicitation does.
    pub(super) async fn open_url(&mut self, line: usize, url: &Value) -> Result<(), Failure> {
        let url = matchers::substitute(url, &self.captures).map_err(at(line))?;
        let url = url
            .as_str()
            .ok_or_else(|| Failure::at(line, "open_url needs a string"))?;
        let https = self
            .https
            .as_ref()
            .ok_or_else(|| Failure::at(line, "open_url needs an https_fixture upstream"))?;
        https.open(url).await.map_err(at(line))
    }

    pub(super) fn proxy_log(&self, line: usize) -> Result<Vec<String>, Failure> {
        self.https
            .as_ref()
            .and_then(|https| https.proxy_log())
            .ok_or_else(|| Failure::at(line, "no proxy runs"))
    }

    /// A line of the proxy's log matches before `deadline`.
    pub(super) async fn expect_proxy(
        &mut self,
        line: usize,
        regex: &Regex,
        deadline: Instant,
    ) -> Result<(), Failure> {
        loop {
            let log = self.proxy_log(line)?;
            if log.iter().any(|entry| regex.is_match(entry)) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Failure::at(
                    line,
                    format!("no line of the proxy's log matches /{regex}/"),
                )
                .with_detail(format!("the proxy's log:\n{}", log.join("\n"))));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `expect_no_proxy`: the proxy opened no tunnel.
    pub(super) fn expect_no_proxy(&self, line: usize) -> Result<(), Failure> {
        let log = self.proxy_log(line)?;
        match log.is_empty() {
            true => Ok(()),
            false => Err(Failure::at(
                line,
                format!("the proxy opened tunnels: {}", log.join("; ")),
            )),
        }
    }
}
