//! The estimated cost of all the rules and messageExpressions of one variable's schema, against
//! the API server's limit for one schema, and the words of its cost errors.

use crate::field::{FieldError, FieldErrors, FieldPath};

/// The estimated cost all expressions of one variable may have together (Kubernetes'
/// `StaticEstimatedCRDCostLimit`).
pub const MAX_TOTAL_COST: u64 = 100_000_000;
/// How many of the most expensive expressions a total-cost error names.
const MOST_EXPENSIVE: usize = 4;

/// The running total, and the most expensive expressions that count (at least 1% of the limit).
#[derive(Debug, Default)]
pub struct TotalCost {
    total: u64,
    most_expensive: Vec<(FieldPath, u64)>,
}

impl TotalCost {
    /// Adds the cost of the expression at `path`.
    pub fn observe(&mut self, path: FieldPath, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < MAX_TOTAL_COST / 100 {
            return;
        }
        let at = self.most_expensive.partition_point(|(_, c)| *c >= cost);
        self.most_expensive.insert(at, (path, cost));
        self.most_expensive.truncate(MOST_EXPENSIVE);
    }

    /// When over the limit: one error per most expensive expression, then one at the schema.
    pub fn errors(&self, schema_path: &FieldPath) -> FieldErrors {
        if self.total <= MAX_TOTAL_COST {
            return FieldErrors::new();
        }
        let mut errors: FieldErrors = self
            .most_expensive
            .iter()
            .map(|(path, _)| {
                FieldError::forbidden(
                    path,
                    "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                )
            })
            .collect();
        errors.push(FieldError::forbidden(
            schema_path,
            cost_message(
                "x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema",
                self.total,
                MAX_TOTAL_COST,
            ),
        ));
        errors
    }
}

/// `<what> exceeds budget by factor of <f>x (try ...)`, with the factor printed as the API server
/// prints it: `more than 100x`, six decimals below 1.5, else one.
pub fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_are_printed_as_the_api_server_prints_them() {
        let message = |cost| cost_message("estimated rule cost", cost, 10_000_000);
        assert!(message(12_000_000).contains("by factor of 1.200000x (try"));
        assert!(message(25_000_000).contains("by factor of 2.5x (try"));
        assert!(message(2_000_000_000).contains("by factor of more than 100x (try"));
    }

    #[test]
    fn only_the_four_most_expensive_expressions_are_named() {
        let mut total = TotalCost::default();
        for i in 0..6_u64 {
            total.observe(FieldPath::new("r").index(i as usize), 20_000_000 + i);
        }
        total.observe(FieldPath::new("cheap"), 1);
        let errors: Vec<String> = total
            .errors(&FieldPath::new("s"))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors[0]
            .starts_with("r[5]: Forbidden: contributed to estimated rule & messageExpression cost total"));
        assert!(errors[3].starts_with("r[2]: "));
        assert!(errors[4].starts_with(
            "s: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.200000x"
        ));
        assert!(TotalCost::default().errors(&FieldPath::new("s")).is_empty());
    }
}
