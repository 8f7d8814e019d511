//! Two desired states of one Cluster side by side: each object named by its role in the topology
//! (the generated names are random in Cluster API, so they are replaced by the role they stand
//! for), then every field that differs, by path.

use std::collections::BTreeMap;

use serde_json::Value;

/// One field that differs between our desired state and Cluster API's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Difference {
    /// The object's role (`InfrastructureCluster`, `MachineDeployment[md-0].bootstrap`, ...).
    pub object: String,
    /// The field's path in the object (empty for the whole object).
    pub path: String,
    /// Our value, as JSON (`(absent)` when we do not set it).
    pub ours: String,
    /// Cluster API v1.14.0's value, as JSON (`(absent)` when it does not set it).
    pub theirs: String,
}

/// Every difference between `ours` and `theirs` (each the desired objects of one Cluster).
pub fn differences(ours: &[Value], theirs: &[Value]) -> Vec<Difference> {
    let ours = by_role(ours);
    let theirs = by_role(theirs);
    let mut found = Vec::new();
    for role in ours
        .keys()
        .chain(theirs.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        walk(role, String::new(), ours.get(role), theirs.get(role), &mut found);
    }
    found
}

/// The objects by role, their generated names replaced by `<role>` wherever they occur.
fn by_role(items: &[Value]) -> BTreeMap<String, Value> {
    let names = generated_names(items);
    items
        .iter()
        .map(|item| {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            let kind = item["kind"].as_str().unwrap_or_default();
            let role = match (kind, names.get(name)) {
                ("Cluster", _) => "Cluster".to_owned(),
                ("MachineHealthCheck", Some(target)) => format!("{target}.healthCheck"),
                (_, Some(role)) => role.clone(),
                _ => format!("{kind}/{name}"),
            };
            (role, renamed(item, &names))
        })
        .collect()
}

/// The names the topology generated, each with the role of the object it names.
fn generated_names(items: &[Value]) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    fn name(names: &mut BTreeMap<String, String>, value: &Value, role: String) {
        if let Some(name) = value.as_str().filter(|name| !name.is_empty()) {
            names.insert(name.to_owned(), role);
        }
    }
    for item in items {
        match item["kind"].as_str().unwrap_or_default() {
            "Cluster" => {
                name(
                    &mut names,
                    &item["spec"]["infrastructureRef"]["name"],
                    "InfrastructureCluster".into(),
                );
                name(
                    &mut names,
                    &item["spec"]["controlPlaneRef"]["name"],
                    "ControlPlane".into(),
                );
            }
            "MachineDeployment" | "MachinePool" => {
                let kind = item["kind"].as_str().unwrap_or_default();
                let labels = &item["metadata"]["labels"];
                let topology = labels["topology.cluster.x-k8s.io/deployment-name"]
                    .as_str()
                    .or(labels["topology.cluster.x-k8s.io/pool-name"].as_str())
                    .unwrap_or_default();
                let role = format!("{kind}[{topology}]");
                let spec = &item["spec"]["template"]["spec"];
                name(
                    &mut names,
                    &spec["bootstrap"]["configRef"]["name"],
                    format!("{role}.bootstrap"),
                );
                name(
                    &mut names,
                    &spec["infrastructureRef"]["name"],
                    format!("{role}.infrastructure"),
                );
                name(&mut names, &item["metadata"]["name"], role);
            }
            _ => {}
        }
    }
    // The control plane's machine template, by either contract's path.
    let control_plane = items.iter().find(|item| {
        let name = item["metadata"]["name"].as_str().unwrap_or_default();
        item["kind"] != "MachineHealthCheck" && names.get(name).is_some_and(|role| role == "ControlPlane")
    });
    if let Some(template) = control_plane.map(|item| &item["spec"]["machineTemplate"]) {
        for reference in [
            &template["spec"]["infrastructureRef"],
            &template["infrastructureRef"],
        ] {
            name(
                &mut names,
                &reference["name"],
                "ControlPlane.machineInfrastructure".into(),
            );
        }
    }
    names
}

/// `value` with every generated name in its strings replaced by `<role>`: whole strings, and
/// names inside strings (a patch may derive a name from a generated one, e.g.
/// `{{ .builtin.controlPlane.name }}-azure-json`), longest names first.
fn renamed(value: &Value, names: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(text) => {
            let mut longest_first: Vec<(&String, &String)> = names.iter().collect();
            longest_first.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
            let replaced = longest_first
                .into_iter()
                .fold(text.clone(), |text, (name, role)| {
                    text.replace(name.as_str(), &format!("<{role}>"))
                });
            Value::String(replaced)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| renamed(item, names)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), renamed(item, names)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Appends the differences below `path` to `found`: maps key by key, lists of the same length
/// item by item, anything else as a whole.
fn walk(
    object: &str,
    path: String,
    ours: Option<&Value>,
    theirs: Option<&Value>,
    found: &mut Vec<Difference>,
) {
    match (ours, theirs) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
            for key in keys {
                walk(object, join(&path, key), a.get(key), b.get(key), found);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                walk(object, format!("{path}[{index}]"), Some(x), Some(y), found);
            }
        }
        (a, b) if a == b => {}
        (a, b) => found.push(Difference {
            object: object.to_owned(),
            path,
            ours: shown(a),
            theirs: shown(b),
        }),
    }
}

/// `path.key`, or `path["key"]` when the key is not a plain word.
fn join(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key:?}]"),
    }
}

/// A value as compact JSON, cut at 160 characters.
fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".to_owned();
    };
    let text = value.to_string();
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(infra: &str) -> Value {
        json!({"kind": "Cluster", "metadata": {"name": "c"},
               "spec": {"infrastructureRef": {"kind": "X", "name": infra}}})
    }

    #[test]
    fn generated_names_compare_by_role_and_fields_by_path() {
        let ours = [
            cluster("c-abc"),
            json!({"kind": "X", "metadata": {"name": "c-abc", "labels": {"a.b/c": "1"}}, "spec": {"l": [1, 2]}}),
        ];
        let theirs = [
            cluster("c-xyz"),
            json!({"kind": "X", "metadata": {"name": "c-xyz", "labels": {"a.b/c": "2"}}, "spec": {"l": [1, 3]}}),
        ];
        let found = differences(&ours, &theirs);
        let paths: Vec<_> = found.iter().map(|d| format!("{} {}", d.object, d.path)).collect();
        assert_eq!(
            paths,
            [
                "InfrastructureCluster metadata.labels[\"a.b/c\"]",
                "InfrastructureCluster spec.l[1]"
            ]
        );
    }

    #[test]
    fn a_missing_object_is_one_difference() {
        let found = differences(
            &[cluster("c-abc")],
            &[
                cluster("c-xyz"),
                json!({"kind": "X", "metadata": {"name": "c-xyz"}}),
            ],
        );
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].object.as_str(), found[0].ours.as_str()),
            ("InfrastructureCluster", "(absent)")
        );
    }
}
