//! The offline commands across API versions: v1beta1 and v1beta2 objects mixed in one set of
//! files, an unserved version refused, `convert` between the versions, and `plan
//! --output-version v1beta1`.

use std::path::Path;
use std::process::{Command, Output};

fn capi_topology(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[path = "common/tempdir.rs"]
mod tempdir;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The Clusters' version does not change what is admitted or planned: the v1beta1 quickstart with
/// one Cluster written as v1beta2 checks and plans as the all-v1beta1 one (the same provider
/// templates: examples/quickstart/ has them at v1beta2, so its plan names other versions).
#[test]
fn v1beta1_and_v1beta2_objects_mix_and_plan_alike() {
    let mixed_files = [
        "examples/v1beta1/00-clusterclass.yaml",
        "examples/quickstart/10-cluster-dev.yaml",
        "examples/v1beta1/11-cluster-prod.yaml",
    ];
    let v1 = capi_topology(&["check", "-f", "examples/v1beta1/"]);
    let v2 = capi_topology(&["check", "-f", "examples/quickstart/"]);
    let mixed = capi_topology(&[&["check", "-f"][..], &mixed_files[..]].concat());
    assert!(mixed.status.success(), "{}", text(&mixed.stderr));
    assert_eq!(text(&mixed.stdout), text(&v1.stdout));
    assert_eq!(text(&mixed.stdout), text(&v2.stdout));
    let plan_v1 = capi_topology(&["plan", "-f", "examples/v1beta1/"]);
    let plan_mixed = capi_topology(&[&["plan", "-f"][..], &mixed_files[..]].concat());
    assert!(plan_v1.status.success(), "{}", text(&plan_v1.stderr));
    assert_eq!(text(&plan_v1.stdout), text(&plan_mixed.stdout));
    assert!(text(&plan_mixed.stdout).contains("apiVersion: cluster.x-k8s.io/v1beta2\n  kind: Cluster\n"));
}

#[test]
fn an_unserved_version_of_our_groups_is_an_error() {
    let dir = tempdir::Dir::new("unserved");
    let file = dir.join("old.yaml");
    std::fs::write(
        &file,
        "apiVersion: cluster.x-k8s.io/v1alpha3\nkind: Cluster\nmetadata:\n  name: old\n  namespace: default\n",
    )
    .expect("write");
    let file = file.to_string_lossy().into_owned();
    for command in ["check", "plan"] {
        let output = capi_topology(&[command, "-f", "examples/quickstart/", &file]);
        assert_eq!(output.status.code(), Some(2), "{command}");
        assert!(output.stdout.is_empty(), "{command}: nothing applied");
        assert!(
            text(&output.stderr).contains(
                "no matches for kind \"Cluster\" in version \"cluster.x-k8s.io/v1alpha3\" \
                 (cluster.x-k8s.io serves v1beta1, v1beta2)"
            ),
            "{command}: {}",
            text(&output.stderr)
        );
    }
    let output = capi_topology(&["convert", "-f", &file, "--to", "v1beta2"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("apiVersion cluster.x-k8s.io/v1alpha3 is not served"));
}

#[test]
fn convert_round_trips_the_quickstart() {
    let dir = tempdir::Dir::new("round-trip");
    let v2 = dir.join("v1beta2");
    let v1 = dir.join("v1beta1");
    let to_v2 = capi_topology(&[
        "convert",
        "-f",
        "examples/v1beta1",
        "--to",
        "v1beta2",
        "-o",
        &v2.to_string_lossy(),
    ]);
    assert!(to_v2.status.success(), "{}", text(&to_v2.stderr));
    let class = std::fs::read_to_string(v2.join("00-clusterclass.yaml")).expect("converted class");
    assert!(class.contains("apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\n"));
    // Templates are not ours: passed through as written, comments and all.
    assert!(
        class.contains("apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DockerClusterTemplate\n")
    );
    let check = capi_topology(&["check", "-f", &v2.to_string_lossy()]);
    assert!(check.status.success(), "{}", text(&check.stderr));

    let back = capi_topology(&[
        "convert",
        "-f",
        &v2.to_string_lossy(),
        "examples/provider-crds/",
        "--to",
        "v1beta1",
        "-o",
        &v1.to_string_lossy(),
    ]);
    assert!(back.status.success(), "{}", text(&back.stderr));
    let cluster = std::fs::read_to_string(v1.join("10-cluster-dev.yaml")).expect("converted back");
    assert!(cluster.contains("apiVersion: cluster.x-k8s.io/v1beta1\n"));
    assert!(cluster.contains("class: quick-start"));
    let plan_back = capi_topology(&["plan", "-f", &v1.to_string_lossy()]);
    let plan = capi_topology(&["plan", "-f", "examples/v1beta1/"]);
    assert_eq!(text(&plan_back.stdout), text(&plan.stdout));
    assert!(Path::new(&v1).join("contract-labels.yaml").exists());
}

#[test]
fn plan_prints_v1beta1_with_the_crds_and_names_a_missing_one() {
    let files = [
        "examples/quickstart/00-clusterclass.yaml",
        "examples/quickstart/10-cluster-dev.yaml",
    ];
    let mut args = vec!["plan", "-f"];
    args.extend(files);
    args.extend(["--output-version", "v1beta1"]);
    let missing = capi_topology(&args);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr)
            .contains("add the CRD dockerclusters.infrastructure.cluster.x-k8s.io to the files"),
        "{}",
        text(&missing.stderr)
    );
    args.insert(2 + files.len(), "examples/provider-crds/");
    let output = capi_topology(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    assert!(out.contains("- apiVersion: cluster.x-k8s.io/v1beta1\n  kind: Cluster\n"));
    assert!(out.contains("apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\n      kind: DockerCluster\n"));
    // A v1beta1 MachineDeployment names its templates' apiVersion, from their CRDs' labels.
    assert!(out.contains("- apiVersion: cluster.x-k8s.io/v1beta1\n  kind: MachineDeployment\n"));
    assert!(out.contains(
        "apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n            kind: KubeadmConfigTemplate\n"
    ));
}
