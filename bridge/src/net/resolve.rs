//! The resolver of the HTTP client: `localhost` and the names under it (with one
//! trailing dot or none) are answered here with loopback addresses (RFC 6761 §6.3),
//! every other name by the system's resolver. The URL rule takes these names as
//! loopback by their spelling and lets plain http (and a bearer token) go to them:
//! a resolver that asked a DNS server for `mcp.localhost` could send both anywhere.

use super::url::is_loopback_name;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

/// The addresses of a loopback name, IPv4 first (a server on `localhost` most
/// often listens there); the port is the URL's.
const LOOPBACK_ADDRESSES: [SocketAddr; 2] = [
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
    SocketAddr::new(std::net::IpAddr::V6(Ipv6Addr::LOCALHOST), 0),
];

/// See the module.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoopbackNamesHere;

impl Resolve for LoopbackNamesHere {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            if is_loopback_name(&host) {
                return Ok(Box::new(LOOPBACK_ADDRESSES.into_iter()) as Addrs);
            }
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn addresses(host: &str) -> Vec<SocketAddr> {
        LoopbackNamesHere
            .resolve(host.parse().unwrap())
            .await
            .map(Iterator::collect)
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn loopback_names_are_answered_here_with_loopback_addresses() {
        // None of these is in a hosts file: a system resolver would ask a DNS server.
        for host in [
            "localhost",
            "localhost.",
            "LOCALHOST",
            "mcp.localhost",
            "mcp.localhost.",
            "a.b.Localhost",
            "mcp-bridge-test-7f3a.localhost",
        ] {
            assert_eq!(addresses(host).await, LOOPBACK_ADDRESSES.to_vec(), "{host}");
        }
    }
}
