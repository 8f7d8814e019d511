//! The bad changes an operator may try on the quickstart, each with what kubectl must print:
//! the field path and the reason. They run against the quickstart as admitted (the classes of
//! [`extra_classes`] applied and reconciled too).

use serde_json::{json, Value};

use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render, with, without};

/// One bad `kubectl apply` and the fragments its refusal must contain.
pub struct Refusal {
    /// What the operator tried.
    pub what: &'static str,
    /// The manifest applied.
    pub manifest: String,
    /// Field path and reason fragments kubectl must print when our webhook refuses.
    pub fragments: Vec<&'static str>,
    /// What kubectl prints instead when the CRD's schema refuses first (the API server validates
    /// the schema before calling validating webhooks): e.g. list-map keys must be unique.
    pub by_schema: Option<Vec<&'static str>>,
}

impl Refusal {
    /// Checks that `kubectl apply` refuses the manifest for the expected reason.
    pub fn check(&self, kubectl: &Kubectl) -> Result<(), String> {
        match (kubectl.rejects(&self.manifest, &self.fragments), &self.by_schema) {
            // A refused apply changes nothing, so applying again to read the other reason is safe.
            (Err(e), Some(schema)) => kubectl.rejects(&self.manifest, schema).map_err(|_| e),
            (outcome, _) => outcome,
        }
    }
}

fn refusal(what: &'static str, object: Value, fragments: &[&'static str]) -> Refusal {
    Refusal {
        what,
        manifest: render(&[object]),
        fragments: fragments.to_vec(),
        by_schema: None,
    }
}

fn class() -> Value {
    quickstart_object("00-clusterclass.yaml", "ClusterClass")
}

fn dev() -> Value {
    quickstart_object("10-cluster-dev.yaml", "Cluster")
}

fn prod() -> Value {
    quickstart_object("11-cluster-prod.yaml", "Cluster")
}

/// `cluster` with variable `name` set to `value` (replaced in place, or appended).
fn with_variable(mut cluster: Value, name: &str, value: Value) -> Value {
    let variables = cluster
        .pointer_mut("/spec/topology/variables")
        .and_then(Value::as_array_mut);
    match variables {
        Some(list) => match list.iter_mut().find(|variable| variable["name"] == name) {
            Some(variable) => variable["value"] = value,
            None => list.push(json!({"name": name, "value": value})),
        },
        None => {
            cluster = with(
                cluster,
                "/spec/topology/variables",
                json!([{"name": name, "value": value}]),
            )
        }
    }
    cluster
}

/// A Cluster of class `class` named `name`, otherwise the dev Cluster.
fn new_cluster(name: &str, class: &str) -> Value {
    let cluster = with(dev(), "/metadata/name", json!(name));
    with(cluster, "/spec/topology/classRef/name", json!(class))
}

/// Classes the refusals need besides the quickstart: `strict` (a required variable without a
/// default) and `quick-start-aws` (other infrastructure kinds: incompatible with quick-start).
pub fn extra_classes() -> Vec<Value> {
    let strict = with(class(), "/metadata/name", json!("strict"));
    let mut strict_variables = strict["spec"]["variables"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    strict_variables.push(json!({
        "name": "region",
        "required": true,
        "schema": {"openAPIV3Schema": {"type": "string", "minLength": 1}},
    }));
    let strict = with(strict, "/spec/variables", Value::Array(strict_variables));

    let aws = with(class(), "/metadata/name", json!("quick-start-aws"));
    let aws = with(
        aws,
        "/spec/infrastructure/templateRef/kind",
        json!("AWSClusterTemplate"),
    );
    vec![strict, aws]
}

/// A ClusterClassRollout that passes its CRD's schema and CEL rules but not the policy's rules:
/// a selector with values for `Exists`, a limit written as a string without `%`, no deadline.
fn bad_rollout_policy() -> Value {
    json!({
        "apiVersion": "rollout.capi-topology.io/v1alpha1", "kind": "ClusterClassRollout",
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {
            "classRef": {"name": "quick-start"},
            "waves": [
                {"name": "canary", "selector": {"matchExpressions": [
                    {"key": "ring", "operator": "Exists", "values": ["canary"]}]}},
                {"name": "fleet", "maxRolling": "5"},
            ],
            "healthGate": {"deadline": "0s"},
        },
    })
}

/// Every refusal; at least one per rule the issue lists.
pub fn cases() -> Vec<Refusal> {
    let mut duplicate = prod();
    duplicate["spec"]["topology"]["workers"]["machineDeployments"][1]["name"] = json!("general");
    let mut unknown_class = dev();
    unknown_class["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = json!("gpu-worker");
    let mixed = with(
        new_cluster("mixed", "quick-start"),
        "/spec/infrastructureRef",
        json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "mixed"}),
    );
    let no_log_level = without(
        without(class(), "/spec/variables", "name", "kubeletLogLevel"),
        "/spec/patches",
        "name",
        "kubeletLogLevel",
    );
    let no_large_worker = without(
        class(),
        "/spec/workers/machineDeployments",
        "class",
        "large-worker",
    );
    let mut bad_path = class();
    bad_path["spec"]["patches"][0]["definitions"][0]["jsonPatches"][0]["path"] = json!("/metadata/labels/x");
    let mut bad_template = class();
    bad_template["spec"]["patches"][1]["definitions"][0]["jsonPatches"][0]["valueFrom"]["template"] =
        json!("{{ .etcd.imageTag ");

    vec![
        refusal(
            "version downgrade",
            with(prod(), "/spec/topology/version", json!("v1.30.5")),
            &[
                r#"spec.topology.version: Invalid value: "v1.30.5": version cannot be decreased from "1.31.2" to "1.30.5""#,
            ],
        ),
        refusal(
            "version that is not semver",
            with(
                new_cluster("bad-version", "quick-start"),
                "/spec/topology/version",
                json!("v1.x"),
            ),
            &[r#"spec.topology.version: Invalid value: "v1.x": version must be a valid semantic version"#],
        ),
        refusal(
            "missing required variable",
            new_cluster("strict-1", "strict"),
            &[
                "spec.topology.variables",
                r#"required variable "region" must be set"#,
            ],
        ),
        refusal(
            "variable value of the wrong type",
            with_variable(prod(), "kubeletLogLevel", json!("four")),
            &[
                "spec.topology.variables[kubeletLogLevel].value: Invalid value:",
                r#"must be of type integer: "string""#,
            ],
        ),
        refusal(
            "variable value above its maximum",
            with_variable(prod(), "kubeletLogLevel", json!(42)),
            &[
                r#"spec.topology.variables[kubeletLogLevel].value: Invalid value: "42": should be less than or equal to 10"#,
            ],
        ),
        refusal(
            "variable value failing a CEL rule",
            with_variable(
                prod(),
                "etcd",
                json!({"imageTag": "3.5.16-0", "dataDir": "relative"}),
            ),
            &[
                "spec.topology.variables[etcd].value: Invalid value:",
                "dataDir must be an absolute path",
            ],
        ),
        refusal(
            "variable the class does not define",
            with_variable(dev(), "region", json!("eu")),
            &[
                "spec.topology.variables[region]: Invalid value:",
                "variable is not defined",
            ],
        ),
        Refusal {
            by_schema: Some(vec![
                r#"Cluster "prod" is invalid: spec.topology.workers.machineDeployments[1]: Duplicate value: {"name":"general"}"#,
            ]),
            ..refusal(
                "duplicate MachineDeployment names",
                duplicate,
                &[
                    r#"spec.topology.workers.machineDeployments[1].name: Invalid value: "general": name must be unique"#,
                ],
            )
        },
        refusal(
            "unknown worker class",
            unknown_class,
            &[
                r#"spec.topology.workers.machineDeployments[0].class: Invalid value: "gpu-worker": MachineDeploymentClass with name "gpu-worker" does not exist in ClusterClass "quick-start""#,
            ],
        ),
        refusal(
            "topology together with infrastructureRef",
            mixed,
            &["spec.infrastructureRef: Forbidden: cannot be set together with spec.topology"],
        ),
        refusal(
            "class change to an incompatible class",
            with(dev(), "/spec/topology/classRef/name", json!("quick-start-aws")),
            &[
                r#"spec.infrastructure.templateRef.kind: Forbidden: kind cannot be changed from "DockerClusterTemplate" to "AWSClusterTemplate""#,
            ],
        ),
        refusal(
            "removing a variable a Cluster uses",
            no_log_level,
            &[
                r#"spec.variables[kubeletLogLevel]: Forbidden: variable "kubeletLogLevel" cannot be removed because it is used by Cluster(s): default/prod"#,
            ],
        ),
        refusal(
            "removing a worker class a Cluster uses",
            no_large_worker,
            &[
                r#"spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "large-worker" cannot be deleted because it is used by Cluster "prod""#,
            ],
        ),
        refusal(
            "JSON patch path outside spec",
            bad_path,
            &[
                "spec.patches[0].definitions[0].jsonPatches[0].path: Invalid value:",
                // v1.14's wording (v1.10 said "/spec/").
                r#"jsonPatch path must start with "/spec""#,
            ],
        ),
        refusal(
            "a rollout policy the CRD's schema lets through",
            bad_rollout_policy(),
            &[
                // kubectl prints a 422 with causes as a list: the words below are our webhook's.
                r#"The ClusterClassRollout "quick-start" is invalid"#,
                "spec.waves[0].selector: Invalid value:",
                "values set must be empty for exists and does not exist",
                r#"spec.waves[1].maxRolling: Invalid value: "5": a number of Clusters"#,
                r#"spec.healthGate.deadline: Invalid value: "0s": must be more than 0"#,
            ],
        ),
        refusal(
            "Go template that does not parse",
            bad_template,
            &[
                "spec.patches[1].definitions[0].jsonPatches[0].valueFrom.template: Invalid value:",
                "template can not be parsed",
            ],
        ),
    ]
}
