//! `plan --current` with a ClusterClassRollout in the current state (#35): a class change prints
//! the waves it would roll out in and, per Cluster, whether its Machines roll when its wave comes;
//! a Cluster pinned to a revision is planned at that revision, as the controller computes it, so
//! a class change not rolled out yet changes nothing for it.

#[path = "common/plan_cli.rs"]
mod plan_cli;
#[path = "common/tempdir.rs"]
mod tempdir;

use capi_topology::rollout::revision::snapshot;
use capi_topology::store::MemoryStore;
use plan_cli::plan;
use serde_json::json;

const CLASS: &str = "tests/fixtures/realworld/docker/clusterclass.yaml";
const POLICY: &str = "tests/fixtures/plan/rollout/policy.yaml";
const NEW_TEMPLATE: &str = "tests/fixtures/plan/rollout/new-worker-template.yaml";
const CLUSTERS: [&str; 3] = ["a", "b", "c"];

/// Three Clusters of the docker class (`a` the canary), their topology planned from scratch
/// as the current state, and the class pointing at a new worker template.
fn fleet(dir: &tempdir::Dir) -> (String, String, String) {
    let one = std::fs::read_to_string("tests/fixtures/realworld/docker/cluster.yaml").unwrap();
    let clusters: Vec<String> = CLUSTERS
        .iter()
        .map(|name| {
            let renamed = one.replace("name: \"rw-docker\"", &format!("name: \"{name}\""));
            match *name {
                "a" => renamed.replace(
                    "  namespace: \"default\"\n",
                    "  namespace: \"default\"\n  labels: {rollout: canary}\n",
                ),
                _ => renamed,
            }
        })
        .collect();
    let clusters_file = dir.path().join("clusters.yaml");
    std::fs::write(&clusters_file, clusters.join("---\n")).unwrap();
    let clusters_file = clusters_file.display().to_string();
    let (code, out, err) = plan(&["-f", CLASS, &clusters_file]);
    assert_eq!((code, err.as_str()), (0, ""));
    let current = dir.path().join("current.yaml");
    std::fs::write(&current, out).unwrap();
    let class = std::fs::read_to_string(CLASS).unwrap();
    let changed = class.replacen(
        "name: quick-start-default-worker-machinetemplate\n",
        "name: quick-start-default-worker-machinetemplate-v2\n",
        1,
    );
    assert_ne!(changed, class);
    let changed_file = dir.path().join("changed-class.yaml");
    std::fs::write(&changed_file, changed).unwrap();
    (
        clusters_file,
        current.display().to_string(),
        changed_file.display().to_string(),
    )
}

/// `plan -o FORMAT` of the class change over the fleet's current state and the policy.
fn plan_change(label: &str, format: &str) -> String {
    let dir = tempdir::Dir::new(label);
    let (_, current, changed) = fleet(&dir);
    let (code, out, err) = plan(&[
        "-o",
        format,
        "--current",
        &current,
        CLASS,
        POLICY,
        "-f",
        &changed,
        NEW_TEMPLATE,
    ]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    out
}

#[test]
fn a_class_change_under_a_rollout_prints_its_waves_and_what_rolls() {
    let out = plan_change("plan-rollout", "diff");
    assert!(
        out.contains("ClusterClassRollout default/quick-start of ClusterClass default/quick-start:\n"),
        "{out}"
    );
    assert!(out.contains(" over quick-start-0000000001, in waves:\n"), "{out}");
    let canary = out.find("  wave canary (1 Clusters, 1 at a time):\n    default/a: Machines roll: ");
    let fleet = out.find("  wave fleet (2 Clusters, 1 at a time):\n    default/b: Machines roll: ");
    assert!(canary.is_some() && fleet.is_some() && canary < fleet, "{out}");
    assert!(out.contains("    default/c: Machines roll: "), "{out}");
}

#[test]
fn a_class_change_under_a_rollout_is_json_too() {
    let out = plan_change("plan-rollout-json", "json");
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rollout = &list["classRollouts"][0];
    assert_eq!(rollout["targetRevision"], "quick-start-0000000001");
    let waves: Vec<_> = rollout["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["name"].clone(), w["clusters"].as_array().unwrap().len()))
        .collect();
    assert_eq!(waves, [(json!("canary"), 1), (json!("fleet"), 2)]);
}

/// The dry run plans a pinned Cluster at its revision: the class changed in the current state
/// (not rolled out yet) changes nothing for it, as the controller would change nothing: its plan
/// is the plan before the change.
#[test]
fn a_pinned_cluster_is_planned_at_its_revision() {
    let dir = tempdir::Dir::new("plan-rollout-pinned");
    let (clusters, current, changed) = fleet(&dir);
    let old = snapshot(
        &MemoryStore::from_yaml(&std::fs::read_to_string(CLASS).unwrap()).unwrap(),
        "default",
        "quick-start",
    )
    .unwrap();
    let revision = json!({
        "apiVersion": "rollout.capi-topology.io/v1alpha1", "kind": "ClusterClassRevision",
        "metadata": {"name": "quick-start-0000000001", "namespace": "default"},
        "spec": {"classRef": {"name": "quick-start"}, "revision": 1, "hash": old.hash, "class": old.class, "templates": old.templates},
    });
    let revision_file = dir.path().join("revision.yaml");
    std::fs::write(&revision_file, serde_yaml_ng::to_string(&revision).unwrap()).unwrap();
    let revision_file = revision_file.display().to_string();
    let state = [
        current.as_str(),
        changed.as_str(),
        NEW_TEMPLATE,
        POLICY,
        &revision_file,
    ];
    let mut args = vec!["-o", "diff", "--current"];
    args.extend(state);
    args.extend(["-f", &clusters]);
    let (code, pinned, err) = plan(&args);
    assert_eq!((code, err.as_str()), (0, ""), "{pinned}");
    // The same as before the class changed...
    let (code, before, _) = plan(&["-o", "diff", "--current", &current, CLASS, "-f", &clusters]);
    assert_eq!(code, 0);
    let (plans, rollout) = pinned.split_at(pinned.find("ClusterClassRollout ").expect("the rollout section"));
    assert_eq!(plans, before);
    assert!(!plans.contains("Machines roll"), "{plans}");
    assert!(
        rollout.contains("    default/a: Machines roll: "),
        "what its wave would do: {rollout}"
    );
    // ...while without the policy the class itself applies: every Cluster's workers roll.
    let (code, unpinned, _) = plan(&[
        "-o",
        "diff",
        "--current",
        &current,
        &changed,
        NEW_TEMPLATE,
        "-f",
        &clusters,
    ]);
    assert_eq!(code, 0);
    assert_eq!(unpinned.matches("(md-0): Machines roll").count(), 3, "{unpinned}");
}
