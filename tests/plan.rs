//! `capi-topology plan` end to end: golden outputs on the quickstart and its upgrade.

#[path = "common/plan_cli.rs"]
mod plan_cli;
#[path = "common/tempdir.rs"]
mod tempdir;

use plan_cli::plan;

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/plan/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("golden file")
}

#[test]
fn quickstart_dev_desired_state_matches_golden() {
    let (code, out, err) = plan(&[
        "-f",
        "examples/quickstart/00-clusterclass.yaml",
        "examples/quickstart/10-cluster-dev.yaml",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, golden("quickstart-dev.yaml"));
}

#[test]
fn upgrade_rotates_the_control_plane_template_and_holds_workers_back() {
    let (code, out, _) = plan(&[
        "-f",
        "examples/quickstart/00-clusterclass.yaml",
        "examples/quickstart-upgrade/",
        "-o",
        "diff",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out, golden("quickstart-upgrade.diff"));
    assert!(
        !out.contains("changed MachineDeployment"),
        "workers wait for the control plane: {out}"
    );
    assert!(out.contains(
        "= held MachineDeploymentsUpgradePending: MachineDeployment(s) dev-md-0-98d6r rollout and upgrade to v1.32.0 on hold: the control plane upgrades to v1.32.0 first"
    ));
}

#[test]
fn a_three_minor_upgrade_is_shown_step_by_step() {
    let args = [
        "-f",
        "examples/quickstart-chained-upgrade/",
        "examples/quickstart-upgrade/20-current-dev.yaml",
    ];
    let (code, out, err) = plan(&[&args[..], &["-o", "diff"]].concat());
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, golden("quickstart-chained-upgrade.diff"));
    assert!(
        out.contains("spec.version: \"v1.31.2\" -> \"v1.32.0\""),
        "the first step only: {out}"
    );
    let (code, json, _) = plan(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, 0);
    let list: serde_json::Value = serde_json::from_str(&json).unwrap();
    let steps = list["upgradePlan"]["steps"].as_array().unwrap();
    let versions: Vec<&str> = steps
        .iter()
        .map(|s| s["controlPlane"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1.32.0", "v1.33.1", "v1.34.0"]);
    assert_eq!(steps[2]["workersVersion"], "v1.34.0");
    assert_eq!(steps[0]["hooks"][0], "BeforeClusterUpgrade");
}

#[test]
fn whole_quickstart_plans_every_cluster() {
    let (code, out, err) = plan(&["-f", "examples/quickstart/", "-o", "json"]);
    assert_eq!((code, err.as_str()), (0, ""));
    // One JSON document, as kubectl prints several objects: a List of both Clusters' objects.
    let list: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.iter().filter(|o| o["kind"] == "Cluster").count(), 2);
    assert_eq!(
        items.iter().filter(|o| o["kind"] == "MachineDeployment").count(),
        3,
        "{out}"
    );
}

#[test]
fn failing_patch_is_reported_with_its_name() {
    let (code, out, err) = plan(&["-f", "tests/fixtures/plan/bad-patch.yaml"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err.trim(),
        "Cluster default/c1: patch \"broken\": cannot apply to DockerClusterTemplate \"c\": operation '/0' failed at path '/spec/template/spec/missing/deep': path is invalid"
    );
}

mod engine {
    use capi_topology::api::Cluster;
    use capi_topology::patches::external::NoExternalPatches;
    use capi_topology::store::{MemoryStore, ObjectSource};
    use capi_topology::topology::{plan, Blueprint, Current, Plan};
    use serde_json::{json, Value};

    const FIXTURE: &str = include_str!("fixtures/plan/bench-10md-40patches.yaml");

    fn setup() -> (Blueprint, Cluster) {
        let store = MemoryStore::from_yaml(FIXTURE).unwrap();
        let class = store.cluster_class("default", "bench").unwrap().class.clone();
        let cluster = store
            .get("cluster.x-k8s.io", "Cluster", "default", "bench")
            .unwrap();
        (
            Blueprint::new(class, &store).unwrap(),
            serde_json::from_value((*cluster).clone()).unwrap(),
        )
    }

    fn names(plan: &Plan, kind: &str) -> Vec<String> {
        plan.objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn every_worker_gets_its_objects_and_patches() {
        let (blueprint, cluster) = setup();
        assert!(
            !blueprint.reads_generated_names,
            "the benchmark's class reads no generated names: it is patched once"
        );
        let planned = plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap();
        assert_eq!(names(&planned, "MachineDeployment").len(), 10);
        assert_eq!(names(&planned, "MachineHealthCheck").len(), 0);
        let md3 = planned
            .objects
            .iter()
            .find(|o| {
                o["kind"] == "MachineDeployment"
                    && o["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"] == "md-3"
            })
            .unwrap();
        assert_eq!(md3["spec"]["replicas"], json!(4));
        assert_eq!(md3["spec"]["template"]["spec"]["version"], json!("v1.31.2"));
        let cp = planned
            .objects
            .iter()
            .find(|o| o["kind"] == "KubeadmControlPlane")
            .unwrap();
        assert_eq!(cp["spec"]["kubeadmConfigSpec"]["f1"], json!("value-1"));
        assert_eq!(
            cp["spec"]["kubeadmConfigSpec"]["f5"],
            json!({"n": 5, "list": [1, 2, 3]})
        );
        assert_eq!(cp["spec"]["replicas"], json!(3));
        assert_eq!(
            planned.cluster["spec"]["controlPlaneRef"]["name"],
            cp["metadata"]["name"]
        );
    }

    #[test]
    fn unchanged_templates_keep_their_names_and_changed_ones_rotate() {
        let (blueprint, mut cluster) = setup();
        let first = plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap();
        let current = Current {
            objects: first.objects.clone(),
        };
        let again = plan(&blueprint, &cluster, &current, &NoExternalPatches).unwrap();
        assert_eq!(again.objects, first.objects);
        // v2 feeds the worker DockerMachineTemplates (p22) and the infrastructure cluster (p12), which is
        // not a template: its name stays.
        let topology = &mut cluster.spec.topology;
        topology.variables[2].value = Value::String("changed".into());
        let rotated = plan(&blueprint, &cluster, &current, &NoExternalPatches).unwrap();
        let before = names(&first, "DockerMachineTemplate");
        let after = names(&rotated, "DockerMachineTemplate");
        assert_eq!(before.len(), after.len());
        assert!(
            before.iter().zip(&after).any(|(b, a)| b != a),
            "some template rotated"
        );
        assert_eq!(
            names(&first, "KubeadmConfigTemplate"),
            names(&rotated, "KubeadmConfigTemplate")
        );
        assert_eq!(
            names(&first, "MachineDeployment"),
            names(&rotated, "MachineDeployment")
        );
    }
}

/// Patches read the generated template names (`builtin.controlPlane.machineTemplate.infrastructureRef.name`,
/// `builtin.machineDeployment.{bootstrap.configRef,infrastructureRef}.name`, `builtin.machinePool.infrastructureRef.name`):
/// each is the name the clone or object really gets, the next plan keeps them all, and a changed
/// template renames both the clone and the clones that record its name.
mod template_names {
    use capi_topology::api::Cluster;
    use capi_topology::patches::external::NoExternalPatches;
    use capi_topology::store::{MemoryStore, ObjectSource};
    use capi_topology::topology::{plan, Blueprint, Current, Plan};
    use serde_json::Value;

    const FIXTURE: &str = include_str!("fixtures/plan/template-names.yaml");

    fn setup() -> (Blueprint, Cluster) {
        let store = MemoryStore::from_yaml(FIXTURE).unwrap();
        let class = store.cluster_class("default", "names").unwrap().class.clone();
        let cluster = store.get("cluster.x-k8s.io", "Cluster", "default", "c1").unwrap();
        (
            Blueprint::new(class, &store).unwrap(),
            serde_json::from_value((*cluster).clone()).unwrap(),
        )
    }

    fn object<'p>(plan: &'p Plan, kind: &str, label: (&str, &str)) -> &'p Value {
        plan.objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["labels"][label.0] == label.1)
            .unwrap_or_else(|| panic!("no {kind} with {label:?}"))
    }

    fn file<'v>(spec: &'v Value, path: &str) -> &'v Value {
        let files = spec["files"].as_array().expect("files");
        &files.iter().find(|f| f["path"] == path).expect("file")["content"]
    }

    const DEPLOYMENT: (&str, &str) = ("topology.cluster.x-k8s.io/deployment-name", "md-0");

    /// The names a worker's MachineDeployment references, and what its templates recorded.
    fn worker(plan: &Plan) -> (Value, Value, Value) {
        let md = object(plan, "MachineDeployment", DEPLOYMENT);
        let machine = &md["spec"]["template"]["spec"];
        let bootstrap = object(plan, "KubeadmConfigTemplate", DEPLOYMENT);
        let infrastructure = object(plan, "DockerMachineTemplate", DEPLOYMENT);
        assert_eq!(
            bootstrap["metadata"]["name"],
            machine["bootstrap"]["configRef"]["name"]
        );
        assert_eq!(
            infrastructure["metadata"]["name"],
            machine["infrastructureRef"]["name"]
        );
        let spec = &bootstrap["spec"]["template"]["spec"];
        assert_eq!(
            file(spec, "/etc/bootstrap-template"),
            &bootstrap["metadata"]["name"]
        );
        assert_eq!(
            file(spec, "/etc/machine-template"),
            &infrastructure["metadata"]["name"]
        );
        let own = &infrastructure["spec"]["template"]["spec"]["extraMounts"][0]["containerPath"];
        assert_eq!(
            own.as_str().unwrap(),
            format!("/{}", infrastructure["metadata"]["name"].as_str().unwrap())
        );
        (
            bootstrap["metadata"]["name"].clone(),
            infrastructure["metadata"]["name"].clone(),
            infrastructure["spec"]["template"]["spec"]["customImage"].clone(),
        )
    }

    #[test]
    fn patches_see_the_names_the_clones_get_and_the_next_plan_keeps_them() {
        let (blueprint, mut cluster) = setup();
        assert!(blueprint.reads_generated_names);
        let first = plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap();
        let cp = first
            .objects
            .iter()
            .find(|o| o["kind"] == "KubeadmControlPlane")
            .unwrap();
        let machine_template = &cp["spec"]["machineTemplate"]["infrastructureRef"]["name"];
        assert!(machine_template.as_str().unwrap().starts_with("c1-"));
        assert_eq!(
            file(&cp["spec"]["kubeadmConfigSpec"], "/etc/machine-template"),
            machine_template
        );
        let (bootstrap, infrastructure, _) = worker(&first);
        assert!(infrastructure.as_str().unwrap().starts_with("c1-md-0-"));
        let pool = ("topology.cluster.x-k8s.io/pool-name", "mp-0");
        let pool_config = object(&first, "KubeadmConfig", pool);
        let pool_infrastructure = object(&first, "DockerMachinePool", pool);
        assert_eq!(
            file(&pool_config["spec"], "/etc/machine-pool"),
            &pool_infrastructure["metadata"]["name"]
        );

        let current = Current {
            objects: first.objects.clone(),
        };
        let again = plan(&blueprint, &cluster, &current, &NoExternalPatches).unwrap();
        assert_eq!(again.objects, first.objects, "a steady plan keeps every name");

        cluster.spec.topology.variables[0].value = Value::String("kindest/node:v1.32.0".into());
        let rotated = plan(&blueprint, &cluster, &current, &NoExternalPatches).unwrap();
        let (new_bootstrap, new_infrastructure, image) = worker(&rotated);
        assert_eq!(image, "kindest/node:v1.32.0");
        assert_ne!(new_infrastructure, infrastructure, "the changed template rotates");
        assert_ne!(
            new_bootstrap, bootstrap,
            "the template recording its name rotates with it"
        );
        let settled = Current {
            objects: rotated.objects.clone(),
        };
        let after = plan(&blueprint, &cluster, &settled, &NoExternalPatches).unwrap();
        assert_eq!(after.objects, rotated.objects);
    }

    #[test]
    fn the_control_plane_machines_keep_the_templates_metadata_under_the_topologys() {
        let (blueprint, cluster) = setup();
        let planned = plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap();
        let cp = planned
            .objects
            .iter()
            .find(|o| o["kind"] == "KubeadmControlPlane")
            .unwrap();
        let labels = &cp["spec"]["machineTemplate"]["metadata"]["labels"];
        assert_eq!(labels["from-template"], "yes");
        assert_eq!(
            labels["cluster.x-k8s.io/cluster-name"], "c1",
            "the topology's value wins"
        );
        assert_eq!(labels["topology.cluster.x-k8s.io/owned"], "");
        let bootstrap = object(&planned, "KubeadmConfigTemplate", DEPLOYMENT);
        assert_eq!(bootstrap["metadata"]["labels"]["provider-label"], "kept");
    }
}

/// Patches read `builtin.controlPlane.metadata`, `builtin.machineDeployment.metadata` and (in a
/// template) the whole `builtin` variable: the desired objects' labels and annotations, as v1.10.10 gives them.
#[test]
fn patches_read_metadata_builtins_and_the_whole_builtin() {
    let class_text = std::fs::read_to_string("examples/quickstart/00-clusterclass.yaml").expect("class");
    let mut documents = capi_topology::store::parse_manifests(&class_text).expect("YAML documents");
    let class = documents
        .iter_mut()
        .find(|d| d["kind"] == "ClusterClass")
        .expect("the class");
    let patch: serde_json::Value = serde_json::json!({"name": "builtinMetadata", "definitions": [
        {"selector": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
            "matchResources": {"controlPlane": true}},
         "jsonPatches": [
            {"op": "add", "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/clusterName",
             "valueFrom": {"template": "{{ index .builtin.controlPlane.metadata.labels \"team\" }}-{{ index .builtin.controlPlane.metadata.annotations \"owner\" }}"}},
            // `valueFrom.variable: builtin` is refused by the class webhook, as v1.10.10 refuses it;
            // a template reads the whole variable.
            {"op": "add", "path": "/spec/template/spec/builtinCopy", "valueFrom": {"template": "{{ toJson .builtin }}"}}]},
        {"selector": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
            "matchResources": {"machineDeploymentClass": {"names": ["default-worker"]}}},
         "jsonPatches": [{"op": "add", "path": "/spec/template/spec/mdLabels",
             "valueFrom": {"variable": "builtin.machineDeployment.metadata.labels"}}]}]});
    class["spec"]["patches"]
        .as_array_mut()
        .expect("patches")
        .push(patch);
    let mut cluster: serde_json::Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string("examples/quickstart/10-cluster-dev.yaml").expect("cluster"),
    )
    .expect("the Cluster");
    cluster["spec"]["topology"]["controlPlane"]["metadata"] =
        serde_json::json!({"labels": {"team": "blue"}, "annotations": {"owner": "ops"}});
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["metadata"] =
        serde_json::json!({"labels": {"tier": "web"}});
    documents.push(cluster);
    let dir = tempdir::Dir::new("builtins");
    let file = dir.join("all.json");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": documents});
    std::fs::write(&file, list.to_string()).expect("write");
    let (code, out, err) = plan(&["-f", &file.to_string_lossy(), "-o", "json"]);
    drop(dir);
    assert_eq!(code, 0, "{err}");
    let planned: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let objects: Vec<&serde_json::Value> = planned
        .pointer("/0/objects")
        .or_else(|| planned.pointer("/items"))
        .and_then(serde_json::Value::as_array)
        .map(|items| items.iter().collect())
        .unwrap_or_else(|| panic!("{out}"));
    let of_kind = |kind: &str| {
        *objects
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {out}"))
    };
    let control_plane = of_kind("KubeadmControlPlane");
    assert_eq!(
        control_plane["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["clusterName"],
        "blue-ops"
    );
    let copy = &control_plane["spec"]["builtinCopy"];
    assert_eq!(copy["cluster"]["name"], "dev");
    assert_eq!(
        copy["controlPlane"]["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
        "dev"
    );
    assert_eq!(copy["controlPlane"]["metadata"]["annotations"]["owner"], "ops");
    let bootstrap = of_kind("KubeadmConfigTemplate");
    let labels = &bootstrap["spec"]["template"]["spec"]["mdLabels"];
    assert_eq!(labels["tier"], "web");
    assert_eq!(labels["topology.cluster.x-k8s.io/deployment-name"], "md-0");
}

#[test]
fn resource_sets_list_what_they_would_apply_to_each_cluster() {
    let files = [
        "-f",
        "tests/fixtures/addons/calico.yaml",
        "tests/fixtures/addons/plan-refused.yaml",
    ];
    let (code, out, err) = plan(&[&files[..], &["-o", "diff"]].concat());
    // Each resource that cannot be read is said once on stderr, and fails the plan.
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "ClusterResourceSet crs2: ConfigMap absent: not found in the files\n\
             ClusterResourceSet crs2: Secret untyped: unsupported secret type \"Opaque\": a ClusterResourceSet reads \
             only Secrets of type \"addons.cluster.x-k8s.io/resource-set\"\n"
        )
    );
    assert_eq!(
        out,
        "Cluster default/c1 ClusterResourceSets:
  crs1 (ApplyOnce):
    Secret db-secret:
      + Secret system/mysql-access
      + ClusterRole db-admin
    ConfigMap calico-addon:
      + Secret mysecrets/calico-secret1
      + Secret mysecrets/calico-secret2
      + ConfigMap myconfigmaps/calico-configmap
  crs2 (Reconcile):
    Secret untyped: unsupported secret type \"Opaque\": a ClusterResourceSet reads only Secrets of type \"addons.cluster.x-k8s.io/resource-set\"
    ConfigMap absent: not found in the files
Cluster default/c2 ClusterResourceSets:
  none selects it
"
    );
    let (code, json, _) = plan(&[&files[..], &["-o", "json"]].concat());
    assert_eq!(code, 1, "the broken resources fail -o json too");
    let list: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    let first = &list["clusterResourceSets"][0];
    assert_eq!(first["cluster"], "default/c1");
    assert_eq!(
        first["clusterResourceSets"][0]["resources"][0]["objects"][1],
        "ClusterRole db-admin"
    );
    assert_eq!(
        first["clusterResourceSets"][1]["resources"][1]["error"],
        "not found in the files"
    );
    let (_, yaml, _) = plan(&[&files[..]].concat());
    assert!(
        yaml.lines().all(|line| line.starts_with('#')),
        "comments only: {yaml}"
    );
}

/// Inline patches writing outside `spec.template.spec` (the template's metadata, the spec around
/// the template): Cluster API v1.10.10 keeps only `spec.template.spec` of a patched template, so
/// the desired objects carry none of those effects; the spec around the template still carries
/// from one patch to the next.
mod patch_outside_template_spec {
    use capi_topology::api::Cluster;
    use capi_topology::patches::external::NoExternalPatches;
    use capi_topology::store::{MemoryStore, ObjectSource};
    use capi_topology::topology::{plan, Blueprint, Current};
    use serde_json::{json, Value};

    const FIXTURE: &str = include_str!("fixtures/plan/patch-outside-template-spec.yaml");

    #[test]
    fn has_no_effect_on_the_desired_objects() {
        let store = MemoryStore::from_yaml(FIXTURE).unwrap();
        let class = store.cluster_class("default", "c").unwrap().class.clone();
        let cluster = store.get("cluster.x-k8s.io", "Cluster", "default", "c1").unwrap();
        let cluster: Cluster = serde_json::from_value((*cluster).clone()).unwrap();
        let blueprint = Blueprint::new(class, &store).unwrap();
        let planned = plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap();
        let object = |kind: &str| -> &Value {
            planned
                .objects
                .iter()
                .find(|o| o["kind"] == kind)
                .unwrap_or_else(|| panic!("no {kind}"))
        };
        let infra = object("DockerCluster");
        assert_eq!(infra["spec"], json!({"kept": "kept"}));
        assert_eq!(infra["metadata"]["labels"]["class"], json!("c"));
        assert_eq!(infra["metadata"]["labels"].get("patched"), None);
        let machines = object("DockerMachineTemplate");
        assert_eq!(machines["metadata"]["labels"]["template"], json!("w"));
        assert_eq!(machines["metadata"]["labels"].get("patched"), None);
        assert_eq!(machines["spec"]["template"]["spec"], json!({"kept": "kept"}));
        assert_eq!(
            machines["spec"]["template"]["metadata"],
            json!({"labels": {"class": "w"}})
        );
    }
}

/// `builtin.cluster.metadata` and the control plane's preserved fields, as Cluster API v1.14's
/// desired state computes them (see the fixture's header).
mod preserved_fields_and_cluster_metadata {
    use capi_topology::api::Cluster;
    use capi_topology::patches::external::NoExternalPatches;
    use capi_topology::store::{MemoryStore, ObjectSource};
    use capi_topology::topology::{plan, Blueprint, Current, Plan};
    use serde_json::{json, Value};

    const FIXTURE: &str = include_str!("fixtures/plan/preserved-fields-and-cluster-metadata.yaml");

    fn planned() -> Plan {
        let store = MemoryStore::from_yaml(FIXTURE).unwrap();
        let class = store.cluster_class("default", "c").unwrap().class.clone();
        let cluster = store.get("cluster.x-k8s.io", "Cluster", "default", "c1").unwrap();
        let cluster: Cluster = serde_json::from_value((*cluster).clone()).unwrap();
        let blueprint = Blueprint::new(class, &store).unwrap();
        plan(&blueprint, &cluster, &Current::default(), &NoExternalPatches).unwrap()
    }

    fn control_plane(plan: &Plan) -> &Value {
        plan.objects
            .iter()
            .find(|o| o["kind"] == "KubeadmControlPlane")
            .expect("a control plane")
    }

    #[test]
    fn patches_see_the_desired_clusters_labels() {
        let planned = planned();
        // The template's JSON output is read back as a value, as Cluster API reads it.
        let metadata = control_plane(&planned)["spec"]["clusterMetadata"].clone();
        assert_eq!(
            metadata,
            json!({"labels": {"team": "blue", "cluster.x-k8s.io/cluster-name": "c1",
                "topology.cluster.x-k8s.io/owned": ""}, "annotations": {"owner": "ops"}})
        );
        assert_eq!(
            planned.cluster["metadata"]["labels"], metadata["labels"],
            "the desired Cluster carries the same labels"
        );
    }

    #[test]
    fn preserved_fields_keep_the_templates_value_and_others_are_patched() {
        let planned = planned();
        let spec = &control_plane(&planned)["spec"];
        assert_eq!(spec["replicas"], 3);
        assert_eq!(spec["version"], "v1.34.0");
        let machine = &spec["machineTemplate"];
        assert_eq!(machine["metadata"], json!({"labels": {"from-template": "yes"}}));
        assert_eq!(
            machine["spec"]["readinessGates"],
            json!([{"conditionType": "FromTemplate"}])
        );
        assert_eq!(
            machine["spec"]["deletion"],
            json!({"nodeDrainTimeoutSeconds": 10, "nodeDeletionTimeoutSeconds": 30}),
            "a preserved field the template does not set takes the patched value"
        );
        assert_eq!(spec["kubeadmConfigSpec"]["format"], "ignition");
    }
}

/// Per-object `rollout.after`, taints and MachineHealthCheck `unhealthyMachineConditions`, as
/// Cluster API v1.14 computes the desired objects (see the fixture's header).
mod rollout_taints_health_checks {
    use super::{golden, plan};
    use serde_json::{json, Value};

    const ARGS: [&str; 3] = [
        "-f",
        "tests/fixtures/reference/v1.14/clusterclass-quick-start.yaml",
        "tests/fixtures/plan/rollout-taints-health-checks.yaml",
    ];

    fn objects() -> Vec<Value> {
        let (code, out, err) = plan(&[&ARGS[..], &["-o", "json"]].concat());
        assert_eq!((code, err.as_str()), (0, ""));
        let list: Value = serde_json::from_str(&out).expect("JSON");
        list["items"].as_array().expect("items").clone()
    }

    fn find<'a>(objects: &'a [Value], kind: &str, name_part: &str) -> &'a Value {
        objects
            .iter()
            .find(|o| {
                o["kind"] == kind
                    && o["metadata"]["name"]
                        .as_str()
                        .is_some_and(|n| n.contains(name_part))
            })
            .unwrap_or_else(|| panic!("no {kind} {name_part}"))
    }

    fn taint_keys(taints: &Value) -> Vec<&str> {
        taints
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["key"].as_str())
            .collect()
    }

    #[test]
    fn plan_matches_golden() {
        let (code, out, err) = plan(&ARGS);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(out, golden("rollout-taints-health-checks.plan.yaml"));
    }

    #[test]
    fn rollout_after_goes_to_each_object() {
        let objects = objects();
        let cp = find(&objects, "KubeadmControlPlane", "rolling");
        assert_eq!(cp["spec"]["rollout"], json!({"after": "2026-03-01T09:00:00Z"}));
        let md0 = find(&objects, "MachineDeployment", "md-0");
        assert_eq!(
            md0["spec"]["rollout"],
            json!({"after": "2026-03-02T09:00:00Z"}),
            "the topology's rollout replaces the class's whole"
        );
        let md1 = find(&objects, "MachineDeployment", "md-1");
        assert_eq!(
            md1["spec"]["rollout"],
            json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}})
        );
    }

    #[test]
    fn taints_of_the_topology_replace_the_classs() {
        let objects = objects();
        let cp = find(&objects, "KubeadmControlPlane", "rolling");
        assert_eq!(
            taint_keys(&cp["spec"]["machineTemplate"]["spec"]["taints"]),
            ["example.com/own-control-plane"]
        );
        let md0 = find(&objects, "MachineDeployment", "md-0");
        assert_eq!(
            taint_keys(&md0["spec"]["template"]["spec"]["taints"]),
            ["example.com/own-worker"]
        );
        let md1 = find(&objects, "MachineDeployment", "md-1");
        assert_eq!(
            md1["spec"]["template"]["spec"]["taints"],
            json!([{"key": "example.com/class-worker", "value": "yes", "effect": "PreferNoSchedule", "propagation": "OnInitialization"}])
        );
        let mp0 = find(&objects, "MachinePool", "mp-0");
        assert_eq!(
            taint_keys(&mp0["spec"]["template"]["spec"]["taints"]),
            ["example.com/own-pool"]
        );
    }

    #[test]
    fn health_checks_carry_machine_conditions() {
        let objects = objects();
        let checks: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "MachineHealthCheck")
            .collect();
        assert_eq!(checks.len(), 2, "md-0 disables its check");
        let md1 = find(&objects, "MachineHealthCheck", "md-1");
        let cp = checks
            .iter()
            .find(|c| c["metadata"]["name"] != md1["metadata"]["name"])
            .expect("the control plane's");
        assert_eq!(
            cp["spec"]["checks"],
            json!({"nodeStartupTimeoutSeconds": 600, "unhealthyMachineConditions": [{"type": "example.com/EtcdStuck", "status": "False", "timeoutSeconds": 120}]}),
            "the topology's check replaces the class's"
        );
        assert_eq!(
            cp["spec"]["remediation"],
            json!({"triggerIf": {"unhealthyLessThanOrEqualTo": 1}})
        );
        assert_eq!(
            md1["spec"]["checks"]["unhealthyMachineConditions"],
            json!([{"type": "example.com/BootstrapStuck", "status": "True", "timeoutSeconds": 600}])
        );
    }
}

/// With `--current`, a chained upgrade's rollout lines say what its step plan says: the control
/// plane goes one minor at a time while the workers stay (issue 36, friction).
#[test]
fn a_chained_upgrade_against_the_current_state_agrees_with_its_steps() {
    let (code, out, err) = plan(&[
        "-f",
        "examples/quickstart-chained-upgrade/00-clusterclass.yaml",
        "examples/quickstart-chained-upgrade/10-cluster-dev.yaml",
        "--current",
        "examples/current/",
        "-o",
        "diff",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("step 1: control plane -> v1.32.0; workers stay"),
        "{out}"
    );
    let control_plane = out
        .lines()
        .find(|line| line.contains("* KubeadmControlPlane"))
        .unwrap_or_default();
    assert!(
        control_plane
            .ends_with("held: the upgrade to v1.34.0 waits: the control plane upgrades to v1.32.0 first"),
        "{out}"
    );
    assert!(!out.contains("roll out first"), "{out}");
}

/// ClusterResourceSets without a Cluster in the files say so, rather than print nothing.
#[test]
fn resource_sets_without_clusters_say_so() {
    let (code, out, err) = plan(&["-f", "examples/addons/"]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(
        err.contains("ClusterResourceSet calico: no Cluster in the files to select"),
        "{err}"
    );
    assert!(err.contains("no Cluster with a spec.topology to plan"), "{err}");
}
