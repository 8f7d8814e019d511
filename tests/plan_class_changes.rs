//! `plan` when a class defines an object differently from the usual shape (issue 33): a template
//! without a spec whose patch adds it, and a class that stops defining health checks.

#[path = "common/plan_cli.rs"]
mod plan_cli;
#[path = "common/tempdir.rs"]
mod tempdir;

use plan_cli::plan;
use serde_json::Value;

/// vSphere's class as issue 33 reports it: the VSphereClusterTemplate has no spec and the patch
/// adds `/spec` first, then the fields below it. Cluster API v1.14.0 keeps all of it.
#[test]
fn a_spec_added_by_the_patches_to_a_template_without_one_is_kept() {
    let (code, out, err) = plan(&[
        "-o",
        "json",
        "-f",
        "tests/fixtures/fidelity/vsphere-spec-added-by-patch",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let list: Value = serde_json::from_str(&out).unwrap();
    let cluster = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["kind"] == "VSphereCluster")
        .expect("a VSphereCluster");
    assert_eq!(cluster["spec"]["server"], "vcenter.example.com", "{cluster:#}");
    assert_eq!(cluster["spec"]["controlPlaneEndpoint"]["host"], "10.0.0.100");
    assert_eq!(cluster["spec"]["identityRef"]["name"], "rw-vsphere");
    assert!(cluster["spec"]["thumbprint"].is_string());
}

/// The deleted lines of `plan -o diff --current CURRENT... -f FILES...`.
fn deleted(current: &[&str], files: &[&str]) -> Vec<String> {
    let mut args = vec!["-o", "diff", "--current"];
    args.extend(current);
    args.push("-f");
    args.extend(files);
    let (code, out, err) = plan(&args);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    out.lines()
        .filter_map(|line| line.trim().strip_prefix("- deleted "))
        .map(str::to_owned)
        .collect()
}

/// The Cluster of the docker class planned from scratch, written where `--current` reads it.
fn provisioned(dir: &tempdir::Dir) -> String {
    let (code, out, err) = plan(&["-f", "tests/fixtures/realworld/docker"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let path = dir.path().join("current.yaml");
    std::fs::write(&path, out).unwrap();
    path.display().to_string()
}

/// Cluster API v1.14.0 deletes a MachineHealthCheck the class no longer defines, the control
/// plane's as well as the MachineDeployment's (reconcileMachineHealthCheck with no desired one).
#[test]
fn a_class_without_health_checks_deletes_both_health_checks() {
    let dir = tempdir::Dir::new("class-changes");
    let current = provisioned(&dir);
    let gone = deleted(
        &[
            &current,
            "tests/fixtures/plan/health-checks-removed/clusterclass.yaml",
        ],
        &["tests/fixtures/realworld/docker/cluster.yaml"],
    );
    assert_eq!(gone.len(), 2, "{gone:?}");
    assert!(
        gone.iter().all(|what| what.starts_with("MachineHealthCheck ")),
        "{gone:?}"
    );
    assert!(
        gone.iter().any(|what| !what.contains("-md-0-")),
        "the control plane's: {gone:?}"
    );
}

/// Applied with `kubectl apply` over a stored class that carries no last-applied annotation,
/// the edit cannot remove a field (kubectl only removes what it applied before): the control
/// plane's `healthCheck` map stays, while the MachineDeployment classes' list is replaced whole.
/// That is kubectl's merge, not the topology: the class as stored still checks the control plane.
#[test]
fn kubectl_apply_without_last_applied_keeps_the_control_planes_check() {
    let dir = tempdir::Dir::new("class-changes");
    let current = provisioned(&dir);
    let gone = deleted(
        &[&current, "tests/fixtures/realworld/docker/clusterclass.yaml"],
        &[
            "tests/fixtures/plan/health-checks-removed/clusterclass.yaml",
            "tests/fixtures/realworld/docker/cluster.yaml",
        ],
    );
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert!(
        gone[0].starts_with("MachineHealthCheck ") && gone[0].contains("-md-0-"),
        "{gone:?}"
    );
}
