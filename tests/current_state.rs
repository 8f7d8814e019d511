//! `plan` and `check` against current state (`--current`): the bundled export of the Quickstart's
//! `dev` as a management cluster stores it (examples/current/), with the files applied over it as
//! `kubectl apply` would and the Cluster planned as the controller plans it.

#[path = "common/plan_cli.rs"]
mod plan_cli;

use std::path::PathBuf;

use plan_cli::{plan, run};

const CLASS: &str = "examples/quickstart/00-clusterclass.yaml";
const DEV: &str = "examples/quickstart/10-cluster-dev.yaml";
const UPGRADE: &str = "examples/quickstart-upgrade/10-cluster-dev.yaml";
const CURRENT: &str = "examples/current/";

/// A directory of its own for one test, under Cargo's scratch directory for integration tests.
fn scratch(test: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("current-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// examples/current/dev.yaml with `from` replaced by `to`, in a directory of its own.
fn edited_current(test: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(CURRENT)
            .join("dev.yaml"),
    )
    .expect("examples/current/dev.yaml");
    assert!(text.contains(from), "the export holds {from:?}");
    let dir = scratch(test);
    std::fs::write(dir.join("dev.yaml"), text.replacen(from, to, 1)).expect("write the edited export");
    dir
}

#[test]
fn the_unchanged_cluster_plans_no_change_and_keeps_the_live_names() {
    let (code, out, err) = plan(&["-f", CLASS, DEV, "--current", CURRENT, "-o", "diff"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  no changes\n"), "{out}");
    assert!(!out.contains("  + ") && !out.contains("  - "), "{out}");
    assert!(
        out.contains("KubeadmControlPlane default/dev-x7k2p: no Machine rolls"),
        "{out}"
    );
    // The desired objects keep the names Cluster API gave them.
    let (code, yaml, err) = plan(&["-f", CLASS, DEV, "--current", CURRENT]);
    assert_eq!(code, 0, "{err}");
    for name in [
        "dev-9tqzd",
        "dev-x7k2p",
        "dev-x7k2p-lw7tn",
        "dev-md-0-r2vbj",
        "dev-md-0-r2vbj-h5m9c",
    ] {
        assert!(yaml.contains(&format!("name: {name}\n")), "{name} kept:\n{yaml}");
    }
}

#[test]
fn an_upgrade_changes_the_live_control_plane_and_holds_the_workers() {
    let (code, out, err) = run(
        "plan",
        &["-f", CLASS, UPGRADE, "--current", CURRENT, "-o", "diff"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("  ~ changed KubeadmControlPlane default/dev-x7k2p\n"),
        "{out}"
    );
    assert!(
        out.contains("      spec.version: \"v1.31.2\" -> \"v1.32.0\"\n"),
        "{out}"
    );
    assert!(
        !out.contains("deleted KubeadmControlPlane") && !out.contains("deleted DockerCluster"),
        "{out}"
    );
    assert!(
        !out.contains("MachineDeployment default/dev-md-0-r2vbj\n"),
        "the workers are not changed: {out}"
    );
    assert!(
        out.contains("KubeadmControlPlane default/dev-x7k2p: Machines roll (version v1.31.2 -> v1.32.0;"),
        "{out}"
    );
    assert!(
        out.contains("MachineDeployment default/dev-md-0-r2vbj (md-0): no Machine rolls; held: the upgrade to v1.32.0 waits"),
        "{out}"
    );
}

#[test]
fn a_version_change_is_checked_against_the_current_state() {
    let (code, out, err) = run("check", &["-f", CLASS, UPGRADE, "--current", CURRENT]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.ends_with("cluster.cluster.x-k8s.io/dev configured\n"),
        "{out}"
    );
    // The live control plane still upgrading to v1.31.2: the next version waits.
    let upgrading = edited_current(
        "upgrading",
        "version: v1.31.2\n    versions:",
        "version: v1.30.4\n    versions:",
    );
    let upgrading = upgrading.display().to_string();
    let (code, out, err) = run("check", &["-f", CLASS, UPGRADE, "--current", &upgrading]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("control plane is still completing a previous upgrade"),
        "{out}{err}"
    );
    // Two minor versions at once are refused as the API server refuses them.
    let skip = scratch("skip");
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(UPGRADE)).expect("upgrade");
    std::fs::write(
        skip.join("dev.yaml"),
        text.replace("version: 1.32.0", "version: 1.33.0"),
    )
    .expect("write");
    let skip = skip.display().to_string();
    let (code, out, err) = run("check", &["-f", CLASS, &skip, "--current", CURRENT]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("version cannot be increased from \"1.31.2\" to \"1.33.0\""),
        "{out}{err}"
    );
}

#[test]
fn without_current_state_a_version_change_names_what_is_missing() {
    let (code, out, err) = run("check", &["-f", CLASS, DEV, UPGRADE]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("object reference not set"), "{out}{err}");
    assert!(
        err.contains(
            "hint: a version change of Cluster default/dev is checked against the Cluster as it runs"
        ),
        "{err}"
    );
    assert!(
        err.contains("--current DIR") && err.contains("--kubeconfig"),
        "{err}"
    );
}

#[test]
fn a_live_cluster_with_references_is_an_update_not_a_create() {
    // The export itself applied as a file: the Cluster carries spec.infrastructureRef and
    // spec.controlPlaneRef, which only a create refuses beside spec.topology.
    let (code, out, err) = run("check", &["-f", CLASS, CURRENT, "--current", CURRENT]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("cluster.cluster.x-k8s.io/dev configured\n"), "{out}");
    let (code, out, err) = run("check", &["-f", CLASS, CURRENT]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("spec.infrastructureRef: Forbidden: cannot be set together with spec.topology"),
        "{out}{err}"
    );
}

/// Two copies of one object in the current state: the API server holds one, so which is current
/// is unknown; refused, naming both files, instead of the last one silently winning.
#[test]
fn an_object_given_twice_in_the_current_state_is_refused() {
    let dir = edited_current("twice", "dev-md-0-r2vbj", "dev-md-0-r2vbj");
    let (code, out, err) = run(
        "check",
        &[
            "-f",
            CLASS,
            DEV,
            "--current",
            CURRENT,
            dir.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("clusters.cluster.x-k8s.io \"dev\" already exists: Cluster default/dev is also in examples/current/dev.yaml"),
        "{err}"
    );
    assert!(out.is_empty(), "nothing applied: {out}");
}

/// kubectl cannot build its patch over a last applied configuration that is not JSON: `check
/// --current` says so for that object instead of "configured".
#[test]
fn a_truncated_last_applied_configuration_fails_as_kubectl_fails() {
    let dir = edited_current(
        "truncated",
        // One more `{` than `}`: the JSON ends before it is complete.
        r#""namespace":"default"},"spec":{"#,
        r#""namespace":"default"},"spec":{"x":{"#,
    );
    let (code, out, err) = run(
        "check",
        &["-f", CLASS, DEV, "--current", dir.to_str().unwrap_or_default()],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "error when applying patch to cluster.cluster.x-k8s.io/dev: error when creating patch with the \
             original configuration (the live object's kubectl.kubernetes.io/last-applied-configuration \
             annotation) for: \"examples/quickstart/10-cluster-dev.yaml\": Invalid JSON Document"
        ),
        "{out}{err}"
    );
    assert!(!out.contains("cluster.cluster.x-k8s.io/dev configured"), "{out}");
}

/// The export with the MachineDeployment's `team` label, applied by the topology controller
/// (`capi-topology`) alone, and its `shared` label, applied by Cluster API's manager too: the
/// Cluster no longer sets either.
fn labelled_current() -> PathBuf {
    let dir = scratch("owned");
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(CURRENT)
            .join("dev.yaml"),
    )
    .expect("examples/current/dev.yaml");
    let labels = "      topology.cluster.x-k8s.io/owned: ''\n    uid: 00000000-0000-4000-8000-000000000008\n";
    let fields = "      time: '2026-11-20T09:14:08Z'\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:spec: {}\n";
    assert!(text.contains(labels) && text.contains(fields));
    let text = text
        .replacen(
            labels,
            &format!("      team: a\n      shared: b\n{labels}"),
            1,
        )
        .replacen(
            fields,
            &format!(
                "{}\n        f:metadata:\n          f:labels:\n            .: {{}}\n            f:team: {{}}\n            f:shared: {{}}\n\
                 \x20   - manager: cluster-api-controller-manager\n      operation: Apply\n      fieldsType: FieldsV1\n      fieldsV1:\n\
                 \x20       f:metadata:\n          f:labels:\n            f:shared: {{}}\n\
                 \x20   - manager: manager\n      operation: Update\n      subresource: status\n      fieldsType: FieldsV1\n      fieldsV1:\n\
                 \x20       f:status:\n          f:replicas: {{}}\n",
                fields.trim_end()
            ),
            1,
        );
    std::fs::write(dir.join("dev.yaml"), text).expect("write the edited export");
    dir
}

#[test]
fn a_field_only_the_topology_applied_is_removed_and_the_shared_one_stays() {
    let current = labelled_current().display().to_string();
    let (code, out, err) = plan(&["-f", CLASS, DEV, "--current", &current, "-o", "diff"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "  ~ changed MachineDeployment default/dev-md-0-r2vbj\n      metadata.labels.team: \"a\" -> (removed)\n  * "
        ),
        "{out}"
    );
    assert!(!out.contains("shared") && !out.contains("no changes"), "{out}");
    assert!(
        out.contains("MachineDeployment default/dev-md-0-r2vbj (md-0): no Machine rolls"),
        "{out}"
    );
    // Without the records (`kubectl get -o yaml` leaves them out) nothing is known removed.
    let (code, out, err) = plan(&["-f", CLASS, DEV, "--current", CURRENT, "-o", "diff"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  no changes\n"), "{out}");
}
