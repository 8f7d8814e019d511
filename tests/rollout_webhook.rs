//! The ClusterClassRollout webhook through the wire entry point, as the API server calls it:
//! a policy the controller would refuse is refused at admission with every field path, a valid
//! one passes (with a warning when a wave can hold no Cluster), the class it governs cannot
//! change, and a request for another kind or version is a bad request.

use capi_topology::admission::{self, request::review_json, Kind, Webhook};
use capi_topology::store::MemoryStore;
use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::Value;

const PATH: &str = "/validate-rollout-capi-topology-io-v1alpha1-clusterclassrollout";

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/rollout-webhook/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml_ng::from_str(&text).expect("fixture parses")
}

fn admit(operation: Operation, object: &Value, old: Option<&Value>) -> AdmissionResponse {
    let review = review_json(Kind::ClusterClassRollout, &operation, Some(object), old);
    let body = serde_json::to_vec(&review).expect("review encodes");
    admission::review(PATH, &body, &MemoryStore::default())
        .response
        .expect("a response")
}

#[test]
fn the_webhook_is_served_at_its_one_version() {
    let webhook: Webhook = PATH.parse().expect("a served path");
    assert_eq!(webhook.kind, Kind::ClusterClassRollout);
    assert!(!webhook.mutating);
    assert_eq!(
        webhook.configuration_name(),
        "validation.clusterclassrollout.rollout.capi-topology.io"
    );
    assert_eq!(Webhook::of_kind(Kind::ClusterClassRollout).count(), 1);
}

#[test]
fn a_bad_policy_is_refused_naming_every_field() {
    let response = admit(Operation::Create, &fixture("bad.yaml"), None);
    assert!(!response.allowed);
    assert_eq!(response.result.code, 422);
    let message = &response.result.message;
    assert!(
        message.starts_with(r#"ClusterClassRollout.rollout.capi-topology.io "quick-start" is invalid: [spec.waves[0].selector: Invalid value: "#),
        "{message}"
    );
    let details = response.result.details.expect("details");
    let fields: Vec<&str> = details.causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.waves[0].selector",
            "spec.waves[1].name",
            "spec.healthGate.deadline",
            "spec.maintenanceWindows[0].days[1]",
            "spec.onHalt",
        ]
    );
    assert_eq!(details.kind, "ClusterClassRollout");
    assert_eq!(details.group, "rollout.capi-topology.io");
    assert!(
        message.contains(r#"spec.onHalt: Unsupported value: "Retry": supported values: "Rollback", "Hold""#),
        "{message}"
    );
}

#[test]
fn a_good_policy_passes_with_a_warning_for_a_wave_it_cannot_fill() {
    let response = admit(Operation::Create, &fixture("good.yaml"), None);
    assert!(response.allowed, "{}", response.result.message);
    let warnings = response.warnings.unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(r#"spec.waves[2]: wave "late" can hold no Cluster: wave "fleet""#),
        "{}",
        warnings[0]
    );
}

#[test]
fn the_governed_class_cannot_change() {
    let old = fixture("good.yaml");
    let mut new = old.clone();
    new["spec"]["classRef"]["name"] = "other".into();
    let response = admit(Operation::Update, &new, Some(&old));
    assert!(!response.allowed);
    assert_eq!(
        response.result.message,
        r#"ClusterClassRollout.rollout.capi-topology.io "quick-start" is invalid: spec.classRef.name: Invalid value: "other": field is immutable (was "quick-start")"#
    );
    let unchanged = admit(Operation::Update, &old, Some(&old));
    assert!(unchanged.allowed, "{}", unchanged.result.message);
}

#[test]
fn another_kind_or_version_is_a_bad_request() {
    let mut cluster = fixture("good.yaml");
    cluster["apiVersion"] = "cluster.x-k8s.io/v1beta2".into();
    cluster["kind"] = "Cluster".into();
    let review = review_json(
        Kind::ClusterClassRollout,
        &Operation::Create,
        Some(&cluster),
        None,
    );
    let body = serde_json::to_vec(&review).expect("review encodes");
    let response = admission::review(PATH, &body, &MemoryStore::default())
        .response
        .expect("a response");
    assert_eq!(response.result.code, 400);
    assert_eq!(
        response.result.message,
        r#"object is "cluster.x-k8s.io/v1beta2" "Cluster", but this webhook admits rollout.capi-topology.io/v1alpha1 ClusterClassRollout"#
    );
    let mut older = fixture("good.yaml");
    older["apiVersion"] = "rollout.capi-topology.io/v1beta1".into();
    let mut review = review_json(Kind::ClusterClassRollout, &Operation::Create, Some(&older), None);
    review["request"]["kind"]["version"] = "v1beta1".into();
    let body = serde_json::to_vec(&review).expect("review encodes");
    let response = admission::review(PATH, &body, &MemoryStore::default())
        .response
        .expect("a response");
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .starts_with("this webhook admits rollout.capi-topology.io/v1alpha1 ClusterClassRollout, not "),
        "{}",
        response.result.message
    );
}
