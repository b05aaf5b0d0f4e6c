//! The Secret Service of a D-Bus session bus, as the keychain tests and the
//! conformance runner see it from outside.

use std::process::Command;

/// The process that owns `org.freedesktop.secrets` on the session bus at
/// `bus_address` (the bus of this process when `None`); `None` when no process
/// owns the name or `dbus-send` cannot ask.
pub fn daemon_pid(bus_address: Option<&str>) -> Option<u32> {
    let mut command = Command::new("dbus-send");
    command.args([
        "--session",
        "--print-reply",
        "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.GetConnectionUnixProcessID",
        "string:org.freedesktop.secrets",
    ]);
    if let Some(address) = bus_address {
        command.env("DBUS_SESSION_BUS_ADDRESS", address);
    }
    let output = command.output().ok()?;
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .last()
        .and_then(|pid| pid.parse().ok())
}
