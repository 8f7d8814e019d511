use std::sync::Arc;

use serde_json::{json, Value};

use super::*;

fn ms(name: &str, deleting: bool, finalizers: &[&str], bootstrap: &str, infra: &str) -> Arc<Value> {
    let mut object = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineSet",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": {
                "cluster.x-k8s.io/cluster-name": "c",
                "cluster.x-k8s.io/deployment-name": "c-md",
                "topology.cluster.x-k8s.io/owned": "",
            },
            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "name": "c-md"}],
            "finalizers": finalizers,
        },
        "spec": {"template": {"spec": {
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": bootstrap}},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": infra},
        }}},
    });
    if deleting {
        object["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    Arc::new(object)
}

fn md(deleting: bool, finalizers: &[&str], bootstrap: &str, infra: &str) -> Arc<Value> {
    let mut object = (*ms("c-md", deleting, finalizers, bootstrap, infra)).clone();
    object["kind"] = json!("MachineDeployment");
    object["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    Arc::new(object)
}

fn cluster() -> Value {
    json!({"metadata": {"name": "c", "namespace": "ns"}, "spec": {}})
}

fn names(cleanup: &FinalizerCleanup) -> Vec<&str> {
    cleanup.unused_templates.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn an_old_machine_set_after_a_rotation_frees_its_templates_and_finalizer() {
    let old = ms(
        "c-md-old",
        true,
        &[MACHINE_SET_FINALIZER, "other"],
        "boot-1",
        "infra-1",
    );
    let new = ms("c-md-new", false, &[MACHINE_SET_FINALIZER], "boot-2", "infra-2");
    let deployment = md(false, &[MACHINE_DEPLOYMENT_FINALIZER], "boot-2", "infra-2");
    let cleanups = finalizer_cleanups(&cluster(), &[deployment], &[old, new]);
    assert_eq!(cleanups.len(), 1);
    assert_eq!(cleanups[0].object["metadata"]["name"], "c-md-old");
    assert_eq!(names(&cleanups[0]), ["boot-1", "infra-1"]);
    assert_eq!(
        cleanups[0].unused_templates[1].group,
        "infrastructure.cluster.x-k8s.io"
    );
    assert_eq!(cleanups[0].patch, json!({"metadata": {"finalizers": ["other"]}}));
}

#[test]
fn templates_still_used_by_the_deployment_or_a_live_sibling_are_kept() {
    // Only the infrastructure template rotated: the bootstrap one is the deployment's.
    let old = ms("c-md-old", true, &[MACHINE_SET_FINALIZER], "boot-1", "infra-1");
    let sibling = ms("c-md-mid", false, &[], "boot-9", "infra-1");
    let deployment = md(false, &[], "boot-1", "infra-2");
    let cleanups = finalizer_cleanups(&cluster(), &[deployment], &[old, sibling]);
    assert!(names(&cleanups[0]).is_empty());
    assert_eq!(cleanups[0].patch, json!({"metadata": {"finalizers": []}}));
}

#[test]
fn a_deleting_deployment_or_sibling_does_not_keep_templates() {
    let old = ms("c-md-old", true, &[MACHINE_SET_FINALIZER], "boot-1", "infra-1");
    let sibling = ms("c-md-mid", true, &[], "boot-1", "infra-1");
    let deployment = md(true, &[], "boot-1", "infra-1");
    let cleanups = finalizer_cleanups(&cluster(), &[deployment], &[old, sibling]);
    assert_eq!(names(&cleanups[0]), ["boot-1", "infra-1"]);
}

#[test]
fn a_deleting_deployment_frees_templates_its_machine_sets_no_longer_use() {
    let deployment = md(true, &[MACHINE_DEPLOYMENT_FINALIZER], "boot-2", "infra-2");
    let live = ms("c-md-new", false, &[], "boot-2", "infra-1");
    let cleanups = finalizer_cleanups(&cluster(), &[deployment], &[live]);
    assert_eq!(cleanups.len(), 1);
    assert_eq!(cleanups[0].object["kind"], "MachineDeployment");
    assert_eq!(names(&cleanups[0]), ["infra-2"]);
    assert_eq!(cleanups[0].patch, json!({"metadata": {"finalizers": []}}));
}

#[test]
fn nothing_without_the_finalizer_deletion_or_topology_label() {
    let kept = ms("c-md-a", false, &[MACHINE_SET_FINALIZER], "b", "i");
    let bare = ms("c-md-b", true, &["other"], "b", "i");
    let mut unowned = (*ms("c-md-c", true, &[MACHINE_SET_FINALIZER], "b", "i")).clone();
    unowned["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("topology.cluster.x-k8s.io/owned");
    let cleanups = finalizer_cleanups(&cluster(), &[], &[kept, bare, Arc::new(unowned)]);
    assert!(cleanups.is_empty());
}

#[test]
fn paused_clusters_and_objects_are_left_alone() {
    let old = ms("c-md-old", true, &[MACHINE_SET_FINALIZER], "b", "i");
    let mut paused = cluster();
    paused["spec"]["paused"] = json!(true);
    assert!(finalizer_cleanups(&paused, &[], std::slice::from_ref(&old)).is_empty());
    let mut annotated = cluster();
    annotated["metadata"]["annotations"] = json!({"cluster.x-k8s.io/paused": ""});
    assert!(finalizer_cleanups(&annotated, &[], std::slice::from_ref(&old)).is_empty());
    let mut object = (*old).clone();
    object["metadata"]["annotations"] = json!({"cluster.x-k8s.io/paused": ""});
    assert!(finalizer_cleanups(&cluster(), &[], &[Arc::new(object)]).is_empty());
}
