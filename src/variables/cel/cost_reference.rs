//! Our cost estimate and verdicts against kube-apiserver's, row by row of
//! `testdata/cost_reference.yaml` (recorded from a real API server by
//! `scripts/cel-cost-reference.py`).
//!
//! Wording: Cluster API v1.14.0 names the total `rule & messageExpression cost total` where the
//! API server (v1.34) says `rule cost total`; we answer with Cluster API's words, so the recorded
//! messages are compared with that one phrase replaced.

use serde::Deserialize;
use serde_yaml_ng::Value;

use super::{cost, CelRules};
use crate::api::JSONSchemaProps;
use crate::field::FieldPath;

#[derive(Deserialize)]
struct Table {
    rows: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    name: String,
    schema: JSONSchemaProps,
    #[serde(rename = "apiServer")]
    api_server: Recorded,
}

#[derive(Deserialize)]
struct Recorded {
    admitted: bool,
    #[serde(default)]
    errors: Vec<String>,
    /// The first root rule's cost: a number, `[low, high]`, or `over` (over 100x the limit).
    #[serde(rename = "ruleCost")]
    rule_cost: Option<Value>,
}

fn table() -> Table {
    serde_yaml_ng::from_str(include_str!("testdata/cost_reference.yaml")).expect("the cost table parses")
}

/// The API server's words for the total, in Cluster API's.
fn as_cluster_api_words(message: &str) -> String {
    message.replace(
        "estimated rule cost total",
        "estimated rule & messageExpression cost total",
    )
}

fn sorted(mut errors: Vec<String>) -> Vec<String> {
    errors.sort();
    errors
}

#[test]
fn verdicts_and_messages_agree_with_the_api_server() {
    let table = table();
    assert!(table.rows.len() >= 25);
    let mut disagreements = Vec::new();
    for row in &table.rows {
        let ours: Vec<String> = match CelRules::compile(&row.schema, &FieldPath::new("schema")) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        };
        let theirs: Vec<String> = row
            .api_server
            .errors
            .iter()
            .map(|e| as_cluster_api_words(e))
            .collect();
        if ours.is_empty() != row.api_server.admitted || sorted(ours.clone()) != sorted(theirs.clone()) {
            disagreements.push(format!(
                "{}:\n  ours:   {ours:#?}\n  theirs: {theirs:#?}",
                row.name
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn rule_costs_agree_with_the_api_server() {
    let mut disagreements = Vec::new();
    let mut compared = 0;
    for row in table().rows {
        let Some(recorded) = &row.api_server.rule_cost else {
            continue;
        };
        let rule = &row.schema.x_validations[0].rule;
        let program = cel::Program::compile(rule).expect("the rule parses");
        let ours = cost::estimate(program.expression(), &row.schema);
        let agrees = match recorded {
            Value::Number(n) => n.as_u64() == Some(ours),
            Value::Sequence(range) => {
                let bound = |i: usize| range[i].as_u64().expect("a cost range of numbers");
                (bound(0)..=bound(1)).contains(&ours)
            }
            Value::String(over) if over == "over" => ours > 100 * super::checks::MAX_RULE_COST,
            other => panic!("{}: unexpected ruleCost {other:?}", row.name),
        };
        compared += 1;
        if !agrees {
            disagreements.push(format!(
                "{}: ours {ours}, the API server's {recorded:?}",
                row.name
            ));
        }
    }
    assert!(compared >= 25, "{compared}");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
