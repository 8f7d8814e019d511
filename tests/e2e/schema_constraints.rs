//! The CRDs' schema constraints (Cluster API v1.14.0's, carried by ours) in the API server's
//! words: objects breaking several constraints at once are refused by `kubectl apply` against
//! the real API server with our CRDs and webhooks, and `capi-topology check` prints the same
//! causes for each (compared as sets: kube-openapi walks an object's properties in Go's map order).
//! No enum case: our mutating webhook cannot decode an unknown enum value and refuses it first
//! (`cannot decode object: ... unknown variant`), before the API server's schema check.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::env::Env;

/// Each object and a cause its refusal must name.
const CASES: &[(&str, &str, &str)] = &[
    (
        "limits.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: limits
  namespace: default
spec:
  topology:
    classRef:
      name: Quick_Start_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
    version: v1.34.0
    controlPlane:
      replicas: -1
",
        "spec.topology.classRef.name: Too long: may not be more than 253 bytes",
    ),
    (
        "versions.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  name: versions
  namespace: default
spec:
  infrastructure:
    templateRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerClusterTemplate
      name: t
  controlPlane:
    templateRef:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta2
      kind: KubeadmControlPlaneTemplate
      name: t
  kubernetesVersions: [VERSIONS]
",
        "spec.kubernetesVersions: Too many: 101: must have at most 100 items",
    ),
    (
        "rule.yaml",
        HEALTH_CHECKED,
        "unhealthyMachineConditions[0].type: Invalid value: \"string\": type must not be one of: Ready",
    ),
    // Not compared: a v1beta1 Cluster with `class: ''`. Our mutating webhook refuses it first;
    // the server names the v1beta1 field (`spec.topology.class: Required value`), `check` the
    // hub's (`spec.topology.classRef.name`). Left open.
    (
        // Checked as written: the API server converts a spoke object back from our webhooks'
        // version only when a mutating webhook patched it (here none does: there is no class).
        "spoke-namespace.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: spoke-namespace
  namespace: default
spec:
  topology:
    class: quick-start
    classNamespace: ''
    version: v1.34.0
",
        "spec.topology.classNamespace in body should be at least 1 chars long",
    ),
];

/// A Cluster whose control plane's health check has a `Ready` condition of `CONDITIONS`
/// (`unhealthyMachineConditions` in the cases). v1.14.0's CEL rule on condition types is on
/// `unhealthyMachineConditions` alone: a Node's `Ready` is the usual `unhealthyNodeConditions`
/// check, and the API server takes it.
const HEALTH_CHECKED: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: rule
  namespace: default
spec:
  topology:
    classRef:
      name: quick-start
    version: v1.34.0
    controlPlane:
      healthCheck:
        checks:
          CONDITIONS:
          - type: Ready
            status: Unknown
            timeoutSeconds: 300
";

/// The causes of a refusal as kubectl prints it (`The Cluster "c" is invalid: \n* a\n* b`).
fn causes(message: &str) -> BTreeSet<String> {
    let message = message.trim_end();
    match message.split_once(" is invalid: ") {
        Some((_, causes)) => causes
            .split("\n* ")
            .map(str::trim)
            .filter(|cause| !cause.is_empty())
            .map(str::to_owned)
            .collect(),
        None => BTreeSet::from([message.to_owned()]),
    }
}

/// `capi-topology check -f file`: its exit code and what it printed on stderr (refusals).
fn check(file: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .arg("check")
        .arg("-f")
        .arg(file)
        .output()
        .expect("run capi-topology check");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn schema_constraints_are_refused_as_the_api_server_refuses_them() {
    let env = Env::with_webhooks("schema-constraints");
    let versions: Vec<String> = (0..101).map(|i| format!("v1.{i}.0")).collect();
    for (name, manifest, cause) in CASES {
        let file = env.run.join(name);
        let manifest = manifest
            .replace("VERSIONS", &versions.join(", "))
            .replace("CONDITIONS", "unhealthyMachineConditions");
        std::fs::write(&file, manifest).expect("write manifest");
        let out = env
            .kubectl
            .run(&["apply", "-f", &file.display().to_string()], None)
            .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
        assert!(!out.success, "{name}: the API server took it: {}", out.stdout);
        let theirs = causes(&out.stderr);
        assert!(
            theirs.iter().any(|line| line.contains(cause)),
            "{name}: {theirs:#?}"
        );
        let (code, ours) = check(&file);
        assert_eq!(code, Some(1), "{name}: {ours}");
        assert_eq!(causes(&ours), theirs, "{name}");
    }
    let file = env.run.join("accepted.yaml");
    let accepted = HEALTH_CHECKED
        .replace("CONDITIONS", "unhealthyNodeConditions")
        .replace("name: rule", "name: node-ready");
    std::fs::write(&file, accepted).expect("write manifest");
    let out = env
        .kubectl
        .run(&["apply", "-f", &file.display().to_string()], None)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    assert!(out.success, "the API server refused it: {}", out.stderr);
    let (code, ours) = check(&file);
    assert_eq!(code, Some(0), "{ours}");
}
