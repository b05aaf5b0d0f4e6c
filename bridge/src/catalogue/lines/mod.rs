//! The lines of the Output channel, one file per section of
//! docs/troubleshooting.md.

mod debug;
mod doctor;
mod embed;
mod input;
mod listen;
mod logout;
mod requests;
mod sign_in;
mod start;
mod token_store;

pub use debug::*;
pub use doctor::*;
pub use embed::*;
pub use input::*;
pub use listen::*;
pub use logout::*;
pub use requests::*;
pub use sign_in::*;
pub use start::*;
pub use token_store::*;
