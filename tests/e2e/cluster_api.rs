//! Cluster API v1.14.0's own managers beside us, as `clusterctl init` installs them but run as
//! local processes: the core manager (its topology controller off), the kubeadm control plane
//! and bootstrap managers, and the Docker provider's manager whose in-memory backend simulates
//! Machines and workload API servers without a Docker engine. Their components (CRDs with
//! conversion webhooks, RBAC, webhook configurations) are rendered from the modules' own
//! `config/default` with kustomize, and pointed at the local processes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::kubectl::Kubectl;
use crate::process::{free_port, http_get, poll, RunDir, Supervised};
use crate::webhook::{generate_certs, read_pem};

/// The Cluster API release the managers are built from (tests/e2e/build-cluster-api.sh).
pub const VERSION: &str = "v1.14.0";
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
    // Topology off, as v1.14 ships: capi-topology is the topology controller.
    Provider {
        binary: "capi-manager",
        module: "sigs.k8s.io/cluster-api",
        config: "core/config/default",
        namespace: "capi-system",
        gates: "MachinePool=true,ClusterTopology=false,RuntimeSDK=false",
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

/// The per-machine e2e cache (tests/e2e/build-binaries.sh).
fn cache() -> PathBuf {
    std::env::var_os("CAPI_TOPOLOGY_E2E_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/capi-topology-e2e")
        })
}

/// The directory of a module in the e2e Go module cache.
pub fn module_dir(module: &str) -> PathBuf {
    cache().join("gomodcache").join(format!("{module}@{VERSION}"))
}

/// The managers' bin directory, built (or found in the cache) by build-cluster-api.sh.
fn binaries() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/build-cluster-api.sh");
        let output = Command::new("bash")
            .arg(&script)
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run tests/e2e/build-cluster-api.sh");
        assert!(output.status.success(), "tests/e2e/build-cluster-api.sh failed");
        let stdout = String::from_utf8_lossy(&output.stdout);
        PathBuf::from(stdout.lines().last().unwrap_or_default().trim())
    })
}

/// Cluster API's managers, running; stopped when dropped.
pub struct ClusterApi {
    managers: Vec<Supervised>,
}

impl ClusterApi {
    /// Installs the four providers' components on the API server of `kubectl` and starts their
    /// managers, each with its webhook server on a port of its own; waits until all are ready.
    pub fn start(run: &RunDir, kubectl: &Kubectl, kubeconfig: &Path) -> Result<ClusterApi, String> {
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
        let mut managers = Vec::new();
        let mut ready = Vec::new();
        for (provider, webhook) in PROVIDERS.iter().zip(ports) {
            let health = distinct_port(&mut taken);
            let mut command = Command::new(binaries().join(provider.binary));
            command
                .arg(format!("--kubeconfig={}", kubeconfig.display()))
                .arg(format!("--webhook-cert-dir={}", certs.display()))
                .arg(format!("--webhook-port={webhook}"))
                .arg(format!("--health-addr=127.0.0.1:{health}"))
                .arg(format!(
                    "--diagnostics-address=127.0.0.1:{}",
                    distinct_port(&mut taken)
                ))
                .args(["--insecure-diagnostics", "--leader-elect=false", "--v=1"])
                .env("POD_NAMESPACE", provider.namespace)
                .env("POD_NAME", provider.binary)
                // The in-memory backend serves the simulated workload API servers here.
                .env("POD_IP", "127.0.0.1");
            if !provider.gates.is_empty() {
                command.arg(format!("--feature-gates={}", provider.gates));
            }
            managers.push(Supervised::spawn(run, provider.binary, command));
            ready.push(health);
        }
        for (manager, health) in managers.iter_mut().zip(ready) {
            poll("a Cluster API manager's /readyz", READY, || {
                manager.ensure_running()?;
                match http_get(health, "/readyz")? {
                    (200, _) => Ok(()),
                    (code, body) => Err(format!("{code}: {body}")),
                }
            })?;
        }
        Ok(ClusterApi { managers })
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
    let dir = module_dir(provider.module).join(provider.config);
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
