//! A secret text of the sign-in (a token, a code, a client secret): its memory is
//! overwritten with zeros when it drops, and its `Debug` prints `[REDACTED]`.
//!
//! What this guarantees: the buffer that this type owns is zeroized, also when a
//! clone drops. It does not reach the copies that others make: the HTTP client's
//! request body and headers, serde_json's scratch buffer while a response is
//! read, the pages of memory that the allocator moved the text from before it
//! came here. It shortens the life of a secret in memory; it cannot end it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use zeroize::Zeroizing;

#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretString(Zeroizing<String>);

impl SecretString {
    /// The text, for the request that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for SecretString {
    fn from(text: String) -> Self {
        Self(Zeroizing::new(text))
    }
}

impl From<&str> for SecretString {
    fn from(text: &str) -> Self {
        Self(Zeroizing::new(text.to_owned()))
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl Serialize for SecretString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.expose())
    }
}

impl<'de> Deserialize<'de> for SecretString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_round_trips_through_json_and_never_shows_in_debug() {
        let secret = SecretString::from("token-7f3a");
        assert_eq!(format!("{secret:?}"), "[REDACTED]");
        let json = serde_json::to_string(&secret).unwrap();
        assert_eq!(json, "\"token-7f3a\"");
        let back: SecretString = serde_json::from_str(&json).unwrap();
        assert_eq!(back, secret);
        assert_eq!(back.expose(), "token-7f3a");
        assert!(!back.is_empty() && SecretString::default().is_empty());
    }
}
