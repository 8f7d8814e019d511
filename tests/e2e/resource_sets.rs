//! ClusterResourceSets end to end: `capi-topology serve` applies a set's Secrets and ConfigMaps to
//! workload clusters, reached through `<cluster>-kubeconfig` Secrets. One second API server is
//! the workload cluster of several Clusters, each in its own namespace there (the kubeconfig's
//! context namespace); a Cluster whose kubeconfig names the management API server stays
//! reachable while the workload API server is stopped.

use std::time::Duration;

use serde_json::{json, Value};

use crate::control_plane::ControlPlane;
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::process::poll;

/// How long the controller may take to converge after a change (retries back off from 1 s).
const CONVERGED: Duration = Duration::from_secs(60);

fn apply(kubectl: &Kubectl, objects: &[Value]) -> Result<String, String> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    kubectl.accepts(&list.to_string())
}

/// A Cluster with `labels` whose control plane is initialized, and its kubeconfig Secret.
fn cluster(kubectl: &Kubectl, name: &str, labels: Value, kubeconfig: &str) -> Result<(), String> {
    apply(
        kubectl,
        &[
            workload_cluster(name, labels),
            json!({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
                "metadata": {"name": format!("{name}-kubeconfig"), "namespace": "default",
                             "labels": {"cluster.x-k8s.io/cluster-name": name}},
                "stringData": {"value": kubeconfig}}),
        ],
    )?;
    mark_initialized(kubectl, name)
}

/// A v1beta2 Cluster `name` with `labels` and no control plane object: Cluster API v1.14 wants
/// one of controlPlaneRef, infrastructureRef or topology, so it names a DockerCluster (never
/// created: the Cluster controller only reports it missing).
pub fn workload_cluster(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                       "kind": "DockerCluster", "name": name}}})
}

/// Plays the control plane of Cluster `name` (which has none): once the Cluster controller has
/// written its first status (so that no write of it based on an older read follows), marks the
/// control plane initialized as v1.14 says it (`status.initialization` and the condition).
pub fn mark_initialized(kubectl: &Kubectl, name: &str) -> Result<(), String> {
    poll(&format!("Cluster {name}'s first status"), CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", name)?;
        cluster["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "InfrastructureReady")
            .then_some(())
            .ok_or(format!("status {}", cluster["status"]))
    })?;
    let mut conditions = kubectl.get_json("cluster", "default", name)?["status"]["conditions"].clone();
    if let Some(list) = conditions.as_array_mut() {
        list.retain(|c| c["type"] != "ControlPlaneInitialized");
        list.push(
            json!({"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized",
            "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}),
        );
    }
    let status = json!({"status": {"initialization": {"controlPlaneInitialized": true},
        "conditions": conditions}});
    kubectl.merge_patch(("cluster", "default", name), &status, true)?;
    Ok(())
}

fn config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data})
}

fn resource_set(name: &str, strategy: &str, selector: &str, resources: Value) -> Value {
    json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"strategy": strategy, "clusterSelector": {"matchLabels": {"cni": selector}},
                 "resources": resources}})
}

/// The CNI-like manifest: several documents, namespaced (no namespace: the cluster's) and not.
fn cni_manifest(mode: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: cni\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cni-config\ndata:\n  mode: {mode}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: e2e-cni\n\
         rules:\n- apiGroups: ['']\n  resources: [pods]\n  verbs: [get]\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: preexisting\ndata:\n  owner: cni\n"
    )
}

/// The Reconcile set's manifest: `first` stays the same, `second` changes.
fn sync_manifest(second: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sync-a\ndata:\n  mode: one\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sync-b\ndata:\n  value: '{second}'\n"
    )
}

/// The set's v1beta1 `ResourcesApplied` condition (read as v1beta2, where it is deprecated):
/// the one whose reason and message say which Cluster failed and why; the v1beta2 one says only
/// `InternalError` / "Please check controller logs for errors" for a failure, as v1.14 does.
fn condition(kubectl: &Kubectl, set: &str) -> Result<Value, String> {
    let set = kubectl.get_json("clusterresourceset", "default", set)?;
    Ok(set["status"]["deprecated"]["v1beta1"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "ResourcesApplied")
        .cloned()
        .unwrap_or(Value::Null))
}

fn wait_condition(kubectl: &Kubectl, set: &str, status: &str, fragment: &str) -> Result<Value, String> {
    poll(&format!("{set} ResourcesApplied {status}"), CONVERGED, || {
        let c = condition(kubectl, set)?;
        let message = c["message"].as_str().unwrap_or_default();
        if c["status"] == status && message.contains(fragment) {
            Ok(c)
        } else {
            Err(format!("{c}"))
        }
    })
}

/// `data.<key>` of ConfigMap `namespace/name` once it exists.
fn wait_data(kubectl: &Kubectl, namespace: &str, name: &str, key: &str, want: &str) -> Result<Value, String> {
    poll(
        &format!("ConfigMap {namespace}/{name} {key}={want}"),
        CONVERGED,
        || {
            let object = kubectl.get_json("configmap", namespace, name)?;
            if object["data"][key] == want {
                Ok(object)
            } else {
                Err(format!("data {}", object["data"]))
            }
        },
    )
}

fn binding(kubectl: &Kubectl, cluster: &str) -> Result<Value, String> {
    kubectl.get_json("clusterresourcesetbinding", "default", cluster)
}

fn absent(kubectl: &Kubectl, resource: &str, name: &str) -> Result<(), String> {
    poll(&format!("{resource} {name} to go"), CONVERGED, || {
        let out = kubectl.run(&["get", resource, name, "-n", "default"], None)?;
        if !out.success && out.stderr.contains("NotFound") {
            Ok(())
        } else {
            Err(format!("{}{}", out.stdout, out.stderr))
        }
    })
}

#[test]
fn resource_sets_reach_workload_clusters() {
    let env = Env::with_webhooks("resource-sets");
    let mut workload = ControlPlane::start_named(&env.run, "workload");
    let remote = workload.kubectl();
    if let Err(e) = scenario(&env, &mut workload, &remote) {
        panic!(
            "{e}\n{}\n--- workload kube-apiserver log ---\n{}",
            env.logs(),
            workload.apiserver_log()
        );
    }
}

fn scenario(env: &Env, workload: &mut ControlPlane, remote: &Kubectl) -> Result<(), String> {
    let kubectl = &env.kubectl;
    for namespace in ["alpha", "beta"] {
        remote.ok(&["create", "namespace", namespace])?;
    }
    kubectl.ok(&["create", "namespace", "delta"])?;
    // Made by hand before any set: left as it is, though a set lists an object of its name.
    apply(
        remote,
        &[json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "preexisting", "namespace": "alpha"}, "data": {"owner": "hand"}})],
    )?;

    apply(
        kubectl,
        &[
            config_map("cni", json!({"cni.yaml": cni_manifest("a")})),
            config_map("sync", json!({"sync.yaml": sync_manifest("1")})),
            json!({"apiVersion": "v1", "kind": "Secret", "type": "addons.cluster.x-k8s.io/resource-set",
                "metadata": {"name": "db", "namespace": "default"},
                "stringData": {"db.json": r#"{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-access"}, "stringData": {"password": "s3cret"}}"#}}),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "untyped", "namespace": "default"},
                "stringData": {"x.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: never\n"}}),
            resource_set(
                "cni-once",
                "ApplyOnce",
                "once",
                json!([{"kind": "ConfigMap", "name": "cni"}, {"kind": "Secret", "name": "db"}]),
            ),
            resource_set(
                "untyped",
                "ApplyOnce",
                "once",
                json!([{"kind": "Secret", "name": "untyped"}]),
            ),
            resource_set(
                "cni-sync",
                "Reconcile",
                "sync",
                json!([{"kind": "ConfigMap", "name": "sync"}]),
            ),
        ],
    )?;
    cluster(
        kubectl,
        "alpha",
        json!({"cni": "once"}),
        &workload.portable_kubeconfig("alpha"),
    )?;
    cluster(
        kubectl,
        "beta",
        json!({"cni": "sync"}),
        &workload.portable_kubeconfig("beta"),
    )?;

    // ApplyOnce: every document of the ConfigMap and the typed Secret's object; the object that
    // was already there untouched; the untyped Secret refused, and nothing of it applied.
    wait_condition(kubectl, "cni-once", "True", "")?;
    wait_data(remote, "alpha", "cni-config", "mode", "a")?;
    remote.get_json("serviceaccount", "alpha", "cni")?;
    remote.ok(&["get", "clusterrole", "e2e-cni"])?;
    let secret = remote.get_json("secret", "alpha", "db-access")?;
    check(secret["data"]["password"] == "czNjcmV0", || {
        format!("db-access: {secret}")
    })?;
    let kept = remote.get_json("configmap", "alpha", "preexisting")?;
    check(kept["data"]["owner"] == "hand", || {
        format!("preexisting rewritten: {kept}")
    })?;
    let refused = wait_condition(
        kubectl,
        "untyped",
        "False",
        "Secret untyped: unsupported secret type \"Opaque\"",
    )?;
    check(refused["reason"] == "WrongSecretType", || format!("{refused}"))?;
    check(
        remote
            .run(&["get", "namespace", "never"], None)?
            .stderr
            .contains("NotFound"),
        || "the untyped Secret's Namespace was created".to_owned(),
    )?;
    let alpha = binding(kubectl, "alpha")?;
    let applied = &alpha["spec"]["bindings"];
    check(
        applied.as_array().map(Vec::len) == Some(2)
            && alpha["metadata"]["ownerReferences"].as_array().map(Vec::len) == Some(2),
        || format!("binding alpha: {alpha}"),
    )?;
    let once_hash = applied
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["clusterResourceSetName"] == "cni-once")
        .map(|b| b["resources"].clone())
        .unwrap_or_default();
    check(
        once_hash
            .as_array()
            .is_some_and(|r| r.len() == 2 && r.iter().all(|r| r["applied"] == true)),
        || format!("cni-once resources: {once_hash}"),
    )?;
    let owned = kubectl.get_json("configmap", "default", "cni")?;
    check(
        owned["metadata"]["ownerReferences"][0]["name"] == "cni-once",
        || format!("cni owners: {owned}"),
    )?;

    // Reconcile: applied, then a hand edit of a field we set and a label someone added.
    wait_data(remote, "beta", "sync-a", "mode", "one")?;
    wait_condition(kubectl, "cni-sync", "True", "")?;
    apply(
        remote,
        &[json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "sync-a", "namespace": "beta", "labels": {"team": "blue"}}, "data": {"mode": "hacked"}})],
    )?;

    // Both source ConfigMaps change: only the Reconcile set applies again, repairing the edit.
    apply(
        kubectl,
        &[
            config_map("cni", json!({"cni.yaml": cni_manifest("b")})),
            config_map("sync", json!({"sync.yaml": sync_manifest("2")})),
        ],
    )?;
    wait_data(remote, "beta", "sync-b", "value", "2")?;
    let repaired = wait_data(remote, "beta", "sync-a", "mode", "one")?;
    check(repaired["metadata"]["labels"]["team"] == "blue", || {
        format!("label lost: {repaired}")
    })?;
    let unchanged = remote.get_json("configmap", "alpha", "cni-config")?;
    check(unchanged["data"]["mode"] == "a", || {
        format!("ApplyOnce applied again: {unchanged}")
    })?;
    let alpha_now = binding(kubectl, "alpha")?;
    check(alpha_now["spec"]["bindings"] == alpha["spec"]["bindings"], || {
        format!("ApplyOnce binding rewritten: {alpha_now}")
    })?;

    // The workload API server stops: beta's retries fail with a stable message while delta (on
    // the management API server) gets its resources; once back, beta catches up.
    workload.stop_apiserver();
    apply(
        kubectl,
        &[config_map("sync", json!({"sync.yaml": sync_manifest("3")}))],
    )?;
    // The management API server is delta's workload cluster.
    cluster(
        kubectl,
        "delta",
        json!({"cni": "sync"}),
        &env.plane.portable_kubeconfig("delta"),
    )?;
    wait_data(kubectl, "delta", "sync-b", "value", "3")?;
    let failing = wait_condition(kubectl, "cni-sync", "False", "Cluster beta: ")?;
    check(failing["reason"] == "RemoteClusterClientFailed", || {
        format!("{failing}")
    })?;
    let set = kubectl.get_json("clusterresourceset", "default", "cni-sync")?;
    let meta = set["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "ResourcesApplied")
        .cloned()
        .unwrap_or(Value::Null);
    check(
        meta["status"] == "False" && meta["reason"] == "InternalError",
        || format!("the v1beta2 ResourcesApplied of a failing set: {meta}"),
    )?;
    std::thread::sleep(Duration::from_secs(4));
    let still = condition(kubectl, "cni-sync")?;
    check(still == failing, || {
        format!("the message changed between retries: {failing} then {still}")
    })?;
    workload.restart_apiserver();
    wait_data(remote, "beta", "sync-b", "value", "3")?;
    wait_condition(kubectl, "cni-sync", "True", "")?;

    // Deleting a set removes it from the bindings; the last set gone, the binding goes. What
    // was applied stays.
    kubectl.ok(&["delete", "clusterresourceset", "cni-once", "-n", "default"])?;
    absent(kubectl, "clusterresourceset", "cni-once")?;
    let alpha = binding(kubectl, "alpha")?;
    check(
        alpha["spec"]["bindings"].as_array().map(Vec::len) == Some(1),
        || format!("binding alpha: {alpha}"),
    )?;
    kubectl.ok(&["delete", "clusterresourceset", "untyped", "-n", "default"])?;
    absent(kubectl, "clusterresourcesetbinding", "alpha")?;
    remote.get_json("configmap", "alpha", "cni-config")?;

    // Deleting a Cluster deletes its binding.
    kubectl.ok(&["delete", "cluster", "beta", "-n", "default"])?;
    absent(kubectl, "clusterresourcesetbinding", "beta")?;
    remote.get_json("configmap", "beta", "sync-a")?;
    Ok(())
}

fn check(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}
