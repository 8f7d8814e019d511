//! Go's `url.ParseRequestURI` (net/url of Go 1.24, the toolchain of Cluster API v1.10), which
//! the ExtensionConfig webhook runs on `url` and `service.path`: what it accepts, and its error
//! text (`parse "x": invalid URI for request`), so our denials read as the reference's.

/// The scheme of a URI that parses, lower-cased (empty for an absolute path).
pub fn scheme_of(raw: &str) -> Result<String, String> {
    parse(raw).map_err(|reason| format!("parse {raw:?}: {reason}"))
}

fn parse(raw: &str) -> Result<String, String> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    if raw.is_empty() {
        return Err("empty url".to_owned());
    }
    if raw == "*" {
        return Ok(String::new());
    }
    let (scheme, rest) = split_scheme(raw)?;
    let scheme = scheme.to_ascii_lowercase();
    // A lone trailing `?` is a forced empty query; otherwise the query is everything after
    // the first `?`. Neither is checked further.
    let rest = match rest.strip_suffix('?') {
        Some(stripped) if !stripped.contains('?') => stripped,
        _ => rest.split_once('?').map_or(rest, |(before, _)| before),
    };
    if !rest.starts_with('/') {
        if !scheme.is_empty() {
            // A rootless path after a scheme is opaque (`https:foo`) and not checked.
            return Ok(scheme);
        }
        return Err("invalid URI for request".to_owned());
    }
    let path = match rest.strip_prefix("//").filter(|_| !scheme.is_empty()) {
        Some(after) => {
            let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
            check_authority(authority)?;
            path
        }
        None => rest,
    };
    unescape(path, Mode::Path)?;
    Ok(scheme)
}

/// `scheme:rest`, or no scheme when the text does not start with one.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `[userinfo@]host[:port]`.
fn check_authority(authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    check_host(host)?;
    if let Some(userinfo) = userinfo {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
        if !userinfo.chars().all(allowed) {
            return Err("net/url: invalid userinfo".to_owned());
        }
        for part in userinfo.splitn(2, ':') {
            unescape(part, Mode::Other)?;
        }
    }
    Ok(())
}

fn check_host(host: &str) -> Result<(), String> {
    match host.rfind('[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".to_owned()),
        Some(_) => {
            let close = host.rfind(']').ok_or("missing ']' in host")?;
            let colon_port = &host[close + 1..];
            check_port(colon_port)?;
            let literal = &host[1..close];
            // `%25` starts an IPv6 zone, which may escape more than a host may.
            match literal.find("%25") {
                Some(zone) => {
                    unescape(&literal[..zone], Mode::Host)?;
                    unescape(&literal[zone..], Mode::Zone)?;
                }
                None => unescape(literal, Mode::Host)?,
            }
            return Ok(());
        }
        None => {}
    }
    if let Some(i) = host.rfind(':') {
        check_port(&host[i..])?;
    }
    unescape(host, Mode::Host)
}

/// Empty, or `:` and digits.
fn check_port(colon_port: &str) -> Result<(), String> {
    let valid = colon_port.is_empty()
        || colon_port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()));
    if valid {
        Ok(())
    } else {
        Err(format!("invalid port {colon_port:?} after host"))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Host,
    Zone,
    Path,
    Other,
}

/// Checks the `%` escapes of `text` (and, in a host, which bytes may appear at all).
fn unescape(text: &str, mode: Mode) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let escape = &text[i..text.len().min(i + 3)];
            let hex = |j: usize| bytes.get(j).copied().filter(u8::is_ascii_hexdigit);
            let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2)) else {
                return Err(format!("invalid URL escape {escape:?}"));
            };
            let value = (hex_value(high) << 4) | hex_value(low);
            let refused = match mode {
                // Only non-ASCII bytes may be escaped in a host, save `%25` before a zone.
                Mode::Host => hex_value(high) < 8 && escape != "%25",
                Mode::Zone => escape != "%25" && value != b' ' && !host_byte(value),
                Mode::Path | Mode::Other => false,
            };
            if refused {
                return Err(format!("invalid URL escape {escape:?}"));
            }
            i += 3;
            continue;
        }
        if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && !host_byte(b) {
            return Err(format!(
                "invalid character {:?} in host name",
                char::from(b).to_string()
            ));
        }
        i += 1;
    }
    Ok(())
}

/// The ASCII bytes a host may hold unescaped.
fn host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&b)
}

fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => digit - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_go_accepts() {
        for (raw, scheme) in [
            ("https://example.com", "https"),
            ("HTTPS://user:pw@example.com:8443/hooks?x=1", "https"),
            ("https://[fe80::1%25en0]:443/p", "https"),
            ("http://example.com", "http"),
            ("https:opaque", "https"),
            ("/path/to/hook", ""),
            ("/a%20b", ""),
        ] {
            assert_eq!(scheme_of(raw).as_deref(), Ok(scheme), "{raw}");
        }
    }

    #[test]
    fn refuses_with_go_words() {
        for (raw, reason) in [
            ("", "empty url"),
            ("example.com", "invalid URI for request"),
            ("path/to/hook", "invalid URI for request"),
            (":foo", "missing protocol scheme"),
            ("https://exa mple.com", r#"invalid character " " in host name"#),
            ("https://example.com:x", r#"invalid port ":x" after host"#),
            ("https://[::1", "missing ']' in host"),
            ("https://a[::1]", "invalid IP-literal"),
            ("https://example.com/%zz", r#"invalid URL escape "%zz""#),
            ("https://ex%41mple.com", r#"invalid URL escape "%41""#),
            ("https://us er@example.com", "net/url: invalid userinfo"),
            (
                "https://example.com/\n",
                "net/url: invalid control character in URL",
            ),
        ] {
            assert_eq!(scheme_of(raw), Err(format!("parse {raw:?}: {reason}")), "{raw}");
        }
    }
}
