//! Lifecycle hooks end to end, with the test extension (Cluster API v1.14's Runtime SDK) serving
//! them for namespace `default` only (its ExtensionConfig's namespaceSelector): BeforeClusterCreate
//! holds a Cluster's topology, its condition saying so, until the extension lets go; the intent
//! to call AfterControlPlaneInitialized is kept in the pending-hooks annotation across a
//! controller restart and the hook is called once; a settled Cluster with hooks registered is not
//! written and calls no hook; with the extension down only the Clusters it serves are held, and
//! a new extension unblocks them; BeforeClusterDelete holds deletion until it lets go.
//!
//! [`chained_upgrade_calls_the_upgrade_hooks_in_order`] needs the chained-upgrade engine (branch
//! `upgrade`): it runs once both branches are merged.

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::class_status;
use crate::controllers::{condition, provision_control_plane, report_control_plane, CONVERGED};
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, quickstart_templates, render, with};
use crate::process::{http_get, poll};
use crate::runtime_extensions::extension::{Extension, HookCall};
use crate::runtime_extensions::{expect, extension_config};

/// The ExtensionConfig of the lifecycle hooks.
pub(crate) const CONFIG: &str = "lifecycle";
/// The namespace the extension does not serve.
const PLAIN: &str = "plain";
/// How long a blocking answer asks to wait: short, so that the retry is seen.
pub(crate) const RETRY: u32 = 2;

#[test]
fn lifecycle_hooks_hold_creation_and_deletion() {
    let mut env = Env::with_webhooks("lifecycle-hooks");
    let control = env.run.join("extension-control");
    let extension = Extension::with_lifecycle_hooks(&control);
    if let Err(e) = scenario(&mut env, extension, &control) {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(env: &mut Env, extension: Extension, control: &std::path::Path) -> Result<(), String> {
    let kubectl = env.kubectl.clone();
    let kubectl = &kubectl;
    kubectl.ok(&["label", "namespace", "default", "lifecycle=on"])?;
    kubectl.ok(&["create", "namespace", PLAIN])?;
    register(kubectl, &extension)?;
    extension.answer(
        &json!({"BeforeClusterCreate": {"retryAfterSeconds": RETRY, "message": "waiting for quota"}}),
    );
    for namespace in ["default", PLAIN] {
        let mut objects = quickstart_templates();
        objects.push(quickstart_object("00-clusterclass.yaml", "ClusterClass"));
        let objects: Vec<Value> = objects
            .into_iter()
            .map(|o| with(o, "/metadata/namespace", json!(namespace)))
            .collect();
        kubectl.accepts(&render(&objects))?;
        class_status::wait_reconciled(kubectl, namespace, "quick-start")?;
    }

    // BeforeClusterCreate holds: nothing is created, the condition names the hook and the
    // extension's message; the hook is called again once the retry passes.
    kubectl.accepts(&render(&[cluster("held", "default")]))?;
    let held = poll("the creation to be held", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "held")?;
        let condition = condition(&cluster);
        (condition["reason"] == "ClusterCreating")
            .then_some(condition.clone())
            .ok_or(format!("{condition}"))
    })?;
    expect(
        held["status"] == "False"
            && held["message"]
                == "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: waiting for quota",
        format!("the ClusterCreating condition names the hook: {held}"),
    )?;
    poll("BeforeClusterCreate to be called again", CONVERGED, || {
        let count = count(&extension.calls(), "BeforeClusterCreate", "default/held");
        (count >= 2).then_some(()).ok_or(format!("{count} calls"))
    })?;
    expect(
        owned(kubectl, "default", "held", "kubeadmcontrolplane")?.is_empty(),
        "no control plane while the creation is held".to_owned(),
    )?;

    // Released: the topology is created, and the intent to call AfterControlPlaneInitialized
    // is kept on the Cluster.
    extension.answer(&json!({}));
    poll("the held topology to be created", CONVERGED, || {
        let planes = owned(kubectl, "default", "held", "kubeadmcontrolplane")?;
        let cluster = kubectl.get_json("cluster", "default", "held")?;
        let pending = &cluster["metadata"]["annotations"]["runtime.cluster.x-k8s.io/pending-hooks"];
        (planes.len() == 1 && pending == "AfterControlPlaneInitialized")
            .then_some(())
            .ok_or(format!(
                "{} control planes, pending-hooks {pending}",
                planes.len()
            ))
    })?;

    // A restart before the control plane is initialized loses nothing: the hook is called once.
    env.server().restart()?;
    provision_control_plane(kubectl, "held", "v1.31.2")?;
    let settled = poll(
        "AfterControlPlaneInitialized to be called and marked done",
        CONVERGED,
        || {
            let cluster = kubectl.get_json("cluster", "default", "held")?;
            let calls = count(&extension.calls(), "AfterControlPlaneInitialized", "default/held");
            let pending = cluster["metadata"]["annotations"].get("runtime.cluster.x-k8s.io/pending-hooks");
            (calls == 1 && pending.is_none() && condition(&cluster)["status"] == "True")
                .then_some(cluster.clone())
                .ok_or(format!(
                    "{calls} calls, pending-hooks {pending:?}, {}",
                    condition(&cluster)
                ))
        },
    )?;

    // Settled, hooks registered: a reconcile (the Cluster labelled by someone else) writes
    // nothing and calls no hook.
    let calls = extension.calls().len();
    kubectl.ok(&["label", "cluster", "held", "-n", "default", "team=blue"])?;
    let labelled = kubectl.get_json("cluster", "default", "held")?;
    let before = written(kubectl, "held")?;
    std::thread::sleep(Duration::from_secs(5));
    let after = written(kubectl, "held")?;
    expect(
        before == after && extension.calls().len() == calls,
        format!(
            "a settled Cluster is not written and calls no hook: {before:?} then {after:?}, {} new calls",
            extension.calls().len() - calls
        ),
    )?;
    expect(
        kubectl.get_json("cluster", "default", "held")?["metadata"]["resourceVersion"]
            == labelled["metadata"]["resourceVersion"],
        format!(
            "the Cluster is not written after {}",
            settled["metadata"]["resourceVersion"]
        ),
    )?;

    // The extension down: a new Cluster it serves is held, naming the handler; one in a namespace
    // it does not serve is created.
    drop(extension);
    kubectl.accepts(&render(&[
        cluster("stranded", "default"),
        cluster("neighbour", PLAIN),
    ]))?;
    let failed = poll("the stranded Cluster's failure", CONVERGED, || {
        let condition = condition(&kubectl.get_json("cluster", "default", "stranded")?);
        (condition["reason"] == "ReconcileFailed")
            .then_some(condition.clone())
            .ok_or(format!("{condition}"))
    })?;
    expect(
        failed["message"].as_str().is_some_and(|m| {
            m.contains(&format!(
                "failed to call extension handler \"before-cluster-create.{CONFIG}\""
            ))
        }),
        format!("the failure names the handler: {failed}"),
    )?;
    poll("the neighbour to be created", CONVERGED, || {
        let planes = owned(kubectl, PLAIN, "neighbour", "kubeadmcontrolplane")?;
        (planes.len() == 1)
            .then_some(())
            .ok_or("no control plane".to_owned())
    })?;
    expect(
        owned(kubectl, "default", "stranded", "kubeadmcontrolplane")?.is_empty(),
        "the stranded Cluster waits".to_owned(),
    )?;

    // A new extension (same record): the stranded Cluster is created.
    let extension = Extension::with_lifecycle_hooks(control);
    register(kubectl, &extension)?;
    poll(
        "the stranded Cluster to be created",
        Duration::from_secs(120),
        || {
            let planes = owned(kubectl, "default", "stranded", "kubeadmcontrolplane")?;
            (planes.len() == 1)
                .then_some(())
                .ok_or("no control plane".to_owned())
        },
    )?;

    // BeforeClusterDelete holds the deletion: nothing is deleted, both conditions say why.
    extension.answer(&json!({"BeforeClusterDelete": {"retryAfterSeconds": RETRY, "message": "draining"}}));
    kubectl.ok(&["delete", "cluster", "held", "-n", "default", "--wait=false"])?;
    let deleting = poll("the deletion to be held", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "held")?;
        let topology = condition(&cluster);
        let waiting = cluster["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Deleting")
            .cloned()
            .unwrap_or(Value::Null);
        (topology["reason"] == "Deleting" && waiting["reason"] == "WaitingForBeforeDeleteHook")
            .then_some((topology.clone(), waiting.clone()))
            .ok_or(format!("{topology} {waiting}"))
    })?;
    expect(
        deleting.0["message"]
            == "Cluster is deleting. Following hooks are blocking delete: BeforeClusterDelete: draining"
            && deleting.1["message"] == "Waiting for BeforeClusterDelete hook",
        format!("the conditions say what holds the deletion: {deleting:?}"),
    )?;
    poll("BeforeClusterDelete to be called again", CONVERGED, || {
        let count = count(&extension.calls(), "BeforeClusterDelete", "default/held");
        (count >= 2).then_some(()).ok_or(format!("{count} calls"))
    })?;
    expect(
        owned(kubectl, "default", "held", "kubeadmcontrolplane")?.len() == 1,
        "the control plane stays while the deletion is held".to_owned(),
    )?;

    // Released: the Cluster goes.
    extension.answer(&json!({}));
    poll(
        "the Cluster to be deleted",
        Duration::from_secs(120),
        || match kubectl.get_json("cluster", "default", "held") {
            Err(e) if e.contains("NotFound") || e.contains("not found") => Ok(()),
            Err(e) => Err(e),
            Ok(cluster) => Err(format!("still there: {}", cluster["status"]["conditions"])),
        },
    )?;

    // The hooks of `held`, in order.
    let hooks: Vec<String> = extension
        .calls()
        .into_iter()
        .filter(|c| c.cluster == "default/held")
        .map(|c| c.hook)
        .collect();
    let mut distinct = hooks.clone();
    distinct.dedup();
    expect(
        distinct
            == [
                "BeforeClusterCreate",
                "AfterControlPlaneInitialized",
                "BeforeClusterDelete",
            ],
        format!("the hooks of held in order: {hooks:?}"),
    )?;
    expect(
        extension
            .calls()
            .iter()
            .all(|c| !c.cluster.starts_with(&format!("{PLAIN}/"))),
        "no hook is called for a namespace the extension does not serve".to_owned(),
    )?;

    // Metrics per hook.
    let (_, metrics) = http_get(env.server().metrics_port(), "/metrics")?;
    expect(
        metrics.contains(
            r#"capi_topology_lifecycle_hook_calls_total{hook="BeforeClusterDelete",outcome="retry"}"#,
        ) && metrics.contains(
            r#"capi_topology_lifecycle_hook_calls_total{hook="BeforeClusterDelete",outcome="proceed"}"#,
        ),
        format!(
            "the hook calls are counted: {}",
            lines_of(&metrics, "lifecycle_hook")
        ),
    )
}

/// Registers `extension` as [`CONFIG`] for namespaces labelled `lifecycle=on`, and waits until
/// its handlers are discovered.
pub(crate) fn register(kubectl: &Kubectl, extension: &Extension) -> Result<(), String> {
    let url = format!("https://{}", extension.addr);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    let mut config = extension_config(CONFIG, &url, Some(&ca_bundle), None);
    config["spec"]["namespaceSelector"] = json!({"matchLabels": {"lifecycle": "on"}});
    kubectl.accepts(&config.to_string())?;
    poll("the lifecycle handlers to be discovered", CONVERGED, || {
        let config = kubectl.get_json("extensionconfig", "default", CONFIG)?;
        let handlers = config["status"]["handlers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let url_now = config["spec"]["clientConfig"]["url"] == url;
        (url_now
            && handlers
                .iter()
                .any(|h| h["requestHook"]["hook"] == "BeforeClusterDelete"))
        .then_some(())
        .ok_or(format!("status {}", config["status"]))
    })
}

/// The quickstart Cluster as `namespace/name`.
fn cluster(name: &str, namespace: &str) -> Value {
    let cluster = quickstart_object("10-cluster-dev.yaml", "Cluster");
    with(
        with(cluster, "/metadata/name", json!(name)),
        "/metadata/namespace",
        json!(namespace),
    )
}

/// How many times `hook` was called for `cluster` (`namespace/name`).
pub(crate) fn count(calls: &[HookCall], hook: &str, cluster: &str) -> usize {
    calls
        .iter()
        .filter(|c| c.hook == hook && c.cluster == cluster)
        .count()
}

/// Every object of `resource` in `namespace` owned by Cluster `cluster`'s topology.
fn owned(kubectl: &Kubectl, namespace: &str, cluster: &str, resource: &str) -> Result<Vec<Value>, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster},topology.cluster.x-k8s.io/owned");
    let out = kubectl.ok(&["get", resource, "-n", namespace, "-l", &selector, "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"].as_array().cloned().unwrap_or_default())
}

/// The resourceVersion of Cluster `default/name` and of every object its topology owns.
fn written(kubectl: &Kubectl, name: &str) -> Result<Vec<(String, Value)>, String> {
    let mut all = vec![(
        "cluster".to_owned(),
        kubectl.get_json("cluster", "default", name)?["metadata"]["resourceVersion"].clone(),
    )];
    for resource in [
        "dockercluster",
        "kubeadmcontrolplane",
        "machinedeployment",
        "machinehealthcheck",
    ] {
        for object in owned(kubectl, "default", name, resource)? {
            all.push((
                format!(
                    "{resource}/{}",
                    object["metadata"]["name"].as_str().unwrap_or_default()
                ),
                object["metadata"]["resourceVersion"].clone(),
            ));
        }
    }
    Ok(all)
}

fn lines_of(text: &str, fragment: &str) -> String {
    text.lines()
        .filter(|l| l.contains(fragment))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A Cluster goes from v1.33 to v1.35 through two control plane steps (the plan from the
/// extension's GenerateUpgradePlan), the workers moving once: the upgrade hooks are called in
/// order, a blocking BeforeClusterUpgrade holds the change until it lets go, and a controller
/// restart between AfterControlPlaneUpgrade and AfterClusterUpgrade does not lose the call. The
/// test plays the control plane and MachineDeployment providers.
#[test]
fn chained_upgrade_calls_the_upgrade_hooks_in_order() {
    let mut env = Env::with_webhooks("lifecycle-upgrade");
    let control = env.run.join("extension-control");
    let extension = Extension::with_lifecycle_hooks(&control);
    if let Err(e) = upgrade_scenario(&mut env, &extension) {
        panic!("{e}\n{}", env.logs());
    }
}

fn upgrade_scenario(env: &mut Env, extension: &Extension) -> Result<(), String> {
    let kubectl = env.kubectl.clone();
    let kubectl = &kubectl;
    kubectl.ok(&["label", "namespace", "default", "lifecycle=on"])?;
    register(kubectl, extension)?;
    extension.answer(&json!({
        "BeforeClusterUpgrade": {"retryAfterSeconds": RETRY, "message": "pausing GitOps"},
        "GenerateUpgradePlan": {"controlPlaneUpgrades": [{"version": "v1.34.2"}, {"version": "v1.35.0"}],
                                "workersUpgrades": [{"version": "v1.35.0"}]},
    }));
    kubectl.accepts(&render(&quickstart_templates()))?;
    let class = with(
        quickstart_object("00-clusterclass.yaml", "ClusterClass"),
        "/spec/upgrade/external/generateUpgradePlanExtension",
        json!(format!("generate-upgrade-plan.{CONFIG}")),
    );
    kubectl.accepts(&render(&[class]))?;
    class_status::wait_reconciled(kubectl, "default", "quick-start")?;
    let created = with(
        cluster("dev", "default"),
        "/spec/topology/version",
        json!("v1.33.4"),
    );
    kubectl.accepts(&render(&[created]))?;
    provision_control_plane(kubectl, "dev", "v1.33.4")?;
    let cp = poll("the topology at v1.33", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        let mds = owned(kubectl, "default", "dev", "machinedeployment")?;
        (condition(&cluster)["status"] == "True" && mds.len() == 1)
            .then(|| {
                cluster["spec"]["controlPlaneRef"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .ok_or(format!("{}", condition(&cluster)))
    })?;
    report_machine_deployments(kubectl, "dev")?;

    // BeforeClusterUpgrade holds the new version away from the control plane.
    let upgrade = json!({"spec": {"topology": {"version": "v1.35.0"}}});
    kubectl.merge_patch(("cluster", "default", "dev"), &upgrade, false)?;
    let held = poll("the upgrade to be held", CONVERGED, || {
        let condition = condition(&kubectl.get_json("cluster", "default", "dev")?);
        (condition["reason"] == "ClusterUpgrading"
            && condition["message"]
                .as_str()
                .is_some_and(|m| m.contains("BeforeClusterUpgrade: pausing GitOps")))
        .then_some(())
        .ok_or(format!("{condition}"))
    });
    held?;
    expect(
        kubectl.get_json("kubeadmcontrolplane", "default", &cp)?["spec"]["version"] == "v1.33.4",
        "the control plane keeps its version while BeforeClusterUpgrade holds".to_owned(),
    )?;
    extension.answer(&json!({
        "GenerateUpgradePlan": {"controlPlaneUpgrades": [{"version": "v1.34.2"}, {"version": "v1.35.0"}],
                                "workersUpgrades": [{"version": "v1.35.0"}]},
    }));

    // Two control plane steps, the workers waiting for the last.
    for step in ["v1.34.2", "v1.35.0"] {
        poll(
            &format!("the control plane to be asked for {step}"),
            CONVERGED,
            || {
                let version =
                    kubectl.get_json("kubeadmcontrolplane", "default", &cp)?["spec"]["version"].clone();
                let workers = workers_version(kubectl, "dev")?;
                (version == step && workers == ["v1.33.4"])
                    .then_some(())
                    .ok_or(format!("control plane {version}, workers {workers:?}"))
            },
        )?;
        report_control_plane(kubectl, &cp, step);
    }
    poll("AfterControlPlaneUpgrade at v1.35.0", CONVERGED, || {
        let calls = extension.calls();
        calls
            .iter()
            .any(|c| c.hook == "AfterControlPlaneUpgrade" && c.version == "v1.35.0")
            .then_some(())
            .ok_or(format!("{calls:?}"))
    })?;
    // A restart between AfterControlPlaneUpgrade and AfterClusterUpgrade.
    env.server().restart()?;
    poll("the workers to move once, to v1.35.0", CONVERGED, || {
        let workers = workers_version(kubectl, "dev")?;
        (workers == ["v1.35.0"])
            .then_some(())
            .ok_or(format!("workers {workers:?}"))
    })?;
    report_machine_deployments(kubectl, "dev")?;
    poll("AfterClusterUpgrade, after the restart", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        let calls = extension.calls();
        let pending = cluster["metadata"]["annotations"].get("runtime.cluster.x-k8s.io/pending-hooks");
        (count(&calls, "AfterClusterUpgrade", "default/dev") == 1 && pending.is_none())
            .then_some(())
            .ok_or(format!("pending-hooks {pending:?}, calls {calls:?}"))
    })?;

    // In order, each step's hooks once (retries of a holding hook aside).
    let order = hook_steps(&extension.calls(), "default/dev");
    let expected = chained_upgrade_hooks("v1.34.2", "v1.35.0");
    expect(order == expected, format!("the hooks in order: {order:?}"))
}

/// The lifecycle hooks called for `cluster` (`namespace/name`), each with the version it is
/// about (its `kubernetesVersion`, else its `toKubernetesVersion`), in the order called, a
/// holding hook's retries counted once; GenerateUpgradePlan left out.
pub(crate) fn hook_steps(calls: &[HookCall], cluster: &str) -> Vec<(String, String)> {
    let mut order: Vec<(String, String)> = calls
        .iter()
        .filter(|c| c.cluster == cluster && c.hook != "GenerateUpgradePlan")
        .map(|c| {
            let version = if c.version.is_empty() { &c.to } else { &c.version };
            (c.hook.clone(), version.clone())
        })
        .collect();
    order.dedup();
    order
}

/// The hooks of a Cluster created with the extension registered, then upgraded to `to` with the
/// control plane through `middle` first and the workers moving once, as [`hook_steps`] lists them.
pub(crate) fn chained_upgrade_hooks(middle: &str, to: &str) -> Vec<(String, String)> {
    [
        ("BeforeClusterCreate", ""),
        ("AfterControlPlaneInitialized", ""),
        ("BeforeClusterUpgrade", to),
        ("BeforeControlPlaneUpgrade", middle),
        ("AfterControlPlaneUpgrade", middle),
        ("BeforeControlPlaneUpgrade", to),
        ("AfterControlPlaneUpgrade", to),
        ("BeforeWorkersUpgrade", to),
        ("AfterWorkersUpgrade", to),
        ("AfterClusterUpgrade", to),
    ]
    .iter()
    .map(|(hook, version)| ((*hook).to_owned(), (*version).to_owned()))
    .collect()
}

/// The versions of Cluster `cluster`'s MachineDeployments.
fn workers_version(kubectl: &Kubectl, cluster: &str) -> Result<Vec<String>, String> {
    Ok(owned(kubectl, "default", cluster, "machinedeployment")?
        .iter()
        .map(|md| {
            md["spec"]["template"]["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect())
}

/// Plays the MachineDeployment provider: every MachineDeployment of `cluster` reports its
/// replicas up to date with its spec.
fn report_machine_deployments(kubectl: &Kubectl, cluster: &str) -> Result<(), String> {
    for md in owned(kubectl, "default", cluster, "machinedeployment")? {
        let replicas = md["spec"]["replicas"].as_i64().unwrap_or(1);
        let status = json!({"status": {"replicas": replicas, "upToDateReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas, "observedGeneration": md["metadata"]["generation"]}});
        let name = md["metadata"]["name"].as_str().unwrap_or_default();
        kubectl.merge_patch(("machinedeployment", "default", name), &status, true)?;
    }
    Ok(())
}
