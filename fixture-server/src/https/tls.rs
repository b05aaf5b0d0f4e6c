//! The certificates of `--https`: loaded from `--tls-dir`, or made in memory with
//! tls-fixtures, with the CA written where a client can read it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tls_fixtures::files::{self, CA_CERT};
use tls_fixtures::{Fixtures, ServerPem};

use super::options::TlsCase;

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificates in {}: {source}", path.display())]
    Pem {
        path: PathBuf,
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    #[error("{} holds no certificate", path.display())]
    NoCertificate { path: PathBuf },
    #[error("the certificates could not be made: {0}")]
    Generate(#[from] tls_fixtures::Error),
    #[error("cannot write the CA certificate {}: {source}", path.display())]
    WriteCa {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("rustls refused the certificate and key: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The TLS set-up of a serving process.
pub struct Tls {
    pub config: Arc<ServerConfig>,
    /// The CA certificate that clients must trust.
    pub ca_file: PathBuf,
    /// A folder the server made for `ca_file`, removed when the server stops.
    pub made_dir: Option<MadeDir>,
}

/// A folder the server made; removed with its contents when dropped (on every way out
/// of the server, an error at start included).
#[derive(Debug)]
pub struct MadeDir(pub PathBuf);

impl Drop for MadeDir {
    fn drop(&mut self) {
        // Best effort: a folder left in the temporary directory harms nobody.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The files of a case, as `tls-fixtures generate DIR` names them.
fn file_names(case: TlsCase) -> (&'static str, &'static str) {
    match case {
        TlsCase::Good => (files::SERVER_CERT, files::SERVER_KEY),
        TlsCase::Expired => (files::EXPIRED_CERT, files::EXPIRED_KEY),
        TlsCase::WrongHost => (files::WRONG_HOST_CERT, files::WRONG_HOST_KEY),
        TlsCase::UnknownCa => (files::UNKNOWN_CA_CERT, files::UNKNOWN_CA_KEY),
    }
}

fn pair(fixtures: &Fixtures, case: TlsCase) -> &ServerPem {
    match case {
        TlsCase::Good => &fixtures.server,
        TlsCase::Expired => &fixtures.expired,
        TlsCase::WrongHost => &fixtures.wrong_host,
        TlsCase::UnknownCa => &fixtures.unknown_ca,
    }
}

/// Loads the certificate chain and key of `case` from `dir` (`server.crt` and
/// `server.key` for the good case), as `tls-fixtures generate DIR` writes them.
pub fn load(dir: &Path, case: TlsCase) -> Result<Tls, TlsError> {
    let (cert_name, key_name) = file_names(case);
    let cert_path = dir.join(cert_name);
    let key_path = dir.join(key_name);
    let chain = CertificateDer::pem_file_iter(&cert_path)
        .map_err(pem_error(&cert_path))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(&cert_path))?;
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(pem_error(&key_path))?;
    Ok(Tls {
        config: server_config(chain, key, &cert_path)?,
        ca_file: dir.join(CA_CERT),
        made_dir: None,
    })
}

/// Makes the certificates in memory and writes the trusted CA to a new folder under the
/// temporary directory (only the CA: the keys never touch the disk); the server
/// presents the certificate of `case`. The good certificate also names `names`
/// (`--tls-name`).
pub fn generate(case: TlsCase, names: &[String]) -> Result<Tls, TlsError> {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let fixtures = tls_fixtures::generate_for(&names)?;
    let temp = std::env::temp_dir();
    super::leftovers::sweep(&temp);
    let dir = temp.join(format!(
        "{}{}-{}",
        super::leftovers::PREFIX,
        std::process::id(),
        suffix()
    ));
    let ca_file = dir.join(CA_CERT);
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TlsError::WriteCa { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(write(&dir))?;
    let made_dir = MadeDir(dir);
    std::fs::write(&ca_file, &fixtures.ca_cert).map_err(write(&ca_file))?;
    let memory = Path::new("(in memory)");
    let server = pair(&fixtures, case);
    let chain = CertificateDer::pem_slice_iter(server.chain.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(memory))?;
    let key = PrivateKeyDer::from_pem_slice(server.key.as_bytes()).map_err(pem_error(memory))?;
    Ok(Tls {
        config: server_config(chain, key, memory)?,
        ca_file,
        made_dir: Some(made_dir),
    })
}

fn pem_error(path: &Path) -> impl FnOnce(rustls_pki_types::pem::Error) -> TlsError {
    let path = path.to_path_buf();
    move |source| TlsError::Pem { path, source }
}

/// Eight random hex digits, so that two servers of one process never share a folder.
fn suffix() -> String {
    let mut bytes = [0u8; 4];
    // Without randomness the pid alone still names the folder.
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    path: &Path,
) -> Result<Arc<ServerConfig>, TlsError> {
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_path_buf(),
        });
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    // HTTP/1.1 only: one POST, one response stream.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
