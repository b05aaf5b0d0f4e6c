//! What TLS said about the server: why the certificate check refused it (read
//! from the error of rustls that the HTTP client carries), and when an accepted
//! certificate expires (read from its DER, the one field doctor needs).

use rustls::{CertificateError, Error as TlsError};
use std::error::Error;

/// Why the certificate of the server is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No CA that the bridge trusts issued it.
    UnknownCa,
    /// It expired (at this time, seconds since the Unix epoch, when known).
    Expired(Option<u64>),
    /// It is not valid yet.
    NotValidYet,
    /// It does not name the host of the URL (it names these).
    WrongHost(Vec<String>),
    /// Another reason, in rustls's words.
    Other(String),
}

/// The refusal of the certificate in the chain of `error`, if TLS refused it.
pub fn refusal_of(error: &(dyn Error + 'static)) -> Option<Refusal> {
    let mut current: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(error) = current {
        if let Some(tls) = error.downcast_ref::<TlsError>() {
            return refusal(tls);
        }
        // An I/O error hides the error it wraps from `source` (and may wrap
        // another I/O error): its own reference leads on.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn Error + 'static)),
                None => io.source(),
            },
            None => error.source(),
        };
    }
    None
}

fn refusal(error: &TlsError) -> Option<Refusal> {
    let TlsError::InvalidCertificate(certificate) = error else {
        return None;
    };
    Some(match certificate {
        CertificateError::UnknownIssuer => Refusal::UnknownCa,
        CertificateError::Expired => Refusal::Expired(None),
        CertificateError::ExpiredContext { not_after, .. } => {
            Refusal::Expired(Some(not_after.as_secs()))
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            Refusal::NotValidYet
        }
        CertificateError::NotValidForName => Refusal::WrongHost(Vec::new()),
        CertificateError::NotValidForNameContext { presented, .. } => {
            Refusal::WrongHost(presented.iter().map(|name| plain_name(name)).collect())
        }
        other => Refusal::Other(format!("{other:?}")),
    })
}

/// A name that rustls presents as `DnsName("host")`, as `host`.
fn plain_name(name: &str) -> String {
    name.split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .map(|inner| inner.trim_matches('"').to_owned())
        .unwrap_or_else(|| name.to_owned())
}

/// The end of the validity of a certificate (DER), in seconds since the Unix
/// epoch: `tbsCertificate.validity.notAfter` (RFC 5280 §4.1).
pub fn not_after(der: &[u8]) -> Option<i64> {
    let (_, certificate, _) = element(der)?;
    let (_, mut tbs, _) = element(certificate)?;
    // An explicit version ([0]) comes first when the certificate has one.
    if tbs.first() == Some(&0xa0) {
        tbs = element(tbs)?.2;
    }
    // serialNumber, signature, issuer.
    for _ in 0..3 {
        tbs = element(tbs)?.2;
    }
    let (_, validity, _) = element(tbs)?;
    let (_, _, after_not_before) = element(validity)?;
    let (tag, time, _) = element(after_not_before)?;
    parse_time(tag, time)
}

/// One DER element: its tag, its content and what follows it.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 {
            return None;
        }
        let (bytes, rest) = rest.split_at_checked(count)?;
        let length = bytes
            .iter()
            .fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
        (length, rest)
    };
    let (content, rest) = rest.split_at_checked(length)?;
    Some((tag, content, rest))
}

/// UTCTime (`YYMMDDHHMMSSZ`) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
fn parse_time(tag: u8, text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    let number = |range: std::ops::Range<usize>| -> Option<i64> { text.get(range)?.parse().ok() };
    let (year, rest) = match tag {
        0x17 => {
            let year = number(0..2)?;
            (if year < 50 { 2000 + year } else { 1900 + year }, 2)
        }
        0x18 => (number(0..4)?, 4),
        _ => return None,
    };
    if text.len() != rest + 10 {
        return None;
    }
    let month = number(rest..rest + 2)?;
    let day = number(rest + 2..rest + 4)?;
    let hour = number(rest + 4..rest + 6)?;
    let minute = number(rest + 6..rest + 8)?;
    let second = number(rest + 8..rest + 10)?;
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let of_era_days = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_era_days - 719_468
}

/// A time as `YYYY-MM-DD HH:MM UTC`.
pub fn date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let era = days
        .checked_add(719_468)
        .unwrap_or(days)
        .div_euclid(146_097);
    let of_era = days + 719_468 - era * 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * of_year + 2) / 153;
    let day = of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 3600,
        of_day % 3600 / 60
    )
}

/// Now, in seconds since the Unix epoch (a wall clock: certificates and tokens
/// expire in it).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// A span from now: `in 3 days`, `2 h ago`.
pub fn from_now(seconds: i64) -> String {
    let delta = seconds - now();
    let span = delta.unsigned_abs();
    let text = match span {
        0..120 => format!("{span} s"),
        120..7200 => format!("{} min", span / 60),
        7200..172_800 => format!("{} h", span / 3600),
        _ => format!("{} days", span / 86_400),
    };
    if delta >= 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;

    fn first_certificate(pem: &str) -> Vec<u8> {
        CertificateDer::pem_slice_iter(pem.as_bytes())
            .next()
            .unwrap()
            .unwrap()
            .to_vec()
    }

    #[test]
    fn the_end_of_validity_is_read_from_the_certificate() {
        let fixtures = tls_fixtures::generate().unwrap();
        let good = not_after(&first_certificate(&fixtures.server.chain)).unwrap();
        let expired = not_after(&first_certificate(&fixtures.expired.chain)).unwrap();
        assert!(good > now() + 86_400, "{}", date(good));
        assert!(expired < now(), "{}", date(expired));
        assert_eq!(not_after(b"\x30\x03\x02\x01\x00"), None);
        assert_eq!(not_after(b""), None);
    }

    #[test]
    fn a_presented_name_loses_its_kind() {
        assert_eq!(plain_name("DnsName(\"wrong.example\")"), "wrong.example");
        assert_eq!(plain_name("IpAddress(192.0.2.1)"), "192.0.2.1");
        assert_eq!(plain_name("plain"), "plain");
    }

    #[test]
    fn times_of_both_forms_and_dates_are_read_and_written() {
        assert_eq!(parse_time(0x17, b"700101000000Z"), Some(0));
        assert_eq!(parse_time(0x18, b"20000301000000Z"), Some(951_868_800));
        assert_eq!(parse_time(0x17, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(parse_time(0x17, b"7001010000Z"), None);
        assert_eq!(date(0), "1970-01-01 00:00 UTC");
        assert_eq!(date(951_868_800), "2000-03-01 00:00 UTC");
        assert_eq!(date(2_524_607_999), "2049-12-31 23:59 UTC");
    }

    #[test]
    fn a_refusal_is_found_in_an_io_error_that_wraps_the_tls_error() {
        let io = std::io::Error::other(TlsError::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
        assert_eq!(refusal_of(&io), Some(Refusal::UnknownCa));
        // As the HTTP client gives it: an I/O error in an I/O error.
        let nested = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            TlsError::InvalidCertificate(CertificateError::NotValidForName),
        ));
        assert_eq!(refusal_of(&nested), Some(Refusal::WrongHost(Vec::new())));
        let other = std::io::Error::other("connection refused");
        assert_eq!(refusal_of(&other), None);
    }
}
