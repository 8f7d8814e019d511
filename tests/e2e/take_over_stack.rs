//! The stack of the take-over e2e: a control plane with an audit log, Cluster API v1.14.0's
//! managers with the core one (its topology controller on) run from its Deployment, and
//! capi-topology's two Deployments (webhooks; controllers standing by), the three Deployments
//! run by the [`Emulator`]; our webhook configurations registered with their entries for the
//! resources Cluster API's own webhooks admit switched off.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::audit_log::WRITES_POLICY;
use crate::beside_cluster_api::our_configurations;
use crate::cluster_api::{ClusterApi, Launch, CORE_GATES_WITH_TOPOLOGY};
use crate::control_plane::ControlPlane;
use crate::deployment_emulator::{rolled_out, Emulator, Spec};
use crate::kubectl::Kubectl;
use crate::process::{free_port, RunDir};
use crate::webhook::{capi_topology, generate_certs, read_pem};

/// The images the emulator runs: Cluster API's core manager and capi-topology.
const CORE_IMAGE: &str = "registry.k8s.io/cluster-api/cluster-api-controller:v1.14.0";
const OUR_IMAGE: &str = "ghcr.io/capi-topology/capi-topology:e2e";
/// capi-topology's controllers when it owns the fleet (what `cluster-api take-over` sets), and
/// when it stands by (`serve` needs one controller; none of the topology ones).
pub const OWNING: &str = "--controllers=topology,cluster-class,extension-config";
const STANDBY: &str = "--controllers=extension-config";
/// The Deployments the emulator runs.
pub const DEPLOYMENTS: [(&str, &str); 3] = [
    ("capi-system", "capi-controller-manager"),
    ("capi-topology-system", "capi-topology"),
    ("capi-topology-system", "capi-topology-controller"),
];

/// Everything running, stopped in this order when dropped (the Deployments' processes first).
pub struct Stack {
    /// Plays the kubelet for the three Deployments.
    pub emulator: Emulator,
    /// The kubeadm and Docker (in-memory) managers.
    pub capi: ClusterApi,
    /// The port of our controller's `/metrics`.
    pub controller_metrics: u16,
    /// kubectl as the admin.
    pub kubectl: Kubectl,
    /// etcd and kube-apiserver (the audit log in the run directory), running until dropped.
    plane: ControlPlane,
    /// Logs and data.
    pub run: RunDir,
}

impl Stack {
    /// Starts it all and waits until the three Deployments are rolled out.
    pub fn start() -> Result<Stack, String> {
        let run = RunDir::create("take-over");
        let mut plane = ControlPlane::start_audited(&run, WRITES_POLICY);
        plane.start_garbage_collector(&run);
        let kubectl = plane.kubectl();
        let (capi, core) =
            ClusterApi::start_but_core(&run, &kubectl, plane.kubeconfig(), CORE_GATES_WITH_TOPOLOGY)?;
        let ours = Ours::new(&run, &plane)?;
        let programs = BTreeMap::from([
            (CORE_IMAGE.to_owned(), core.program.clone()),
            (OUR_IMAGE.to_owned(), capi_topology()),
        ]);
        let emulator = Emulator::start(&run, &kubectl, programs);
        let stack = Stack {
            emulator,
            capi,
            controller_metrics: ours.controller_metrics,
            kubectl,
            plane,
            run,
        };
        let kubectl = &stack.kubectl;
        kubectl.ok(&["create", "namespace", "capi-topology-system"])?;
        let deployments = [
            core_deployment(&core),
            ours.specs[0].clone(),
            ours.specs[1].clone(),
        ];
        let out = kubectl.apply(&crate::manifests::render(&deployments), &[])?;
        out.success.then_some(()).ok_or(out.stderr)?;
        for (namespace, name) in DEPLOYMENTS {
            rolled_out(kubectl, namespace, name, Duration::from_secs(120))?;
        }
        let out = kubectl.apply(&standby_configurations(kubectl, &ours), &[])?;
        out.success.then_some(()).ok_or(out.stderr)?;
        Ok(stack)
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> &std::path::Path {
        self.plane.kubeconfig()
    }

    /// The ends of the managers' logs and where the rest is, for a failure message.
    pub fn logs(&self) -> String {
        format!(
            "{}\n{}\n(run dir {})",
            self.capi.logs(),
            self.emulator.logs(),
            self.run.path().display()
        )
    }
}

/// capi-topology's two Deployments, as manifests/base has them, run from this build.
struct Ours {
    webhook_port: u16,
    ca: String,
    controller_metrics: u16,
    specs: [Value; 2],
}

impl Ours {
    /// Certificates and ports for the webhook Deployment (`--components=webhooks`) and the
    /// controller Deployment (`--components=controllers`, none of the topology controllers),
    /// both as the `capi-topology` user, whose writes the audit log tells apart.
    fn new(run: &RunDir, plane: &ControlPlane) -> Result<Ours, String> {
        let certs = run.join("webhook-certs");
        generate_certs(&certs)?;
        let ca = read_pem(&certs, "ca.crt")?;
        let kubeconfig = format!("--kubeconfig={}", plane.kubeconfig_of("capi-topology").display());
        let (webhook_port, webhook_metrics, controller_metrics) = (free_port(), free_port(), free_port());
        let labels = |component: &str| json!({"app.kubernetes.io/name": "capi-topology", "app.kubernetes.io/component": component});
        let spec = |name: &str, component: &str, metrics: u16, mut args: Vec<String>| {
            args.splice(0..0, ["serve".to_owned(), format!("--components={component}s")]);
            args.extend([format!("--metrics-addr=127.0.0.1:{metrics}"), kubeconfig.clone()]);
            Spec {
                namespace: "capi-topology-system",
                name,
                labels: labels(component),
                container: "capi-topology",
                image: OUR_IMAGE,
                args,
                env: vec![("RUST_LOG".to_owned(), "info".to_owned())],
                ready_port: metrics,
                replicas: 1,
            }
            .object()
        };
        let webhook = spec(
            "capi-topology",
            "webhook",
            webhook_metrics,
            vec![
                format!("--cert-dir={}", certs.display()),
                format!("--bind-address=127.0.0.1:{webhook_port}"),
            ],
        );
        // Standing by: none of the topology controllers.
        let controller = spec(
            "capi-topology-controller",
            "controller",
            controller_metrics,
            vec![STANDBY.to_owned()],
        );
        Ok(Ours {
            webhook_port,
            ca,
            controller_metrics,
            specs: [webhook, controller],
        })
    }
}

/// The core manager's Deployment as `clusterctl init` installs it, running `core`.
fn core_deployment(core: &Launch) -> Value {
    Spec {
        namespace: "capi-system",
        name: "capi-controller-manager",
        labels: json!({"cluster.x-k8s.io/provider": "cluster-api", "control-plane": "controller-manager"}),
        container: "manager",
        image: CORE_IMAGE,
        args: core.args.clone(),
        env: core.env.iter().filter(|(k, _)| k == "POD_IP").cloned().collect(),
        ready_port: core.health,
        replicas: 1,
    }
    .object()
}

/// Our webhook configurations, for the local webhook Deployment, with the entries for Clusters,
/// ClusterClasses and ExtensionConfigs switched off (Cluster API's own admit them).
fn standby_configurations(kubectl: &Kubectl, ours: &Ours) -> String {
    use capi_topology::beside_cluster_api::{served_resource, MATCH_CONDITION_NAME};
    let rendered = our_configurations(kubectl, ours.webhook_port, &ours.ca);
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&rendered) {
        let mut object: Value = serde::Deserialize::deserialize(document).expect("rendered YAML");
        for webhook in object["webhooks"].as_array_mut().into_iter().flatten() {
            if served_resource(webhook).is_some() {
                webhook["matchConditions"] = json!([{"name": MATCH_CONDITION_NAME, "expression": "false"}]);
            }
        }
        documents.push(serde_yaml_ng::to_string(&object).expect("YAML"));
    }
    documents.join("---\n")
}
