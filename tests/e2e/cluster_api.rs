//! Cluster API v1.14.0's own managers beside us, as `clusterctl init` installs them but run as
//! local processes: the core manager (its topology controller off), the kubeadm control plane
//! and bootstrap managers, and the Docker provider's manager whose in-memory backend simulates
//! Machines and workload API servers without a Docker engine. Their components (CRDs with
//! conversion webhooks, RBAC, webhook configurations) are rendered from the modules' own
//! `config/default` with kustomize, and pointed at the local processes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::cache::cluster_api;
use crate::kubectl::Kubectl;
use crate::process::{free_port, http_get, poll, RunDir, Supervised};
use crate::webhook::{generate_certs, read_pem};

const READY: Duration = Duration::from_secs(120);

/// One of Cluster API's managers.
struct Provider {
    /// The binary in the cache's bin directory.
    binary: &'static str,
    /// The module (in the Go module cache) and its folder whose `config/default` is rendered.
    module: &'static str,
    config: &'static str,
    /// The namespace its components install into (its `POD_NAMESPACE`).
    namespace: &'static str,
    /// Its feature gates, as the e2e runs them.
    gates: &'static str,
}

const PROVIDERS: [Provider; 4] = [
    // Its gates are given to `install`: [`CORE_GATES`] or [`CORE_GATES_WITH_TOPOLOGY`].
    Provider {
        binary: "capi-manager",
        module: "sigs.k8s.io/cluster-api",
        config: "core/config/default",
        namespace: "capi-system",
        gates: "",
    },
    // ClusterTopology on here only lets its template webhook accept KubeadmControlPlaneTemplates
    // and turns on its topology-aware preflight checks.
    Provider {
        binary: "kubeadm-control-plane-manager",
        module: "sigs.k8s.io/cluster-api",
        config: "controlplane/kubeadm/config/default",
        namespace: "capi-kubeadm-control-plane-system",
        gates: "ClusterTopology=true",
    },
    Provider {
        binary: "kubeadm-bootstrap-manager",
        module: "sigs.k8s.io/cluster-api",
        config: "bootstrap/kubeadm/config/default",
        namespace: "capi-kubeadm-bootstrap-system",
        gates: "",
    },
    // Same reason: its DevClusterTemplate webhook refuses templates without the gate.
    Provider {
        binary: "capd-manager",
        module: "sigs.k8s.io/cluster-api/test",
        config: "infrastructure/docker/config/default",
        namespace: "capd-system",
        gates: "ClusterTopology=true",
    },
];

/// Cluster API's managers, running; stopped when dropped.
pub struct ClusterApi {
    managers: Vec<Supervised>,
    /// Held while the managers run: the Docker provider's in-memory backend listens on fixed
    /// ports, so the tests of this process start one Cluster API stack at a time.
    _one_stack: MutexGuard<'static, ()>,
}

/// See [`ClusterApi`]'s `_one_stack`.
static ONE_STACK: Mutex<()> = Mutex::new(());

/// The feature gates of the core manager beside capi-topology: its topology controller off, as
/// v1.14 ships.
const CORE_GATES: &str = "MachinePool=true,ClusterTopology=false,RuntimeSDK=false";
/// The feature gates of a core manager that is the topology controller itself, as `clusterctl`
/// sets them with `CLUSTER_TOPOLOGY=true` and `EXP_RUNTIME_SDK=true`.
pub const CORE_GATES_WITH_TOPOLOGY: &str = "MachinePool=true,ClusterTopology=true,RuntimeSDK=true";

/// How one manager is started: its program, args and environment, and its health port.
pub struct Launch {
    /// The binary's name (tests/e2e/build-cluster-api.sh).
    pub binary: &'static str,
    /// Its path.
    pub program: PathBuf,
    /// Its arguments and environment.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The port of its `/readyz`.
    pub health: u16,
}

impl ClusterApi {
    /// Installs the four providers' components on the API server of `kubectl` and starts their
    /// managers, each with its webhook server on a port of its own; waits until all are ready.
    pub fn start(run: &RunDir, kubectl: &Kubectl, kubeconfig: &Path) -> Result<ClusterApi, String> {
        let one_stack = one_stack();
        let launches = install(run, kubectl, kubeconfig, CORE_GATES)?;
        ClusterApi::run(run, launches, one_stack)
    }

    /// [`ClusterApi::start`] with the core manager's `gates`, except that the core manager is
    /// not started: how to start it is returned (to run it from a Deployment).
    pub fn start_but_core(
        run: &RunDir,
        kubectl: &Kubectl,
        kubeconfig: &Path,
        gates: &str,
    ) -> Result<(ClusterApi, Launch), String> {
        let one_stack = one_stack();
        let mut launches = install(run, kubectl, kubeconfig, gates)?;
        let core = launches.remove(0);
        Ok((ClusterApi::run(run, launches, one_stack)?, core))
    }

    /// Starts `launches` and waits until each is ready.
    fn run(
        run: &RunDir,
        launches: Vec<Launch>,
        one_stack: MutexGuard<'static, ()>,
    ) -> Result<ClusterApi, String> {
        let mut managers = Vec::new();
        for launch in &launches {
            let mut command = Command::new(&launch.program);
            command.args(&launch.args).envs(launch.env.iter().cloned());
            managers.push(Supervised::spawn(run, launch.binary, command));
        }
        for (manager, launch) in managers.iter_mut().zip(&launches) {
            poll("a Cluster API manager's /readyz", READY, || {
                manager.ensure_running()?;
                match http_get(launch.health, "/readyz")? {
                    (200, _) => Ok(()),
                    (code, body) => Err(format!("{code}: {body}")),
                }
            })?;
        }
        Ok(ClusterApi {
            managers,
            _one_stack: one_stack,
        })
    }

    /// The ends of every manager's log, for a failure message.
    pub fn logs(&self) -> String {
        self.managers
            .iter()
            .map(|m| m.log_tail(15))
            .collect::<Vec<_>>()
            .join("\n---\n")
    }
}

/// Waits until no other test of this process runs a Cluster API stack (a failed one's panic
/// does not keep the others waiting).
fn one_stack() -> MutexGuard<'static, ()> {
    ONE_STACK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Installs the four providers' components (the core manager with `core_gates`) and says how
/// to start each manager, in [`PROVIDERS`]' order, each with its webhook server on a port of
/// its own.
fn install(
    run: &RunDir,
    kubectl: &Kubectl,
    kubeconfig: &Path,
    core_gates: &str,
) -> Result<Vec<Launch>, String> {
    let certs = run.join("cluster-api-certs");
    generate_certs(&certs)?;
    let ca = read_pem(&certs, "ca.crt")?;
    // Every provider's CRDs before any manager: each manager looks up the others' kinds
    // (the control plane manager the bootstrap provider's KubeadmConfig) as it starts.
    let mut taken = Vec::new();
    let mut ports = Vec::new();
    for provider in &PROVIDERS {
        let webhook = distinct_port(&mut taken);
        let components = render(kubectl, provider, webhook, &ca)?;
        let out = kubectl.run(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&components),
        )?;
        if !out.success {
            return Err(format!(
                "installing {}'s components: {}",
                provider.binary, out.stderr
            ));
        }
        ports.push(webhook);
    }
    kubectl.ok(&[
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd",
        "--all",
    ])?;
    let mut launches = Vec::new();
    for (index, (provider, webhook)) in PROVIDERS.iter().zip(ports).enumerate() {
        let health = distinct_port(&mut taken);
        let mut args = vec![
            format!("--kubeconfig={}", kubeconfig.display()),
            format!("--webhook-cert-dir={}", certs.display()),
            format!("--webhook-port={webhook}"),
            format!("--health-addr=127.0.0.1:{health}"),
            format!("--diagnostics-address=127.0.0.1:{}", distinct_port(&mut taken)),
            "--insecure-diagnostics".to_owned(),
            "--leader-elect=false".to_owned(),
            "--v=1".to_owned(),
        ];
        let gates = if index == 0 { core_gates } else { provider.gates };
        if !gates.is_empty() {
            args.push(format!("--feature-gates={gates}"));
        }
        let env = [
            ("POD_NAMESPACE", provider.namespace),
            ("POD_NAME", provider.binary),
            // The in-memory backend serves the simulated workload API servers here.
            ("POD_IP", "127.0.0.1"),
        ];
        launches.push(Launch {
            binary: provider.binary,
            program: cluster_api().manager(provider.binary),
            args,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            health,
        });
    }
    Ok(launches)
}

/// A free loopback port none of `taken` (ports picked but not yet listened on: two picks in a
/// row may return the same one), added to them.
fn distinct_port(taken: &mut Vec<u16>) -> u16 {
    let port = std::iter::repeat_with(free_port)
        .find(|port| !taken.contains(port))
        .expect("an endless supply of ports");
    taken.push(port);
    port
}

/// A provider's components as `clusterctl init` would install them (kustomize of its
/// `config/default`, clusterctl's `${VAR:=default}` variables at their defaults), except that
/// the manager runs here: no Deployment, Service or cert-manager objects, and every webhook
/// (admission and CRD conversion) calls `https://127.0.0.1:<port>` trusting `ca_pem`.
fn render(kubectl: &Kubectl, provider: &Provider, port: u16, ca_pem: &str) -> Result<String, String> {
    let dir = cluster_api().module(provider.module).join(provider.config);
    let text = kubectl.ok(&["kustomize", &dir.display().to_string()])?;
    let text = clusterctl_defaults(&text);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let mut object: Value = serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        if matches!(kind.as_str(), "Deployment" | "Service" | "Certificate" | "Issuer") {
            continue;
        }
        if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
            annotations.remove("cert-manager.io/inject-ca-from");
        }
        let mut configs: Vec<&mut Value> = Vec::new();
        if kind == "CustomResourceDefinition" && object["spec"]["conversion"]["strategy"] == "Webhook" {
            configs.push(&mut object["spec"]["conversion"]["webhook"]["clientConfig"]);
        } else if kind.ends_with("WebhookConfiguration") {
            configs.extend(
                object["webhooks"]
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                    .map(|w| &mut w["clientConfig"]),
            );
        }
        for config in configs {
            to_loopback(config, port, &ca_bundle);
        }
        documents.push(serde_yaml_ng::to_string(&object).map_err(|e| e.to_string())?);
    }
    Ok(documents.join("---\n"))
}

/// `text` with clusterctl's `${VAR:=default}` variables replaced by their defaults.
pub fn clusterctl_defaults(text: &str) -> String {
    let defaults = regex::Regex::new(r"\$\{[A-Z0-9_]+:=([^}]*)\}").expect("a valid pattern");
    defaults.replace_all(text, "$1").into_owned()
}

/// Points a webhook `clientConfig` naming an in-cluster Service at `https://127.0.0.1:<port>`
/// with the Service's path, trusting `ca_bundle` (base64 PEM).
pub fn to_loopback(config: &mut Value, port: u16, ca_bundle: &str) {
    let path = config["service"]["path"].as_str().unwrap_or("/").to_owned();
    *config = serde_json::json!({
        "url": format!("https://127.0.0.1:{port}{path}"),
        "caBundle": ca_bundle,
    });
}
