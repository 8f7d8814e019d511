//! The offline `plan` asks the Runtime Extensions of its files what the controller asks them
//! (issue 36, item 11): a class's GenerateUpgradePlan extension gives the upgrade's steps, and a
//! DiscoverVariables answer with no variables leaves the class's inline variables usable.

mod local_extension;
#[path = "common/plan_cli.rs"]
mod plan_cli;
#[path = "common/tempdir.rs"]
mod tempdir;

use local_extension::canned::{CannedExtension, Handler};
use serde_json::{json, Value};

fn read_yaml(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).expect("a file");
    capi_topology::store::parse_manifests(&text).expect("manifests")
}

/// Writes `objects` (JSON is YAML) and the extension's config into a new directory.
fn files(objects: &[Value], extension: &CannedExtension) -> tempdir::Dir {
    let dir = tempdir::Dir::new("offline-extensions");
    let text: Vec<String> = objects.iter().map(Value::to_string).collect();
    std::fs::write(dir.path().join("objects.yaml"), text.join("\n---\n")).expect("write");
    std::fs::write(dir.path().join("extension.yaml"), extension.config_yaml("canned")).expect("write");
    dir
}

#[test]
fn plan_takes_its_upgrade_steps_from_a_generate_upgrade_plan_extension() {
    let steps = ["v1.32.0", "v1.33.1", "v1.34.0"];
    let extension = CannedExtension::start(vec![Handler {
        name: "upgrade-plan",
        hook: "GenerateUpgradePlan",
        answer: json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "GenerateUpgradePlanResponse",
            "status": "Success", "controlPlaneUpgrades": steps.iter().map(|v| json!({"version": v})).collect::<Vec<_>>()}),
    }]);
    let mut objects = read_yaml("examples/quickstart-chained-upgrade/00-clusterclass.yaml");
    for class in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        let spec = class["spec"].as_object_mut().expect("a spec");
        spec.remove("kubernetesVersions");
        spec.insert(
            "upgrade".into(),
            json!({"external": {"generateUpgradePlanExtension": "upgrade-plan.canned"}}),
        );
    }
    objects.extend(read_yaml(
        "examples/quickstart-chained-upgrade/10-cluster-dev.yaml",
    ));
    let dir = files(&objects, &extension);
    let dir_arg = dir.path().display().to_string();
    let (code, out, err) = plan_cli::plan(&[
        "-f",
        &dir_arg,
        "examples/quickstart-upgrade/20-current-dev.yaml",
        "-o",
        "diff",
    ]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert!(out.contains("upgrade v1.31.2 -> v1.34.0"), "{out}");
    for (i, version) in steps.iter().enumerate() {
        assert!(
            out.contains(&format!("step {}: control plane -> {version}", i + 1)),
            "{out}"
        );
    }
    assert!(extension.calls() >= 1, "the extension was asked");
}

#[test]
fn plan_takes_a_discover_variables_answer_with_no_variables() {
    let extension = CannedExtension::start(vec![
        Handler {
            name: "discover",
            hook: "DiscoverVariables",
            answer: json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "DiscoverVariablesResponse",
                "status": "Success"}),
        },
        Handler {
            name: "patches",
            hook: "GeneratePatches",
            answer: json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "GeneratePatchesResponse",
                "status": "Success"}),
        },
    ]);
    let mut objects = read_yaml("examples/quickstart/00-clusterclass.yaml");
    for class in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        let patches = class["spec"]["patches"].as_array_mut().expect("patches");
        patches.push(json!({"name": "external", "external": {
            "generatePatchesExtension": "patches.canned", "discoverVariablesExtension": "discover.canned"}}));
    }
    objects.extend(read_yaml("examples/quickstart/10-cluster-dev.yaml"));
    let dir = files(&objects, &extension);
    let (code, out, err) = plan_cli::plan(&["-f", &dir.path().display().to_string(), "-o", "json"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let list: Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(list["kind"], "List");
    assert!(extension.calls() >= 2, "discovered and patched");
}
