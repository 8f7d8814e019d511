//! A ClusterClass change rolled out in waves under a ClusterClassRollout (#35), beside Cluster
//! API v1.14.0's managers with the in-memory backend: six Clusters of one class, a canary first.
//! A good change (new worker machines) goes to the canary, then two Clusters at a time, each wave
//! gated on health; the rollout paused holds and resumed goes on; our server restarted in the
//! middle of a wave; a Cluster created during the rollout starts at the newest revision; the
//! number of Clusters rolling, read from their MachineDeployments every second, never exceeds
//! the policy's. A bad change (worker machines that never boot) halts after the canary and is
//! rolled back; no other Cluster is touched.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::beside_cluster_api::{condition, in_memory_manifests, serve_beside, PROVISIONED};
use crate::cluster_api::ClusterApi;
use crate::control_plane::ControlPlane;
use crate::env::repo_path;
use crate::kubectl::Kubectl;
use crate::manifests::render;
use crate::process::{poll, RunDir};
use crate::webhook::WebhookServer;

const CLUSTERS: usize = 6;
const WORKER_TEMPLATE: &str = "in-memory-default-worker-machinetemplate";
const WORKER_REF: &str = "/spec/workers/machineDeployments/0/infrastructure/templateRef/name";
const ROLLED_OUT: Duration = Duration::from_secs(600);

fn policy() -> Value {
    json!({
        "apiVersion": "rollout.capi-topology.io/v1alpha1", "kind": "ClusterClassRollout",
        "metadata": {"name": "in-memory", "namespace": "default"},
        "spec": {
            "classRef": {"name": "in-memory"},
            "waves": [
                {"name": "canary", "selector": {"matchLabels": {"rollout": "canary"}}, "maxRolling": 1},
                {"name": "fleet", "selector": {}, "maxRolling": 2},
            ],
            "healthGate": {"soak": "5s", "deadline": "3m"},
        },
    })
}

/// The Cluster `name` of the in-memory class, one control plane Machine and one worker.
fn cluster(template: &str, name: &str, canary: bool) -> Value {
    let mut object: Value = serde_yaml_ng::Deserializer::from_str(template)
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML"))
        .find(|o: &Value| o["kind"] == "Cluster")
        .expect("a Cluster");
    object["metadata"]["name"] = json!(name);
    if canary {
        object["metadata"]["labels"]["rollout"] = json!("canary");
    }
    object["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(1);
    object
}

fn rollout(kubectl: &Kubectl) -> Result<Value, String> {
    kubectl.get_json("clusterclassrollout", "default", "in-memory")
}

fn status_text(status: &Value, field: &str) -> String {
    status[field].as_str().unwrap_or_default().to_owned()
}

/// Clusters whose MachineDeployment is rolling now: a spec its controller has not caught up
/// with, a replica not up to date or not available, or an old one still there.
fn rolling_now(kubectl: &Kubectl) -> Result<Vec<String>, String> {
    let text = kubectl.ok(&["get", "machinedeployments", "-n", "default", "-o", "json"])?;
    let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let number = |md: &Value, pointer: &str| md.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    let mut rolling: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|md| {
            let wanted = number(md, "/spec/replicas");
            number(md, "/status/observedGeneration") < number(md, "/metadata/generation")
                || number(md, "/status/upToDateReplicas") < wanted
                || number(md, "/status/availableReplicas") < wanted
                || number(md, "/status/replicas") > wanted
        })
        .filter_map(|md| md["spec"]["clusterName"].as_str().map(str::to_owned))
        .collect();
    rolling.sort();
    rolling.dedup();
    Ok(rolling)
}

/// The generation of each Cluster's MachineDeployment.
fn md_generations(kubectl: &Kubectl) -> Result<BTreeMap<String, i64>, String> {
    let text = kubectl.ok(&["get", "machinedeployments", "-n", "default", "-o", "json"])?;
    let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|md| {
            let cluster = md["spec"]["clusterName"].as_str().unwrap_or_default().to_owned();
            (cluster, md["metadata"]["generation"].as_i64().unwrap_or(0))
        })
        .collect())
}

/// A copy of the class's worker template named `name`, whose machines boot after `startup`.
fn worker_template(kubectl: &Kubectl, name: &str, startup: &str) -> Result<(), String> {
    let mut object = kubectl.get_json("devmachinetemplate", "default", WORKER_TEMPLATE)?;
    object["metadata"] = json!({"name": name, "namespace": "default"});
    object["spec"]["template"]["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupDuration"] =
        json!(startup);
    kubectl.accepts(&render(&[object])).map(drop)
}

fn set_paused(kubectl: &Kubectl, paused: bool) -> Result<(), String> {
    let patch = json!({"spec": {"paused": paused}}).to_string();
    kubectl
        .ok(&[
            "patch",
            "clusterclassrollout",
            "in-memory",
            "-n",
            "default",
            "--type=merge",
            "-p",
            &patch,
        ])
        .map(drop)
}

fn point_class_at(kubectl: &Kubectl, template: &str) -> Result<(), String> {
    let patch = json!([{"op": "replace", "path": WORKER_REF, "value": template}]).to_string();
    kubectl
        .ok(&[
            "patch",
            "clusterclass",
            "in-memory",
            "-n",
            "default",
            "--type=json",
            "-p",
            &patch,
        ])
        .map(drop)
}

/// Watches the Clusters rolling every second until stopped (those of `counted` only: a Cluster
/// created meanwhile provisions, it does not roll); returns the most seen at once.
struct Monitor {
    most: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl Monitor {
    fn start(kubectl: Kubectl, counted: Vec<String>) -> Monitor {
        let (most, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (most_seen, stopped) = (most.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                if let Ok(mut rolling) = rolling_now(&kubectl) {
                    rolling.retain(|cluster| counted.contains(cluster));
                    most_seen.fetch_max(rolling.len(), Ordering::Relaxed);
                    if !rolling.is_empty() {
                        seen.push(rolling.join(","));
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            seen
        });
        Monitor {
            most,
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> (usize, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        (self.most.load(Ordering::Relaxed), seen)
    }
}

#[test]
fn a_class_change_rolls_out_in_waves_and_a_bad_one_is_rolled_back() {
    let run = RunDir::create("class-rollout-waves");
    let mut plane = ControlPlane::start(&run);
    plane.start_garbage_collector(&run);
    let kubectl = plane.kubectl();
    let capi = ClusterApi::start(&run, &kubectl, plane.kubeconfig()).unwrap_or_else(|e| panic!("{e}"));
    for crd in ["clusterclassrollouts", "clusterclassrevisions"] {
        let file = repo_path(&format!("manifests/crds/rollout.capi-topology.io_{crd}.yaml"));
        kubectl
            .ok(&["apply", "-f", &file.display().to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let controllers =
        "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks,class-rollout";
    let mut server = serve_beside(&run, &plane, controllers);
    let logs =
        |server: &WebhookServer| format!("{}\n--- capi-topology ---\n{}", capi.logs(), server.log_tail());
    let fail = |e: String, server: &WebhookServer| -> ! { panic!("{e}\n{}", logs(server)) };

    let (class, template) = in_memory_manifests();
    let clusters: Vec<Value> = (0..CLUSTERS)
        .map(|i| cluster(&template, &format!("c{i}"), i == 0))
        .collect();
    kubectl.accepts(&class).unwrap_or_else(|e| fail(e, &server));
    kubectl
        .accepts(&render(&[policy()]))
        .unwrap_or_else(|e| fail(e, &server));
    kubectl
        .accepts(&render(&clusters))
        .unwrap_or_else(|e| fail(e, &server));
    for i in 0..CLUSTERS {
        poll("every Cluster Available", PROVISIONED, || {
            server.ensure_running()?;
            match condition(&kubectl, &format!("cluster/c{i}"), "Available").as_str() {
                "True" => Ok(()),
                other => Err(format!("c{i}: Available={other}")),
            }
        })
        .unwrap_or_else(|e| fail(e, &server));
    }
    let settled = poll("the rollout to settle", Duration::from_secs(60), || {
        let status = rollout(&kubectl)?["status"].clone();
        (status["phase"] == "Complete" && status["totalClusters"] == CLUSTERS)
            .then_some(status.clone())
            .ok_or(status.to_string())
    })
    .unwrap_or_else(|e| fail(e, &server));
    let first = status_text(&settled, "targetRevision");

    // A good change: new worker machines. The canary alone first.
    worker_template(&kubectl, "worker-good", "3s").unwrap_or_else(|e| fail(e, &server));
    let monitor = Monitor::start(kubectl.clone(), (0..CLUSTERS).map(|i| format!("c{i}")).collect());
    point_class_at(&kubectl, "worker-good").unwrap_or_else(|e| fail(e, &server));
    let started = poll("the rollout to start", Duration::from_secs(60), || {
        let status = rollout(&kubectl)?["status"].clone();
        (status["targetRevision"] != first.as_str() && status["wave"]["name"] == "canary")
            .then_some(status.clone())
            .ok_or(status.to_string())
    })
    .unwrap_or_else(|e| fail(e, &server));
    let good = status_text(&started, "targetRevision");
    let at_good = |status: &Value| {
        status["clusters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["revision"] == good.as_str())
            .count()
    };
    assert_eq!(at_good(&started), 1, "the canary alone: {started}");

    // The fleet wave: paused once two have moved, nothing more moves; resumed, it goes on.
    let moving = poll("the fleet wave to start", ROLLED_OUT, || {
        let status = rollout(&kubectl)?["status"].clone();
        (status["wave"]["name"] == "fleet" && at_good(&status) >= 3)
            .then_some(status.clone())
            .ok_or(status.to_string())
    })
    .unwrap_or_else(|e| fail(e, &server));
    set_paused(&kubectl, true).unwrap_or_else(|e| fail(e, &server));
    let held = at_good(&moving);
    std::thread::sleep(Duration::from_secs(25));
    let paused = rollout(&kubectl).unwrap_or_else(|e| fail(e, &server))["status"].clone();
    assert_eq!(paused["phase"], "Paused", "{paused}");
    assert_eq!(at_good(&paused), held, "no Cluster moved while paused: {paused}");
    // A Cluster created during the rollout starts at the newest revision.
    kubectl
        .accepts(&render(&[cluster(&template, "late", false)]))
        .unwrap_or_else(|e| fail(e, &server));
    set_paused(&kubectl, false).unwrap_or_else(|e| fail(e, &server));
    // Our server restarted in the middle of the wave.
    server.restart().unwrap_or_else(|e| fail(e, &server));
    let done = poll("the good change rolled out", ROLLED_OUT, || {
        server.ensure_running()?;
        let status = rollout(&kubectl)?["status"].clone();
        (status["phase"] == "Complete"
            && status["targetRevision"] == good.as_str()
            && status["totalClusters"] == CLUSTERS + 1)
            .then_some(status.clone())
            .ok_or(status.to_string())
    })
    .unwrap_or_else(|e| fail(e, &server));
    let (most, seen) = monitor.finish();
    assert_eq!(at_good(&done), CLUSTERS + 1, "{done}");
    assert!(most <= 2, "at most two Clusters rolling at once; seen: {seen:?}");
    let late = done["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "late")
        .cloned()
        .unwrap();
    assert!(
        late.get("rolledAt").is_none(),
        "the late Cluster started at {good}, never moved: {late}"
    );
    eprintln!("class-rollout: good change, most rolling at once {most}; rolling seen: {seen:?}");

    // A bad change: worker machines that never boot. The canary halts, and is rolled back.
    let before = md_generations(&kubectl).unwrap_or_else(|e| fail(e, &server));
    worker_template(&kubectl, "worker-bad", "10h").unwrap_or_else(|e| fail(e, &server));
    point_class_at(&kubectl, "worker-bad").unwrap_or_else(|e| fail(e, &server));
    let rolled_back = poll("the bad change halted and rolled back", ROLLED_OUT, || {
        server.ensure_running()?;
        let status = rollout(&kubectl)?["status"].clone();
        (status["phase"] == "RolledBack")
            .then_some(status.clone())
            .ok_or(status.to_string())
    })
    .unwrap_or_else(|e| fail(e, &server));
    assert_eq!(rolled_back["targetRevision"], good.as_str(), "{rolled_back}");
    assert_eq!(at_good(&rolled_back), CLUSTERS + 1, "{rolled_back}");
    let after = md_generations(&kubectl).unwrap_or_else(|e| fail(e, &server));
    for (name, generation) in &before {
        if name != "c0" {
            assert_eq!(
                after.get(name),
                Some(generation),
                "{name} untouched by the bad change"
            );
        }
    }
    poll("the canary healthy again", PROVISIONED, || {
        let rolling = rolling_now(&kubectl)?;
        rolling
            .is_empty()
            .then_some(())
            .ok_or(format!("rolling: {rolling:?}"))
    })
    .unwrap_or_else(|e| fail(e, &server));
    let events = kubectl
        .ok(&[
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "involvedObject.kind=ClusterClassRollout",
            "-o",
            "json",
        ])
        .unwrap_or_default();
    for reason in [
        "RolloutStarted",
        "ClusterRolling",
        "WaveComplete",
        "RolloutComplete",
        "RolloutHalted",
        "RolledBack",
    ] {
        assert!(events.contains(reason), "event {reason} missing");
    }
    let table = kubectl
        .ok(&[
            "get",
            "clusterclassrollouts,clusterclassrevisions",
            "-n",
            "default",
        ])
        .unwrap_or_default();
    eprintln!("class-rollout:\n{table}");
    drop(server);
    drop(capi);
}
