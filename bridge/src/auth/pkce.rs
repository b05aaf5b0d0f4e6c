//! The secrets of one sign-in: the PKCE verifier and its S256 challenge (RFC 7636),
//! the `state`, and the token of the one-time start URL (M6), each from the OS's
//! random source.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use std::fmt;
use zeroize::Zeroizing;

/// 32 random bytes as base64url without padding: 43 characters, 256 bits. Its
/// memory is zeroized when it drops.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

/// The OS gave no random data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the system gave no random data: {0}")]
pub struct NoRandomData(pub String);

impl Secret {
    pub fn random() -> Result<Self, NoRandomData> {
        let mut bytes = Zeroizing::new([0u8; 32]);
        getrandom::fill(bytes.as_mut_slice()).map_err(|error| NoRandomData(error.to_string()))?;
        Ok(Self(Zeroizing::new(
            URL_SAFE_NO_PAD.encode(bytes.as_slice()),
        )))
    }

    /// The token of a one-time start URL (M6). A debug build with
    /// `MCP_BRIDGE_TEST_FAULT=no-random-start-token` gets no random data here, so
    /// that a test can see what a system without random data gets (LOG-NO-RANDOM).
    pub fn start_token() -> Result<Self, NoRandomData> {
        #[cfg(debug_assertions)]
        if std::env::var("MCP_BRIDGE_TEST_FAULT").as_deref() == Ok("no-random-start-token") {
            return Err(NoRandomData("the test fault no-random-start-token".into()));
        }
        Self::random()
    }

    #[cfg(test)]
    pub fn for_tests(text: &str) -> Self {
        Self(Zeroizing::new(text.to_owned()))
    }

    /// The value, for the request that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The S256 code challenge of this verifier: base64url(SHA-256(verifier)).
    pub fn s256_challenge(&self) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(self.0.as_bytes()))
    }

    /// Compares in constant time, so that the time of an answer tells nothing
    /// of how much of a guess was right.
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        let mut difference = u8::from(a.len() != b.len());
        for (index, byte) in a.iter().enumerate() {
            difference |= byte ^ b.get(index).copied().unwrap_or(0);
        }
        difference == 0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

/// The PKCE pair and the `state` of one authorization request.
#[derive(Debug, Clone)]
pub struct AuthorizationSecrets {
    pub verifier: Secret,
    pub state: Secret,
}

impl AuthorizationSecrets {
    pub fn new() -> Result<Self, NoRandomData> {
        Ok(Self {
            verifier: Secret::random()?,
            state: Secret::random()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s256_challenge_is_that_of_rfc_7636() {
        // RFC 7636, Appendix B.
        let verifier = Secret::for_tests("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(
            verifier.s256_challenge(),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_random_secret_has_256_bits_and_differs_each_time() {
        let (a, b) = (Secret::random().unwrap(), Secret::random().unwrap());
        assert_eq!(a.expose().len(), 43);
        assert_ne!(a, b);
        assert!(
            a.expose()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(format!("{a:?}"), "Secret([REDACTED])");
    }

    #[test]
    fn only_the_exact_value_matches() {
        let secret = Secret::for_tests("abcdef");
        assert!(secret.matches("abcdef"));
        for wrong in ["abcdeF", "abcde", "abcdefg", "", "bbcdef"] {
            assert!(!secret.matches(wrong), "{wrong}");
        }
    }
}
