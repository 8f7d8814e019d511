//! An evaluation cost budget (added by capi-topology; upstream has none). Every expression node
//! evaluated costs one unit, and a concatenation costs one unit per element or per ten bytes it
//! produces, close to how cel-go prices them. Once the budget is spent, evaluation stops with
//! [`COST_LIMIT_EXCEEDED`]. Without [`with_limit`], evaluation is unbounded as upstream.

use std::cell::Cell;

use crate::ExecutionError;

/// The message an evaluation stopped for cost fails with (cel-go's words).
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

thread_local! {
    static REMAINING: Cell<Option<u64>> = const { Cell::new(None) };
}

/// What an evaluation under a budget cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    /// Units charged.
    pub units: u64,
    /// Whether the budget ran out (the evaluation then failed with [`COST_LIMIT_EXCEEDED`]).
    pub exhausted: bool,
}

/// Runs `evaluation` with `limit` units to spend on this thread (nested calls get the smaller
/// of their limit and what is left).
pub fn with_limit<T>(limit: u64, evaluation: impl FnOnce() -> T) -> (T, Spent) {
    let outer = REMAINING.with(Cell::get);
    let start = outer.map_or(limit, |left| left.min(limit));
    REMAINING.with(|remaining| remaining.set(Some(start)));
    let value = evaluation();
    let left = REMAINING.with(Cell::get).unwrap_or(0);
    let units = start.saturating_sub(left);
    REMAINING.with(|remaining| remaining.set(outer.map(|outer| outer.saturating_sub(units))));
    let exhausted = left == 0 && units >= start;
    (value, Spent { units, exhausted })
}

/// Charges `units`, failing once the budget is spent.
pub(crate) fn charge(units: u64) -> Result<(), ExecutionError> {
    REMAINING.with(|remaining| match remaining.get() {
        None => Ok(()),
        Some(left) if left >= units => {
            remaining.set(Some(left - units));
            Ok(())
        }
        Some(_) => {
            remaining.set(Some(0));
            Err(ExecutionError::function_error("cost", COST_LIMIT_EXCEEDED))
        }
    })
}

/// Charges for copying `elements` values. A copy cannot fail, so running out here only marks
/// the budget spent; the evaluation fails at its next step.
pub(crate) fn charge_copy(elements: usize) {
    REMAINING.with(|remaining| {
        if let Some(left) = remaining.get() {
            remaining.set(Some(left.saturating_sub(elements as u64)));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, Program};

    fn run(expression: &str, limit: u64) -> (bool, Spent) {
        let program = Program::compile(expression).unwrap();
        let context = Context::default();
        let (result, spent) = with_limit(limit, || program.execute(&context));
        (result.is_ok(), spent)
    }

    #[test]
    fn cheap_expressions_fit() {
        let (ok, spent) = run("[1, 2, 3].all(x, x > 0)", 1_000);
        assert!(ok);
        assert!(!spent.exhausted);
        assert!(spent.units > 3);
    }

    #[test]
    fn nested_comprehensions_run_out() {
        let (ok, spent) = run(
            "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a + b + c > 0)))",
            5_000,
        );
        assert!(!ok);
        assert!(spent.exhausted);
    }

    #[test]
    fn copying_lists_is_charged() {
        let (ok, spent) = run("[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, a + b)).size() == 10", 300);
        assert!(!ok);
        assert!(spent.exhausted);
    }

    #[test]
    fn unbounded_without_a_limit() {
        let program = Program::compile("[1, 2].map(x, x + 1).size() == 2").unwrap();
        assert!(program.execute(&Context::default()).is_ok());
    }
}
