//! The `WWW-Authenticate` challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1):
//! where the protected resource metadata is, which scope the request needs, and
//! whether the token lacks a scope (step-up).

/// The parameters of a `Bearer` challenge that the sign-in uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: the URL of the protected resource metadata.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, separated by spaces.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
}

impl Challenge {
    /// A 403 `insufficient_scope`: the token is good but lacks a scope (step-up).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// The challenge of a response: its `WWW-Authenticate` headers that are text.
    pub fn of_headers(headers: &reqwest::header::HeaderMap) -> Self {
        Self::parse(
            headers
                .get_all(reqwest::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|value| value.to_str().ok()),
        )
    }

    /// Reads the `Bearer` challenge among the values of the header (a header can
    /// hold several challenges, and a response several headers). Other schemes
    /// are skipped; no `Bearer` challenge gives the default (no parameters).
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        for value in values {
            if let Some(challenge) = bearer_of(value) {
                return challenge;
            }
        }
        Self::default()
    }
}

/// The `Bearer` challenge of one header value, if it has one.
fn bearer_of(value: &str) -> Option<Challenge> {
    let mut rest = value;
    let mut in_bearer = false;
    let mut found = None::<Challenge>;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return found;
        }
        let token_end = rest.find(['=', ' ', '\t', ',']).unwrap_or(rest.len());
        let (token, after) = rest.split_at(token_end);
        let after_spaces = after.trim_start_matches([' ', '\t']);
        if let Some(after_equals) = after_spaces.strip_prefix('=')
            && !after_equals.starts_with('=')
        {
            // A parameter of the current challenge.
            let (parameter, remainder) = value_of(after_equals.trim_start_matches([' ', '\t']));
            if in_bearer && let Some(challenge) = found.as_mut() {
                let slot = match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut challenge.resource_metadata),
                    "scope" => Some(&mut challenge.scope),
                    "error" => Some(&mut challenge.error),
                    _ => None,
                };
                if let Some(slot) = slot
                    && slot.is_none()
                {
                    *slot = Some(parameter);
                }
            }
            rest = remainder;
        } else {
            // A new scheme (or token68, which Bearer challenges do not use here).
            if found.is_some() {
                return found;
            }
            in_bearer = token.eq_ignore_ascii_case("bearer");
            if in_bearer {
                found = Some(Challenge::default());
            }
            rest = after;
        }
    }
}

/// A quoted string or a token, and what follows it.
fn value_of(text: &str) -> (String, &str) {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((index, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, quoted.get(index + 1..).unwrap_or_default()),
                _ => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = text.find([',', ' ', '\t']).unwrap_or(text.len());
        let (value, rest) = text.split_at(end);
        (value.to_owned(), rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_of_a_bearer_challenge_are_read() {
        let challenge = Challenge::parse([
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
        ]);
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(challenge.scope.as_deref(), Some("files:read"));
        assert!(!challenge.is_insufficient_scope());
    }

    #[test]
    fn a_step_up_challenge_names_its_error_and_scope() {
        let challenge = Challenge::parse([
            r#"Bearer error="insufficient_scope", error_description="The tool needs the scope mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:write""#,
        ]);
        assert!(challenge.is_insufficient_scope());
        assert_eq!(challenge.scope.as_deref(), Some("mcp:read mcp:write"));
    }

    #[test]
    fn other_schemes_tokens_and_escapes_are_handled() {
        let challenge = Challenge::parse([
            r#"Basic realm="x", Bearer realm="a \"b\"", scope=mcp:read, error=invalid_token"#,
        ]);
        assert_eq!(challenge.scope.as_deref(), Some("mcp:read"));
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            Challenge::parse(["Basic realm=\"x\""]),
            Challenge::default()
        );
        assert_eq!(Challenge::parse(["Bearer"]), Challenge::default());
        let later = Challenge::parse(["Negotiate", r#"bearer scope="a""#]);
        assert_eq!(later.scope.as_deref(), Some("a"));
        // A parameter of a scheme after Bearer is not Bearer's.
        let two = Challenge::parse([r#"Bearer scope="a", DPoP scope="b" , error="x""#]);
        assert_eq!((two.scope.as_deref(), two.error), (Some("a"), None));
    }

    #[test]
    fn broken_headers_give_what_can_be_read() {
        assert_eq!(
            Challenge::parse([r#"Bearer scope="unterminated"#])
                .scope
                .as_deref(),
            Some("unterminated")
        );
        assert_eq!(Challenge::parse([",,, ,"]), Challenge::default());
        assert_eq!(Challenge::parse(["Bearer =x"]).scope, None);
    }
}
