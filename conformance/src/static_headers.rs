//! The static headers of a bridge of the URL form (`--header`, `--header-env`),
//! which the HTTP checks look for on every POST to the MCP URL and nowhere else.

/// The static headers of a bridge of the URL form (`--header`, `--header-env`), as
/// the fixture prints them: the lowercase name, the values of one name joined by
/// ", ", and of `Authorization` only its scheme and `[redacted]`.
pub fn static_headers(args: &[String], env: &[(String, String)]) -> Vec<(String, String)> {
    let mut headers = static_header_values(args, env);
    for (name, value) in &mut headers {
        if name == "authorization" {
            let scheme = value.split(' ').next().unwrap_or_default().to_owned();
            *value = format!("{scheme} [redacted]");
        }
    }
    headers
}

/// The static headers with their whole values, the credential of `Authorization`
/// included: the secrets that no stderr line may hold ([`crate::secrets_of_run`]).
pub fn static_header_values(args: &[String], env: &[(String, String)]) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, value: &str| {
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        match headers.iter_mut().find(|(n, _)| *n == name) {
            Some((_, joined)) => {
                joined.push_str(", ");
                joined.push_str(value);
            }
            None => headers.push((name, value.to_owned())),
        }
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (option, inline) = match arg.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        if option != "--header" && option != "--header-env" {
            continue;
        }
        let Some(spec) = inline.or_else(|| args.next().cloned()) else {
            break;
        };
        if option == "--header" {
            if let Some((name, value)) = spec.split_once(':') {
                add(name, value);
            }
        } else if let Some((name, variable)) = spec.split_once('=')
            && let Some((_, value)) = env.iter().rev().find(|(key, _)| key == variable)
        {
            add(name, value);
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::static_headers;

    #[test]
    fn the_static_headers_are_those_the_fixture_prints() {
        let args: Vec<String> = [
            "--header",
            "X-Team: blue",
            "--header-env=Authorization=API_AUTH",
            "--name",
            "n",
            "--header=x-team:red",
            "--header-env",
            "X-Missing=UNSET",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
        let env = vec![("API_AUTH".to_owned(), "Bearer t-1".to_owned())];
        assert_eq!(
            static_headers(&args, &env),
            [
                ("x-team".to_owned(), "blue, red".to_owned()),
                ("authorization".to_owned(), "Bearer [redacted]".to_owned()),
            ]
        );
    }
}
