//! The notifications of revision 2026-07-28 as VS Code expects them (O5-O7, M3):
//! the listen stream with its list changes and resource subscriptions, and the log
//! messages of upstream requests.

pub mod events;
pub mod listen;
