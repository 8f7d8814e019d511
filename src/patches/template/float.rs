//! Go's formatting of float64 values (`%v`, `%g`, `%f`, `%e`), to any precision.

/// Go's `%v` of a float64: shortest representation, exponent form below 1e-4 or from 1e21.
pub(crate) fn format_float_v(f: f64) -> String {
    format_g(f, None)
}

/// Fractional digits past which an f64's exact decimal expansion is all zeros (it ends within
/// 1,074). Rust's formatter refuses precisions over `u16::MAX`; Go's allows up to 1e6.
const EXACT_DIGITS: usize = 1100;

/// `f` with `prec` fractional digits (Go `%.Nf`), any precision.
pub(super) fn fixed(f: f64, prec: usize) -> String {
    let mut out = format!("{:.*}", prec.min(EXACT_DIGITS), f);
    out.extend(std::iter::repeat_n('0', prec.saturating_sub(EXACT_DIGITS)));
    out
}

/// `f` in Rust's exponent form with `prec` mantissa digits after the point, any precision.
fn scientific(f: f64, prec: usize) -> String {
    let out = format!("{:.*e}", prec.min(EXACT_DIGITS), f);
    if prec <= EXACT_DIGITS {
        return out;
    }
    let (mantissa, exponent) = out.split_once('e').unwrap_or((&out, "0"));
    let zeros = "0".repeat(prec - EXACT_DIGITS);
    format!("{mantissa}{zeros}e{exponent}")
}

/// Go's `%g` with an optional precision.
pub(super) fn format_g(f: f64, prec: Option<usize>) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    let sci = match prec {
        None => format!("{f:e}"),
        Some(p) => scientific(f, p.max(1) - 1),
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mantissa.starts_with('-');
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if prec.is_some() {
        while digits.len() > 1 && digits.ends_with('0') {
            digits.pop();
        }
    }
    let eprec: i32 = match prec {
        None => 6,
        Some(p) => {
            let (p, nd) = (p.max(1) as i32, digits.len() as i32);
            if p > nd && nd > exp {
                nd
            } else {
                p
            }
        }
    };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs()));
    } else if exp < 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-exp - 1) as usize));
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            out.push_str(&"0".repeat(int_len - digits.len()));
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// Go's `%e` (`%E` when `upper`) with `prec` digits.
pub(super) fn format_e(f: f64, prec: usize, upper: bool) -> String {
    if !f.is_finite() {
        return format_g(f, None);
    }
    let sci = scientific(f, prec);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}
