//! The cases of the HTTP mode, by behaviour; `client` starts the server and speaks HTTP.

mod client;
mod faults;
mod lifecycle;
mod listen;
mod oauth;
mod requests;
mod validation;
