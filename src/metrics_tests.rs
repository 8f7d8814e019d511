//! Unit tests of `metrics.rs`.

use super::*;

#[test]
fn counts_reviews_by_path_and_verdict() {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let webhook = "/mutate-cluster-x-k8s-io-v1beta1-cluster";
    metrics.measure_review(webhook).finish(Verdict::Denied);
    drop(metrics.measure_review(webhook));
    metrics.set_cache_objects("Cluster.cluster.x-k8s.io", 3);
    metrics.record_certificate(ReloadResult::Success, Some(1_900_000_000));
    metrics.set_certificate_valid(true);
    metrics.reject(Rejection::Overloaded);
    metrics.record_extension_call("generate.ext", std::time::Duration::from_millis(1), true);
    metrics.record_extension_call("generate.ext", std::time::Duration::from_millis(1), false);
    metrics.record_extension_cache_hit("generate.ext");
    let elapsed = Some(std::time::Duration::from_millis(1));
    metrics.record_lifecycle_hook("BeforeClusterUpgrade", HookCallOutcome::Retry, elapsed);
    metrics.record_lifecycle_hook("BeforeClusterUpgrade", HookCallOutcome::Cached, None);
    metrics.record_reconcile("topology");
    metrics.record_reconcile("topology");
    let text = encode(&registry).unwrap();
    for line in [
        r#"capi_topology_webhook_requests_total{webhook="/mutate-cluster-x-k8s-io-v1beta1-cluster",verdict="denied"} 1"#,
        r#"capi_topology_webhook_requests_total{webhook="/mutate-cluster-x-k8s-io-v1beta1-cluster",verdict="error"} 1"#,
        r#"capi_topology_webhook_request_duration_seconds_count{webhook="/mutate-cluster-x-k8s-io-v1beta1-cluster"} 2"#,
        r#"capi_topology_cache_objects{resource="Cluster.cluster.x-k8s.io"} 3"#,
        "capi_topology_certificate_expiration_timestamp_seconds 1900000000.0",
        r#"capi_topology_certificate_reloads_total{result="success"} 1"#,
        "capi_topology_certificate_valid 1",
        r#"capi_topology_rejections_total{reason="overloaded"} 1"#,
        r#"capi_topology_extension_calls_total{handler="generate.ext"} 2"#,
        r#"capi_topology_extension_errors_total{handler="generate.ext"} 1"#,
        r#"capi_topology_extension_call_duration_seconds_count{handler="generate.ext"} 2"#,
        r#"capi_topology_extension_cache_hits_total{handler="generate.ext"} 1"#,
        r#"capi_topology_lifecycle_hook_calls_total{hook="BeforeClusterUpgrade",outcome="retry"} 1"#,
        r#"capi_topology_lifecycle_hook_calls_total{hook="BeforeClusterUpgrade",outcome="cached"} 1"#,
        r#"capi_topology_lifecycle_hook_call_duration_seconds_count{hook="BeforeClusterUpgrade"} 1"#,
        r#"capi_topology_reconciles_total{controller="topology"} 2"#,
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
}
