//! The checks of the URL form's arguments (M4): the URL, the static headers, the
//! CA certificates and the sign-in options. Pure functions of their input, so the
//! rules of the contract are tested here; an error text names an option, a header
//! or a variable, never a value.

use crate::catalogue::cli::CliError;
use crate::config::{StaticHeader, TokenStoreChoice};
use crate::net::url::{has_ambiguous_characters, is_loopback_host};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use url::Url;

/// The URL of the upstream: https, or http to a loopback host; no user
/// information and no fragment. No option permits anything else.
pub fn check_url(text: &str) -> Result<Url, CliError> {
    let url = Url::parse(text).map_err(|_| CliError::UrlNotValid)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(CliError::UrlUserInformation);
    }
    if url.fragment().is_some() {
        return Err(CliError::UrlFragment);
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if url.host().as_ref().is_some_and(is_loopback_host) => Ok(url),
        "http" => Err(CliError::UrlHttpNotLoopback),
        _ => Err(CliError::UrlNotHttps),
    }
}

/// The headers that the HTTP connection or the bridge set, which no option may.
const REFUSED_HEADERS: [&str; 13] = [
    "host",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Names that usually carry a secret: on the command line they earn a warning.
fn carries_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "authorization"
        || name == "cookie"
        || ["token", "secret", "key", "auth", "password", "session"]
            .iter()
            .any(|part| name.contains(part))
}

/// A header name the bridge may send: a token (RFC 9110), and not one of the
/// connection's or the revision's.
fn check_header_name(name: &str, option: &'static str) -> Result<(), CliError> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte));
    if !token {
        return Err(CliError::HeaderNameNotValid { option });
    }
    let lower = name.to_ascii_lowercase();
    if REFUSED_HEADERS.contains(&lower.as_str()) || lower.starts_with("mcp-") {
        return Err(CliError::HeaderRefused {
            name: name.to_owned(),
            option,
        });
    }
    Ok(())
}

/// A value that a header can carry: no control character but the tab.
fn check_header_value(value: &str, name: &str) -> Result<(), CliError> {
    if value
        .bytes()
        .any(|byte| (byte < 0x20 && byte != b'\t') || byte == 0x7f)
    {
        return Err(CliError::HeaderValueWithControl {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// `--header <name>:<value>`, and whether its name usually carries a secret.
pub fn header(spec: &str) -> Result<(StaticHeader, bool), CliError> {
    let (name, value) = spec.split_once(':').ok_or(CliError::HeaderWithoutColon)?;
    let (name, value) = (name.trim(), value.trim());
    check_header_name(name, "--header")?;
    check_header_value(value, name)?;
    Ok((
        StaticHeader::new(name, value.to_owned()),
        carries_secret(name),
    ))
}

/// `--header-env <name>=<var>`: the value of the variable, which must be set.
pub fn header_env(
    spec: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<StaticHeader, CliError> {
    let (name, variable) = spec
        .split_once('=')
        .ok_or(CliError::HeaderEnvWithoutEquals)?;
    check_header_name(name, "--header-env")?;
    if variable.is_empty() {
        return Err(CliError::HeaderEnvWithoutVariable {
            name: name.to_owned(),
        });
    }
    let value = env(variable).ok_or_else(|| CliError::VariableNotSet {
        var: variable.to_owned(),
    })?;
    check_header_value(value.trim(), name)?;
    Ok(StaticHeader::new(name, value.trim().to_owned()).from_variable(variable))
}

/// The certificates of `--ca-file`: a PEM file with at least one certificate.
pub fn ca_file(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let certificates = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("{}: {error}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!("{} has no PEM certificate", path.display()));
    }
    Ok(certificates)
}

/// `--account`: 1 to 64 letters, digits, `-`, `.`, `_`, `@` or `+`.
pub fn account(label: &str) -> Result<String, CliError> {
    let valid = (1..=64).contains(&label.len())
        && label
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-._@+".contains(&byte));
    if valid {
        Ok(label.to_owned())
    } else {
        Err(CliError::AccountNotValid)
    }
}

/// `--token-store`.
pub fn token_store(text: &str) -> Result<TokenStoreChoice, CliError> {
    match text {
        "auto" => Ok(TokenStoreChoice::Auto),
        "keychain" => Ok(TokenStoreChoice::Keychain),
        "file" => Ok(TokenStoreChoice::File),
        "memory" => Ok(TokenStoreChoice::Memory),
        _ => Err(CliError::TokenStoreNotValid),
    }
}

/// `--client-issuer` and `--client-metadata-url`: https URLs (the metadata
/// document's with a path: it is the client ID), without user information,
/// fragment or [ambiguous characters](has_ambiguous_characters), as the rule of
/// every URL of the sign-in (`auth::sign_in_url`) wants. The text is checked as
/// given: the parser turns a backslash into a slash, and the sign-in sees only
/// its reading.
pub fn https_url(text: &str, option: &'static str, needs_path: bool) -> Result<Url, CliError> {
    let error = || CliError::NotAnHttpsUrl { option };
    if has_ambiguous_characters(text) {
        return Err(error());
    }
    let url = Url::parse(text).map_err(|_| error())?;
    let loopback_http = url.scheme() == "http" && url.host().as_ref().is_some_and(is_loopback_host);
    if !(url.scheme() == "https" || loopback_http)
        || url.host().is_none()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(error());
    }
    if needs_path && url.path().len() <= 1 {
        return Err(CliError::DocumentUrlWithoutPath);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_https_or_loopback_http_without_user_or_fragment() {
        for ok in [
            "https://mcp.example.com/mcp",
            "http://localhost:3000/mcp",
            "http://a.b.localhost/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://127.9.9.9/mcp",
            "http://[::1]:3000/mcp",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        let refused = [
            ("http://mcp.example.com/mcp", "not a loopback host"),
            ("http://localhost.example.com/mcp", "not a loopback host"),
            ("http://10.0.0.1/mcp", "not a loopback host"),
            ("ftp://mcp.example.com/mcp", "does not use https"),
            ("https://user:pw@mcp.example.com/mcp", "user information"),
            ("https://user@mcp.example.com/mcp", "user information"),
            ("https://mcp.example.com/mcp#x", "fragment"),
            ("file:///etc/passwd", "does not use https"),
            ("not a url", "is not valid"),
        ];
        for (url, text) in refused {
            let error = check_url(url).unwrap_err().to_string();
            assert!(error.contains(text), "{url}: {error}");
            assert!(!error.contains("pw@"), "the URL reached the error: {error}");
        }
    }

    #[test]
    fn plain_http_passes_for_every_spelling_of_a_loopback_host_only() {
        use crate::net::url::{LOOPBACK_SPELLINGS, NOT_LOOPBACK};
        for host in LOOPBACK_SPELLINGS {
            let text = format!("http://{host}:8/mcp");
            assert!(check_url(&text).is_ok(), "{text}");
        }
        for host in NOT_LOOPBACK {
            let text = format!("http://{host}:8/mcp");
            assert_eq!(
                check_url(&text),
                Err(CliError::UrlHttpNotLoopback),
                "{text}"
            );
        }
    }

    #[test]
    fn headers_that_the_connection_or_the_revision_set_are_refused() {
        for name in [
            "Host",
            "content-type",
            "Accept",
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Proxy-Authorization",
            "Transfer-Encoding",
        ] {
            let error = header(&format!("{name}: x")).unwrap_err().to_string();
            assert!(error.contains("is refused"), "{name}: {error}");
        }
        assert!(
            header("Bad Name: x")
                .unwrap_err()
                .to_string()
                .contains("not valid")
        );
        assert!(
            header("no-colon")
                .unwrap_err()
                .to_string()
                .contains("<name>:<value>")
        );
        let (ok, secret) = header("X-Tenant: acme").unwrap();
        assert_eq!(
            (ok.name.as_str(), ok.value(), secret),
            ("x-tenant", "acme", false)
        );
        for name in ["Authorization", "X-API-Key", "Cookie", "X-Auth-Token"] {
            assert!(header(&format!("{name}: x")).unwrap().1, "{name}");
        }
    }

    #[test]
    fn header_env_takes_the_value_of_a_set_variable_and_never_names_it() {
        let env = |name: &str| (name == "API_AUTH").then(|| "Bearer s3cr3t".to_owned());
        let header = header_env("Authorization=API_AUTH", &env).unwrap();
        assert_eq!(
            (header.name.as_str(), header.value()),
            ("authorization", "Bearer s3cr3t")
        );
        assert_eq!(
            header_env("Authorization=MISSING", &env)
                .unwrap_err()
                .to_string(),
            "the variable MISSING of --header-env is not set"
        );
        assert!(
            header_env("Host=API_AUTH", &env)
                .unwrap_err()
                .to_string()
                .contains("is refused")
        );
        assert!(
            header_env("Authorization", &env)
                .unwrap_err()
                .to_string()
                .contains("<name>=<var>")
        );
        let control = |_: &str| Some("a\nb".to_owned());
        let error = header_env("X-Key=V", &control).unwrap_err().to_string();
        assert!(!error.contains("a\nb"));
    }

    #[test]
    fn accounts_token_stores_and_client_urls_follow_their_rules() {
        assert_eq!(account("work@example.com").unwrap(), "work@example.com");
        assert!(account("").is_err());
        assert!(account(&"a".repeat(65)).is_err());
        assert!(account("two words").is_err());
        assert_eq!(token_store("file").unwrap(), TokenStoreChoice::File);
        assert!(token_store("disk").is_err());
        assert!(https_url("https://auth.example.com", "--client-issuer", false).is_ok());
        assert!(https_url("http://auth.example.com", "--client-issuer", false).is_err());
        assert!(
            https_url(
                "https://x.example/client.json",
                "--client-metadata-url",
                true
            )
            .is_ok()
        );
        assert_eq!(
            https_url("https://x.example/", "--client-metadata-url", true),
            Err(CliError::DocumentUrlWithoutPath)
        );
        assert_eq!(
            https_url("https://x.example/#a", "--client-metadata-url", true),
            Err(CliError::NotAnHttpsUrl {
                option: "--client-metadata-url"
            })
        );
        // The rule of the sign-in's URLs, on the text as given.
        for refused in [
            "https://x.example\\client.json",
            "https://x.example/client .json",
            "https://someone@x.example/client.json",
            "https://someone:pw@x.example/client.json",
        ] {
            assert_eq!(
                https_url(refused, "--client-metadata-url", true),
                Err(CliError::NotAnHttpsUrl {
                    option: "--client-metadata-url"
                }),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        assert!(
            ca_file(&empty)
                .unwrap_err()
                .ends_with("has no PEM certificate")
        );
        let missing = dir.path().join("missing.pem");
        assert!(ca_file(&missing).unwrap_err().contains("missing.pem"));
    }
}
