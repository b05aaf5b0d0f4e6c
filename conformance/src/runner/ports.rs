//! `expect_free_port_closed`: the redirect port of a sign-in is free again. The
//! receiver of a sign-in that opened no start URL has nothing more to serve after
//! its redirect, and two servers may take turns on one redirect port.

use super::Run;
use crate::outcome::Failure;
use tokio::net::TcpStream;
use tokio::time::{Duration, Instant};

/// How often the port is tried while it is still open.
const POLL: Duration = Duration::from_millis(20);

impl Run<'_> {
    /// Nothing listens on `$FREE_PORT` within `ms` milliseconds: a connection to it
    /// is refused.
    pub(super) async fn expect_free_port_closed(
        &mut self,
        line: usize,
        ms: u64,
    ) -> Result<(), Failure> {
        let port = self.https_at(line)?.free_port();
        let deadline = Instant::now() + Duration::from_millis(ms);
        while TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            if Instant::now() >= deadline {
                return Err(Failure::at(
                    line,
                    format!("the port {port} still listens after {ms} ms"),
                ));
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(())
    }
}
