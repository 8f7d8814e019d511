//! End-to-end suite: a real etcd + kube-apiserver on loopback, `capi-topology serve` as its
//! admission webhook, and the real kubectl as the operator.
//!
//! It is part of `cargo test`; alone: `cargo test --test e2e`. The first run builds the
//! Kubernetes and Cluster API binaries into a per-machine cache (`tests/e2e/build-*.sh`; time and
//! disk in README.md, Prerequisites); later runs take about a minute.
//!
//! Needs Go (first run only), openssl and a Linux `/proc`. Logs of a failed run are kept and
//! their directory printed (until the next run); processes of a crashed run are stopped by the
//! next run. `CAPI_TOPOLOGY_E2E_BIN=<path>` runs the scenarios against another capi-topology
//! binary (e.g. a release build).

mod audit_log;
mod beside_cluster_api;
mod beside_cluster_api_conversion;
mod beside_cluster_api_resource_set;
mod beside_cluster_api_rotation;
mod beside_cluster_api_upgrade;
mod cache;
mod class_rollout;
mod class_rollout_waves;
mod class_status;
mod cluster_api;
mod control_plane;
mod controllers;
mod convert_yaml11;
mod deployment;
mod deployment_emulator;
mod dry_run;
mod dry_run_ownership;
mod env;
mod faults_apiserver;
mod faults_certificate;
mod faults_checks;
mod faults_extension;
mod faults_extension_patches;
mod faults_leader;
mod faults_pause;
mod faults_stack;
mod faults_watch;
mod faults_webhook;
mod hostile_extensions;
mod kubectl;
mod kubectl_watch;
mod lifecycle_hooks;
#[path = "../local_extension/mod.rs"]
mod local_extension;
mod manifests;
mod proc_stats;
mod process;
mod provider_contract;
mod refusals;
mod resource_sets;
mod resource_sets_scale;
mod runtime_extensions;
mod runtime_isolation;
mod scale;
mod scale_beside_cluster_api;
mod scale_shards;
mod scenarios;
mod schema_constraints;
mod sharding;
mod strict_fields;
mod take_over;
mod take_over_fleet;
mod take_over_stack;
mod versions;
mod webhook;

use env::Env;
use manifests::{quickstart_templates, render};

/// The control plane starts, takes the provider CRDs, and kubectl round-trips an object.
#[test]
fn control_plane_serves_provider_kinds() {
    let env = Env::control_plane("smoke");
    let applied = env.kubectl.accepts(&render(&quickstart_templates()));
    let applied = applied.unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    assert!(
        applied.contains(
            "dockermachinetemplate.infrastructure.cluster.x-k8s.io/quick-start-large-worker created"
        ),
        "{applied}"
    );
    let template = env
        .kubectl
        .get_json("dockermachinetemplate", "default", "quick-start-large-worker")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(template["spec"]["template"]["spec"]["bootstrapTimeout"], "10m");

    // The API server loads loopback webhook configurations, and the revision probe sees each
    // change take effect (no server listens: the configurations only name one).
    let ca = env.run.join("apiserver-certs/apiserver.crt");
    let ca = std::fs::read_to_string(ca).expect("the API server's certificate");
    let port = process::free_port();
    for revision in 1..=2 {
        webhook::register(&env.kubectl, port, &ca, revision)
            .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    }
}
