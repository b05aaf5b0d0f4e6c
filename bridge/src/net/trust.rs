//! The certificate check of the URL form with `--ca-file`: the CA certificates of
//! the file first, the system's only when they are needed.
//!
//! "The bridge always trusts the CA certificates of the system": it does, but
//! loading them parses every certificate of the system's store (some 430 files on
//! Debian, about 6 ms, three quarters of a start in the URL form). A server whose
//! certificate chains to a CA of `--ca-file` (a server of one's own, the fixture)
//! never needs them: its chain is checked against the file's CA certificates, and
//! only a chain that this check refuses is checked again, against the system's CA
//! certificates and the file's together, as it always was. A chain that verifies
//! against a subset of the roots verifies against all of them, with the same
//! checks (rustls's WebPKI verifier in both), so what is accepted and the error of
//! what is refused do not change.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::{DigitallySignedStruct, Error as TlsError, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::sync::{Arc, OnceLock};

/// The file's CA certificates first, then every CA certificate the bridge trusts.
#[derive(Debug)]
pub struct FileRootsFirst {
    file_roots: Arc<WebPkiServerVerifier>,
    extra_roots: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    all_roots: OnceLock<Result<Arc<rustls_platform_verifier::Verifier>, TlsError>>,
}

impl FileRootsFirst {
    /// Fails for CA certificates that rustls cannot use, as the verifier of all
    /// the roots would.
    pub fn new(
        extra_roots: &[CertificateDer<'static>],
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, TlsError> {
        let mut roots = RootCertStore::empty();
        for root in extra_roots {
            roots.add(root.clone())?;
        }
        let file_roots =
            WebPkiServerVerifier::builder_with_provider(roots.into(), provider.clone())
                .build()
                .map_err(|error| TlsError::General(error.to_string()))?;
        Ok(Self {
            file_roots,
            extra_roots: extra_roots.to_vec(),
            provider,
            all_roots: OnceLock::new(),
        })
    }

    /// The verifier of the system's CA certificates and the file's, made once.
    fn all_roots(&self) -> Result<&rustls_platform_verifier::Verifier, TlsError> {
        self.all_roots
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra_roots.iter().cloned(),
                    self.provider.clone(),
                )
                .map(Arc::new)
            })
            .as_deref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for FileRootsFirst {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let by_the_file = self.file_roots.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        if by_the_file.is_ok() {
            return by_the_file;
        }
        self.all_roots()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls_pki_types::pem::PemObject;

    fn certificates(pem: &str) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// Every check at one moment: an expired certificate's error names the time, and
    /// two verifiers asked a second apart would differ in it.
    fn check(verifier: &impl ServerCertVerifier, chain: &str) -> Result<(), TlsError> {
        static NOW: std::sync::OnceLock<UnixTime> = std::sync::OnceLock::new();
        let now = *NOW.get_or_init(UnixTime::now);
        let chain = certificates(chain);
        let name = ServerName::try_from("127.0.0.1").unwrap();
        verifier
            .verify_server_cert(&chain[0], &chain[1..], &name, &[], now)
            .map(|_| ())
    }

    #[test]
    fn a_chain_to_the_file_needs_no_system_certificates_and_the_rest_gets_the_same_answer() {
        let fixtures = tls_fixtures::generate().unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = certificates(&fixtures.ca_cert);
        let verifier = FileRootsFirst::new(&roots, provider.clone()).unwrap();
        let all_roots =
            rustls_platform_verifier::Verifier::new_with_extra_roots(roots.clone(), provider)
                .unwrap();

        check(&verifier, &fixtures.server.chain).unwrap();
        assert!(
            verifier.all_roots.get().is_none(),
            "the system's certificates were loaded for a chain to the file's CA"
        );
        for refused in [
            &fixtures.expired.chain,
            &fixtures.wrong_host.chain,
            &fixtures.unknown_ca.chain,
        ] {
            let error = check(&verifier, refused).unwrap_err();
            assert_eq!(error, check(&all_roots, refused).unwrap_err());
        }
        assert!(verifier.all_roots.get().is_some());
    }

    #[test]
    fn a_file_certificate_that_rustls_cannot_use_is_refused_at_once() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let not_a_certificate = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
        assert!(FileRootsFirst::new(&[not_a_certificate], provider).is_err());
    }
}
