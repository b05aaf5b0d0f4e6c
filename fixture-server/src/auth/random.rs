//! Opaque random strings: tokens, codes, client IDs and request handles.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// 32 random bytes in base64url (43 characters); `None` when the system gives no
/// random data (the endpoint then answers `server_error`, it never issues a guessable
/// value).
pub fn token() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether two secrets are equal, compared in constant time for equal lengths.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_has_43_base64url_characters_and_differs_each_time() {
        let a = token().unwrap();
        let b = token().unwrap();
        assert_eq!(a.len(), 43);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(a, b);
        assert!(same(&a, &a.clone()) && !same(&a, &b) && !same("a", "ab"));
    }
}
