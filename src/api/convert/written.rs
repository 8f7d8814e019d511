//! The durations of a spoke written in another form than Go prints their value (`90s` for
//! `1m30s`), to keep in the hub annotation: found in one walk of the object along the tree of
//! the kind's duration fields (their patterns share long prefixes: every MachineDeployment of a
//! topology has six), with no allocation unless one is found.

use std::fmt::Write;
use std::sync::OnceLock;

use serde_json::Value;

use super::duration;
use super::kept::duration_patterns;
use super::kind::Kind;
use super::value::{get, Obj};

/// A step of the duration patterns of a kind: the steps that follow it (`*` = each entry of a
/// list), and the index of the pattern that ends here.
#[derive(Debug, Default)]
struct Steps {
    next: Vec<(&'static str, Steps)>,
    ends: Option<usize>,
}

impl Steps {
    /// The tree of `patterns` (pointers of field names, which need no escaping).
    fn of(patterns: impl Iterator<Item = &'static str>) -> Steps {
        let mut root = Steps::default();
        for (index, pattern) in patterns.enumerate() {
            let mut node = &mut root;
            for token in pattern.split('/').skip(1) {
                let at = match node.next.iter().position(|(step, _)| *step == token) {
                    Some(at) => at,
                    None => {
                        node.next.push((token, Steps::default()));
                        node.next.len() - 1
                    }
                };
                node = &mut node.next[at].1;
            }
            node.ends = Some(index);
        }
        root
    }
}

/// The tree of `kind`'s duration patterns, built once.
fn tree(kind: Kind) -> &'static Steps {
    static TREES: OnceLock<Vec<(Kind, Steps)>> = OnceLock::new();
    let all = TREES.get_or_init(|| {
        Kind::ALL
            .into_iter()
            .map(|kind| (kind, Steps::of(duration_patterns(kind))))
            .collect()
    });
    let (_, steps) = all
        .iter()
        .find(|(of, _)| *of == kind)
        .expect("a tree for every kind");
    steps
}

/// The durations of a spoke of `kind` written in another form than Go prints their value: each
/// as (`pointer`, written text), pattern by pattern, each pattern's in the object's order.
pub(super) fn written_durations(kind: Kind, spoke: &Obj) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    let mut at = String::new();
    for (key, next) in &tree(kind).next {
        if let Some(child) = spoke.get(*key) {
            at.push('/');
            at.push_str(key);
            walk(child, next, &mut at, &mut found);
            at.clear();
        }
    }
    found.sort_by_key(|(pattern, _)| *pattern);
    found.into_iter().map(|(_, written)| written).collect()
}

/// The written durations at or below `value`, found at `at` (the pointer so far, restored on
/// return), each with its pattern's index.
fn walk(value: &Value, steps: &Steps, at: &mut String, found: &mut Vec<(usize, (String, Value))>) {
    if let (Some(pattern), Value::String(text)) = (steps.ends, value) {
        let canonical = duration::to_seconds(text).map(|s| duration::from_seconds(s.into()));
        if canonical.is_some_and(|c| c != *text) {
            found.push((pattern, (at.clone(), value.clone())));
        }
    }
    let length = at.len();
    for (step, next) in &steps.next {
        match (*step, value) {
            ("*", Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let _ = write!(at, "/{i}");
                    walk(item, next, at, found);
                    at.truncate(length);
                }
            }
            (key, Value::Object(obj)) => {
                if let Some(child) = get(obj, key) {
                    at.push('/');
                    at.push_str(key);
                    walk(child, next, at, found);
                    at.truncate(length);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_durations_are_those_go_would_print_otherwise() {
        let spoke = json!({"spec": {"topology": {
            "controlPlane": {"nodeDrainTimeout": "90s", "nodeDeletionTimeout": "1m30s",
                             "machineHealthCheck": {"unhealthyConditions": [{"timeout": "5m0s"}, {"timeout": "300s"}]}},
            "workers": {"machinePools": [{"nodeVolumeDetachTimeout": "0"}]},
        }}});
        let Value::Object(spoke) = spoke else {
            unreachable!()
        };
        assert_eq!(
            written_durations(Kind::Cluster, &spoke),
            [
                (
                    "/spec/topology/controlPlane/nodeDrainTimeout".to_owned(),
                    json!("90s")
                ),
                (
                    "/spec/topology/controlPlane/machineHealthCheck/unhealthyConditions/1/timeout".to_owned(),
                    json!("300s")
                ),
                (
                    "/spec/topology/workers/machinePools/0/nodeVolumeDetachTimeout".to_owned(),
                    json!("0")
                ),
            ]
        );
    }

    #[test]
    fn written_durations_come_pattern_by_pattern_in_the_objects_order() {
        let md =
            |drain: &str, detach: &str| json!({"nodeDrainTimeout": drain, "nodeVolumeDetachTimeout": detach});
        let spoke = json!({"spec": {"topology": {"workers": {"machineDeployments": [
            md("60s", "120s"), md("1m0s", "2m0s"), md("180s", "240s"),
        ]}}}});
        let Value::Object(spoke) = spoke else {
            unreachable!()
        };
        let pointers: Vec<String> = written_durations(Kind::Cluster, &spoke)
            .into_iter()
            .map(|(pointer, _)| pointer)
            .collect();
        let at = |i: usize, field: &str| format!("/spec/topology/workers/machineDeployments/{i}/{field}");
        assert_eq!(
            pointers,
            [
                at(0, "nodeDrainTimeout"),
                at(2, "nodeDrainTimeout"),
                at(0, "nodeVolumeDetachTimeout"),
                at(2, "nodeVolumeDetachTimeout"),
            ]
        );
    }
}
