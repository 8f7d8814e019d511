//! The deployment manifests (`manifests/`): both overlays render with kustomize, say what the
//! server needs (paths, probes, hardening), and the plain overlay installs on the API server.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use capi_topology::admission::Webhook;
use serde::Deserialize;
use serde_json::Value;

use crate::env::{repo_path, Env};
use crate::kubectl::Kubectl;
use crate::process::run_bounded;
use crate::webhook::capi_topology;

/// The Service's DNS name, which the serving certificate must name.
const SERVICE_DNS: &str = "capi-topology-webhook.capi-topology-system.svc";

/// Copies `from` into `to`, skipping `certs/` directories (a developer's local keys).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "certs" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn kustomize(kubectl: &Kubectl, dir: &Path) -> Vec<Value> {
    let text = kubectl
        .ok(&["kustomize", &dir.display().to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).expect("kustomize renders YAML"))
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} rendered"))
}

/// What every overlay must keep of the base: the server's needs and the hardening.
fn assert_base(objects: &[Value]) {
    let deployment = find(objects, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(container["securityContext"]["capabilities"]["drop"][0], "ALL");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["args"][0], "serve");
    assert_eq!(find(objects, "PodDisruptionBudget")["spec"]["minAvailable"], 1);
    assert_least_privilege(objects);

    let mut served: Vec<&str> = Vec::new();
    for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
        for hook in find(objects, kind)["webhooks"].as_array().unwrap() {
            assert_eq!(hook["failurePolicy"], "Fail");
            assert_eq!(hook["sideEffects"], "None");
            assert_eq!(hook["timeoutSeconds"], 10);
            assert_eq!(hook["admissionReviewVersions"][0], "v1");
            assert_eq!(hook["clientConfig"]["service"]["name"], "capi-topology-webhook");
            let path = hook["clientConfig"]["service"]["path"].as_str().unwrap();
            let webhook: Webhook = path.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(hook["name"], webhook.configuration_name(), "{path}");
            assert_eq!(webhook.mutating, kind.starts_with("Mutating"), "{path}");
            served.push(webhook.path());
        }
    }
    // The v1beta2 endpoints, as Cluster API v1.14 registers them (the API server converts a
    // v1beta1 object before calling them; the server's v1beta1 paths stay for old configurations).
    let mut expected: Vec<&str> = Webhook::ALL
        .iter()
        .filter(|w| !w.spoke)
        .map(|w| w.path())
        .collect();
    served.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        served, expected,
        "every v1beta2 webhook the server answers is registered"
    );
}

/// The webhook reads only; the controllers' rights come by aggregation; no write wildcard but on
/// the provider groups, as Cluster API's manager role; every
/// Deployment keeps its replicas on distinct nodes, and the webhook drains before it stops.
fn assert_least_privilege(objects: &[Value]) {
    let named = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} rendered"))
    };
    for rule in named("ClusterRole", "capi-topology-webhook")["rules"]
        .as_array()
        .unwrap()
    {
        for verb in rule["verbs"].as_array().unwrap() {
            assert!(
                ["get", "list", "watch"].contains(&verb.as_str().unwrap()),
                "webhook rule {rule}"
            );
        }
    }
    let aggregated = &named("ClusterRole", "capi-topology-controller")["aggregationRule"];
    assert_eq!(
        aggregated["clusterRoleSelectors"][0]["matchLabels"]["cluster.x-k8s.io/aggregate-to-manager"],
        "true"
    );
    // Cluster API's manager role grants every kind of the provider groups under
    // cluster.x-k8s.io (the provider contract asks an aggregated ClusterRole only of providers in
    // other groups); a wildcard that writes is allowed there and nowhere else.
    let provider_groups = [
        "bootstrap.cluster.x-k8s.io",
        "controlplane.cluster.x-k8s.io",
        "infrastructure.cluster.x-k8s.io",
    ];
    for role in objects.iter().filter(|o| o["kind"] == "ClusterRole") {
        for rule in role["rules"].as_array().into_iter().flatten() {
            let providers_only = rule["apiGroups"].as_array().is_some_and(|groups| {
                groups
                    .iter()
                    .all(|g| provider_groups.contains(&g.as_str().unwrap_or_default()))
            });
            let wildcard = !providers_only
                && rule["resources"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r == "*"));
            let writes = rule["verbs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| !["get", "list", "watch"].contains(&v.as_str().unwrap()));
            assert!(
                !(wildcard && writes),
                "{} grants writes on every resource: {rule}",
                role["metadata"]["name"]
            );
        }
    }
    for deployment in objects.iter().filter(|o| o["kind"] == "Deployment") {
        let pod = &deployment["spec"]["template"]["spec"];
        let required =
            &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(
            required["topologyKey"], "kubernetes.io/hostname",
            "{}",
            deployment["metadata"]["name"]
        );
    }
    let webhook = named("Deployment", "capi-topology");
    let pod = &webhook["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "capi-topology-webhook");
    assert_eq!(
        pod["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"],
        5
    );
    assert_eq!(
        named("Deployment", "capi-topology-controller")["spec"]["template"]["spec"]["serviceAccountName"],
        "capi-topology-controller"
    );
}

#[test]
fn deployment_manifests_render_and_install() {
    let env = Env::control_plane("deployment");
    let manifests = env.run.join("manifests");
    copy_tree(&repo_path("manifests"), &manifests);

    // cert-manager: the CA is injected from the Certificate the overlay adds.
    let objects = kustomize(&env.kubectl, &manifests.join("overlays/cert-manager"));
    assert_base(&objects);
    let certificate = find(&objects, "Certificate");
    assert_eq!(certificate["spec"]["secretName"], "capi-topology-webhook-cert");
    assert_eq!(certificate["spec"]["dnsNames"][0], SERVICE_DNS);
    for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
        assert_eq!(
            find(&objects, kind)["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "capi-topology-system/capi-topology-webhook"
        );
    }

    // plain: certificates from `capi-topology certs`, installed for real.
    let plain = manifests.join("overlays/plain");
    let certs = plain.join("certs");
    let mut command = Command::new(capi_topology());
    command
        .arg("certs")
        .arg("--out")
        .arg(&certs)
        .args(["--dns", SERVICE_DNS]);
    let out = run_bounded(command, None, Duration::from_secs(60)).unwrap();
    assert!(out.success, "capi-topology certs: {}", out.stderr);
    let objects = kustomize(&env.kubectl, &plain);
    assert_base(&objects);
    let rendered: Vec<String> = objects
        .iter()
        .map(|o| serde_yaml_ng::to_string(o).unwrap())
        .collect();
    let applied = env.kubectl.accepts(&rendered.join("---\n"));
    let applied = applied.unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    assert!(
        applied.contains("deployment.apps/capi-topology created"),
        "{applied}"
    );

    let ca = fs::read(certs.join("ca.crt")).unwrap();
    for resource in ["mutatingwebhookconfiguration", "validatingwebhookconfiguration"] {
        let stored = env.kubectl.get_json(resource, "", "capi-topology").unwrap();
        for hook in stored["webhooks"].as_array().unwrap() {
            let bundle = hook["clientConfig"]["caBundle"].as_str().unwrap();
            let decoded = base64::engine::general_purpose::STANDARD.decode(bundle).unwrap();
            assert_eq!(decoded, ca, "{resource} {} trusts the generated CA", hook["name"]);
        }
    }
}
