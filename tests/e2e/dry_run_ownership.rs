//! The dry run models server-side apply: on the e2e API server, objects written by the
//! controller's apply (field manager `capi-topology`) and by Cluster API's managers beside it
//! (a label applied by `cluster-api-controller-manager`, a status written by `manager`); then a
//! Cluster that stops setting some fields. `plan -o diff` (live and from an export with its
//! managedFields) shows each removal, and what the controller's apply then changes is, field
//! for field, what the diff said: the fields only `capi-topology` owned are gone, the label
//! another manager also owns stays, the other managers' fields are untouched.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::class_status;
use crate::controllers::{condition, owned_by, provision_control_plane, CONVERGED};
use crate::dry_run::plan_diff;
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render, with};
use crate::process::poll;

/// The kinds of the Cluster's objects compared before and after the controller's apply.
const OWNED: [&str; 6] = [
    "kubeadmcontrolplane",
    "machinedeployment",
    "dockercluster",
    "dockermachinetemplate",
    "kubeadmconfigtemplate",
    "machinehealthcheck",
];

/// The field manager Cluster API's core manager applies with, beside the topology's.
const CLUSTER_API_MANAGER: &str = "cluster-api-controller-manager";

/// Cluster `dev` with topology labels on its control plane and worker pool, a failure domain and
/// a drain timeout (`full`), or with the `team` labels, the failure domain and the timeout gone.
fn dev(full: bool) -> Value {
    let mut dev = quickstart_object("10-cluster-dev.yaml", "Cluster");
    let cp_labels = if full {
        json!({"team": "a", "tier": "control-plane"})
    } else {
        json!({"tier": "control-plane"})
    };
    dev = with(dev, "/spec/topology/controlPlane/metadata/labels", cp_labels);
    if full {
        dev = with(
            dev,
            "/spec/topology/controlPlane/deletion",
            json!({"nodeDrainTimeoutSeconds": 30}),
        );
        let md = "/spec/topology/workers/machineDeployments/0";
        dev = with(dev, &format!("{md}/metadata/labels"), json!({"team": "a"}));
        dev = with(dev, &format!("{md}/failureDomain"), json!("fd-1"));
    }
    dev
}

/// Every object of the kinds in [`OWNED`] labelled as Cluster `dev`'s, by (kind, name).
fn snapshot(kubectl: &Kubectl) -> Result<BTreeMap<(String, String), Value>, String> {
    let mut objects = BTreeMap::new();
    for resource in OWNED {
        for object in owned_by(kubectl, "dev", resource)? {
            let kind = object["kind"].as_str().unwrap_or_default().to_owned();
            let name = object["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            objects.insert((kind, name), object);
        }
    }
    Ok(objects)
}

/// The leaves of `value` under `path` (maps walked, lists and empty maps whole).
fn leaves(path: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                leaves(&format!("{path}.{key}"), child, out);
            }
        }
        _ => {
            out.insert(path.to_owned(), value.clone());
        }
    }
}

/// Each leaf that differs between `from` and `to` (both under `path`): (old, new), null when absent.
type LeafChanges = BTreeMap<String, (Value, Value)>;

fn leaf_changes(path: &str, from: &Value, to: &Value, out: &mut LeafChanges) {
    let (mut before, mut after) = (BTreeMap::new(), BTreeMap::new());
    if !from.is_null() {
        leaves(path, from, &mut before);
    }
    if !to.is_null() {
        leaves(path, to, &mut after);
    }
    for key in before.keys().chain(after.keys()) {
        let (old, new) = (
            before.get(key).cloned().unwrap_or(Value::Null),
            after.get(key).cloned().unwrap_or(Value::Null),
        );
        if old != new {
            out.insert(key.clone(), (old, new));
        }
    }
}

/// What the controller changed in `before` to make `after`: server fields and status left out.
fn applied(before: &Value, after: &Value) -> LeafChanges {
    let mut changes = LeafChanges::new();
    for part in ["metadata", "spec"] {
        leaf_changes(part, &before[part], &after[part], &mut changes);
    }
    changes.retain(|path, _| {
        ![
            "metadata.resourceVersion",
            "metadata.generation",
            "metadata.managedFields",
        ]
        .iter()
        .any(|server| path.starts_with(server))
    });
    changes
}

/// The `~ changed KIND default/NAME` blocks of a diff as leaf changes, by (kind, name).
fn planned(diff: &str) -> Result<BTreeMap<(String, String), LeafChanges>, String> {
    let mut blocks = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in diff.lines() {
        if let Some(what) = line.strip_prefix("  ~ changed ") {
            let (kind, rest) = what.split_once(' ').unwrap_or_default();
            let name = rest.rsplit('/').next().unwrap_or_default();
            let key = (kind.to_owned(), name.to_owned());
            blocks.insert(key.clone(), LeafChanges::new());
            current = Some(key);
        } else if let Some(field) = line.strip_prefix("      ") {
            let block = current.as_ref().and_then(|key| blocks.get_mut(key));
            let (Some(block), Some((path, change))) = (block, field.split_once(": ")) else {
                return Err(format!("a field line outside a block: {line}"));
            };
            if path.contains('[') {
                return Err(format!("a list item path this test does not compare: {line}"));
            }
            let (from, to) = change.rsplit_once(" -> ").ok_or(format!("no ' -> ' in {line}"))?;
            let parse = |text: &str| match text {
                "(removed)" => Ok(Value::Null),
                text => serde_json::from_str(text).map_err(|e| format!("{line}: {e}")),
            };
            leaf_changes(path, &parse(from)?, &parse(to)?, block);
        } else if !line.starts_with("  ~ ") && !line.starts_with("  * ") {
            current = None;
        }
    }
    Ok(blocks)
}

#[test]
fn the_dry_run_shows_what_the_controllers_apply_removes_and_leaves_other_managers_fields() {
    let env = Env::with_webhooks("dry-run-ownership");
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    class_status::install_quickstart(kubectl).unwrap_or_else(|e| fail(e));
    kubectl.accepts(&render(&[dev(true)])).unwrap_or_else(|e| fail(e));
    provision_control_plane(kubectl, "dev", "v1.31.2").unwrap_or_else(|e| fail(e));
    let settled = poll("dev to be reconciled", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        let deployments = owned_by(kubectl, "dev", "machinedeployment")?;
        (condition(&cluster)["status"] == "True" && deployments.len() == 1)
            .then(|| deployments[0].clone())
            .ok_or_else(|| format!("not yet: {}", condition(&cluster)))
    })
    .unwrap_or_else(|e| fail(e));
    let md = settled["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let control_plane = owned_by(kubectl, "dev", "kubeadmcontrolplane").unwrap_or_else(|e| fail(e));
    let cp = control_plane[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    // Cluster API's managers beside the topology: one label the topology also sets (same value),
    // one label and one annotation of their own, and a status.
    let theirs = json!({"apiVersion": control_plane[0]["apiVersion"], "kind": "KubeadmControlPlane",
        "metadata": {"name": cp, "namespace": "default",
            "labels": {"tier": "control-plane", "example.com/theirs": "x"},
            "annotations": {"example.com/theirs": "y"}}});
    let manager = format!("--field-manager={CLUSTER_API_MANAGER}");
    let out = kubectl
        .apply(&theirs.to_string(), &["--server-side", &manager])
        .unwrap_or_else(|e| fail(e));
    assert!(out.success, "{}{}", out.stdout, out.stderr);
    kubectl
        .ok(&[
            "patch",
            "machinedeployment",
            &md,
            "-n",
            "default",
            "--subresource=status",
            "--type=merge",
            "--field-manager=manager",
            "-p",
            r#"{"status": {"replicas": 1}}"#,
        ])
        .unwrap_or_else(|e| fail(e));

    let file = env.run.join("dev-without.yaml");
    std::fs::write(&file, render(&[dev(false)])).unwrap_or_else(|e| fail(e.to_string()));
    let exported = env.run.join("exported.yaml");
    let export = kubectl
        .ok(&[
            "get",
            "clusters,clusterclasses,dockerclusters,kubeadmcontrolplanes,dockermachinetemplates,\
             kubeadmconfigtemplates,machinedeployments,machinesets,machines,machinehealthchecks",
            "-n",
            "default",
            "-o",
            "yaml",
            "--show-managed-fields",
        ])
        .unwrap_or_else(|e| fail(e));
    std::fs::write(&exported, export).unwrap_or_else(|e| fail(e.to_string()));
    let files = [
        "examples/quickstart/00-clusterclass.yaml",
        &file.display().to_string(),
    ];
    let kubeconfig = env.plane.kubeconfig().display().to_string();
    let live = plan_diff(&files, &["--kubeconfig", &kubeconfig]).unwrap_or_else(|e| fail(e));
    let offline =
        plan_diff(&files, &["--current", &exported.display().to_string()]).unwrap_or_else(|e| fail(e));
    assert_eq!(live, offline, "--kubeconfig and --current agree");
    for removed in [
        "      metadata.labels.team: \"a\" -> (removed)\n",
        "      spec.template.spec.failureDomain: \"fd-1\" -> (removed)\n",
    ] {
        assert!(live.contains(removed), "{removed}in:\n{live}");
    }
    assert!(!live.contains("tier") && !live.contains("example.com"), "{live}");
    assert!(
        live.contains(&format!(
            "  * MachineDeployment default/{md} (md-0): Machines roll (failure domain fd-1 -> none)"
        )),
        "{live}"
    );
    assert!(
        !live.contains("  + created") && !live.contains("  - deleted"),
        "{live}"
    );
    let plan = planned(&live).unwrap_or_else(|e| fail(e));

    let before = snapshot(kubectl).unwrap_or_else(|e| fail(e));
    kubectl
        .accepts(&render(&[dev(false)]))
        .unwrap_or_else(|e| fail(e));
    let after = poll("the controller to apply the planned changes", CONVERGED, || {
        let after = snapshot(kubectl)?;
        let written = plan.keys().all(|key| {
            let version = |objects: &BTreeMap<_, Value>| {
                objects.get(key).map(|o| o["metadata"]["resourceVersion"].clone())
            };
            version(&after) != version(&before)
        });
        written.then_some(after).ok_or_else(|| "not yet".to_owned())
    })
    .unwrap_or_else(|e| fail(e));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "no object created or deleted"
    );
    for (key, object) in &before {
        let changes = applied(object, &after[key]);
        let expected = plan.get(key).cloned().unwrap_or_default();
        assert_eq!(changes, expected, "{key:?}: applied vs planned\n{live}");
    }
    let kcp = &after[&("KubeadmControlPlane".to_owned(), cp.clone())];
    assert_eq!(
        kcp["metadata"]["labels"]["tier"], "control-plane",
        "shared with {CLUSTER_API_MANAGER}"
    );
    assert_eq!(kcp["metadata"]["labels"]["example.com/theirs"], "x");
    assert_eq!(kcp["metadata"]["annotations"]["example.com/theirs"], "y");
    let md_after = &after[&("MachineDeployment".to_owned(), md.clone())];
    assert_eq!(md_after["status"]["replicas"], 1, "the status `manager` wrote");
    let again = plan_diff(&files, &["--kubeconfig", &kubeconfig]).unwrap_or_else(|e| fail(e));
    assert!(
        again.contains("  no changes\n"),
        "settled after the apply:\n{again}"
    );
}
