//! Go durations as `metav1.Duration` writes and reads them (`"1h5m"`, `"10m0s"`), and the
//! whole seconds v1beta2 keeps instead (`ConvertToSeconds` / `ConvertFromSeconds`: truncated
//! toward zero, capped at `i32::MAX`).

/// Nanoseconds of `text` as Go's `time.ParseDuration` reads it, or `None` when it would fail.
pub(super) fn parse_nanos(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, tail) = rest.split_at(int_len);
        let (frac_part, tail) = match tail.strip_prefix('.') {
            Some(after) => {
                let frac_len = after.bytes().take_while(u8::is_ascii_digit).count();
                after.split_at(frac_len)
            }
            None => ("", tail),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = tail
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, after) = tail.split_at(unit_len);
        let scale: u64 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: u64 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().ok()?
        };
        let mut value = whole.checked_mul(scale)?;
        // The fraction, scaled as Go does: digits past what fits are ignored.
        let mut frac: u64 = 0;
        let mut frac_scale: f64 = 1.0;
        for digit in frac_part.bytes() {
            if frac > (1 << 63) / 10 {
                break;
            }
            frac = frac * 10 + u64::from(digit - b'0');
            frac_scale *= 10.0;
        }
        if frac > 0 {
            value = value.checked_add((frac as f64 * (scale as f64 / frac_scale)) as u64)?;
        }
        total = total.checked_add(value)?;
        if total > 1 << 63 {
            return None;
        }
        rest = after;
    }
    if negative {
        Some(0i64.wrapping_sub_unsigned(total))
    } else {
        i64::try_from(total).ok()
    }
}

/// Whole seconds of a duration string, truncated toward zero and capped to `i32`.
pub(super) fn to_seconds(text: &str) -> Option<i32> {
    let seconds = parse_nanos(text)? / 1_000_000_000;
    Some(seconds.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
}

/// `seconds` as Go's `time.Duration.String` prints it: `0s`, `5s`, `10m0s`, `1h0m5s`.
pub(super) fn from_seconds(seconds: i64) -> String {
    if seconds == 0 {
        return "0s".to_owned();
    }
    let sign = if seconds < 0 { "-" } else { "" };
    let abs = seconds.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    if h > 0 {
        format!("{sign}{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{sign}{m}m{s}s")
    } else {
        format!("{sign}{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_durations() {
        assert_eq!(to_seconds("10m"), Some(600));
        assert_eq!(to_seconds("1h5m"), Some(3900));
        assert_eq!(to_seconds("1s5ms"), Some(1));
        assert_eq!(to_seconds("1.5h"), Some(5400));
        assert_eq!(to_seconds("0"), Some(0));
        assert_eq!(to_seconds("-90s"), Some(-90));
        assert_eq!(to_seconds("999ms"), Some(0));
        assert_eq!(to_seconds("1000000h"), Some(i32::MAX));
        assert_eq!(to_seconds("1.s"), Some(1));
        for bad in ["", "10", "1x", "s", "-", "1.", "h1", ".s"] {
            assert_eq!(to_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn prints_as_metav1_duration() {
        assert_eq!(from_seconds(0), "0s");
        assert_eq!(from_seconds(5), "5s");
        assert_eq!(from_seconds(600), "10m0s");
        assert_eq!(from_seconds(3605), "1h0m5s");
        assert_eq!(from_seconds(-61), "-1m1s");
    }
}
