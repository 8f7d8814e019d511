//! Containment for the CEL library: its parser and interpreter recurse per nesting level and
//! have panicking paths. Every call into it runs here, on a stack grown for the depth the
//! pre-parse limits allow, and a panic becomes an error instead of taking the process down.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Below this much remaining stack, an evaluation gets a fresh segment. It covers evaluating
/// the deepest expression the limits let through (about 1 MiB in a debug build).
const EVALUATION_RED_ZONE: usize = 2 * 1024 * 1024;
/// The size of a fresh segment: parsing the deepest accepted expression takes about 10 MiB in a
/// debug build, far less optimised. Only the pages a call touches are ever committed.
const SEGMENT: usize = 32 * 1024 * 1024;

/// The CEL library panicked; the message says where, for the log and the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panicked(pub String);

/// Runs a compilation on a fresh segment (compiling is rare; its parser needs the most stack),
/// turning a panic into [`Panicked`].
pub fn compiling<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    stacker::grow(SEGMENT, || unwinding(work))
}

/// Runs an evaluation, on a fresh segment only when the current stack runs low (evaluations are
/// on the request path), turning a panic into [`Panicked`].
pub fn evaluating<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    stacker::maybe_grow(EVALUATION_RED_ZONE, SEGMENT, || unwinding(work))
}

fn unwinding<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Panicked(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_pass_through() {
        assert_eq!(compiling(|| 41 + 1), Ok(42));
        assert_eq!(evaluating(|| 41 + 1), Ok(42));
    }

    #[test]
    fn panics_become_errors() {
        let result: Result<(), _> = evaluating(|| panic!("boom"));
        assert_eq!(result, Err(Panicked("boom".into())));
    }

    #[test]
    fn deep_recursion_gets_a_grown_stack() {
        fn depth(n: u64) -> u64 {
            let pad = std::hint::black_box([n; 512]);
            if n == 0 {
                0
            } else {
                1 + depth(n - 1) + pad[n as usize % 512].wrapping_sub(n)
            }
        }
        // 4 KiB (or more) frames x 2,500 overflow any default thread stack (8 MiB at most).
        assert_eq!(compiling(|| depth(2_500)), Ok(2_500));
    }
}
