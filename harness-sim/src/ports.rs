//! A port for another process to bind later: the redirect port of a sign-in, the
//! port of a proxy. A port that the system hands out for `:0` comes from the
//! ephemeral range, where the outgoing connections of the tests that run at the
//! same time take their local ports too: by the time the other process binds it,
//! one of them can hold it ("another program uses the redirect port"). These ports
//! come from below that range, at a random place, and are free when returned. A
//! process never gets the same port twice: two tests (or two transcripts) that run
//! at the same time must not both wait to bind one.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;
use std::sync::Mutex;

/// The ports this process handed out.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// The lowest port handed out.
const FLOOR: u16 = 20_000;

/// A loopback port that nothing listens on now, outside the ephemeral range.
pub fn free_port() -> u16 {
    let low = ephemeral_low().unwrap_or(32_768);
    if low > FLOOR + 1_000 {
        let span = u64::from(low - FLOOR);
        let start = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let mut handed_out = HANDED_OUT
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for step in 0..span {
            let port = FLOOR + ((start.wrapping_add(step)) % span) as u16;
            if !handed_out.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                handed_out.insert(port);
                return port;
            }
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or(0)
}

/// The first port of the system's ephemeral range (Linux).
fn ephemeral_low() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_free_and_below_the_ephemeral_range() {
        let port = free_port();
        let low = ephemeral_low().unwrap_or(32_768);
        assert!(port >= FLOOR && port < low, "{port}");
        assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
    }

    #[test]
    fn no_port_is_handed_out_twice_though_none_is_bound_yet() {
        let ports: BTreeSet<u16> = (0..200).map(|_| free_port()).collect();
        assert_eq!(ports.len(), 200);
    }
}
