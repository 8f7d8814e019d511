//! `POST /convert` through the router (no socket): a ConversionReview of a v1beta1 Cluster to
//! v1beta2 and back, with the referenced CRDs' contract versions read from the store; a missing
//! CRD and an unknown version answered as `Failure`; the body limit.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use capi_topology::metrics::Metrics;
use capi_topology::server::convert::PATH as CONVERT_PATH;
use capi_topology::server::{router, AppState, ServerLimits};
use capi_topology::store::MemoryStore;
use http_body_util::BodyExt;
use prometheus_client::registry::Registry;
use serde_json::{json, Value};
use tower::ServiceExt;

const CRDS: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: dockerclusters.infrastructure.cluster.x-k8s.io
  labels:
    cluster.x-k8s.io/v1beta2: v1beta2
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kubeadmcontrolplanes.controlplane.cluster.x-k8s.io
  labels:
    cluster.x-k8s.io/v1beta1: v1beta1_v1beta2
";

fn app(store: MemoryStore, limits: ServerLimits) -> axum::Router {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    router(AppState::new(Arc::new(store), metrics, limits))
}

fn cluster_v1beta1() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns1"},
        "spec": {
            "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "name": "c1", "namespace": "ns1"},
            "controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "name": "c1-cp", "namespace": "ns1"},
            "topology": {
                "class": "quick-start",
                "version": "v1.33.0",
                "variables": [{"name": "lbImage", "definitionFrom": "inline", "value": "x"}],
                "controlPlane": {"nodeDrainTimeout": "1h5m"}
            }
        },
        "status": {"infrastructureReady": true, "controlPlaneReady": false}
    })
}

fn review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": desired, "objects": objects}
    })
}

async fn post(app: axum::Router, body: Vec<u8>) -> (StatusCode, Value) {
    let request = Request::post(CONVERT_PATH)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn converts_to_the_hub_and_back_through_the_store_crds() {
    let app = app(MemoryStore::from_yaml(CRDS).unwrap(), ServerLimits::default());
    let to_hub = review("cluster.x-k8s.io/v1beta2", vec![cluster_v1beta1()]);
    let (status, answer) = post(app.clone(), to_hub.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::OK);
    let response = &answer["response"];
    assert_eq!(response["uid"], "conv-1");
    assert_eq!(response["result"]["status"], "Success", "{answer}");
    let hub = response["convertedObjects"][0].clone();
    assert_eq!(hub["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(
        hub["spec"]["infrastructureRef"],
        json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "c1"})
    );
    assert_eq!(hub["spec"]["topology"]["classRef"]["name"], "quick-start");
    assert_eq!(
        hub["spec"]["topology"]["controlPlane"]["deletion"]["nodeDrainTimeoutSeconds"],
        3900
    );

    let back = review("cluster.x-k8s.io/v1beta1", vec![hub]);
    let (status, answer) = post(app, back.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["response"]["result"]["status"], "Success", "{answer}");
    let spoke = &answer["response"]["convertedObjects"][0];
    assert_eq!(
        spoke["spec"]["infrastructureRef"]["apiVersion"],
        "infrastructure.cluster.x-k8s.io/v1beta2"
    );
    assert_eq!(
        spoke["spec"]["controlPlaneRef"]["apiVersion"],
        "controlplane.cluster.x-k8s.io/v1beta2"
    );
    assert_eq!(
        spoke["spec"]["topology"]["controlPlane"]["nodeDrainTimeout"],
        // As written: the v1beta1 form is kept through the hub (a GitOps diff sees no drift).
        "1h5m"
    );
    assert_eq!(
        spoke["spec"]["topology"]["variables"][0]["definitionFrom"],
        "inline"
    );
    assert!(spoke["metadata"]["annotations"]["cluster.x-k8s.io/conversion-data"].is_string());
}

#[tokio::test]
async fn failures_name_the_object_and_what_is_missing() {
    let app = app(MemoryStore::default(), ServerLimits::default());
    let hub = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns1"},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "c1"}}
    });
    let (status, answer) = post(
        app.clone(),
        review("cluster.x-k8s.io/v1beta1", vec![hub])
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["response"]["uid"], "conv-1");
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    let message = answer["response"]["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("Cluster ns1/c1") && message.contains("DockerCluster"),
        "{message}"
    );

    let (_, answer) = post(
        app.clone(),
        review("cluster.x-k8s.io/v1alpha3", vec![cluster_v1beta1()])
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(answer["response"]["result"]["status"], "Failure");

    let (status, answer) = post(app, b"not json".to_vec()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["response"]["result"]["status"], "Failure");
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let limits = ServerLimits {
        max_body_bytes: 64,
        ..ServerLimits::default()
    };
    let app = app(MemoryStore::default(), limits);
    let body = review("cluster.x-k8s.io/v1beta2", vec![cluster_v1beta1()])
        .to_string()
        .into_bytes();
    let (status, _) = post(app, body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}
