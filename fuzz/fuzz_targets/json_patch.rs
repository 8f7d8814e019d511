//! Arbitrary JSON patch operations of an inline ClusterClass patch, applied to a template: the
//! input's lines are the op, the JSON pointer path, a variable path (`valueFrom.variable`, dotted
//! and indexed), and a JSON value. Compiling and applying must return (an error is fine), never
//! panic or hang; the variable path is also looked up on its own.
#![no_main]

use capi_topology::api::ClusterClassPatch;
use capi_topology::patches::inline::{CompiledPatch, PatchItem};
use capi_topology::patches::selector::Role;
use capi_topology::patches::template::ExecOptions;
use capi_topology::patches::variable_path::lookup;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.splitn(4, '\n');
    let op = lines.next().unwrap_or_default();
    let path = lines.next().unwrap_or_default();
    let variable = lines.next().unwrap_or_default();
    let value: Value = serde_json::from_str(lines.next().unwrap_or_default()).unwrap_or(Value::Null);

    let variables: Map<String, Value> = json!({
        "region": "eu", "replicas": 3, "list": [1, {"a": [true, null]}, "x"],
        "obj": {"a": {"b": [1, 2, {"c": "d"}]}, "e": null},
        "builtin": {"cluster": {"name": "c1", "topology": {"version": "v1.31.0"}}},
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    let _ = lookup(&variables, variable);

    let value_source = if variable.is_empty() {
        json!({"value": value})
    } else {
        json!({"valueFrom": {"variable": variable}})
    };
    let mut operation = json!({"op": op, "path": path});
    if let (Some(target), Some(source)) = (operation.as_object_mut(), value_source.as_object()) {
        target.extend(source.clone());
    }
    let patch = json!({
        "name": "fuzz",
        "definitions": [{
            "selector": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "DockerClusterTemplate",
                "matchResources": {"infrastructureCluster": true},
            },
            "jsonPatches": [operation],
        }],
    });
    let Ok(patch) = serde_json::from_value::<ClusterClassPatch>(patch) else {
        return;
    };
    let Ok(compiled) = CompiledPatch::compile(&patch) else {
        return;
    };
    let mut items = [PatchItem {
        role: Role::InfrastructureCluster,
        object: json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "DockerClusterTemplate",
            "metadata": {"name": "t"},
            "spec": {"template": {"spec": {"list": [0, 1, 2], "map": {"k": "v", "~/": 1}}}},
        }),
        variables: std::sync::Arc::new(variables),
    }];
    let options = ExecOptions {
        missing_key_error: true,
        max_output_bytes: 64 * 1024,
        max_steps: 20_000,
    };
    let _ = compiled.apply(&mut items, &options);
});
