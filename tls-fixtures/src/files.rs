//! The certificates as files, for servers and clients outside this process
//! (`tls-fixtures generate DIR`, `bridge-fixture-server --https --tls-dir DIR`).

use std::path::{Path, PathBuf};

use crate::{Fixtures, ServerPem};

/// The CA that clients trust.
pub const CA_CERT: &str = "ca.crt";
/// The good server certificate chain and its key.
pub const SERVER_CERT: &str = "server.crt";
pub const SERVER_KEY: &str = "server.key";
/// The negative cases, each a chain and its key.
pub const EXPIRED_CERT: &str = "expired.crt";
pub const EXPIRED_KEY: &str = "expired.key";
pub const WRONG_HOST_CERT: &str = "wrong-host.crt";
pub const WRONG_HOST_KEY: &str = "wrong-host.key";
pub const UNKNOWN_CA_CERT: &str = "unknown-ca-server.crt";
pub const UNKNOWN_CA_KEY: &str = "unknown-ca-server.key";
/// The CA of the unknown-CA case, which clients do not trust.
pub const UNKNOWN_CA_ROOT: &str = "unknown-ca.crt";

/// Why the files could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes every certificate and key into `dir` (made if missing); returns the paths
/// in the order written. Files of an earlier run are replaced.
pub fn write_to(dir: &Path, fixtures: &Fixtures) -> Result<Vec<PathBuf>, WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_path_buf(),
        source,
    })?;
    let pair =
        |server: &ServerPem, cert, key| [(cert, server.chain.clone()), (key, server.key.clone())];
    let mut files = vec![(CA_CERT, fixtures.ca_cert.clone())];
    files.extend(pair(&fixtures.server, SERVER_CERT, SERVER_KEY));
    files.extend(pair(&fixtures.expired, EXPIRED_CERT, EXPIRED_KEY));
    files.extend(pair(&fixtures.wrong_host, WRONG_HOST_CERT, WRONG_HOST_KEY));
    files.extend(pair(&fixtures.unknown_ca, UNKNOWN_CA_CERT, UNKNOWN_CA_KEY));
    files.push((UNKNOWN_CA_ROOT, fixtures.unknown_ca_cert.clone()));
    let mut written = Vec::with_capacity(files.len());
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| WriteError {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
