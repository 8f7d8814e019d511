use serde_json::{json, Value};

use super::*;

fn object(kind: &str, version: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": kind,
           "metadata": {"name": "c1", "namespace": "ns"}, "spec": spec})
}

fn messages(object: &Value, old: Option<&Value>) -> Vec<String> {
    schema_errors(object, old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_schema_and_its_rules_compile() {
    let without_rules: Vec<_> = our_schemas()
        .keys()
        .filter(|key| compiled(key).is_none_or(|compiled| compiled.rules.is_none()))
        .collect();
    assert!(without_rules.is_empty(), "{without_rules:?}");
    let key = |kind: &str| {
        (
            "cluster.x-k8s.io".to_owned(),
            "v1beta2".to_owned(),
            kind.to_owned(),
        )
    };
    for kind in ["Cluster", "ClusterClass", "MachineHealthCheck"] {
        let rules = compiled(&key(kind)).and_then(|compiled| compiled.rules.as_ref());
        assert!(
            rules.is_some_and(|rules| !rules.is_empty()),
            "{kind} has CEL rules"
        );
    }
}

#[test]
fn lengths_patterns_and_enums_are_refused_in_the_api_servers_words() {
    let cluster = object(
        "Cluster",
        "v1beta2",
        json!({"topology": {"classRef": {"name": "Bad_Name"}, "version": format!("v{}", "1".repeat(256)),
               "controlPlane": {"taints": [{"key": "k", "effect": "Sometimes"}]}}}),
    );
    let found = messages(&cluster, None);
    assert!(
        found.contains(&"spec.topology.version: Too long: may not be more than 256 bytes".to_owned()),
        "{found:#?}"
    );
    let pattern = found
        .iter()
        .find(|m| m.contains("should match"))
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        pattern.starts_with(
            r#"spec.topology.classRef.name: Invalid value: "Bad_Name""#
        ) && pattern.ends_with(
            r#": spec.topology.classRef.name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"#
        ),
        "{pattern}"
    );
    assert!(
        found.iter().any(|m| m.starts_with(
            r#"spec.topology.controlPlane.taints[0].effect: Unsupported value: "Sometimes": supported values: "#
        )),
        "{found:#?}"
    );
    assert!(found
        .iter()
        .any(|m| m.contains("spec.topology.controlPlane.taints[0].propagation: Required value")));
    assert_eq!(
        found.last().map(String::as_str),
        Some(
            r#"<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#
        )
    );
}

#[test]
fn too_many_items_name_the_count() {
    let versions: Vec<String> = (0..101).map(|i| format!("v1.{i}.0")).collect();
    let class = object("ClusterClass", "v1beta2", json!({"kubernetesVersions": versions}));
    let found = messages(&class, None);
    assert!(
        found.contains(&"spec.kubernetesVersions: Too many: 101: must have at most 100 items".to_owned()),
        "{found:#?}"
    );
    let class = object("ClusterClass", "v1beta2", json!({"kubernetesVersions": []}));
    assert!(
        messages(&class, None).contains(
            &"spec.kubernetesVersions: Invalid value: 0: spec.kubernetesVersions in body should have at least 1 items"
                .to_owned()
        ),
        "{:#?}",
        messages(&class, None)
    );
}

/// v1.14.0 forbids Cluster API's own condition types in `unhealthyMachineConditions` (a CEL
/// rule on `type`); `unhealthyNodeConditions` has no such rule (a Node's `Ready` is the usual
/// check there), and kube-apiserver takes it.
#[test]
fn cel_rules_run_when_nothing_blocks_them() {
    let condition = json!({"type": "Ready", "status": "Unknown", "timeoutSeconds": 300});
    let with_checks = |checks: Value| {
        object(
            "Cluster",
            "v1beta2",
            json!({"topology": {"classRef": {"name": "quick-start"}, "version": "v1.34.0",
                   "controlPlane": {"healthCheck": {"checks": checks}}}}),
        )
    };
    let machine = with_checks(json!({"unhealthyMachineConditions": [condition]}));
    assert_eq!(
        messages(&machine, None),
        [
            r#"spec.topology.controlPlane.healthCheck.checks.unhealthyMachineConditions[0].type: Invalid value: "string": type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated"#
        ]
    );
    let node = with_checks(json!({"unhealthyNodeConditions": [condition]}));
    assert_eq!(messages(&node, None), Vec::<String>::new());
}

#[test]
fn a_valid_object_passes_and_status_is_not_checked() {
    let mut cluster = object(
        "Cluster",
        "v1beta2",
        json!({"topology": {"classRef": {"name": "quick-start"}, "version": "v1.34.0"}}),
    );
    cluster["status"] = json!({"phase": "", "conditions": [{"type": ""}]});
    assert_eq!(messages(&cluster, None), Vec::<String>::new());
}

#[test]
fn an_unchanged_invalid_field_is_ratcheted_on_update() {
    let old = object(
        "Cluster",
        "v1beta2",
        json!({"topology": {"classRef": {"name": "Old_Name"}, "version": "v1.34.0"}}),
    );
    let mut new = old.clone();
    new["spec"]["topology"]["version"] = json!("v1.35.0");
    assert_eq!(messages(&new, Some(&old)), Vec::<String>::new());
    new["spec"]["topology"]["classRef"]["name"] = json!("Still_Bad");
    assert_eq!(
        messages(&new, Some(&old)).len(),
        1,
        "{:#?}",
        messages(&new, Some(&old))
    );
}

#[test]
fn the_spoke_version_is_checked_against_its_own_schema() {
    let cluster = object(
        "Cluster",
        "v1beta1",
        json!({"topology": {"class": "", "version": "v1.34.0"}}),
    );
    assert_eq!(
        messages(&cluster, None),
        [
            r#"spec.topology.class: Invalid value: "": spec.topology.class in body should be at least 1 chars long"#
        ]
    );
}

#[test]
fn value_at_follows_names_indexes_and_dotted_keys() {
    let value = json!({"a": {"b": [1, {"c.d/e": 2}]}});
    assert_eq!(value_at(&value, "a.b[0]"), Some(&json!(1)));
    assert_eq!(value_at(&value, "a.b[1].c.d/e"), Some(&json!(2)));
    assert_eq!(value_at(&value, ""), Some(&value));
    assert_eq!(value_at(&value, "a.x"), None);
}

/// An object holding `value` at the table path `path` (`.spec.a[].b`; one item per list).
fn object_at(path: &str, value: Value) -> Value {
    let steps: Vec<&str> = path
        .trim_start_matches('.')
        .split('.')
        .flat_map(|step| match step.strip_suffix("[]") {
            Some(name) => vec![name, "[]"],
            None => vec![step],
        })
        .collect();
    steps.iter().rev().fold(value, |inner, step| match *step {
        "[]" => json!([inner]),
        name => json!({ name: inner }),
    })
}

/// Every CEL rule of v1.14.0's CRDs fires wherever it sits in our whole schemas. There is one
/// rule, on the `type` of each `unhealthyMachineConditions` (refusing Cluster API's own
/// condition types), at nine places in the versions we serve: Cluster and ClusterClass (two
/// each in v1beta1 and v1beta2) and MachineHealthCheck v1beta2.
#[test]
fn every_cel_rule_of_the_table_fires_where_it_sits() {
    let mut checked = 0;
    for (schema, table) in crate::api::crd_constraints::reference() {
        let (kind, version) = schema.split_once('/').expect("Kind/version");
        // The machine kinds' v1beta1 is not served by our CRDs (Cluster API's CRDs serve it).
        let key = our_schemas().keys().find(|(_, v, k)| v == version && k == kind);
        let Some(compiled) = key.and_then(compiled) else {
            continue;
        };
        for (path, keywords) in table {
            let Some(Value::Array(rules)) = keywords.get("x-kubernetes-validations") else {
                continue;
            };
            assert!(rules
                .iter()
                .all(|rule| rule["rule"].as_str().is_some_and(|r| r.contains("'Ready'"))));
            let object = object_at(path, json!("Ready"));
            let found: Vec<String> = compiled
                .rules
                .as_ref()
                .expect("rules compile")
                .validate(&object, None, &FieldPath::root(), Shown::NodeType)
                .iter()
                .map(ToString::to_string)
                .collect();
            let field = path.trim_start_matches('.').replace("[]", "[0]");
            assert_eq!(
                found,
                [format!(
                    r#"{field}: Invalid value: "string": {}"#,
                    rules[0]["message"].as_str().unwrap_or_default()
                )],
                "{schema} {path}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 9);
}
