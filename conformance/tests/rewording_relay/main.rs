//! The proof that `mcp-conformance run --contract` is fair and still strict.
//!
//! This test program is also the rewording relay: started as
//! `rewording_relay --rewording-relay [OPTIONS] BRIDGE [ARGS...]` it stands
//! between the runner and the bridge and rewords every text that the contract
//! does not fix ([`relay`], [`rewrite`], with `mcp_conformance::reword`). The trials ([`proof`]) run
//! the whole suite in the contract's terms behind it, which must pass, and behind
//! its break variants, each of which changes one text that the contract fixes
//! and must fail.

#![forbid(unsafe_code)]
// The relay hands the bridge Unix socket pairs and passes signals: unix only.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

#[cfg(unix)]
mod passing;
#[cfg(unix)]
mod proof;
#[cfg(unix)]
mod relay;
#[cfg(unix)]
#[cfg(unix)]
mod rewrite;

use libtest_mimic::{Arguments, Failed};

/// The first argument that makes this program the relay.
pub const RELAY_ARG: &str = "--rewording-relay";

#[cfg(not(unix))]
fn main() {
    // No trial here: the runner's own process handling differs on this system.
    libtest_mimic::run(&Arguments::from_args(), Vec::new()).exit();
}

#[cfg(unix)]
fn main() {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|arg| arg == RELAY_ARG) {
        args.next();
        relay::main(args);
    }
    let mut arguments = Arguments::from_args();
    // Each trial runs whole suites, which use every core themselves.
    arguments.test_threads = Some(1);
    let mut trials = rewrite::trials();
    trials.extend(passing::trials());
    trials.extend(proof::trials());
    libtest_mimic::run(&arguments, trials).exit();
}

/// A trial's check that `actual` is `expected`.
pub fn check_eq(actual: impl AsRef<str>, expected: impl AsRef<str>) -> Result<(), Failed> {
    let (actual, expected) = (actual.as_ref(), expected.as_ref());
    if actual == expected {
        Ok(())
    } else {
        Err(format!("got      {actual:?}\nexpected {expected:?}").into())
    }
}
