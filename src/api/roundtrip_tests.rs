//! Every hub kind, with every field Cluster API v1.14 defines in v1beta2 set, decodes into our
//! types and encodes back to the same JSON.

use pretty_assertions::assert_eq;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::runtime::ExtensionConfig;
use super::*;

/// Decodes `text` as `T` (failing with the JSON path of the problem) and checks the encoding
/// equals the input; returns the typed object for further checks.
fn round_trip<T: DeserializeOwned + Serialize>(text: &str) -> T {
    let input: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("bad YAML: {e}"));
    let typed: T = serde_path_to_error::deserialize(input.clone()).unwrap_or_else(|e| panic!("decode: {e}"));
    let output = serde_json::to_value(&typed).unwrap_or_else(|e| panic!("encode: {e}"));
    assert_eq!(output, input);
    typed
}

#[test]
fn cluster_class_with_every_field() {
    let class: ClusterClass = round_trip(include_str!("testdata/cluster_class_full.yaml"));
    let spec = &class.spec;
    assert_eq!(spec.infrastructure.template_ref.kind, "DockerClusterTemplate");
    assert_eq!(spec.kubernetes_versions.len(), 3);
    assert_eq!(
        spec.upgrade.external.generate_upgrade_plan_extension,
        "upgrade-plan.ext"
    );
    let control_plane = &spec.control_plane;
    assert_eq!(
        control_plane
            .machine_infrastructure_ref()
            .map(|r| r.name.as_str()),
        Some("quick-start-control-plane")
    );
    assert_eq!(
        control_plane.health_check.checks.unhealthy_machine_conditions[0].type_,
        "EtcdHealthy"
    );
    assert_eq!(control_plane.deletion.node_drain_timeout_seconds, Some(60));
    assert_eq!(
        control_plane.taints[1].propagation,
        MachineTaintPropagation::OnInitialization
    );
    assert_eq!(
        control_plane.readiness_gates[1].polarity,
        Some(ConditionPolarity::Positive)
    );
    let md = &spec.workers.machine_deployments[0];
    assert_eq!(md.deletion.order, Some(MachineSetDeletionOrder::Oldest));
    assert_eq!(
        md.health_check.checks.node_startup_timeout_seconds,
        Some(0),
        "0 is kept"
    );
    assert_eq!(
        md.rollout.strategy.type_,
        Some(MachineDeploymentRolloutStrategyType::RollingUpdate)
    );
    assert_eq!(md.taints[0].effect, TaintEffect::PreferNoSchedule);

    let variable = &spec.variables[0];
    assert!(variable.is_required());
    assert_eq!(
        spec.variables[1].required,
        Some(false),
        "an explicit false is kept"
    );
    assert_eq!(variable.deprecated_v1_beta1_metadata.labels["legacy"], "true");
    let schema = &variable.schema.open_api_v3_schema;
    assert!(schema.properties["port"].is_int_or_string());
    assert!(schema.properties["free"].preserves_unknown_fields());
    assert_eq!(schema.properties["number"].exclusive_maximum, Some(false));
    assert_eq!(
        schema.x_validations[0].reason.as_deref(),
        Some("FieldValueForbidden")
    );
    assert_eq!(schema.x_metadata.as_ref().map(|m| m.labels.len()), Some(1));

    let patches = &spec.patches;
    assert_eq!(
        patches[0].definitions[0].selector.match_resources.control_plane,
        Some(true)
    );
    assert_eq!(
        patches[0].definitions[0]
            .selector
            .match_resources
            .infrastructure_cluster,
        Some(false)
    );
    assert_eq!(
        patches[0].definitions[0].json_patches[3].value, None,
        "remove has no value"
    );
    let external = patches[1].external.clone().unwrap_or_default();
    assert_eq!(external.generate_patches_extension, "generate.ext");
    assert_eq!(external.validate_topology_extension, "validate.ext");

    let status = class.status.unwrap_or_default();
    assert!(status.variables[0].has_conflict());
    assert_eq!(status.variables[0].definitions[1].from, "external");
    assert_eq!(status.conditions[0].type_, "VariablesReady");
    let v1beta1 = status.deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    assert_eq!(v1beta1.conditions[0].type_, "VariablesReconciled");
}

#[test]
fn cluster_with_every_field() {
    let cluster: Cluster = round_trip(include_str!("testdata/cluster_full.yaml"));
    assert_eq!(cluster.spec.paused, Some(false), "an explicit false is kept");
    assert!(!cluster.spec.is_paused());
    assert_eq!(
        cluster.spec.infrastructure_ref.api_group,
        "infrastructure.cluster.x-k8s.io"
    );
    let topology = cluster.spec.managed_topology().cloned().unwrap_or_default();
    assert_eq!(topology.class_ref.namespace, "classes");
    assert!(topology.control_plane.rollout.after.is_some());
    assert_eq!(topology.control_plane.health_check.enabled, Some(true));
    assert_eq!(
        topology
            .control_plane
            .health_check
            .remediation
            .trigger_if
            .unhealthy_in_range,
        "[1-2]"
    );
    let md = &topology.workers.machine_deployments[0];
    assert!(
        md.health_check.is_defined(),
        "remediation alone replaces the class's"
    );
    assert_eq!(
        md.rollout.strategy.type_,
        Some(MachineDeploymentRolloutStrategyType::OnDelete)
    );
    assert_eq!(md.deletion.order, Some(MachineSetDeletionOrder::Newest));
    assert_eq!(
        topology.workers.machine_pools[0].variables.overrides[0].value,
        Value::Null
    );

    let status = cluster.typed_status().ok().flatten().unwrap_or_default();
    assert_eq!(status.failure_domains.len(), 2);
    assert_eq!(
        status.failure_domain("fd1").and_then(|d| d.control_plane),
        Some(true)
    );
    assert_eq!(status.initialization.control_plane_initialized, Some(true));
    let workers = status.workers.clone().unwrap_or_default();
    assert_eq!(workers.up_to_date_replicas, Some(4));
    assert_eq!(workers.upgrade_plan[0].version, "v1.35.0");
    let control_plane = status.control_plane.clone().unwrap_or_default();
    assert_eq!(control_plane.versions[1].replicas, 2);
    let v1beta1 = status
        .deprecated
        .clone()
        .and_then(|d| d.v1beta1)
        .unwrap_or_default();
    assert_eq!(v1beta1.failure_reason.as_deref(), Some("InvalidConfiguration"));
    let encoded = serde_json::to_value(&status).ok();
    assert_eq!(
        encoded.as_ref(),
        cluster.status.as_ref(),
        "typed status round-trips"
    );
}

#[test]
fn a_cluster_without_class_has_no_managed_topology() {
    let cluster: Cluster =
        serde_yaml_ng::from_str("spec: {topology: {version: v1.35.0}}").unwrap_or_default();
    assert!(cluster.spec.managed_topology().is_none());
    let bare = serde_json::to_value(Cluster::default()).unwrap_or_default();
    assert_eq!(bare, serde_json::json!({"metadata": {}, "spec": {}}));
}

#[test]
fn typed_status_of_a_cluster_without_status_is_none() {
    assert_eq!(Cluster::default().typed_status().ok(), Some(None));
    let broken = Cluster {
        status: Some(serde_json::json!({"phase": 3})),
        ..Cluster::default()
    };
    assert!(broken.typed_status().is_err());
}

#[test]
fn machine_with_every_field() {
    let machine: Machine = round_trip(include_str!("testdata/machine_full.yaml"));
    assert_eq!(machine.spec.provider_id, "docker:////m1");
    assert_eq!(machine.spec.bootstrap.config_ref.kind, "KubeadmConfig");
    let status = machine.status.unwrap_or_default();
    assert_eq!(status.node_ref.name, "m1-node");
    assert_eq!(status.node_info.map(|i| i.system_uuid).as_deref(), Some("u"));
    assert_eq!(status.addresses[0].type_, "InternalIP");
}

#[test]
fn machine_set_with_every_field() {
    let set: MachineSet = round_trip(include_str!("testdata/machine_set_full.yaml"));
    assert_eq!(set.spec.template.spec.min_ready_seconds, Some(5));
    assert_eq!(set.spec.deletion.order, Some(MachineSetDeletionOrder::Oldest));
    let status = set.status.unwrap_or_default();
    let v1beta1 = status.deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    assert_eq!(v1beta1.fully_labeled_replicas, 2);
}

#[test]
fn machine_deployment_with_every_field() {
    let md: MachineDeployment = round_trip(include_str!("testdata/machine_deployment_full.yaml"));
    assert_eq!(md.spec.template.spec.version, "v1.35.0");
    assert!(md.spec.rollout.after.is_some());
    assert_eq!(md.status.unwrap_or_default().up_to_date_replicas, Some(2));
}

#[test]
fn deprecated_v1beta1_counters_are_always_written() {
    let md: MachineDeployment =
        serde_yaml_ng::from_str("status: {deprecated: {v1beta1: {}}}").unwrap_or_default();
    let encoded = serde_json::to_value(&md).unwrap_or_default();
    assert_eq!(
        encoded["status"]["deprecated"]["v1beta1"],
        serde_json::json!({
            "updatedReplicas": 0, "readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": 0
        })
    );
}

#[test]
fn machine_health_check_with_every_field() {
    let mhc: MachineHealthCheck = round_trip(include_str!("testdata/machine_health_check_full.yaml"));
    assert_eq!(mhc.spec.remediation.trigger_if.unhealthy_in_range, "[1-3]");
    assert_eq!(
        mhc.spec.checks.unhealthy_machine_conditions[0].timeout_seconds,
        Some(30)
    );
    assert_eq!(mhc.status.unwrap_or_default().targets.len(), 3);
}

#[test]
fn machine_pool_with_every_field() {
    let pool: MachinePool = round_trip(include_str!("testdata/machine_pool_full.yaml"));
    assert_eq!(pool.spec.provider_id_list.len(), 2);
    let status = pool.status.unwrap_or_default();
    assert_eq!(status.initialization.bootstrap_data_secret_created, Some(true));
    let v1beta1 = status.deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    assert_eq!(v1beta1.unavailable_replicas, 1);
}

#[test]
fn cluster_resource_set_with_every_field() {
    let set: ClusterResourceSet = round_trip(include_str!("testdata/cluster_resource_set_full.yaml"));
    assert_eq!(set.spec.resources[1].kind, RESOURCE_KIND_CONFIG_MAP);
    let status = set.status.unwrap_or_default();
    assert_eq!(status.conditions[0].type_, "ResourcesApplied");
    let v1beta1 = status.deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    assert_eq!(v1beta1.conditions[0].severity.as_deref(), Some("Warning"));
}

#[test]
fn cluster_resource_set_binding_with_every_field() {
    let binding: ClusterResourceSetBinding =
        round_trip(include_str!("testdata/cluster_resource_set_binding_full.yaml"));
    let set = &binding.spec.bindings[0];
    assert!(set.resources[0].is_applied());
    assert!(set.resources[0].last_applied_time.is_some());
    assert_eq!(set.resources[1].applied, Some(false), "applied: false is kept");
}

#[test]
fn extension_config_with_every_field() {
    let config: ExtensionConfig = round_trip(include_str!("testdata/extension_config_full.yaml"));
    let status = config.status.unwrap_or_default();
    assert_eq!(status.handlers[0].request_hook.hook, "GeneratePatches");
    assert_eq!(status.conditions[0].type_, "Discovered");
}

#[test]
fn go_nulls_read_as_empty() {
    let md: MachineDeploymentTopology =
        serde_json::from_value(serde_json::json!({"metadata": null, "class": "c", "name": "n"}))
            .unwrap_or_default();
    assert!(md.metadata.is_empty());
    let variable: ClusterClassVariable = serde_json::from_value(
        serde_json::json!({"name": "v", "deprecatedV1Beta1Metadata": null, "schema": {"openAPIV3Schema": {}}}),
    )
    .unwrap_or_default();
    assert_eq!(variable.name, "v");
}
