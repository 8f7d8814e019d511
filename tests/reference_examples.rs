//! Cluster API v1.10.10's own e2e ClusterClass (`clusterclass-quick-start.yaml`) and Cluster
//! (`bases/cluster-with-topology.yaml`), copied to tests/fixtures/reference/, planned end to end:
//! the objects, labels, annotations, name shapes and builtins v1.10.10 would create (read from its
//! `exp/topology/desiredstate` and `patches/variables`). Names v1.10.10 draws at random are
//! compared by shape; ours are stable, so the whole plan is also kept as a golden file. These
//! inputs are v1beta1 and reach the engine through the conversion.
//!
//! Cluster API v1.14.0's own v1beta2 templates (`test/infrastructure/docker/templates/`
//! `clusterclass-quick-start.yaml` and `cluster-template-development.yaml`, in
//! tests/fixtures/reference/v1.14/) are planned as they are: the v1beta2 input path.

#[path = "common/plan_cli.rs"]
mod plan_cli;
#[path = "common/tempdir.rs"]
mod tempdir;

use plan_cli::plan;

use serde_json::{json, Value};

const CLASS: &str = "tests/fixtures/reference/clusterclass-quick-start.yaml";
const CLUSTER: &str = "tests/fixtures/reference/cluster-with-topology.yaml";

/// The planned objects of the reference Cluster, its class given `extra_patches`.
fn planned_objects(extra_patches: &[Value]) -> Vec<Value> {
    let class_text = std::fs::read_to_string(CLASS).expect("class");
    let mut documents = capi_topology::store::parse_manifests(&class_text).expect("YAML documents");
    let class = documents
        .iter_mut()
        .find(|d| d["kind"] == "ClusterClass")
        .expect("the class");
    class["spec"]["patches"]
        .as_array_mut()
        .expect("patches")
        .extend(extra_patches.iter().cloned());
    let cluster_text = std::fs::read_to_string(CLUSTER).expect("cluster");
    documents.push(serde_yaml_ng::from_str(&cluster_text).expect("the Cluster"));
    let dir = tempdir::Dir::new("reference");
    let file = dir.join("all.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": documents});
    std::fs::write(&file, list.to_string()).expect("write");
    let (code, out, err) = plan(&["-f", &file.to_string_lossy(), "-o", "json"]);
    drop(dir);
    assert_eq!(code, 0, "{err}");
    let planned: Value = serde_json::from_str(&out).expect("JSON");
    planned
        .pointer("/0/objects")
        .or_else(|| planned.pointer("/items"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| panic!("{out}"))
}

fn of_kind<'o>(objects: &'o [Value], kind: &str) -> Vec<&'o Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn one<'o>(objects: &'o [Value], kind: &str) -> &'o Value {
    match of_kind(objects, kind).as_slice() {
        [object] => object,
        other => panic!("{} {kind}", other.len()),
    }
}

/// `{prefix}{5 lowercase alphanumerics}`, the shape of Cluster API's generated names.
fn generated(name: &Value, prefix: &str) -> bool {
    name.as_str()
        .and_then(|n| n.strip_prefix(prefix))
        .is_some_and(|suffix| {
            suffix.len() == 5
                && suffix
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

#[test]
fn the_reference_cluster_plans_as_its_golden_file() {
    let (code, out, err) = plan(&["-f", CLASS, CLUSTER]);
    assert_eq!((code, err.as_str()), (0, ""));
    let golden =
        std::fs::read_to_string("tests/fixtures/reference/quick-start-e2e.plan.yaml").expect("golden");
    assert_eq!(out, golden);
}

const V114_CLASS: &str = "tests/fixtures/reference/v1.14/clusterclass-quick-start.yaml";
const V114_CLUSTER: &str = "tests/fixtures/reference/v1.14/cluster-template-development.yaml";

#[test]
fn the_v1_14_development_cluster_plans_as_its_golden_file() {
    let (code, out, err) = plan(&["-f", V114_CLASS, V114_CLUSTER]);
    assert_eq!((code, err.as_str()), (0, ""));
    let golden =
        std::fs::read_to_string("tests/fixtures/reference/v1.14/capi-quickstart.plan.yaml").expect("golden");
    assert_eq!(out, golden);
}

#[test]
fn the_v1_14_development_cluster_gets_v1beta2_objects() {
    let (code, out, err) = plan(&["-f", V114_CLASS, V114_CLUSTER, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let planned: Value = serde_json::from_str(&out).expect("JSON");
    let objects = planned["items"].as_array().expect("items").clone();
    let cluster = one(&objects, "Cluster");
    let control_plane = one(&objects, "KubeadmControlPlane");
    assert_eq!(
        cluster["spec"]["controlPlaneRef"],
        json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane",
            "name": control_plane["metadata"]["name"]})
    );
    // A v1beta2 control plane (v1beta2 contract): its machines' infrastructure under
    // machineTemplate.spec, as a contract-versioned reference.
    let machines = &control_plane["spec"]["machineTemplate"];
    assert_eq!(machines.get("infrastructureRef"), None);
    assert_eq!(
        machines["spec"]["infrastructureRef"]["apiGroup"],
        "infrastructure.cluster.x-k8s.io"
    );
    let machine_template = of_kind(&objects, "DevMachineTemplate")
        .into_iter()
        .find(|t| t["metadata"]["name"] == machines["spec"]["infrastructureRef"]["name"])
        .expect("the control plane's machine template");
    assert_eq!(
        machine_template["apiVersion"],
        "infrastructure.cluster.x-k8s.io/v1beta2"
    );
    let deployment = one(&objects, "MachineDeployment");
    assert_eq!(deployment["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["bootstrap"]["configRef"]["apiGroup"],
        "bootstrap.cluster.x-k8s.io"
    );
    for check in of_kind(&objects, "MachineHealthCheck") {
        assert_eq!(
            check["spec"]["checks"]["unhealthyMachineConditions"][0]["type"],
            "NodeReady"
        );
    }
}

#[test]
fn objects_carry_the_labels_annotations_and_name_shapes_of_v1_10_10() {
    let objects = planned_objects(&[]);
    let owned = ("topology.cluster.x-k8s.io/owned", "");
    let cluster_name = ("cluster.x-k8s.io/cluster-name", "quick-start-e2e");
    let has = |object: &Value, field: &str, (key, value): (&str, &str)| {
        assert_eq!(
            object["metadata"][field][key], value,
            "{} {}: {field} {key}",
            object["kind"], object["metadata"]["name"]
        );
    };
    for object in objects.iter().filter(|o| o["kind"] != "Cluster") {
        has(object, "labels", cluster_name);
        if object["kind"] != "MachineHealthCheck" {
            has(object, "labels", owned);
        }
    }

    // The infrastructure cluster: the template's spec.template.metadata, `{cluster}-{random}`.
    let infrastructure = one(&objects, "DockerCluster");
    assert!(generated(&infrastructure["metadata"]["name"], "quick-start-e2e-"));
    has(
        infrastructure,
        "labels",
        (
            "InfrastructureClusterTemplate.template.label",
            "InfrastructureClusterTemplate.template.labelValue",
        ),
    );
    has(
        infrastructure,
        "annotations",
        ("cluster.x-k8s.io/cloned-from-name", "quick-start-cluster"),
    );
    assert_eq!(
        infrastructure["spec"]["loadBalancer"]["imageRepository"],
        "kindest"
    );

    // The control plane: template, class and topology metadata; the machines get the template's
    // machineTemplate.metadata under the class's and topology's.
    let control_plane = one(&objects, "KubeadmControlPlane");
    for (field, key) in [
        ("labels", "ControlPlaneTemplate.template.label"),
        ("labels", "ClusterClass.controlPlane.label"),
        ("labels", "Cluster.topology.controlPlane.label"),
        ("annotations", "ClusterClass.controlPlane.annotation"),
        ("annotations", "Cluster.topology.controlPlane.annotation"),
    ] {
        assert!(
            control_plane["metadata"][field].get(key).is_some(),
            "{field} {key}"
        );
    }
    let machines = &control_plane["spec"]["machineTemplate"];
    let machine_labels = &machines["metadata"]["labels"];
    assert_eq!(
        machine_labels["ControlPlaneTemplate.machineTemplate.label"],
        "ControlPlaneTemplate.machineTemplate.labelValue"
    );
    assert_eq!(
        machine_labels["Cluster.topology.controlPlane.label.node.cluster.x-k8s.io"],
        "Cluster.topology.controlPlane.nodeLabelValue"
    );
    assert_eq!(machine_labels.get("ControlPlaneTemplate.template.label"), None);
    assert_eq!(
        machines["metadata"]["annotations"]["ClusterClass.controlPlane.annotation"],
        "ClusterClass.controlPlane.annotationValue"
    );
    assert_eq!(
        machines["metadata"]["annotations"].get("cluster.x-k8s.io/cloned-from-name"),
        None
    );
    assert_eq!(
        (
            machines["nodeDeletionTimeout"].clone(),
            machines["nodeVolumeDetachTimeout"].clone()
        ),
        // The v1beta1 durations become seconds on the hub; the v1beta1-contract control plane gets
        // them back as Go prints a metav1.Duration, as v1.14 writes them.
        (json!("30s"), json!("5m0s"))
    );
    assert_eq!(
        (
            control_plane["spec"]["version"].clone(),
            control_plane["spec"]["replicas"].clone()
        ),
        (json!("v1.32.0"), json!(1))
    );

    // Template clones: `{cluster}-{random}` for the control plane's, `{cluster}-{topology}-{random}`
    // for a MachineDeployment's (which also carry its topology name); the class template's metadata.
    let machine_templates = of_kind(&objects, "DockerMachineTemplate");
    let cp_template = machine_templates
        .iter()
        .find(|t| t["metadata"]["name"] == machines["infrastructureRef"]["name"])
        .expect("the control plane's machine template");
    assert!(generated(&cp_template["metadata"]["name"], "quick-start-e2e-"));
    has(
        cp_template,
        "labels",
        (
            "InfraMachineTemplate.controlPlane.label",
            "InfraMachineTemplate.controlPlane.labelValue",
        ),
    );
    assert_eq!(
        cp_template["spec"]["template"]["spec"]["customImage"],
        "kindest/node:v1.32.0"
    );
    let deployment = one(&objects, "MachineDeployment");
    let worker = &deployment["spec"]["template"]["spec"];
    for (kind, reference, label) in [
        (
            "KubeadmConfigTemplate",
            &worker["bootstrap"]["configRef"],
            "BootstrapConfigTemplate.machineDeployment.label",
        ),
        (
            "DockerMachineTemplate",
            &worker["infrastructureRef"],
            "InfraMachineTemplate.machineDeployment.label",
        ),
    ] {
        let template = of_kind(&objects, kind)
            .into_iter()
            .find(|t| t["metadata"]["name"] == reference["name"])
            .expect("the worker's template");
        assert!(generated(&template["metadata"]["name"], "quick-start-e2e-md-0-"));
        assert!(template["metadata"]["labels"].get(label).is_some(), "{label}");
        has(
            template,
            "labels",
            ("topology.cluster.x-k8s.io/deployment-name", "md-0"),
        );
    }

    // The MachineDeployment: class then topology metadata on it and its machines, its selector.
    assert!(generated(
        &deployment["metadata"]["name"],
        "quick-start-e2e-md-0-"
    ));
    for metadata in [
        &deployment["metadata"],
        &deployment["spec"]["template"]["metadata"],
    ] {
        assert_eq!(
            metadata["labels"]["ClusterClass.machineDeployment.label"],
            "ClusterClass.machineDeployment.labelValue"
        );
        assert_eq!(
            metadata["labels"]["topology.cluster.x-k8s.io/deployment-name"],
            "md-0"
        );
        assert_eq!(
            metadata["annotations"]["Cluster.topology.md.annotation.node.cluster.x-k8s.io"],
            "Cluster.topology.machineDeployment.nodeAnnotationValue"
        );
    }
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"],
        json!({"cluster.x-k8s.io/cluster-name": "quick-start-e2e", "topology.cluster.x-k8s.io/owned": "",
            "topology.cluster.x-k8s.io/deployment-name": "md-0"})
    );
    assert_eq!(worker["failureDomain"], "fd4");
    assert_eq!(
        deployment["spec"]["rollout"]["strategy"]["rollingUpdate"]["maxSurge"],
        "20%"
    );

    // Health checks: the class's settings with the v1beta2 webhook's default (v1beta2 has no
    // maxUnhealthy default).
    let checks = of_kind(&objects, "MachineHealthCheck");
    assert_eq!(checks.len(), 2);
    for check in checks {
        assert_eq!(check["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert_eq!(check["spec"]["checks"]["nodeStartupTimeoutSeconds"], 600);
        assert_eq!(check["spec"].get("maxUnhealthy"), None);
        has(check, "labels", owned);
    }

    // The MachinePool's objects: instantiated from the templates, with its pool name.
    for kind in ["KubeadmConfig", "DockerMachinePool", "MachinePool"] {
        let object = one(&objects, kind);
        assert!(
            generated(&object["metadata"]["name"], "quick-start-e2e-mp-0-"),
            "{kind}"
        );
        has(object, "labels", ("topology.cluster.x-k8s.io/pool-name", "mp-0"));
    }
    let pool = one(&objects, "MachinePool");
    assert_eq!(
        pool["metadata"]["annotations"]["Cluster.topology.machinePool.annotation"],
        "Cluster.topology.machinePool.annotationValue"
    );
    assert_eq!(
        one(&objects, "DockerMachinePool")["spec"]["template"]["customImage"],
        "kindest/node:v1.32.0"
    );
}

/// A patch writing the whole `builtin` variable into a template of `selector`.
fn dump(name: &str, api_version: &str, kind: &str, match_resources: Value) -> Value {
    json!({"name": name, "definitions": [{
        "selector": {"apiVersion": api_version, "kind": kind, "matchResources": match_resources},
        "jsonPatches": [{"op": "add", "path": "/spec/template/spec/builtin", "valueFrom": {"template": "{{ toJson .builtin }}"}}]}]})
}

/// The `metadata` builtin of an object: its labels and annotations.
fn metadata_of(object: &Value) -> Value {
    json!({"labels": object["metadata"]["labels"], "annotations": object["metadata"]["annotations"]})
}

#[test]
fn builtins_are_those_v1_10_10_gives_each_template() {
    let bootstrap = "bootstrap.cluster.x-k8s.io/v1beta1";
    let objects = planned_objects(&[
        dump(
            "dumpControlPlane",
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlaneTemplate",
            json!({"controlPlane": true}),
        ),
        dump(
            "dumpMachineDeployment",
            bootstrap,
            "KubeadmConfigTemplate",
            json!({"machineDeploymentClass": {"names": ["default-worker"]}}),
        ),
        dump(
            "dumpMachinePool",
            bootstrap,
            "KubeadmConfigTemplate",
            json!({"machinePoolClass": {"names": ["default-worker"]}}),
        ),
    ]);
    let cluster = json!({"name": "quick-start-e2e", "namespace": "default",
        // The desired Cluster's labels: its own and the two the topology sets on it (v1.14 computeCluster).
        "metadata": {"labels": {"cni": "quick-start-e2e-crs-0", "cluster.x-k8s.io/cluster-name": "quick-start-e2e",
            "topology.cluster.x-k8s.io/owned": ""}},
        // v1.14: `classRef` besides the deprecated class/classNamespace, no `network.ipFamily`.
        "topology": {"version": "v1.32.0", "classRef": {"name": "quick-start", "namespace": "default"},
            "class": "quick-start", "classNamespace": "default"},
        "network": {"serviceDomain": "cluster.local", "services": ["10.128.0.0/12"], "pods": ["192.168.0.0/16"]}});

    let control_plane = one(&objects, "KubeadmControlPlane");
    assert_eq!(
        control_plane["spec"]["builtin"],
        json!({"cluster": cluster, "controlPlane": {
            "name": control_plane["metadata"]["name"], "version": "v1.32.0", "replicas": 1,
            "metadata": metadata_of(control_plane),
            "machineTemplate": {"infrastructureRef": {"name": control_plane["spec"]["machineTemplate"]["infrastructureRef"]["name"]}}}})
    );

    let deployment = one(&objects, "MachineDeployment");
    let worker = &deployment["spec"]["template"]["spec"];
    let template = of_kind(&objects, "KubeadmConfigTemplate")
        .into_iter()
        .find(|t| t["metadata"]["name"] == worker["bootstrap"]["configRef"]["name"])
        .expect("the worker's bootstrap template");
    assert_eq!(
        template["spec"]["template"]["spec"]["builtin"],
        json!({"cluster": cluster, "machineDeployment": {
            "version": "v1.32.0", "class": "default-worker", "name": deployment["metadata"]["name"], "topologyName": "md-0",
            "replicas": 1, "metadata": metadata_of(deployment),
            "bootstrap": {"configRef": {"name": worker["bootstrap"]["configRef"]["name"]}},
            "infrastructureRef": {"name": worker["infrastructureRef"]["name"]}}})
    );

    let pool = one(&objects, "MachinePool");
    let machine = &pool["spec"]["template"]["spec"];
    assert_eq!(
        one(&objects, "KubeadmConfig")["spec"]["builtin"],
        json!({"cluster": cluster, "machinePool": {
            "version": "v1.32.0", "class": "default-worker", "name": pool["metadata"]["name"], "topologyName": "mp-0",
            "replicas": 1, "metadata": metadata_of(pool),
            "bootstrap": {"configRef": {"name": machine["bootstrap"]["configRef"]["name"]}},
            "infrastructureRef": {"name": machine["infrastructureRef"]["name"]}}})
    );
}
