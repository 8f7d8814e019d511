//! The string formats of Kubernetes' OpenAPI validation (`format:`). Unknown formats accept anything.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

/// Whether `text` is valid in `format`; unknown formats are not checked, as in Kubernetes.
pub fn is_valid(format: &str, text: &str) -> bool {
    match format {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_uri(text),
        "email" => matches(&EMAIL, r"^[^@\s]+@[^@\s]+\.[^@\s]+$", text),
        "hostname" => is_hostname(text),
        "ipv4" => text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(text),
        "mac" => matches(&MAC, r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$", text),
        "uuid" => matches(
            &UUID,
            r"^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            text,
        ),
        "uuid3" => is_uuid_version(text, '3'),
        "uuid4" => is_uuid_version(text, '4'),
        "uuid5" => is_uuid_version(text, '5'),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => is_credit_card(text),
        "ssn" => matches(&SSN, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", text),
        "hexcolor" => matches(&HEXCOLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", text),
        "rgbcolor" => matches(
            &RGBCOLOR,
            r"^rgb\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*\)$",
            text,
        ),
        "byte" => is_base64(text),
        "date" => matches(&DATE, r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$", text),
        "duration" => is_duration(text),
        "datetime" | "date-time" => matches(
            &DATETIME,
            r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
            text,
        ),
        _ => true,
    }
}

static EMAIL: OnceLock<Regex> = OnceLock::new();
static MAC: OnceLock<Regex> = OnceLock::new();
static UUID: OnceLock<Regex> = OnceLock::new();
static SSN: OnceLock<Regex> = OnceLock::new();
static HEXCOLOR: OnceLock<Regex> = OnceLock::new();
static RGBCOLOR: OnceLock<Regex> = OnceLock::new();
static DATE: OnceLock<Regex> = OnceLock::new();
static DATETIME: OnceLock<Regex> = OnceLock::new();
static DURATION: OnceLock<Regex> = OnceLock::new();

/// Matches `text` against a fixed pattern compiled on first use.
fn matches(cell: &OnceLock<Regex>, pattern: &str, text: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| unreachable!("fixed pattern {pattern}")))
        .is_match(text)
}

fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !text.chars().any(char::is_whitespace)
}

fn is_hostname(text: &str) -> bool {
    text.len() <= 253
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Ok(prefix) = prefix.parse::<u8>() else {
        return false;
    };
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => prefix <= 32,
        Ok(IpAddr::V6(_)) => prefix <= 128,
        Err(_) => false,
    }
}

fn is_uuid_version(text: &str, version: char) -> bool {
    matches(
        &UUID,
        r"^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
        text,
    ) && text.replace('-', "").chars().nth(12) == Some(version)
}

fn digits_of(text: &str) -> Vec<char> {
    text.chars().filter(|c| !matches!(c, '-' | ' ')).collect()
}

fn is_isbn10(text: &str) -> bool {
    let chars = digits_of(text);
    if chars.len() != 10 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in chars.iter().enumerate() {
        let digit = match (c.to_digit(10), i, c) {
            (Some(d), _, _) => d,
            (None, 9, 'X' | 'x') => 10,
            _ => return false,
        };
        sum += digit * (10 - i as u32);
    }
    sum.is_multiple_of(11)
}

fn is_isbn13(text: &str) -> bool {
    let chars = digits_of(text);
    let Some(digits) = chars.iter().map(|c| c.to_digit(10)).collect::<Option<Vec<u32>>>() else {
        return false;
    };
    digits.len() == 13
        && digits
            .iter()
            .enumerate()
            .map(|(i, d)| if i % 2 == 0 { *d } else { d * 3 })
            .sum::<u32>()
            % 10
            == 0
}

fn is_credit_card(text: &str) -> bool {
    let chars = digits_of(text);
    let Some(digits) = chars.iter().map(|c| c.to_digit(10)).collect::<Option<Vec<u32>>>() else {
        return false;
    };
    if !(12..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                if d * 2 > 9 {
                    d * 2 - 9
                } else {
                    d * 2
                }
            } else {
                *d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn is_base64(text: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).is_ok()
}

/// Go durations (`1h30m`, `300ms`) and the day/week units Kubernetes' OpenAPI accepts.
fn is_duration(text: &str) -> bool {
    matches(
        &DURATION,
        r"^[-+]?(\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|seconds?|minutes?|hours?|days?|weeks?)\s*)+$",
        text,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_formats() {
        assert!(is_valid("ipv4", "10.0.0.1") && !is_valid("ipv4", "10.0.0"));
        assert!(is_valid("ipv6", "fd00::1") && !is_valid("ipv6", "fd00:::1"));
        assert!(is_valid("cidr", "10.0.0.0/16") && is_valid("cidr", "fd00::/64"));
        assert!(!is_valid("cidr", "10.0.0.0/33") && !is_valid("cidr", "10.0.0.0"));
        assert!(is_valid("hostname", "api.example.com") && !is_valid("hostname", "-bad.example.com"));
        assert!(is_valid("mac", "00:1a:2b:3c:4d:5e") && !is_valid("mac", "00:1a:2b"));
        assert!(is_valid("uri", "https://example.com/x") && !is_valid("uri", "no scheme"));
        assert!(is_valid("email", "ops@example.com") && !is_valid("email", "ops@"));
    }

    #[test]
    fn identifiers_and_numbers() {
        assert!(is_valid("uuid", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_valid("uuid4", "123e4567-e89b-42d3-a456-426614174000"));
        assert!(!is_valid("uuid4", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_valid("isbn10", "0-306-40615-2") && !is_valid("isbn10", "0-306-40615-3"));
        assert!(is_valid("isbn13", "978-0-306-40615-7") && is_valid("isbn", "978-0-306-40615-7"));
        assert!(
            is_valid("creditcard", "4111 1111 1111 1111") && !is_valid("creditcard", "4111 1111 1111 1112")
        );
        assert!(is_valid("bsonobjectid", "507f1f77bcf86cd799439011"));
        assert!(is_valid("ssn", "123-45-6789") && !is_valid("ssn", "123-456-789"));
    }

    #[test]
    fn text_formats() {
        assert!(is_valid("hexcolor", "#a1b2c3") && !is_valid("hexcolor", "#a1b2"));
        assert!(is_valid("rgbcolor", "rgb(1, 2, 3)") && !is_valid("rgbcolor", "rgb(1,2)"));
        assert!(is_valid("byte", "aGVsbG8=") && !is_valid("byte", "not base64!"));
        assert!(is_valid("date", "2024-02-29") && !is_valid("date", "2024-13-01"));
        assert!(
            is_valid("duration", "1h30m") && is_valid("duration", "300ms") && !is_valid("duration", "soon")
        );
        assert!(is_valid("datetime", "2024-01-02T03:04:05Z") && !is_valid("datetime", "2024-01-02"));
        assert!(is_valid("password", "anything") && is_valid("unknown-format", "anything"));
    }
}
