//! `capi-topology serve` as the API server's admission webhook: dev certificates, the process,
//! the webhook configurations (with a probe proving which revision the API server uses), and
//! the served certificate's fingerprint for the rotation scenario.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::kubectl::Kubectl;
use crate::process::{free_port, http_get, poll, run_bounded, RunDir, Supervised};

/// The binary under test: the one cargo built for this test target, or
/// `$CAPI_TOPOLOGY_E2E_BIN` (e.g. a release build).
pub fn capi_topology() -> PathBuf {
    std::env::var_os("CAPI_TOPOLOGY_E2E_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_capi-topology")))
}
const SERVER_READY: Duration = Duration::from_secs(30);
/// How long the API server may take to load a changed webhook configuration.
const CONFIG_EFFECTIVE: Duration = Duration::from_secs(30);
const WEBHOOKS: &str = include_str!("fixtures/webhooks.yaml");

/// A running `capi-topology serve` registered with the API server.
pub struct WebhookServer {
    process: Supervised,
    cert_dir: PathBuf,
    port: u16,
    revision: u32,
    /// How it was started, to start it again the same way.
    command: Vec<std::ffi::OsString>,
    kubeconfig: PathBuf,
    run: PathBuf,
    metrics: u16,
}

impl WebhookServer {
    /// Generates dev certificates in `<run>/webhook-certs`, starts the server against the API
    /// server of `kubeconfig` with the `serve` arguments `extra` and waits for its `/readyz`.
    pub fn start_with(run: &RunDir, kubeconfig: &Path, extra: &[&str]) -> Result<WebhookServer, String> {
        generate_certs(&run.join("webhook-certs"))?;
        WebhookServer::start_named(run, "capi-topology", kubeconfig, extra)
    }

    /// Another replica beside [`WebhookServer::start_with`]'s, logging to `<run>/<name>.log`: it
    /// serves the certificates already in `<run>/webhook-certs` (made when there are none).
    pub fn start_named(
        run: &RunDir,
        name: &str,
        kubeconfig: &Path,
        extra: &[&str],
    ) -> Result<WebhookServer, String> {
        let cert_dir = run.join("webhook-certs");
        if !cert_dir.join("tls.crt").is_file() {
            generate_certs(&cert_dir)?;
        }
        let (port, metrics) = (free_port(), free_port());
        let mut command: Vec<std::ffi::OsString> =
            vec!["serve".into(), "--cert-dir".into(), cert_dir.clone().into()];
        command.push(format!("--bind-address=127.0.0.1:{port}").into());
        command.push(format!("--metrics-addr=127.0.0.1:{metrics}").into());
        command.extend(extra.iter().map(Into::into));
        let process = spawn_ready(run.path(), kubeconfig, &command, metrics, name)?;
        Ok(WebhookServer {
            process,
            cert_dir,
            port,
            revision: 0,
            command,
            kubeconfig: kubeconfig.to_owned(),
            run: run.path().to_owned(),
            metrics,
        })
    }

    /// Stops the server (SIGTERM: it gives up its leadership) and starts it again the same way,
    /// with the same certificates and ports; its log goes on in `capi-topology-restarted.log`.
    pub fn restart(&mut self) -> Result<(), String> {
        self.process.stop();
        self.process = spawn_ready(
            &self.run,
            &self.kubeconfig,
            &self.command,
            self.metrics,
            "capi-topology-restarted",
        )?;
        Ok(())
    }

    /// Kills the server at once (SIGKILL: it keeps its leadership until the Lease expires).
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// The port of the Prometheus metrics endpoint (also `/readyz`).
    pub fn metrics_port(&self) -> u16 {
        self.metrics
    }

    /// The port of the HTTPS admission endpoints.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory the server reads `tls.crt` / `tls.key` (and `ca.crt`) from.
    pub fn cert_dir(&self) -> &Path {
        &self.cert_dir
    }

    /// `Ok` while the process runs; why it stopped otherwise.
    pub fn ensure_running(&mut self) -> Result<(), String> {
        self.process.ensure_running()
    }

    /// The end of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        self.process.log_tail(40)
    }

    /// Applies the webhook configurations trusting `ca_pem` and waits until the API server uses
    /// exactly this revision of both.
    pub fn register(&mut self, kubectl: &Kubectl, ca_pem: &str) -> Result<(), String> {
        self.revision += 1;
        register(kubectl, self.port, ca_pem, self.revision)
    }

    /// The SHA-256 fingerprint of the certificate the server presents now.
    pub fn served_fingerprint(&self) -> Result<String, String> {
        let mut command = Command::new("openssl");
        command.args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{}", self.port),
            "-showcerts",
        ]);
        let out = run_bounded(command, Some(b""), Duration::from_secs(10))?;
        let pem = first_pem(&out.stdout).ok_or_else(|| format!("no certificate served: {}", out.stderr))?;
        fingerprint(&pem)
    }
}

/// Starts `capi-topology <args>` against the API server of `kubeconfig`, logging to
/// `<run>/<name>.log`, and waits for its `/readyz` on `metrics`.
fn spawn_ready(
    run: &Path,
    kubeconfig: &Path,
    args: &[std::ffi::OsString],
    metrics: u16,
    name: &str,
) -> Result<Supervised, String> {
    let mut command = Command::new(capi_topology());
    command
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("RUST_LOG", "info");
    let mut process = Supervised::spawn(&RunDir::adopt(run), name, command);
    poll("capi-topology /readyz", SERVER_READY, || {
        process.ensure_running()?;
        match http_get(metrics, "/readyz")? {
            (200, _) => Ok(()),
            (code, body) => Err(format!("{code}: {body}")),
        }
    })
    .map_err(|e| format!("{e}\n--- capi-topology log ---\n{}", process.log_tail(40)))?;
    Ok(process)
}

/// Points the conversion of our CRDs at the server on `port` trusting `ca_pem`, then applies the
/// webhook configurations for it as `revision`, and waits until the API server uses exactly that
/// revision of both.
pub fn register(kubectl: &Kubectl, port: u16, ca_pem: &str, revision: u32) -> Result<(), String> {
    register_conversion(kubectl, port, ca_pem)?;
    let manifest = render_configurations(port, ca_pem, revision)?;
    let out = kubectl.apply(&manifest, &[])?;
    if !out.success {
        return Err(format!("webhook configurations refused: {}", out.stderr));
    }
    for kind in ["mutate", "validate"] {
        wait_for_probe(kubectl, kind, revision)?;
    }
    Ok(())
}

/// The CRDs whose versions `capi-topology serve` converts at `/convert`, as Cluster API's core
/// manager does (`core/config/crd/patches/webhook_in_*.yaml` of v1.14.0): v1beta2 is the hub and
/// storage version, v1beta1 (v1alpha1 for ExtensionConfig) the deprecated served spoke.
const CONVERTED_CRDS: [&str; 5] = [
    "clusters.cluster.x-k8s.io",
    "clusterclasses.cluster.x-k8s.io",
    "clusterresourcesets.addons.cluster.x-k8s.io",
    "clusterresourcesetbindings.addons.cluster.x-k8s.io",
    "extensionconfigs.runtime.cluster.x-k8s.io",
];

/// Sets `spec.conversion` of each installed CRD of [`CONVERTED_CRDS`] to a Webhook at
/// `https://127.0.0.1:<port>/convert` trusting `ca_pem`, as the admission webhooks are set.
/// A CRD that is not installed (an environment without our CRDs) is skipped; a CRD serving one
/// version never calls the webhook, so this is harmless before the CRDs serve two.
fn register_conversion(kubectl: &Kubectl, port: u16, ca_pem: &str) -> Result<(), String> {
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let installed = kubectl.ok(&["get", "crd", "-o", "name"])?;
    let installed: Vec<&str> = installed
        .lines()
        .filter_map(|line| line.trim().rsplit('/').next())
        .collect();
    // A merge patch: `service: null` drops the in-cluster Service a release manifest names (a
    // clientConfig takes a url or a service, not both).
    let patch = json!({"spec": {"conversion": {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": format!("https://127.0.0.1:{port}/convert"),
                "caBundle": ca_bundle,
                "service": null,
            },
        },
    }}})
    .to_string();
    for crd in CONVERTED_CRDS.iter().filter(|crd| installed.contains(crd)) {
        kubectl
            .ok(&["patch", "crd", crd, "--type=merge", "-p", &patch])
            .map_err(|e| format!("the conversion webhook of {crd}: {e}"))?;
    }
    Ok(())
}

/// `capi-topology certs` into `dir`: `ca.crt`, `tls.crt`, `tls.key` for 127.0.0.1 and localhost.
pub fn generate_certs(dir: &Path) -> Result<(), String> {
    let mut command = Command::new(capi_topology());
    command
        .arg("certs")
        .arg("--out")
        .arg(dir)
        .args(["--dns", "localhost", "--ip", "127.0.0.1"]);
    let out = run_bounded(command, None, Duration::from_secs(60))?;
    if !out.success {
        return Err(format!(
            "capi-topology certs failed: {}{}",
            out.stdout, out.stderr
        ));
    }
    for file in ["ca.crt", "tls.crt", "tls.key"] {
        if !dir.join(file).is_file() {
            return Err(format!(
                "capi-topology certs wrote no {file} in {}",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// The SHA-256 fingerprint of the PEM certificate `pem`, as openssl prints it.
pub fn fingerprint(pem: &str) -> Result<String, String> {
    let mut command = Command::new("openssl");
    command.args(["x509", "-noout", "-fingerprint", "-sha256"]);
    let out = run_bounded(command, Some(pem.as_bytes()), Duration::from_secs(10))?;
    if out.success {
        Ok(out.stdout.trim().to_owned())
    } else {
        Err(format!("openssl x509: {}", out.stderr))
    }
}

fn first_pem(text: &str) -> Option<String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let start = text.find(BEGIN)?;
    let end = start + text[start..].find(END)? + END.len();
    Some(format!("{}\n", &text[start..end]))
}

/// The fixture's configurations for `port` and `ca_pem`, each with one more webhook: a probe
/// named after `revision` that fails every request for ConfigMaps labelled with that revision.
/// When a dry-run ConfigMap with the label fails, the API server uses this revision.
fn render_configurations(port: u16, ca_pem: &str, revision: u32) -> Result<String, String> {
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let text = WEBHOOKS
        .replace("${BASE_URL}", &format!("https://127.0.0.1:{port}"))
        .replace("${CA_BUNDLE}", &ca_bundle);
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let mut config: Value = serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
        let kind = if config["kind"] == "MutatingWebhookConfiguration" {
            "mutate"
        } else {
            "validate"
        };
        let probe = json!({
            "name": format!("rev-{revision}.{kind}.probe.e2e.capi-topology.dev"),
            "clientConfig": {"url": "https://127.0.0.1:1/probe", "caBundle": ca_bundle},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["configmaps"]}],
            "objectSelector": {"matchLabels": {probe_label(kind): format!("rev-{revision}")}},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 2,
        });
        if let Some(webhooks) = config["webhooks"].as_array_mut() {
            webhooks.push(probe);
        }
        documents.push(serde_yaml_ng::to_string(&config).map_err(|e| e.to_string())?);
    }
    Ok(documents.join("---\n"))
}

fn probe_label(kind: &str) -> String {
    format!("e2e.capi-topology.dev/{kind}-probe")
}

fn wait_for_probe(kubectl: &Kubectl, kind: &str, revision: u32) -> Result<(), String> {
    let probe = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "webhook-probe", "namespace": "default",
                     "labels": {probe_label(kind): format!("rev-{revision}")}},
    })
    .to_string();
    let webhook = format!("rev-{revision}.{kind}.probe.e2e.capi-topology.dev");
    poll(
        &format!("the API server to call {webhook}"),
        CONFIG_EFFECTIVE,
        || {
            let out = kubectl.apply(&probe, &["--dry-run=server"])?;
            if !out.success && out.stderr.contains(&webhook) {
                Ok(())
            } else {
                Err(format!("{}{}", out.stdout, out.stderr))
            }
        },
    )
}

/// Reads a file of the cert dir as text.
pub fn read_pem(dir: &Path, file: &str) -> Result<String, String> {
    fs::read_to_string(dir.join(file)).map_err(|e| format!("{}: {e}", dir.join(file).display()))
}
