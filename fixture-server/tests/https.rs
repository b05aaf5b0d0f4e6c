//! The Streamable HTTP mode (`--https`, `--http`) of the real executable, spoken to by
//! a real HTTPS client (hyper over tokio-rustls, trusting the CA that the server names).
