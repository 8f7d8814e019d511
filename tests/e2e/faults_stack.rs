//! What the fault tests beside Cluster API start: an audited control plane, Cluster API
//! v1.14.0's managers with the in-memory backend, and one `capi-topology serve` (controllers and
//! webhooks) as the `capi-topology` user, our webhook configurations pointed at it; and Cluster
//! `mem` provisioned.

use std::time::Duration;

use crate::audit_log::WRITES_POLICY;
use crate::beside_cluster_api::{condition, doctor, our_configurations, PROVISIONED};
use crate::cluster_api::ClusterApi;
use crate::control_plane::ControlPlane;
use crate::kubectl::Kubectl;
use crate::process::{poll, RunDir};
use crate::webhook::{read_pem, WebhookServer};

/// The controllers `serve` runs beside Cluster API.
pub const CONTROLLERS: &str = "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks";

/// The running stack (its fields drop in order: our server, Cluster API, the control plane,
/// then the run directory).
pub struct Stack {
    pub server: WebhookServer,
    pub capi: ClusterApi,
    pub kubectl: Kubectl,
    pub plane: ControlPlane,
    pub run: RunDir,
}

impl Stack {
    /// Starts the stack in a run directory named after `label`; `cluster-api doctor` passes.
    pub fn start(label: &str) -> Stack {
        let run = RunDir::create(label);
        let mut plane = ControlPlane::start_audited(&run, WRITES_POLICY);
        plane.start_garbage_collector(&run);
        let kubectl = plane.kubectl();
        let capi = ClusterApi::start(&run, &kubectl, plane.kubeconfig()).unwrap_or_else(|e| panic!("{e}"));
        let ours = plane.kubeconfig_of("capi-topology");
        let server = WebhookServer::start_with(&run, &ours, &[CONTROLLERS]).unwrap_or_else(|e| panic!("{e}"));
        let stack = Stack {
            server,
            capi,
            kubectl,
            plane,
            run,
        };
        if let Err(e) = stack.serve_webhooks() {
            panic!("{e}\n{}", stack.logs());
        }
        stack
    }

    fn serve_webhooks(&self) -> Result<(), String> {
        let ca = read_pem(self.server.cert_dir(), "ca.crt")?;
        let configurations = our_configurations(&self.kubectl, self.server.port(), &ca);
        let out = self.kubectl.apply(&configurations, &[])?;
        out.success.then_some(()).ok_or(out.stderr)?;
        poll("cluster-api doctor to pass", Duration::from_secs(60), || {
            doctor(self.plane.kubeconfig())
        })
        .map(drop)
    }

    /// The ends of our server's, the API server's and Cluster API's logs.
    pub fn logs(&self) -> String {
        format!(
            "--- capi-topology ---\n{}\n--- kube-apiserver ---\n{}\n--- Cluster API ---\n{}",
            self.server.log_tail(),
            self.plane.apiserver_log(),
            self.capi.logs()
        )
    }
}

/// Applies `manifests` in turn and waits until Cluster `default/mem` is Available.
pub fn provision_mem(kubectl: &Kubectl, manifests: &[&str]) -> Result<(), String> {
    for manifest in manifests {
        let out = kubectl.apply(manifest, &[])?;
        out.success.then_some(()).ok_or(out.stderr)?;
    }
    poll("the Cluster to be Available", PROVISIONED, || {
        (condition(kubectl, "cluster/mem", "Available") == "True")
            .then_some(())
            .ok_or_else(|| "not yet".to_owned())
    })
}
