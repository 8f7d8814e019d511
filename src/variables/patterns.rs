//! `pattern` regexes compiled once and shared: every ClusterClass write compiles the class's
//! variable schemas, the new and the old, mostly with the patterns compiled the last time. A
//! compiled regex is shared by reference counting, so a hit costs a lookup and a clone.
//!
//! Bounded: at most [`MAX_KEPT`] patterns of at most [`MAX_KEPT_PATTERN`] bytes are kept (the
//! table is emptied when full); each compiled regex is bounded by the size limit it is built
//! with. A longer pattern is compiled each time and not kept.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use regex::{Regex, RegexBuilder};

/// Most patterns kept.
pub const MAX_KEPT: usize = 64;
/// Longest pattern kept, in bytes.
pub const MAX_KEPT_PATTERN: usize = 256;

/// `pattern` compiled with `size_limit` (bytes of compiled program), from the table when it was
/// compiled before with the same limit.
pub fn compiled(pattern: &str, size_limit: usize) -> Result<Regex, regex::Error> {
    let build = || RegexBuilder::new(pattern).size_limit(size_limit).build();
    if pattern.len() > MAX_KEPT_PATTERN {
        return build();
    }
    let kept = table();
    let key = (pattern.to_owned(), size_limit);
    if let Some(regex) = kept.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return Ok(regex.clone());
    }
    // Built outside the lock: a slow pattern holds no other request up.
    let regex = build()?;
    let mut table = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if table.len() >= MAX_KEPT {
        table.clear();
    }
    table.insert(key, regex.clone());
    Ok(regex)
}

/// The patterns kept, by pattern and size limit.
fn table() -> &'static Mutex<HashMap<(String, usize), Regex>> {
    static KEPT: OnceLock<Mutex<HashMap<(String, usize), Regex>>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_compiles_once_and_is_shared() {
        let first = compiled("^kept-[a-z]+$", 1 << 20).expect("compiles");
        let again = compiled("^kept-[a-z]+$", 1 << 20).expect("compiles");
        assert!(again.is_match("kept-abc") && !again.is_match("kept-1"));
        assert_eq!(first.as_str(), again.as_str());
    }

    #[test]
    fn a_bad_pattern_is_an_error_each_time_and_a_long_one_still_compiles() {
        assert!(compiled("([a-z]", 1 << 20).is_err());
        assert!(compiled("([a-z]", 1 << 20).is_err());
        let long = format!("^{}$", "a".repeat(MAX_KEPT_PATTERN));
        assert!(compiled(&long, 1 << 20)
            .expect("compiles")
            .is_match(&long[1..long.len() - 1]));
    }

    #[test]
    fn the_table_never_holds_more_than_its_bound() {
        for i in 0..MAX_KEPT * 3 {
            compiled(&format!("^bound-{i}$"), 1 << 20).expect("compiles");
        }
        let kept = table().lock().unwrap_or_else(PoisonError::into_inner).len();
        assert!((1..=MAX_KEPT).contains(&kept), "{kept}");
    }
}
