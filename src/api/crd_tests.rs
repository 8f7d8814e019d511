use pretty_assertions::assert_eq;
use serde_json::{json, Map, Value};

use super::*;

fn all() -> Vec<Value> {
    let crds = custom_resource_definitions().unwrap_or_else(|e| panic!("generating CRDs: {e}"));
    crds.iter()
        .map(|crd| serde_json::to_value(crd).unwrap_or_else(|e| panic!("encoding CRD: {e}")))
        .collect()
}

fn crd(kind: &str) -> Value {
    all()
        .into_iter()
        .find(|crd| crd["spec"]["names"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no CRD for {kind}"))
}

fn schema(kind: &str) -> Value {
    crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// The schema nodes directly below a node, with the path suffix leading to each.
fn children(map: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out: Vec<(String, &Value)> = Vec::new();
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get(key).filter(|c| c.is_object()) {
            out.push((format!("[{key}]"), child));
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        out.extend(properties.iter().map(|(k, v)| (format!(".{k}"), v)));
    }
    out
}

/// Paths of nodes that break Kubernetes' structural schema rules.
fn structural_problems(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        out.push(format!("{path}: not an object"));
        return;
    };
    for key in [
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "nullable",
        "title",
        "definitions",
        "$defs",
    ] {
        if map.contains_key(key) {
            out.push(format!("{path}: has {key}"));
        }
    }
    let open = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        || map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if !open && !map.contains_key("type") {
        out.push(format!("{path}: no type"));
    }
    for (suffix, child) in children(map) {
        structural_problems(child, &format!("{path}{suffix}"), out);
    }
}

/// Paths of fields in `value` that the API server would prune with `schema`.
fn pruned(value: &Value, schema: &Value, path: &str, out: &mut Vec<String>) {
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let child = match schema["properties"].get(key) {
                    Some(child) => child,
                    None if schema["additionalProperties"].is_object() => &schema["additionalProperties"],
                    None => {
                        out.push(format!("{path}.{key}"));
                        continue;
                    }
                };
                pruned(field, child, &format!("{path}.{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pruned(item, &schema["items"], &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn names_scope_and_subresources_follow_cluster_api() {
    let names: Vec<(String, String, String)> = all()
        .iter()
        .map(|crd| {
            (
                crd["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
                crd["spec"]["names"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                crd["spec"]["names"]["shortNames"].to_string(),
            )
        })
        .collect();
    let expected = [
        ("clusters.cluster.x-k8s.io", "Cluster", r#"["cl"]"#),
        ("clusterclasses.cluster.x-k8s.io", "ClusterClass", r#"["cc"]"#),
        (
            "machinedeployments.cluster.x-k8s.io",
            "MachineDeployment",
            r#"["md"]"#,
        ),
        ("machinesets.cluster.x-k8s.io", "MachineSet", r#"["ms"]"#),
        ("machines.cluster.x-k8s.io", "Machine", r#"["ma"]"#),
        (
            "machinehealthchecks.cluster.x-k8s.io",
            "MachineHealthCheck",
            r#"["mhc","mhcs"]"#,
        ),
        ("machinepools.cluster.x-k8s.io", "MachinePool", r#"["mp"]"#),
        (
            "clusterresourcesets.addons.cluster.x-k8s.io",
            "ClusterResourceSet",
            "null",
        ),
        (
            "clusterresourcesetbindings.addons.cluster.x-k8s.io",
            "ClusterResourceSetBinding",
            "null",
        ),
        (
            "extensionconfigs.runtime.cluster.x-k8s.io",
            "ExtensionConfig",
            r#"["ext"]"#,
        ),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(names, expected);

    let cluster = crd("Cluster");
    assert_eq!(
        cluster["spec"]["names"],
        json!({
            "categories": ["cluster-api"], "kind": "Cluster", "listKind": "ClusterList",
            "plural": "clusters", "shortNames": ["cl"], "singular": "cluster"
        })
    );
    assert_eq!(cluster["spec"]["scope"], "Namespaced");
    let version = &cluster["spec"]["versions"][0];
    assert_eq!(version["name"], "v1beta1");
    assert_eq!(
        (version["served"].clone(), version["storage"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(version["subresources"], json!({"status": {}}));

    let md = &crd("MachineDeployment")["spec"]["versions"][0]["subresources"];
    assert_eq!(
        md["scale"],
        json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
               "labelSelectorPath": ".status.selector"})
    );
    let mp = &crd("MachinePool")["spec"]["versions"][0]["subresources"];
    assert_eq!(
        mp["scale"],
        json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"})
    );
}

#[test]
fn schemas_are_structural() {
    for crd in all() {
        let kind = crd["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut problems = Vec::new();
        structural_problems(
            &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            &kind,
            &mut problems,
        );
        assert_eq!(problems, Vec::<String>::new());
        assert!(!serde_json::to_string(&crd).unwrap_or_default().contains("$ref"));
    }
}

#[test]
fn variable_schemas_and_values_are_kept_as_given() {
    let schema = schema("ClusterClass");
    let open_api = &schema["properties"]["spec"]["properties"]["variables"]["items"]["properties"]["schema"]
        ["properties"]["openAPIV3Schema"];
    for key in [
        "properties",
        "items",
        "additionalProperties",
        "allOf",
        "not",
        "default",
        "example",
    ] {
        assert_eq!(
            open_api["properties"][key]["x-kubernetes-preserve-unknown-fields"], true,
            "{key}"
        );
    }
    assert_eq!(
        open_api["properties"]["enum"]["items"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    let cluster = schema_of_cluster_variables();
    assert_eq!(
        cluster["properties"]["value"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(cluster["required"], json!(["name"]));
}

fn schema_of_cluster_variables() -> Value {
    schema("Cluster")["properties"]["spec"]["properties"]["topology"]["properties"]["variables"]["items"]
        .clone()
}

#[test]
fn nothing_of_the_full_fixtures_is_pruned() {
    // The CRDs still carry the v1beta1 spoke schema, so the v1beta1 fixtures are checked.
    let fixtures = [
        ("Cluster", include_str!("v1beta1/testdata/cluster_full.yaml")),
        (
            "ClusterClass",
            include_str!("v1beta1/testdata/cluster_class_full.yaml"),
        ),
        ("Machine", include_str!("v1beta1/testdata/machine_full.yaml")),
        (
            "MachineSet",
            include_str!("v1beta1/testdata/machine_set_full.yaml"),
        ),
        (
            "MachineDeployment",
            include_str!("v1beta1/testdata/machine_deployment_full.yaml"),
        ),
        (
            "MachineHealthCheck",
            include_str!("v1beta1/testdata/machine_health_check_full.yaml"),
        ),
        (
            "MachinePool",
            include_str!("v1beta1/testdata/machine_pool_full.yaml"),
        ),
        (
            "ClusterResourceSet",
            include_str!("v1beta1/testdata/cluster_resource_set_full.yaml"),
        ),
        (
            "ClusterResourceSetBinding",
            include_str!("v1beta1/testdata/cluster_resource_set_binding_full.yaml"),
        ),
    ];
    for (kind, text) in fixtures {
        let mut object: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("{kind}: {e}"));
        // metadata is `type: object` without properties in every CRD: the API server handles it.
        object.as_object_mut().map(|o| o.remove("metadata"));
        let mut lost = Vec::new();
        pruned(&object, &schema(kind), kind, &mut lost);
        assert_eq!(lost, Vec::<String>::new(), "{kind}");
    }
}

#[test]
fn unknown_fields_would_be_pruned() {
    let object =
        json!({"spec": {"topology": {"class": "c", "bogus": 1}}, "status": {"phase": "x", "nope": {}}});
    let mut lost = Vec::new();
    pruned(&object, &schema("Cluster"), "Cluster", &mut lost);
    assert_eq!(lost, ["Cluster.spec.topology.bogus", "Cluster.status.nope"]);
}

#[test]
fn addons_kinds_are_in_their_group_with_the_reference_enums_and_limits() {
    let crs = crd("ClusterResourceSet");
    assert_eq!(crs["spec"]["group"], "addons.cluster.x-k8s.io");
    assert_eq!(crs["spec"]["scope"], "Namespaced");
    let spec = &schema("ClusterResourceSet")["properties"]["spec"]["properties"];
    assert_eq!(spec["strategy"]["enum"], json!(["ApplyOnce", "Reconcile"]));
    assert_eq!(spec["resources"]["maxItems"], 100);
    let resource = &spec["resources"]["items"]["properties"];
    assert_eq!(resource["kind"]["enum"], json!(["Secret", "ConfigMap"]));
    assert_eq!(
        (
            resource["name"]["minLength"].clone(),
            resource["name"]["maxLength"].clone()
        ),
        (json!(1), json!(253))
    );
    let binding = schema("ClusterResourceSetBinding");
    assert!(binding["properties"].get("status").is_none());
    let applied = &binding["properties"]["spec"]["properties"]["bindings"]["items"]["properties"]
        ["resources"]["items"]["properties"];
    assert_eq!(applied["hash"]["maxLength"], 256);
    assert_eq!(applied["kind"]["enum"], json!(["Secret", "ConfigMap"]));
}

#[test]
fn extension_config_is_cluster_scoped_v1alpha1_with_the_reference_limits() {
    let ext = crd("ExtensionConfig");
    assert_eq!(ext["spec"]["scope"], "Cluster");
    assert_eq!(ext["spec"]["versions"][0]["name"], "v1alpha1");
    assert_eq!(ext["spec"]["versions"][0]["subresources"], json!({"status": {}}));
    let schema = schema("ExtensionConfig");
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["required"], json!(["clientConfig"]));
    assert!(spec["properties"]["clientConfig"].get("default").is_none());
    let client = &spec["properties"]["clientConfig"]["properties"];
    let limits = |node: &Value| json!([node["type"], node["format"], node["minLength"], node["maxLength"]]);
    assert_eq!(limits(&client["caBundle"]), json!(["string", "byte", 1, 51200]));
    assert_eq!(client["url"]["maxLength"], 512);
    let service = &client["service"];
    assert_eq!(service["required"], json!(["name", "namespace"]));
    assert_eq!(
        limits(&service["properties"]["name"]),
        json!(["string", null, 1, 63])
    );
    assert!(service["properties"]["name"].get("default").is_none());
    let handler = &schema["properties"]["status"]["properties"]["handlers"];
    assert_eq!(handler["maxItems"], 512);
    assert_eq!(
        handler["items"]["properties"]["failurePolicy"]["enum"],
        json!(["Ignore", "Fail"])
    );
    assert_eq!(handler["items"]["required"], json!(["name", "requestHook"]));
}

/// Paths of string defaults the API server would refuse: outside their enum or shorter than
/// their minLength.
fn bad_defaults(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = node.as_object() else { return };
    if let Some(Value::String(default)) = map.get("default") {
        let in_enum = map
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|values| values.iter().any(|v| v == default));
        let long_enough = map
            .get("minLength")
            .and_then(Value::as_u64)
            .is_none_or(|min| default.len() as u64 >= min);
        if !in_enum || !long_enough {
            out.push(path.to_owned());
        }
    }
    for (suffix, child) in children(map) {
        bad_defaults(child, &format!("{path}{suffix}"), out);
    }
}

#[test]
fn defaults_satisfy_their_own_schema() {
    for crd in all() {
        let kind = crd["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut problems = Vec::new();
        bad_defaults(&schema(&kind), &kind, &mut problems);
        assert_eq!(problems, Vec::<String>::new());
    }
}
