//! Each certificate of `tls_fixtures` checked by the verifier that rustls clients use:
//! the good one passes for every loopback name, each negative case fails for its reason.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::{CertificateError, RootCertStore};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tls_fixtures::{Fixtures, LOOPBACK_NAMES, ServerPem, WRONG_HOST};

fn certs(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap()
}

fn verify(ca: &str, server: &ServerPem, name: &str) -> Result<(), rustls::Error> {
    let mut roots = RootCertStore::empty();
    for cert in certs(ca) {
        roots.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .unwrap();
    let chain = certs(&server.chain);
    let (leaf, intermediates) = chain.split_first().unwrap();
    verifier
        .verify_server_cert(
            leaf,
            intermediates,
            &ServerName::try_from(name.to_owned()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .map(|_| ())
}

fn fixtures() -> Fixtures {
    tls_fixtures::generate().unwrap()
}

#[test]
fn the_good_certificate_is_trusted_for_every_loopback_name() {
    let fixtures = fixtures();
    for name in LOOPBACK_NAMES {
        verify(&fixtures.ca_cert, &fixtures.server, name).unwrap();
    }
}

#[test]
fn generate_for_adds_names_to_the_good_certificate_only() {
    let fixtures = tls_fixtures::generate_for(&["fixture.mcp-bridge.test"]).unwrap();
    for name in LOOPBACK_NAMES.iter().chain(&["fixture.mcp-bridge.test"]) {
        verify(&fixtures.ca_cert, &fixtures.server, name).unwrap();
    }
    assert!(verify(&fixtures.ca_cert, &fixtures.server, WRONG_HOST).is_err());
    assert!(
        verify(
            &fixtures.ca_cert,
            &fixtures.expired,
            "fixture.mcp-bridge.test"
        )
        .is_err()
    );
    assert!(
        verify(
            &fixtures.ca_cert,
            &fixtures.wrong_host,
            "fixture.mcp-bridge.test"
        )
        .is_err()
    );
}

#[test]
fn the_good_certificate_is_refused_for_another_name() {
    let fixtures = fixtures();
    let error = verify(&fixtures.ca_cert, &fixtures.server, WRONG_HOST).unwrap_err();
    assert!(
        matches!(
            error,
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
            )
        ),
        "{error:?}"
    );
}

#[test]
fn the_expired_certificate_fails_as_expired() {
    let fixtures = fixtures();
    for name in LOOPBACK_NAMES {
        let error = verify(&fixtures.ca_cert, &fixtures.expired, name).unwrap_err();
        assert!(
            matches!(
                error,
                rustls::Error::InvalidCertificate(
                    CertificateError::Expired | CertificateError::ExpiredContext { .. }
                )
            ),
            "{error:?}"
        );
    }
}

#[test]
fn the_wrong_host_certificate_fails_for_loopback_names_only() {
    let fixtures = fixtures();
    verify(&fixtures.ca_cert, &fixtures.wrong_host, WRONG_HOST).unwrap();
    for name in LOOPBACK_NAMES {
        let error = verify(&fixtures.ca_cert, &fixtures.wrong_host, name).unwrap_err();
        assert!(
            matches!(
                error,
                rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                        | CertificateError::NotValidForNameContext { .. }
                )
            ),
            "{error:?}"
        );
    }
}

#[test]
fn the_unknown_ca_certificate_fails_as_unknown_issuer_and_passes_with_its_own_ca() {
    let fixtures = fixtures();
    // Only the leaf: the chain's CA must not help a client that does not trust it.
    let leaf_only = ServerPem {
        chain: fixtures
            .unknown_ca
            .chain
            .split_inclusive("-----END CERTIFICATE-----\n")
            .next()
            .unwrap()
            .to_owned(),
        key: fixtures.unknown_ca.key.clone(),
    };
    for server in [&fixtures.unknown_ca, &leaf_only] {
        let error = verify(&fixtures.ca_cert, server, "localhost").unwrap_err();
        assert_eq!(
            error,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)
        );
    }
    verify(&fixtures.unknown_ca_cert, &fixtures.unknown_ca, "localhost").unwrap();
}

#[test]
fn every_chain_holds_the_leaf_then_its_ca_and_every_key_matches_its_leaf() {
    let fixtures = fixtures();
    let cases = [
        (&fixtures.server, &fixtures.ca_cert),
        (&fixtures.expired, &fixtures.ca_cert),
        (&fixtures.wrong_host, &fixtures.ca_cert),
        (&fixtures.unknown_ca, &fixtures.unknown_ca_cert),
    ];
    for (server, ca) in cases {
        let chain = certs(&server.chain);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1], certs(ca)[0]);
        let key = PrivateKeyDer::from_pem_slice(server.key.as_bytes()).unwrap();
        // with_single_cert checks that the key belongs to the leaf.
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    }
}

#[test]
fn two_runs_make_different_authorities() {
    assert_ne!(fixtures().ca_cert, fixtures().ca_cert);
}

#[test]
fn debug_output_redacts_the_keys() {
    let fixtures = fixtures();
    let text = format!("{fixtures:?}");
    assert!(text.contains("[REDACTED]"));
    assert!(!text.contains("PRIVATE KEY"));
}

#[test]
fn write_to_writes_every_file_in_pem() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = fixtures();
    let paths = tls_fixtures::files::write_to(dir.path(), &fixtures).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "ca.crt",
            "server.crt",
            "server.key",
            "expired.crt",
            "expired.key",
            "wrong-host.crt",
            "wrong-host.key",
            "unknown-ca-server.crt",
            "unknown-ca-server.key",
            "unknown-ca.crt",
        ]
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("ca.crt"), fixtures.ca_cert);
    assert_eq!(read("server.crt"), fixtures.server.chain);
    assert_eq!(read("server.key"), fixtures.server.key);
    assert_eq!(read("unknown-ca.crt"), fixtures.unknown_ca_cert);
    assert!(read("expired.key").starts_with("-----BEGIN PRIVATE KEY-----"));
}
