//! Cluster API's conversion and ours agree (#24): objects stored through Cluster API v1.14.0's own
//! conversion webhook (its core manager serves `/convert` for `cluster.x-k8s.io`) are read back as
//! v1beta1 and as v1beta2 from the real API server, and `capi-topology convert` turns each read
//! into the other one exactly, in both directions, conversion-data included.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::kubectl::Kubectl;
use crate::process::{poll, run_bounded, RunDir};
use crate::webhook::capi_topology;

/// The v1beta1 ClusterClass and paused Cluster written through Cluster API's conversion.
const V1BETA1: &str = include_str!("fixtures/beside-cluster-api-v1beta1.yaml");

/// Writes the v1beta1 fixture, then checks every given object (`(resource, name)` in `default`)
/// and the fixture's two: each read as v1beta1 and as v1beta2 must be what our converter makes of
/// the other read; the v1beta1 objects as written, converted by us, must have the spec the server
/// stored. `Err` says which object and which direction differ.
pub fn agree(run: &RunDir, kubectl: &Kubectl, stored: &[(&str, &str)]) -> Result<(), String> {
    write_reference_crds(run, kubectl)?;
    // The Cluster is admitted once our ClusterClass controller has published the class's variables.
    poll(
        "the v1beta1 objects to be admitted",
        Duration::from_secs(60),
        || {
            let out = kubectl.apply(V1BETA1, &[])?;
            if out.success {
                Ok(())
            } else {
                Err(out.stderr)
            }
        },
    )?;
    let written: Vec<Value> = serde_yaml_ng::Deserializer::from_str(V1BETA1)
        .map(|document| serde::Deserialize::deserialize(document).map_err(|e| format!("fixture: {e}")))
        .collect::<Result<_, _>>()?;
    let mut objects: Vec<(String, String)> = stored
        .iter()
        .map(|(r, n)| ((*r).to_owned(), (*n).to_owned()))
        .collect();
    objects.extend([
        ("clusterclasses".to_owned(), "conv-v1beta1".to_owned()),
        ("clusters".to_owned(), "conv-v1beta1".to_owned()),
    ]);
    let mut failures = Vec::new();
    for (resource, name) in &objects {
        let (v1beta1, v1beta2) = read_both(kubectl, resource, name)?;
        let label = format!("{resource}/{name}");
        failures.extend(same(
            &format!("{label}: ours v1beta1 -> v1beta2 vs Cluster API's v1beta2"),
            &ours(run, &v1beta1, "v1beta2")?,
            &v1beta2,
        ));
        failures.extend(same(
            &format!("{label}: ours v1beta2 -> v1beta1 vs Cluster API's v1beta1"),
            &ours(run, &v1beta2, "v1beta1")?,
            &v1beta1,
        ));
    }
    // As written: the server's v1beta2 spec is what our converter makes of the v1beta1 manifest
    // (nothing of these two is defaulted on the way in but what the conversion fills).
    for object in &written {
        let resource = match object["kind"].as_str() {
            Some("Cluster") => "clusters",
            _ => "clusterclasses",
        };
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let (_, v1beta2) = read_both(kubectl, resource, name)?;
        failures.extend(same(
            &format!("{resource}/{name} as written: ours -> v1beta2 vs stored"),
            &ours(run, object, "v1beta2")?["spec"],
            &v1beta2["spec"],
        ));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// One object read as v1beta1 and as v1beta2 at the same resourceVersion.
fn read_both(kubectl: &Kubectl, resource: &str, name: &str) -> Result<(Value, Value), String> {
    let get = |version: &str| -> Result<Value, String> {
        let text = kubectl.ok(&[
            "get",
            &format!("{resource}.{version}.cluster.x-k8s.io"),
            name,
            "-n",
            "default",
            "-o",
            "json",
        ])?;
        serde_json::from_str(&text).map_err(|e| format!("{resource}/{name}: {e}"))
    };
    let version = |object: &Value| object["metadata"]["resourceVersion"].clone();
    poll(
        &format!("{resource}/{name} read twice at one resourceVersion"),
        Duration::from_secs(60),
        || {
            let v1beta2 = get("v1beta2")?;
            let v1beta1 = get("v1beta1")?;
            if version(&v1beta1) == version(&v1beta2) {
                Ok((v1beta1, v1beta2))
            } else {
                Err("changed between the reads".to_owned())
            }
        },
    )
}

/// `capi-topology convert --to <to>` of `object`, given the CRDs of the kinds a Cluster references
/// (written by [`agree`] beside it): the converted object, without the CRDs passed through.
fn ours(run: &RunDir, object: &Value, to: &str) -> Result<Value, String> {
    let file = run.join("convert/object.yaml");
    std::fs::write(&file, serde_json::to_string(object).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let mut command = Command::new(capi_topology());
    command
        .args(["convert", "--to", to, "-f"])
        .arg(run.join("convert"));
    let out = run_bounded(command, None, Duration::from_secs(30))?;
    if !out.success {
        return Err(format!("capi-topology convert --to {to}: {}", out.stderr));
    }
    for document in serde_yaml_ng::Deserializer::from_str(&out.stdout) {
        let converted: Value =
            serde::Deserialize::deserialize(document).map_err(|e| format!("convert printed: {e}"))?;
        if converted["kind"] == object["kind"] {
            return Ok(converted);
        }
    }
    Err(format!("convert printed no {}:\n{}", object["kind"], out.stdout))
}

/// The CRDs of the kinds the in-memory Clusters reference, where [`ours`] finds them: converting
/// a Cluster to v1beta1 needs their contract labels.
fn write_reference_crds(run: &RunDir, kubectl: &Kubectl) -> Result<(), String> {
    let dir = run.join("convert");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut documents = Vec::new();
    for crd in [
        "devclusters.infrastructure.cluster.x-k8s.io",
        "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
    ] {
        documents.push(kubectl.ok(&["get", "crd", crd, "-o", "json"])?);
    }
    std::fs::write(dir.join("crds.yaml"), documents.join("\n---\n")).map_err(|e| e.to_string())
}

/// Equal, once the conversion-data annotation (a JSON string) is compared as JSON and the
/// server's bookkeeping (managedFields) is left out; `Some` lists the differing paths. A zero
/// value is the same as none ([`empty`]): Cluster API's Go types do not tell them apart
/// (`omitempty`, `omitzero`), so neither conversion can be held to one of them.
fn same(what: &str, ours: &Value, theirs: &Value) -> Option<String> {
    let (ours, theirs) = (normalized(ours), normalized(theirs));
    let mut differences = Vec::new();
    differ("", &ours, &theirs, &mut differences);
    (!differences.is_empty()).then(|| format!("{what}:\n  {}", differences.join("\n  ")))
}

fn normalized(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    let data = "cluster.x-k8s.io/conversion-data";
    if let Some(text) = object["metadata"]["annotations"][data].as_str() {
        let parsed: Value = serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()));
        object["metadata"]["annotations"][data] = parsed;
    }
    object
}

/// Pushes `path: ours != theirs` for every leaf where the two differ.
fn differ(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let child = format!("{path}/{key}");
                differ(
                    &child,
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                differ(&format!("{path}/{index}"), x, y, out);
            }
        }
        (a, b) if a != b && !(empty(a) && empty(b)) => {
            out.push(format!("{path}: ours {a}, Cluster API's {b}"))
        }
        _ => {}
    }
}

/// What Cluster API's Go types decode as their zero value: absent, `""`, `0`, `false`, an empty
/// list, an object of such values (v1beta1's `controlPlaneEndpoint: {host: "", port: 0}`, which
/// the Go structs always print and capi-topology does not synthesise).
fn empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.values().all(empty),
    }
}
