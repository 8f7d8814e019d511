//! One e2e environment: control plane, CRDs, optionally the webhook server; everything stops
//! when it drops (fields drop in order: webhook server, control plane, then the run directory).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::control_plane::ControlPlane;
use crate::kubectl::Kubectl;
use crate::process::{run_bounded, RunDir};
use crate::webhook::{capi_topology, read_pem, WebhookServer};

/// A running environment.
pub struct Env {
    /// The webhook server, when started with [`Env::with_webhooks`].
    pub webhooks: Option<WebhookServer>,
    /// etcd and kube-apiserver.
    pub plane: ControlPlane,
    /// kubectl as the admin.
    pub kubectl: Kubectl,
    /// Logs, data and certificates of this run (dropped last).
    pub run: RunDir,
}

impl Env {
    /// A control plane with the test provider CRDs installed.
    pub fn control_plane(label: &str) -> Env {
        let run = RunDir::create(label);
        let plane = ControlPlane::start(&run);
        Env::on(run, plane)
    }

    /// [`Env::with_webhooks`] with the API server's audit log of `policy`
    /// ([`ControlPlane::start_audited`]), capi-topology running as its `capi-topology` user.
    pub fn audited_with_webhooks(label: &str, policy: &str) -> Env {
        let run = RunDir::create(label);
        let plane = ControlPlane::start_audited(&run, policy);
        let kubeconfig = plane.kubeconfig_of("capi-topology");
        Env::on(run, plane).serving(&kubeconfig, &[])
    }

    fn on(run: RunDir, plane: ControlPlane) -> Env {
        let kubectl = plane.kubectl();
        let env = Env {
            webhooks: None,
            plane,
            kubectl,
            run,
        };
        env.install_crds(&repo_path("tests/e2e/crds"), "test provider CRDs")
            .unwrap_or_else(|e| panic!("{e}"));
        env
    }

    /// A control plane with our CRDs, the provider CRDs, and `capi-topology serve` registered
    /// as the admission webhook of Clusters and ClusterClasses.
    pub fn with_webhooks(label: &str) -> Env {
        Env::with_webhooks_and(label, &[])
    }

    /// [`Env::with_webhooks`] serving the certificates `certs` writes into the certificate
    /// directory it is given (`ca.crt`, `tls.crt`, `tls.key`), trusted by the API server.
    pub fn with_webhooks_certified(label: &str, certs: impl FnOnce(&Path) -> Result<(), String>) -> Env {
        let env = Env::control_plane(label);
        let dir = env.run.join("webhook-certs");
        fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|()| certs(&dir))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let kubeconfig = env.plane.kubeconfig().to_owned();
        env.serving(&kubeconfig, &[])
    }

    /// [`Env::with_webhooks`] with more `serve` arguments.
    pub fn with_webhooks_and(label: &str, extra: &[&str]) -> Env {
        let env = Env::control_plane(label);
        let kubeconfig = env.plane.kubeconfig().to_owned();
        env.serving(&kubeconfig, extra)
    }

    /// Installs our CRDs and starts `capi-topology serve` as the user of `kubeconfig`, with the
    /// `serve` arguments `extra`.
    fn serving(mut self, kubeconfig: &Path, extra: &[&str]) -> Env {
        let env = &mut self;
        let crds = our_crds(&env.run).unwrap_or_else(|e| panic!("{e}"));
        env.install_crds(&crds, "cluster.x-k8s.io CRDs")
            .unwrap_or_else(|e| panic!("{e}"));
        // The certificates already in `<run>/webhook-certs` ([`Env::with_webhooks_certified`]),
        // made by `capi-topology certs` otherwise.
        let mut server = WebhookServer::start_named(&env.run, "capi-topology", kubeconfig, extra)
            .unwrap_or_else(|e| panic!("{e}"));
        let registered =
            read_pem(server.cert_dir(), "ca.crt").and_then(|ca| server.register(&env.kubectl, &ca));
        if let Err(e) = registered {
            panic!("{e}\n--- capi-topology log ---\n{}", server.log_tail());
        }
        env.webhooks = Some(server);
        self
    }

    /// The webhook server (panics when the environment has none).
    pub fn server(&mut self) -> &mut WebhookServer {
        self.webhooks.as_mut().expect("an environment with webhooks")
    }

    /// Logs for a failure message: the ends of the API server's and the webhook server's logs.
    pub fn logs(&self) -> String {
        let server = self
            .webhooks
            .as_ref()
            .map(WebhookServer::log_tail)
            .unwrap_or_default();
        format!(
            "--- kube-apiserver log ---\n{}\n--- capi-topology log ---\n{server}\n(run dir {})",
            self.plane.apiserver_log(),
            self.run.path().display()
        )
    }

    /// Applies the CRDs in `path` (file or directory) and waits until they are established.
    /// Server-side: Cluster API's provider CRDs exceed the 256 KiB of annotations that a
    /// client-side apply's `last-applied-configuration` would need.
    fn install_crds(&self, path: &Path, what: &str) -> Result<(), String> {
        let file = path.to_string_lossy();
        self.kubectl
            .ok(&["apply", "--server-side", "-f", &file])
            .map_err(|e| format!("installing {what}: {e}"))?;
        self.kubectl
            .ok(&[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                "-f",
                &file,
            ])
            .map_err(|e| format!("waiting for {what}: {e}"))?;
        Ok(())
    }
}

/// A path in the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Our CRDs: `manifests/crds/` when committed, else what `capi-topology crds` prints (written to
/// the run directory).
fn our_crds(run: &RunDir) -> Result<PathBuf, String> {
    let committed = repo_path("manifests/crds");
    if committed.is_dir() {
        return Ok(committed);
    }
    let mut command = Command::new(capi_topology());
    command.arg("crds");
    let out = run_bounded(command, None, Duration::from_secs(30))?;
    if !out.success {
        return Err(format!(
            "no cluster.x-k8s.io CRDs: manifests/crds/ is missing and `capi-topology crds` failed: {}",
            out.stderr
        ));
    }
    let file = run.join("crds.yaml");
    fs::write(&file, out.stdout).map_err(|e| e.to_string())?;
    Ok(file)
}
