//! A linear pre-scan of JSON text that bounds how many values decoding it would allocate, before
//! it is decoded: every value but the first follows a `,` `[` `{` (or is a container opening).

use super::Bound;

/// `Err(Bound::Values)` when the JSON text `bytes` may hold more than `max` values (counted as
/// one, plus every `,`, `[` and `{` outside strings: an upper bound, whether or not the text is
/// valid JSON).
pub fn check_values(bytes: &[u8], max: usize) -> Result<(), Bound> {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count += 1;
                if count > max {
                    return Err(Bound::Values);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert_eq!(check_values(br#"[1,2,3]"#, 4), Ok(()));
        assert_eq!(check_values(br#"[1,2,3,4]"#, 4), Err(Bound::Values));
        assert_eq!(check_values(br#"{"a":[1],"b":{}}"#, 5), Ok(()));
        assert_eq!(check_values(br#"["a,[{\",{", 1]"#, 3), Ok(()));
        assert_eq!(check_values(br#"["\\",[,,"#, 4), Err(Bound::Values));
        assert_eq!(check_values(b"", 1), Ok(()));
    }
}
