//! The work budget of applying one answer, and the bounds an answer can exceed.

use std::fmt;

use super::{MAX_DEPTH, MAX_OBJECT_BYTES, MAX_OPERATIONS, MAX_VALUES, WORK_BUDGET};

/// A bound an answer went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// More operations than [`MAX_OPERATIONS`] in one JSON patch.
    Operations,
    /// A patched object larger than [`MAX_OBJECT_BYTES`] (`bytes` is what it would have been,
    /// or at least).
    Bytes(usize),
    /// A patched object, or a patch, with more than [`MAX_VALUES`] values.
    Values,
    /// A patched object nested deeper than [`MAX_DEPTH`].
    Depth,
    /// More work than [`WORK_BUDGET`].
    Work,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Operations => write!(f, "more than {MAX_OPERATIONS} operations in one patch"),
            Bound::Bytes(bytes) => write!(
                f,
                "the patched object would be {bytes} bytes or more, over the {MAX_OBJECT_BYTES} bytes the API server stores"
            ),
            Bound::Values => write!(f, "more than {MAX_VALUES} values"),
            Bound::Depth => write!(f, "nesting deeper than {MAX_DEPTH}"),
            Bound::Work => write!(
                f,
                "more than the work budget of {WORK_BUDGET} (values measured, copied, compared or shifted)"
            ),
        }
    }
}

/// What is left of the work one answer may cost.
#[derive(Debug, Clone)]
pub struct Budget {
    left: u64,
}

impl Default for Budget {
    /// [`WORK_BUDGET`].
    fn default() -> Self {
        Self::new(WORK_BUDGET)
    }
}

impl Budget {
    /// A budget of `units`.
    pub fn new(units: u64) -> Self {
        Self { left: units }
    }

    /// Spends `units`, or fails with [`Bound::Work`] when fewer are left (then nothing is left).
    pub fn charge(&mut self, units: usize) -> Result<(), Bound> {
        let units = u64::try_from(units).unwrap_or(u64::MAX);
        match self.left.checked_sub(units) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.left = 0;
                Err(Bound::Work)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_runs_out_and_stays_out() {
        let mut budget = Budget::new(10);
        assert_eq!(budget.charge(4), Ok(()));
        assert_eq!(budget.charge(6), Ok(()));
        assert_eq!(budget.charge(1), Err(Bound::Work));
        assert_eq!(budget.charge(0), Ok(()));
        assert_eq!(Budget::new(3).charge(usize::MAX), Err(Bound::Work));
    }

    #[test]
    fn bounds_name_their_limit() {
        assert_eq!(
            Bound::Operations.to_string(),
            "more than 10000 operations in one patch"
        );
        assert!(Bound::Bytes(2_000_000).to_string().contains("1572864 bytes"));
        assert!(Bound::Work.to_string().contains("10000000"));
    }
}
