//! The executable `tls-fixtures`: `tls-fixtures generate DIR` writes a fresh test CA and
//! the server certificates into DIR.
#![forbid(unsafe_code)]

use std::path::PathBuf;

const USAGE: &str = "\
Usage: tls-fixtures generate DIR

Writes a fresh test CA and server certificates (PEM) into DIR, made if missing:
  ca.crt                                   the CA that clients trust
  server.crt, server.key                   good: localhost, 127.0.0.1 and ::1, valid for 365 days
  expired.crt, expired.key                 the same names, expired a year ago
  wrong-host.crt, wrong-host.key           valid, but for wrong.example only
  unknown-ca-server.crt, unknown-ca-server.key
                                           valid, issued by unknown-ca.crt
  unknown-ca.crt                           a second CA that clients do not trust
Each .crt of a server holds the chain: the server certificate, then its CA.
The keys are test keys: never use them to protect anything real.
";

fn main() {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let dir = match args.as_slice() {
        [command, dir] if command == "generate" => PathBuf::from(dir),
        [flag] if flag == "--help" || flag == "-h" => {
            print!("{USAGE}");
            return;
        }
        _ => {
            eprint!("tls-fixtures: error: expected `generate DIR`\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let fixtures = match tls_fixtures::generate() {
        Ok(fixtures) => fixtures,
        Err(e) => {
            eprintln!("tls-fixtures: error: {e}");
            std::process::exit(1);
        }
    };
    match tls_fixtures::files::write_to(&dir, &fixtures) {
        Ok(paths) => {
            for path in paths {
                println!("{}", path.display());
            }
        }
        Err(e) => {
            eprintln!("tls-fixtures: error: {e}");
            std::process::exit(1);
        }
    }
}
