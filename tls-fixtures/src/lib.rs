//! `tls-fixtures`: a test certificate authority and the server certificates that the
//! HTTPS tests of mcp-bridge-rs need, made in memory with rcgen.
//!
//! The good server certificate names `localhost`, `127.0.0.1` and `::1`, so a client
//! that trusts [`Fixtures::ca_cert`] accepts the fixture server on any loopback address.
//! Three negative cases let the bridge's tests prove that it refuses a bad server:
//! an expired certificate, a certificate for a wrong host (`wrong.example` only), and a
//! certificate issued by a second CA that clients do not trust.
//!
//! Nothing here is secret: the keys are made anew on every call and live only as long as
//! a test run. They must never protect anything real.
//!
//! # Layout
//!
//! - this file: the kinds of certificates and [`generate`];
//! - [`files`]: the file names and [`write_to`](files::write_to) (`tls-fixtures generate DIR`);
//! - `main.rs`: the executable.
#![forbid(unsafe_code)]

pub mod files;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};

/// The names of the good server certificate: every loopback spelling a client may use.
pub const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The only name of the wrong-host certificate: a name no loopback client asks for.
pub const WRONG_HOST: &str = "wrong.example";

/// How long a good certificate stays valid from its making: long enough for any test
/// run, short enough that no client flags an absurd validity.
pub const VALIDITY: Duration = Duration::days(365);

/// Why the certificates could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// rcgen refused a parameter or failed to sign.
    #[error("rcgen could not make the {what}: {source}")]
    Rcgen {
        what: &'static str,
        #[source]
        source: rcgen::Error,
    },
}

/// A server certificate with its private key, both PEM.
#[derive(Clone)]
pub struct ServerPem {
    /// The certificate chain: the server certificate, then its issuing CA.
    pub chain: String,
    /// The PKCS#8 private key of the server certificate.
    pub key: String,
}

impl std::fmt::Debug for ServerPem {
    // Test keys still do not belong in logs: a habit kept everywhere.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPem")
            .field("chain", &self.chain)
            .field("key", &"[REDACTED]")
            .finish()
    }
}

/// Every certificate of a test run, PEM.
#[derive(Clone, Debug)]
pub struct Fixtures {
    /// The CA that clients trust.
    pub ca_cert: String,
    /// The good server certificate: issued by [`ca_cert`](Self::ca_cert) for
    /// [`LOOPBACK_NAMES`] (and the extra names of [`generate_for`]), valid now.
    pub server: ServerPem,
    /// Issued by the trusted CA for [`LOOPBACK_NAMES`], but expired a year ago.
    pub expired: ServerPem,
    /// Issued by the trusted CA and valid now, but for [`WRONG_HOST`] only.
    pub wrong_host: ServerPem,
    /// Valid now for [`LOOPBACK_NAMES`], but issued by [`unknown_ca_cert`](Self::unknown_ca_cert).
    pub unknown_ca: ServerPem,
    /// A second CA that clients do not trust.
    pub unknown_ca_cert: String,
}

/// Makes a fresh set of certificates, valid from now.
pub fn generate() -> Result<Fixtures, Error> {
    generate_at(OffsetDateTime::now_utc())
}

/// Makes a fresh set of certificates whose good server certificate also names
/// `extra_names`: a test that must reach the server by a name that is not loopback
/// (through a proxy, Q10) needs a certificate for that name.
pub fn generate_for(extra_names: &[&str]) -> Result<Fixtures, Error> {
    generate_with(OffsetDateTime::now_utc(), extra_names)
}

/// Makes a fresh set of certificates as of `now` (tests choose the clock).
pub fn generate_at(now: OffsetDateTime) -> Result<Fixtures, Error> {
    generate_with(now, &[])
}

fn generate_with(now: OffsetDateTime, extra_names: &[&str]) -> Result<Fixtures, Error> {
    let valid = (now - Duration::days(1), now + VALIDITY);
    let mut good_names = LOOPBACK_NAMES.to_vec();
    good_names.extend_from_slice(extra_names);
    let expired = (now - Duration::days(730), now - Duration::days(365));
    let trusted = Authority::new("mcp-bridge-rs test CA", valid)?;
    let unknown = Authority::new("mcp-bridge-rs untrusted test CA", valid)?;
    Ok(Fixtures {
        ca_cert: trusted.cert_pem.clone(),
        server: trusted.issue(&good_names, valid)?,
        expired: trusted.issue(&LOOPBACK_NAMES, expired)?,
        wrong_host: trusted.issue(&[WRONG_HOST], valid)?,
        unknown_ca: unknown.issue(&LOOPBACK_NAMES, valid)?,
        unknown_ca_cert: unknown.cert_pem,
    })
}

type Window = (OffsetDateTime, OffsetDateTime);

/// A CA: its certificate and what signs with its key.
struct Authority {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Authority {
    fn new(name: &str, (not_before, not_after): Window) -> Result<Authority, Error> {
        let rcgen = |what| move |source| Error::Rcgen { what, source };
        let mut params = CertificateParams::default();
        params.distinguished_name = common_name(name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = not_before;
        params.not_after = not_after;
        let key = KeyPair::generate().map_err(rcgen("CA key"))?;
        let cert = params.self_signed(&key).map_err(rcgen("CA certificate"))?;
        Ok(Authority {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        })
    }

    fn issue(&self, names: &[&str], (not_before, not_after): Window) -> Result<ServerPem, Error> {
        let rcgen = |what| move |source| Error::Rcgen { what, source };
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        // rcgen turns names that parse as IP addresses into IP address SANs.
        let mut params = CertificateParams::new(names.clone()).map_err(rcgen("server names"))?;
        params.distinguished_name = common_name(names.first().map_or("server", String::as_str));
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.not_before = not_before;
        params.not_after = not_after;
        let key = KeyPair::generate().map_err(rcgen("server key"))?;
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(rcgen("server certificate"))?;
        Ok(ServerPem {
            chain: format!("{}{}", cert.pem(), self.cert_pem),
            key: key.serialize_pem(),
        })
    }
}

fn common_name(name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, name);
    dn
}
