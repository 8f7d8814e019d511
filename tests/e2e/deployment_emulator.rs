//! Plays the kubelet and the Deployment controller for an e2e run (there is no node here): each
//! Deployment whose container image names a local program runs as one process, with the
//! container's args and env. When a Deployment's spec changes (a new generation), the old process
//! is stopped first (never two at once), one with the new args is started, and the status is
//! written as the Deployment controller writes it: the old replica counted until it is gone, the
//! new one available once its readiness probe passes. Operators' tools that edit a Deployment
//! and wait for its rollout (`kubectl rollout status`, the take-over command) see what they would
//! on a real cluster.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{json, Value};

use crate::kubectl::Kubectl;
use crate::process::{http_get, poll, RunDir, Supervised};

/// How often the Deployments are read.
const PERIOD: Duration = Duration::from_secs(1);
/// How long a new process may take to pass its readiness probe.
const READY: Duration = Duration::from_secs(120);

/// A Deployment of `replicas` (one or none) running `image` as container `container` with `args` and `env`,
/// its readiness probe `GET http://127.0.0.1:<ready_port>/readyz`.
pub struct Spec<'a> {
    /// Namespace and name.
    pub namespace: &'a str,
    pub name: &'a str,
    /// Labels of the Deployment (its pods get `app: <name>` too).
    pub labels: Value,
    /// The container's name and image (an image the emulator knows).
    pub container: &'a str,
    pub image: &'a str,
    /// The container's args and environment.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The port of the readiness probe.
    pub ready_port: u16,
    /// One or none.
    pub replicas: i64,
}

impl Spec<'_> {
    /// The Deployment object.
    pub fn object(&self) -> Value {
        let env: Vec<Value> = self
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .chain(["POD_NAMESPACE", "POD_NAME"].iter().zip(["namespace", "name"]).map(
                |(name, field)| json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.{field}")}}}),
            ))
            .collect();
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": self.labels},
            "spec": {
                "replicas": self.replicas,
                "selector": {"matchLabels": {"app": self.name}},
                "strategy": {"type": "Recreate"},
                "template": {
                    "metadata": {"labels": {"app": self.name}},
                    "spec": {"containers": [{
                        "name": self.container,
                        "image": self.image,
                        "args": self.args,
                        "env": env,
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": self.ready_port}},
                    }]},
                },
            },
        })
    }
}

/// One rollout done: a Deployment's generation running (or scaled to none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// `namespace/name` of the Deployment.
    pub deployment: String,
    /// The generation rolled out.
    pub generation: i64,
    /// The first container's args (empty when scaled to zero).
    pub args: Vec<String>,
}

#[derive(Default)]
struct Shared {
    rollouts: Vec<Rollout>,
    failure: Option<String>,
    logs: BTreeMap<String, String>,
}

/// The emulator, running until dropped (then every process it started is stopped).
pub struct Emulator {
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
}

/// The process of one Deployment, and the generation it runs.
struct Pod {
    generation: i64,
    process: Option<Supervised>,
}

impl Emulator {
    /// Starts playing the kubelet for the Deployments whose image is a key of `programs` (the
    /// local program each image stands for), on the API server of `kubectl`.
    pub fn start(run: &RunDir, kubectl: &Kubectl, programs: BTreeMap<String, PathBuf>) -> Emulator {
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let world = World {
            run: run.path().to_path_buf(),
            kubectl: kubectl.clone(),
            programs,
            shared: shared.clone(),
        };
        let stopping = stop.clone();
        let thread = thread::spawn(move || {
            let mut pods = BTreeMap::new();
            while !stopping.load(Ordering::Relaxed) {
                if let Err(e) = world.pass(&mut pods) {
                    world.fail(e);
                }
                thread::sleep(PERIOD);
            }
        });
        Emulator {
            stop,
            shared,
            thread: Some(thread),
        }
    }

    /// The rollouts done so far, in order.
    pub fn rollouts(&self) -> Vec<Rollout> {
        self.shared.lock().expect("the emulator's state").rollouts.clone()
    }

    /// Fails with what went wrong, if anything did (a process that exited, a status refused).
    pub fn check(&self) -> Result<(), String> {
        match &self.shared.lock().expect("the emulator's state").failure {
            Some(failure) => Err(failure.clone()),
            None => Ok(()),
        }
    }

    /// The ends of the logs of the processes running now, for a failure message.
    pub fn logs(&self) -> String {
        let shared = self.shared.lock().expect("the emulator's state");
        shared
            .logs
            .iter()
            .map(|(name, tail)| format!("--- {name} ---\n{tail}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the emulator's thread works with.
struct World {
    run: PathBuf,
    kubectl: Kubectl,
    programs: BTreeMap<String, PathBuf>,
    shared: Arc<Mutex<Shared>>,
}

impl World {
    fn fail(&self, failure: String) {
        let mut shared = self.shared.lock().expect("the emulator's state");
        shared.failure.get_or_insert(failure);
    }

    /// One look at every Deployment: rolls out those whose generation changed, and checks that
    /// the others' processes still run.
    fn pass(&self, pods: &mut BTreeMap<String, Pod>) -> Result<(), String> {
        let text = self.kubectl.ok(&["get", "deployments", "-A", "-o", "json"])?;
        let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        for deployment in list["items"].as_array().into_iter().flatten() {
            let container = &deployment["spec"]["template"]["spec"]["containers"][0];
            let Some(program) = container["image"].as_str().and_then(|i| self.programs.get(i)) else {
                continue;
            };
            let key = format!(
                "{}/{}",
                deployment["metadata"]["namespace"].as_str().unwrap_or_default(),
                deployment["metadata"]["name"].as_str().unwrap_or_default()
            );
            let generation = deployment["metadata"]["generation"].as_i64().unwrap_or_default();
            let pod = pods.entry(key.clone()).or_insert(Pod {
                generation: 0,
                process: None,
            });
            if pod.generation == generation {
                if let Some(process) = pod.process.as_mut() {
                    process.ensure_running()?;
                    let tail = process.log_tail(15);
                    self.shared.lock().expect("state").logs.insert(key, tail);
                }
                continue;
            }
            self.roll_out(deployment, program, pod)?;
            let args = if pod.process.is_some() {
                args_of(container)
            } else {
                Vec::new()
            };
            self.shared.lock().expect("state").rollouts.push(Rollout {
                deployment: key,
                generation,
                args,
            });
        }
        Ok(())
    }

    /// Replaces `pod`'s process with one of `deployment`'s new generation (none when scaled to
    /// zero), writing the status at each step as the Deployment controller would.
    fn roll_out(&self, deployment: &Value, program: &Path, pod: &mut Pod) -> Result<(), String> {
        let generation = deployment["metadata"]["generation"].as_i64().unwrap_or_default();
        let wanted = deployment["spec"]["replicas"].as_i64().unwrap_or(1).min(1);
        if let Some(mut old) = pod.process.take() {
            self.write_status(deployment, generation, [1, 0, 1])?;
            old.stop();
        }
        self.write_status(deployment, generation, [0, 0, 0])?;
        pod.generation = generation;
        if wanted == 0 {
            return Ok(());
        }
        let mut process = self.start_pod(deployment, program, generation);
        let probe = &deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"];
        if let Some(port) = probe["port"].as_u64() {
            let path = probe["path"].as_str().unwrap_or("/").to_owned();
            poll("a new pod's readiness probe", READY, || {
                process.ensure_running()?;
                match http_get(port as u16, &path)? {
                    (200, _) => Ok(()),
                    (code, body) => Err(format!("{code}: {body}")),
                }
            })?;
        }
        pod.process = Some(process);
        self.write_status(deployment, generation, [1, 1, 1])
    }

    /// Starts the pod of `deployment`'s `generation`: `program` with its container's args and
    /// env (the pod's namespace and name for fieldRefs), logging to `<name>-<generation>.log`.
    fn start_pod(&self, deployment: &Value, program: &Path, generation: i64) -> Supervised {
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        let namespace = deployment["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = format!(
            "{}-{generation}",
            deployment["metadata"]["name"].as_str().unwrap_or_default()
        );
        let mut command = Command::new(program);
        command.args(args_of(container));
        for variable in container["env"].as_array().into_iter().flatten() {
            let value = match variable["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
                Some("metadata.namespace") => namespace.to_owned(),
                Some("metadata.name") => name.clone(),
                _ => variable["value"].as_str().unwrap_or_default().to_owned(),
            };
            command.env(variable["name"].as_str().unwrap_or_default(), value);
        }
        Supervised::spawn(&RunDir::adopt(&self.run), &name, command)
    }

    /// Writes `deployment`'s status: `[replicas, updatedReplicas, availableReplicas]` (ready
    /// counted as available) at `generation`.
    fn write_status(
        &self,
        deployment: &Value,
        generation: i64,
        [replicas, updated, available]: [i64; 3],
    ) -> Result<(), String> {
        let available_condition = if available > 0 { "True" } else { "False" };
        let status = json!({"status": {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": available,
            "availableReplicas": available,
            "unavailableReplicas": replicas - available,
            "conditions": [{"type": "Available", "status": available_condition,
                "reason": if available > 0 { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" }}],
        }});
        let name = deployment["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = deployment["metadata"]["namespace"].as_str().unwrap_or_default();
        self.kubectl
            .merge_patch(("deployment", namespace, name), &status, true)?;
        Ok(())
    }
}

/// A container's args.
fn args_of(container: &Value) -> Vec<String> {
    container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect()
}

/// Polls the Deployment `namespace/name` until its status says generation `generation` or later
/// is rolled out, as `kubectl rollout status` decides it.
pub fn rolled_out(
    kubectl: &Kubectl,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> Result<Value, String> {
    poll(
        &format!("deployment {namespace}/{name} rolled out"),
        timeout,
        || {
            let deployment = kubectl.get_json("deployment", namespace, name)?;
            let (spec, status) = (&deployment["spec"], &deployment["status"]);
            let wanted = spec["replicas"].as_i64().unwrap_or(1);
            let done = status["observedGeneration"] == deployment["metadata"]["generation"]
                && status["updatedReplicas"].as_i64().unwrap_or(0) == wanted
                && status["replicas"].as_i64().unwrap_or(0) == wanted
                && status["availableReplicas"].as_i64().unwrap_or(0) == wanted;
            if done {
                Ok(deployment)
            } else {
                Err(format!("status {status}"))
            }
        },
    )
}
