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

/// The schema of `kind` in `version`.
fn schema_of(kind: &str, version: &str) -> Value {
    let crd = crd(kind);
    let versions = crd["spec"]["versions"].as_array().cloned().unwrap_or_default();
    versions
        .into_iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{kind} does not serve {version}"))["schema"]["openAPIV3Schema"]
        .clone()
}

/// The schema of `kind` in the storage version (the hub).
fn schema(kind: &str) -> Value {
    schema_of(kind, "v1beta2")
}

/// Every served version's schema, named `Kind/version`.
fn every_schema() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for crd in all() {
        let kind = crd["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for version in crd["spec"]["versions"].as_array().cloned().unwrap_or_default() {
            let name = format!("{kind}/{}", version["name"].as_str().unwrap_or_default());
            out.push((name, version["schema"]["openAPIV3Schema"].clone()));
        }
    }
    out
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
    let served: Vec<Value> = cluster["spec"]["versions"]
        .as_array()
        .map(|versions| {
            versions
                .iter()
                .map(|v| {
                    json!([
                        v["name"],
                        v["served"],
                        v["storage"],
                        v["deprecated"],
                        v["subresources"]
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        served,
        [
            json!(["v1beta1", true, false, true, {"status": {}}]),
            json!(["v1beta2", true, true, null, {"status": {}}]),
        ]
    );

    let md = &crd("MachineDeployment")["spec"]["versions"][0]["subresources"];
    assert_eq!(crd("MachineDeployment")["spec"]["versions"][0]["name"], "v1beta2");
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
    for (name, schema) in every_schema() {
        let mut problems = Vec::new();
        structural_problems(&schema, &name, &mut problems);
        assert_eq!(problems, Vec::<String>::new());
    }
    for crd in all() {
        assert!(!serde_json::to_string(&crd).unwrap_or_default().contains("$ref"));
    }
}

#[test]
fn the_older_versions_are_served_deprecated_and_converted_by_the_webhook() {
    let converted = [
        ("Cluster", "v1beta1"),
        ("ClusterClass", "v1beta1"),
        ("ClusterResourceSet", "v1beta1"),
        ("ClusterResourceSetBinding", "v1beta1"),
        ("ExtensionConfig", "v1alpha1"),
    ];
    for crd in all() {
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
        let names: Vec<&str> = crd["spec"]["versions"]
            .as_array()
            .map(|v| v.iter().filter_map(|v| v["name"].as_str()).collect())
            .unwrap_or_default();
        let Some((_, spoke)) = converted.iter().find(|(k, _)| *k == kind) else {
            assert_eq!(names, ["v1beta2"], "{kind}");
            assert!(crd["spec"].get("conversion").is_none(), "{kind}");
            continue;
        };
        assert_eq!(names, [*spoke, "v1beta2"], "{kind}");
        assert_eq!(crd["spec"]["versions"][0]["deprecated"], true, "{kind}");
        assert!(crd["spec"]["versions"][0].get("deprecationWarning").is_none());
        assert_eq!(
            crd["spec"]["conversion"],
            json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "capi-topology-webhook",
                    "namespace": "capi-topology-system", "path": "/convert", "port": 443}}}}),
            "{kind}"
        );
        assert_eq!(
            crd["metadata"]["annotations"],
            json!({"cert-manager.io/inject-ca-from": "capi-topology-system/capi-topology-webhook"})
        );
    }
}

#[test]
fn a_given_ca_bundle_replaces_the_injection_annotation() {
    let options = Options {
        ca_bundle: Some(b"PEM".to_vec()),
    };
    let crds = custom_resource_definitions_with(&options).unwrap_or_else(|e| panic!("{e}"));
    let cluster = crds
        .iter()
        .find(|crd| crd.spec.names.kind == "Cluster")
        .map(|crd| serde_json::to_value(crd).unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(
        cluster["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
        "UEVN"
    );
    assert!(cluster["metadata"].get("annotations").is_none());
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
    // Both versions require the name and the value, as Cluster API v1.14.0's CRDs do.
    for version in ["v1beta1", "v1beta2"] {
        let items = &schema_of("Cluster", version)["properties"]["spec"]["properties"]["topology"]
            ["properties"]["variables"]["items"];
        assert_eq!(items["required"], json!(["name", "value"]), "{version}");
    }
}

fn schema_of_cluster_variables() -> Value {
    schema("Cluster")["properties"]["spec"]["properties"]["topology"]["properties"]["variables"]["items"]
        .clone()
}

#[test]
fn nothing_of_the_full_fixtures_is_pruned() {
    let spoke = [
        ("Cluster", include_str!("v1beta1/testdata/cluster_full.yaml")),
        (
            "ClusterClass",
            include_str!("v1beta1/testdata/cluster_class_full.yaml"),
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
    let hub = [
        ("Cluster", include_str!("testdata/cluster_full.yaml")),
        ("ClusterClass", include_str!("testdata/cluster_class_full.yaml")),
        ("Machine", include_str!("testdata/machine_full.yaml")),
        ("MachineSet", include_str!("testdata/machine_set_full.yaml")),
        (
            "MachineDeployment",
            include_str!("testdata/machine_deployment_full.yaml"),
        ),
        (
            "MachineHealthCheck",
            include_str!("testdata/machine_health_check_full.yaml"),
        ),
        ("MachinePool", include_str!("testdata/machine_pool_full.yaml")),
        (
            "ClusterResourceSet",
            include_str!("testdata/cluster_resource_set_full.yaml"),
        ),
        (
            "ClusterResourceSetBinding",
            include_str!("testdata/cluster_resource_set_binding_full.yaml"),
        ),
        (
            "ExtensionConfig",
            include_str!("testdata/extension_config_full.yaml"),
        ),
    ];
    let fixtures = spoke
        .iter()
        .map(|(kind, text)| (*kind, "v1beta1", *text))
        .chain(hub.iter().map(|(kind, text)| (*kind, "v1beta2", *text)));
    for (kind, version, text) in fixtures {
        let mut object: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("{kind}: {e}"));
        // metadata is `type: object` without properties in every CRD: the API server handles it.
        object.as_object_mut().map(|o| o.remove("metadata"));
        let mut lost = Vec::new();
        pruned(&object, &schema_of(kind, version), kind, &mut lost);
        assert_eq!(lost, Vec::<String>::new(), "{kind}/{version}");
    }
}

#[test]
fn unknown_fields_would_be_pruned() {
    let object = json!({"spec": {"topology": {"classRef": {"name": "c"}, "bogus": 1}}, "status": {"phase": "x", "nope": {}}});
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
fn extension_config_is_cluster_scoped_with_the_reference_limits() {
    let ext = crd("ExtensionConfig");
    assert_eq!(ext["spec"]["scope"], "Cluster");
    assert_eq!(ext["spec"]["versions"][1]["name"], "v1beta2");
    assert_eq!(ext["spec"]["versions"][1]["subresources"], json!({"status": {}}));
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
    for (name, schema) in every_schema() {
        let mut problems = Vec::new();
        bad_defaults(&schema, &name, &mut problems);
        assert_eq!(problems, Vec::<String>::new());
    }
}
