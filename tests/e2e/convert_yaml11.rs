//! `convert` writes YAML that the real kubectl reads back as the same values: strings that YAML
//! 1.1 (kubectl's reader, sigs.k8s.io/yaml over go-yaml v2) would type as a bool, a number or
//! null stay strings. kubectl reads the converted files with `annotate --local` (no API server:
//! it only reads, annotates and prints).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cache;
use crate::process::run_bounded;

/// Strings YAML 1.1 types as something else when written plain.
const AMBIGUOUS: [&str; 24] = [
    "on",
    "Off",
    "NO",
    "y",
    "Y",
    "yes",
    "n",
    "true",
    "~",
    "null",
    "Null",
    "1_000",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1:20",
    ".inf",
    "-.Inf",
    ".NaN",
    "1e3",
    "+12",
    "2001-12-14",
    "=",
];

fn cluster(values: &[&str]) -> Value {
    let variables: Vec<Value> = values
        .iter()
        .enumerate()
        .map(|(i, value)| json!({"name": format!("v{i}"), "value": value}))
        .collect();
    let labels: serde_json::Map<String, Value> = values
        .iter()
        .enumerate()
        .map(|(i, value)| (format!("l{i}"), json!(value)))
        .collect();
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "yaml11", "namespace": "default", "annotations": labels},
        "spec": {"topology": {"class": "quick-start", "version": "v1.31.2", "variables": variables}},
    })
}

#[test]
fn kubectl_reads_converted_strings_as_strings() {
    let dir = std::env::temp_dir().join(format!("capi-topology-e2e-yaml11-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // JSON text in a .yaml file (JSON is YAML), so that `convert` writes YAML.
    let yaml = dir.join("cluster.yaml");
    let written = serde_json::to_string(&cluster(&AMBIGUOUS)).expect("json");
    std::fs::write(&yaml, written).expect("write");
    let mut convert = Command::new(env!("CARGO_BIN_EXE_capi-topology"));
    convert.args(["convert", "--to", "v1beta2", "-f"]).arg(&yaml);
    let converted = run_bounded(convert, None, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    assert!(converted.success, "{}", converted.stderr);
    let mut kubectl = Command::new(cache::kubernetes().tool("kubectl"));
    kubectl.args(["annotate", "--local", "-f", "-", "-o", "json", "probe=1"]);
    let read = run_bounded(
        kubectl,
        Some(converted.stdout.as_bytes()),
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        read.success,
        "kubectl refused:\n{}\n{}",
        read.stderr, converted.stdout
    );
    let object: Value = serde_json::from_str(&read.stdout).expect("kubectl prints JSON");
    assert_eq!(object["apiVersion"], "cluster.x-k8s.io/v1beta2");
    for (i, value) in AMBIGUOUS.iter().enumerate() {
        assert_eq!(
            object["spec"]["topology"]["variables"][i]["value"], *value,
            "variable {i} as kubectl reads it:\n{}",
            converted.stdout
        );
        assert_eq!(object["metadata"]["annotations"][format!("l{i}")], *value);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
