//! The catalogue of what the user sees: the causes of the errors that VS Code
//! gets, with their codes and messages. The contract fixes these texts; here they
//! are data, in one place.
//!
//! The catalogue imports nothing of the crate, and every layer may use it.

mod cause;

pub use cause::{BridgeError, Cause};
