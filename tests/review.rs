//! The wire-level entry point: whatever bytes arrive, the answer is an AdmissionReview, and a
//! request that cannot be read is answered with code 400 and what is wrong with it.

use capi_topology::admission::{self, request::review_json, Kind, Webhook, MAX_BODY_BYTES};
use capi_topology::store::MemoryStore;
use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::{json, Value};

const VALIDATE_CLUSTER: &str = "/validate-cluster-x-k8s-io-v1beta1-cluster";
const MUTATE_CLUSTER: &str = "/mutate-cluster-x-k8s-io-v1beta1-cluster";

fn answer(path: &str, body: &[u8]) -> AdmissionResponse {
    admission::review(path, body, &MemoryStore::default())
        .response
        .expect("every review gets a response")
}

fn cluster(spec: Value) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
           "metadata": {"name": "c1", "namespace": "default"}, "spec": spec})
}

fn create_review(kind: Kind, object: &Value) -> Vec<u8> {
    serde_json::to_vec(&review_json(kind, &Operation::Create, Some(object), None)).unwrap()
}

#[test]
fn malformed_json_is_a_bad_request() {
    let response = answer(VALIDATE_CLUSTER, b"{not json");
    assert!(!response.allowed);
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .starts_with("cannot decode AdmissionReview: "),
        "{}",
        response.result.message
    );
}

#[test]
fn unknown_path_is_a_bad_request_naming_the_paths() {
    let body = create_review(Kind::Cluster, &cluster(json!({})));
    let response = answer("/validate-pods", &body);
    assert_eq!(response.result.code, 400);
    assert_eq!(
        response.uid, "cluster-c1",
        "the uid is echoed even for an unknown path"
    );
    assert!(
        response.result.message.contains(VALIDATE_CLUSTER),
        "{}",
        response.result.message
    );
}

#[test]
fn a_kind_that_does_not_fit_the_path_is_refused() {
    let body = create_review(
        Kind::ClusterClass,
        &json!({"apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "ClusterClass", "metadata": {"name": "c1"}}),
    );
    let response = answer(VALIDATE_CLUSTER, &body);
    assert!(!response.allowed);
    assert_eq!(response.result.code, 400);
    assert_eq!(response.uid, "clusterclass-c1");
    assert_eq!(
        response.result.message,
        "this webhook admits cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 Cluster, not cluster.x-k8s.io/v1beta1 ClusterClass"
    );
}

#[test]
fn an_object_that_does_not_decode_names_the_field() {
    let body = create_review(
        Kind::Cluster,
        &cluster(json!({"topology": {"class": "c", "version": "v1.31.0",
        "controlPlane": {"replicas": "three"}}})),
    );
    let response = answer(VALIDATE_CLUSTER, &body);
    assert!(!response.allowed);
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .starts_with("cannot decode object: spec.topology.controlPlane.replicas: invalid type"),
        "{}",
        response.result.message
    );
}

#[test]
fn an_oversized_body_is_refused_without_parsing() {
    let body = vec![b' '; MAX_BODY_BYTES + 1];
    let response = answer(VALIDATE_CLUSTER, &body);
    assert_eq!(response.result.code, 400);
    assert!(
        response.result.message.contains("exceeds"),
        "{}",
        response.result.message
    );
}

#[test]
fn deeply_nested_input_is_refused_not_overflowed() {
    let mut body = String::from(r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":"#);
    body.push_str(&"[".repeat(100_000));
    let response = answer(VALIDATE_CLUSTER, body.as_bytes());
    assert_eq!(response.result.code, 400);
}

#[test]
fn the_mutating_patch_never_touches_fields_it_does_not_know() {
    let object = cluster(json!({"topology": {"class": "quick-start", "version": "1.31.0"},
        "futureField": {"keep": "me"}}));
    let response = answer(MUTATE_CLUSTER, &create_review(Kind::Cluster, &object));
    let patch: Vec<Value> = response
        .patch
        .map(|p| serde_json::from_slice(&p).unwrap())
        .unwrap_or_default();
    for op in &patch {
        let path = op["path"].as_str().unwrap_or_default();
        assert!(
            !path.starts_with("/spec/futureField"),
            "patch touches an unknown field: {op}"
        );
    }
    let mut patched = object.clone();
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(patch)).unwrap();
    json_patch::patch(&mut patched, &patch).unwrap();
    assert_eq!(patched["spec"]["futureField"], json!({"keep": "me"}));
}

#[test]
fn every_webhook_answers_with_the_request_uid() {
    for webhook in Webhook::ALL {
        let object = match webhook.kind {
            Kind::Cluster => cluster(json!({})),
            Kind::ClusterClass => json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
                "metadata": {"name": "c1", "namespace": "default"}, "spec": {}}),
            Kind::ClusterResourceSet | Kind::ClusterResourceSetBinding => {
                json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta1", "kind": webhook.kind.name(),
                       "metadata": {"name": "c1", "namespace": "default"}, "spec": {}})
            }
            Kind::ExtensionConfig => json!({"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1",
                "kind": "ExtensionConfig", "metadata": {"name": "c1"}, "spec": {}}),
            Kind::ClusterClassRollout => json!({"apiVersion": "rollout.capi-topology.io/v1alpha1",
                "kind": "ClusterClassRollout", "metadata": {"name": "c1", "namespace": "default"},
                "spec": {"classRef": {"name": "quick-start"}}}),
        };
        let response = answer(webhook.path(), &create_review(webhook.kind, &object));
        assert_eq!(
            response.uid,
            format!("{}-c1", webhook.kind.name().to_lowercase()),
            "{webhook}"
        );
    }
}

#[test]
fn an_object_of_another_kind_is_refused_whatever_the_request_kind_says() {
    for (path, object) in [
        (
            VALIDATE_CLUSTER,
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
                   "metadata": {"name": "c1", "namespace": "default"}, "spec": {}}),
        ),
        (
            MUTATE_CLUSTER,
            json!({"apiVersion": "v1", "kind": "Cluster",
                   "metadata": {"name": "c1", "namespace": "default"}, "spec": {}}),
        ),
    ] {
        let response = answer(path, &create_review(Kind::Cluster, &object));
        assert!(!response.allowed);
        assert_eq!(response.result.code, 400);
        let expected = format!(
            "object is {:?} {:?}, but this webhook admits cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 Cluster",
            object["apiVersion"].as_str().unwrap(),
            object["kind"].as_str().unwrap()
        );
        assert_eq!(response.result.message, expected);
    }
}

#[test]
fn a_huge_name_is_not_echoed_back_whole() {
    let mut object = cluster(json!({"topology": {"class": "missing", "version": "1.x"}}));
    object["metadata"]["name"] = json!("n".repeat(1_000_000));
    let response = answer(VALIDATE_CLUSTER, &create_review(Kind::Cluster, &object));
    assert!(!response.allowed);
    assert!(
        response.result.message.len() < 2_000,
        "{} bytes",
        response.result.message.len()
    );
    assert!(
        response.result.message.contains("more bytes)"),
        "{}",
        response.result.message
    );
}

#[test]
fn explicit_nulls_in_optional_fields_are_absent_as_the_api_server_decodes_them() {
    let object = cluster(json!({
        "clusterNetwork": {"pods": {"cidrBlocks": null}, "services": null, "serviceDomain": null},
        "controlPlaneEndpoint": null,
    }));
    let response = answer(VALIDATE_CLUSTER, &create_review(Kind::Cluster, &object));
    assert_ne!(response.result.code, 400, "{}", response.result.message);
    let typed_wrong = cluster(json!({"clusterNetwork": {"pods": {"cidrBlocks": 3}}}));
    let response = answer(VALIDATE_CLUSTER, &create_review(Kind::Cluster, &typed_wrong));
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .contains("spec.clusterNetwork.pods.cidrBlocks: invalid type"),
        "{}",
        response.result.message
    );
}

/// The Cluster webhooks at Cluster API v1.14's v1beta2 paths.
const MUTATE_CLUSTER_V1BETA2: &str = "/mutate-cluster-x-k8s-io-v1beta2-cluster";
const VALIDATE_CLUSTER_V1BETA2: &str = "/validate-cluster-x-k8s-io-v1beta2-cluster";

#[test]
fn an_unknown_version_of_our_group_is_refused_not_passed() {
    let mut object = cluster(json!({"topology": {"class": "c", "version": "v1.30.0"}}));
    object["apiVersion"] = json!("cluster.x-k8s.io/v1alpha3");
    for path in [VALIDATE_CLUSTER, VALIDATE_CLUSTER_V1BETA2, MUTATE_CLUSTER_V1BETA2] {
        let response = answer(path, &create_review(Kind::Cluster, &object));
        assert!(!response.allowed, "{path}");
        assert_eq!(response.result.code, 400, "{path}");
        assert_eq!(
            response.result.message,
            "object is \"cluster.x-k8s.io/v1alpha3\" \"Cluster\", but this webhook admits cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 Cluster",
            "{path}"
        );
    }
}

/// The fields of the causes of a denial.
fn cause_fields(response: &AdmissionResponse) -> Vec<String> {
    let details = response.result.details.as_ref().expect("a denial has details");
    details.causes.iter().map(|c| c.field.clone()).collect()
}

#[test]
fn both_paths_run_the_same_rules_and_denials_name_fields_in_the_version_sent() {
    let spec = json!({"topology": {"class": "c", "version": "v1.30.0",
        "controlPlane": {"machineHealthCheck": {"nodeStartupTimeout": "10s", "maxUnhealthy": "lots"}}}});
    let v1beta1 = cluster(spec);
    let v1beta2 = capi_topology::api::convert::to_hub(v1beta1.clone()).unwrap();
    let spoke_fields = [
        "spec.topology.controlPlane.machineHealthCheck.nodeStartupTimeout",
        "spec.topology.controlPlane.machineHealthCheck.maxUnhealthy",
    ];
    let hub_fields = [
        "spec.topology.controlPlane.healthCheck.checks.nodeStartupTimeoutSeconds",
        "spec.topology.controlPlane.healthCheck.remediation.triggerIf.unhealthyLessThanOrEqualTo",
    ];
    // Without the class, only the class-independent rules run; the health check ones need it,
    // so give the store the class.
    let mut store = MemoryStore::default();
    store
        .insert(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmControlPlaneTemplate", "name": "cp"},
                "machineInfrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                "kind": "DockerMachineTemplate", "name": "m"}}},
              "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                "kind": "DockerClusterTemplate", "name": "i"}}}}))
        .unwrap();
    for path in [VALIDATE_CLUSTER, VALIDATE_CLUSTER_V1BETA2] {
        for (object, fields) in [(&v1beta1, spoke_fields), (&v1beta2, hub_fields)] {
            let body = create_review(Kind::Cluster, object);
            let response = admission::review(path, &body, &store).response.unwrap();
            assert!(!response.allowed, "{path}");
            assert_eq!(response.result.code, 422, "{path}: {}", response.result.message);
            assert_eq!(cause_fields(&response), fields, "{path} {}", object["apiVersion"]);
            assert!(
                response.result.message.contains(fields[0]),
                "{}",
                response.result.message
            );
        }
    }
}

#[test]
fn the_patch_for_a_v1beta1_object_changes_only_what_defaulting_changed() {
    let object = cluster(json!({
        "controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "name": "cp"},
        "topology": {"class": "missing", "version": "1.30.0", "rolloutAfter": "2026-01-01T00:00:00Z",
            "futureField": {"kept": true},
            "controlPlane": {"nodeDrainTimeout": "10m", "machineHealthCheck": {"maxUnhealthy": "40%"}}}}));
    for path in [MUTATE_CLUSTER, MUTATE_CLUSTER_V1BETA2] {
        let response = answer(path, &create_review(Kind::Cluster, &object));
        assert!(response.allowed, "{path}: {}", response.result.message);
        let patch: Value = serde_json::from_slice(response.patch.as_deref().unwrap()).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "replace", "path": "/spec/topology/version", "value": "v1.30.0"}]),
            "{path}: no conversion annotation, the duration and unknown fields as sent"
        );
    }
}

#[test]
fn a_v1beta2_object_is_admitted_at_a_v1beta1_path_with_hub_paths() {
    let object = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"topology": {"classRef": {"name": "c"}, "version": "v1.30"}}});
    let response = answer(VALIDATE_CLUSTER, &create_review(Kind::Cluster, &object));
    assert!(!response.allowed);
    assert_eq!(cause_fields(&response), ["spec.topology.version"]);
    let response = answer(MUTATE_CLUSTER, &create_review(Kind::Cluster, &object));
    assert!(response.allowed, "{}", response.result.message);
    assert!(response.patch.is_none(), "nothing to default");
}
