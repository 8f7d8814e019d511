//! Label selectors as Kubernetes reads them (`metav1.LabelSelectorAsSelector`): parsed once into
//! requirements, refused with the API server's words when a key, value or operator is bad, then
//! matched against a label map.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::names::{label_value_problems, qualified_name_problems};

/// Why a label selector does not parse, worded as Kubernetes words it
/// (`key: Invalid value: "a b": name part must consist of ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(String);

/// How one requirement compares a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    /// The label is set to one of the values (`matchLabels` entries are `In` with one value).
    In,
    /// The label is unset, or set to none of the values.
    NotIn,
    /// The label is set.
    Exists,
    /// The label is unset.
    DoesNotExist,
}

/// One requirement on one label key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

/// A parsed label selector: every requirement must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    /// Parses `selector`; the first bad requirement (`matchLabels` in key order, then
    /// `matchExpressions` in order) is the error, as in Kubernetes.
    pub fn parse(selector: &LabelSelector) -> Result<Selector, SelectorError> {
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            requirements.push(requirement(key, Operator::In, std::slice::from_ref(value), true)?);
        }
        for expression in selector.match_expressions.iter().flatten() {
            let operator = match expression.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError(format!(
                        "{other:?} is not a valid label selector operator"
                    )))
                }
            };
            let values = expression.values.as_deref().unwrap_or_default();
            requirements.push(requirement(&expression.key, operator, values, false)?);
        }
        Ok(Selector(requirements))
    }

    /// True for a selector without requirements. Kubernetes reads it as "everything"; a
    /// ClusterResourceSet reads it as "nothing".
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `labels` meet every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| {
            let value = labels.get(&r.key);
            match r.operator {
                Operator::In => value.is_some_and(|v| r.values.contains(v)),
                Operator::NotIn => value.is_none_or(|v| !r.values.contains(v)),
                Operator::Exists => value.is_some(),
                Operator::DoesNotExist => value.is_none(),
            }
        })
    }
}

/// One requirement, or the errors Kubernetes' `NewRequirement` reports for it. `exact` marks a
/// `matchLabels` entry (an equality, which takes exactly one value).
fn requirement(
    key: &str,
    operator: Operator,
    values: &[String],
    exact: bool,
) -> Result<Requirement, SelectorError> {
    let mut errors = Vec::new();
    let key_problems = qualified_name_problems(key);
    if !key_problems.is_empty() {
        errors.push(format!(
            "key: Invalid value: {key:?}: {}",
            key_problems.join("; ")
        ));
    }
    let count_problem = match operator {
        Operator::In | Operator::NotIn if values.is_empty() => {
            Some("for 'in', 'notin' operators, values set can't be empty")
        }
        Operator::In if exact && values.len() != 1 => {
            Some("exact-match compatibility requires one single value")
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            Some("values set must be empty for exists and does not exist")
        }
        _ => None,
    };
    if let Some(problem) = count_problem {
        errors.push(format!(
            "values: Invalid value: {}: {problem}",
            go_strings(values)
        ));
    }
    for (i, value) in values.iter().enumerate() {
        let problems = label_value_problems(value);
        if !problems.is_empty() {
            errors.push(format!(
                "values[{i}][{key}]: Invalid value: {value:?}: {}",
                problems.join("; ")
            ));
        }
    }
    match errors.as_slice() {
        [] => Ok(Requirement {
            key: key.to_owned(),
            operator,
            values: values.to_vec(),
        }),
        [one] => Err(SelectorError(one.clone())),
        _ => Err(SelectorError(format!("[{}]", errors.join(", ")))),
    }
}

/// A string list as Go's `%#v` prints it (`[]string(nil)`, `[]string{"a", "b"}`), the way
/// Kubernetes shows the values of a bad requirement.
fn go_strings(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_owned();
    }
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(yaml: &str) -> Result<Selector, SelectorError> {
        Selector::parse(&serde_yaml_ng::from_str(yaml).unwrap())
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn every_operator_matches_as_kubernetes_does() {
        let s = selector(
            "matchLabels: {cni: calico}\nmatchExpressions:\n\
             - {key: env, operator: In, values: [prod, staging]}\n\
             - {key: tier, operator: NotIn, values: [test]}\n\
             - {key: owner, operator: Exists}\n\
             - {key: legacy, operator: DoesNotExist}\n",
        )
        .unwrap();
        let good = [("cni", "calico"), ("env", "prod"), ("owner", "me")];
        assert!(s.matches(&labels(&good)));
        assert!(s.matches(&labels(&[
            ("cni", "calico"),
            ("env", "staging"),
            ("owner", "x"),
            ("tier", "web")
        ])));
        assert!(!s.matches(&labels(&[("cni", "cilium"), ("env", "prod"), ("owner", "me")])));
        assert!(!s.matches(&labels(&[("cni", "calico"), ("env", "dev"), ("owner", "me")])));
        assert!(!s.matches(&labels(&[
            ("cni", "calico"),
            ("env", "prod"),
            ("owner", "me"),
            ("tier", "test")
        ])));
        assert!(!s.matches(&labels(&[("cni", "calico"), ("env", "prod")])));
        assert!(!s.matches(&labels(&[
            ("cni", "calico"),
            ("env", "prod"),
            ("owner", "me"),
            ("legacy", "")
        ])));
    }

    #[test]
    fn an_empty_selector_has_no_requirements() {
        assert!(selector("{}").unwrap().is_empty());
        assert!(selector("{matchLabels: {}, matchExpressions: []}")
            .unwrap()
            .is_empty());
        assert!(!selector("{matchLabels: {a: b}}").unwrap().is_empty());
    }

    #[test]
    fn bad_selectors_are_refused_in_kubernetes_words() {
        let err = |yaml: &str| selector(yaml).unwrap_err().to_string();
        assert_eq!(
            err("matchExpressions: [{key: a, operator: Equals, values: [b]}]"),
            r#""Equals" is not a valid label selector operator"#
        );
        assert_eq!(
            err("matchExpressions: [{key: a, operator: In}]"),
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            err("matchExpressions: [{key: a, operator: Exists, values: [x, y]}]"),
            r#"values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist"#
        );
        assert!(err("matchLabels: {'a b': c}")
            .starts_with(r#"key: Invalid value: "a b": name part must consist of alphanumeric characters"#));
        assert!(err("matchLabels: {a: 'not ok'}")
            .starts_with(r#"values[0][a]: Invalid value: "not ok": a valid label must be an empty string"#));
        let both = err("matchExpressions: [{key: '-a', operator: NotIn}]");
        assert!(
            both.starts_with(r#"[key: Invalid value: "-a": name part"#),
            "{both}"
        );
        assert!(both.ends_with("values set can't be empty]"), "{both}");
    }
}
