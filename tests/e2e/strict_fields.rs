//! Strict field validation in the API server's words: the same file given to `kubectl create`,
//! `kubectl apply` (default `--validate=strict`) and `capi-topology check` is refused with the
//! same line, and a key written twice, which kubectl never sends twice, is refused by neither.

use std::path::Path;
use std::process::{Command, Output};

use crate::env::Env;

/// A Cluster with fields no schema declares, in an order other than their sorted one.
const UNKNOWN: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: typo
  namespace: default
  foo: 1
spec:
  zeta: 1
  topology:
    classRef:
      name: quick-start
    version: v1.31.2
    workers:
      machineDeployment:
      - class: default-worker
        name: md-0
  alpha: 2
";

/// A Cluster that writes its name and a spec field twice.
const TWICE: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: first
  name: twice
  namespace: default
spec:
  paused: false
  paused: true
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: KubeadmControlPlane
    name: twice
";

/// `capi-topology check -f file`.
fn check(file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .arg("check")
        .arg("-f")
        .arg(file)
        .output()
        .expect("run capi-topology check")
}

#[test]
fn strict_field_refusals_are_worded_as_kubectl_prints_them() {
    let env = Env::with_webhooks("strict-fields");
    let kubectl = &env.kubectl;
    let file = env.run.join("typo.yaml");
    std::fs::write(&file, UNKNOWN).expect("write typo.yaml");
    let path = file.display().to_string();
    let ours = check(&file);
    assert_eq!(ours.status.code(), Some(1));
    let ours = String::from_utf8_lossy(&ours.stderr).into_owned();
    for verb in ["create", "apply"] {
        let out = kubectl
            .run(&[verb, "-f", &path], None)
            .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
        assert!(
            !out.success,
            "kubectl {verb} took the unknown fields: {}",
            out.stdout
        );
        assert!(
            out.stderr
                .contains("strict decoding error: unknown field \"metadata.foo\", "),
            "kubectl {verb}: {}",
            out.stderr
        );
        assert_eq!(ours.trim_end(), out.stderr.trim_end(), "kubectl {verb}");
    }

    let file = env.run.join("twice.yaml");
    std::fs::write(&file, TWICE).expect("write twice.yaml");
    let path = file.display().to_string();
    let out = kubectl
        .run(&["create", "--dry-run=server", "-f", &path], None)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    assert!(out.success, "kubectl refused a key written twice: {}", out.stderr);
    assert!(
        out.stdout.contains("/twice created"),
        "the last value is sent: {}",
        out.stdout
    );
    let ours = check(&file);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&ours.stderr),
    );
    assert!(ours.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout, "cluster.cluster.x-k8s.io/twice created\n");
    assert!(
        stderr.contains(&format!(
            "Warning: {path}: field \"metadata.name\" is written more than once; kubectl sends only its last value"
        )),
        "{stderr}"
    );
}
