//! Cluster v1beta1 ↔ v1beta2 (`core/webhooks/conversion/cluster.go`): refs, `paused`, topology,
//! and a status whose conditions, readiness booleans, failure domains and replica counters
//! moved.

use serde_json::{json, Value};

use super::data::{hub_data, set_annotation, unmarshal_hub, Kept};
use super::refs::{from_contract_ref, to_contract_ref};
use super::status::{
    conditions_from_hub, conditions_to_hub, initialization_from_hub, initialization_to_hub, restore_bool,
};
use super::value::{at, child, drop_empty, take, Move, Obj};
use super::{topology, ContractVersions, ConvertError, Ctx, CONVERSION_DATA};

const REFS: [&str; 2] = ["infrastructureRef", "controlPlaneRef"];
const DEPRECATED: [&str; 2] = ["failureReason", "failureMessage"];
/// The replica counters of the control plane and the workers, which v1beta1 keeps under
/// `status.v1beta2`.
const COUNTERS: [Move; 2] = [
    Move {
        spoke: &["v1beta2", "controlPlane"],
        hub: &["controlPlane"],
    },
    Move {
        spoke: &["v1beta2", "workers"],
        hub: &["workers"],
    },
];
const READY: [(&str, &str); 2] = [
    ("infrastructureReady", "infrastructureProvisioned"),
    ("controlPlaneReady", "controlPlaneInitialized"),
];

/// A v1beta1 Cluster → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
    let restored = unmarshal_hub(obj, ctx)?;
    let restored = restored.map(Value::Object).unwrap_or(Value::Null);
    let mut kept = Kept::default();
    if let Some(spec) = child(obj, "spec") {
        for key in REFS {
            if let Some(reference) = spec.get(key).filter(|r| !r.is_null()) {
                let converted = to_contract_ref(reference, ctx, &format!("spec.{key}"))?;
                spec.insert(key.into(), converted);
            }
        }
        restore_bool(spec, "paused", restored.pointer("/spec/paused"));
        endpoint_to_hub(spec);
        if let Some(topology) = child(spec, "topology") {
            topology::to_hub(topology, ctx, &mut kept)?;
        }
        drop_empty(spec, "topology");
    }
    if let Some(status) = child(obj, "status") {
        conditions_to_hub(status, &DEPRECATED);
        for counters in COUNTERS {
            counters.forwards(status);
        }
        drop_empty(status, "v1beta2");
        initialization_to_hub(status, &READY, &restored);
        failure_domains_to_hub(status);
    }
    drop_empty(obj, "status");
    kept.annotate(obj);
    Ok(())
}

/// A v1beta2 Cluster → v1beta1, in place.
pub(super) fn from_hub(
    obj: &mut Obj,
    ctx: &Ctx,
    versions: &dyn ContractVersions,
) -> Result<(), ConvertError> {
    let data = hub_data(obj, ctx);
    if let Some(spec) = child(obj, "spec") {
        for key in REFS {
            if let Some(reference) = spec.remove(key).filter(|r| !super::value::is_empty(r)) {
                spec.insert(key.into(), from_contract_ref(&reference, ctx, versions)?);
            }
        }
        if spec.get("paused") == Some(&Value::Bool(false)) {
            spec.remove("paused");
        }
        if at(spec, &["clusterNetwork"]).is_some_and(|n| n.get("apiServerPort") == Some(&json!(0))) {
            take(spec, &["clusterNetwork", "apiServerPort"]);
        }
        if let Some(topology) = child(spec, "topology") {
            topology::from_hub(topology, &ctx.namespace);
        }
    }
    // v1beta1 writes these two booleans always (no omitempty), so a status always.
    if let Some(status) = super::value::child_or_new(obj, "status") {
        conditions_from_hub(status, &DEPRECATED);
        for counters in COUNTERS {
            counters.backwards(status);
        }
        initialization_from_hub(status, &READY);
        failure_domains_from_hub(status);
    }
    if let Some(data) = data {
        set_annotation(obj, CONVERSION_DATA, data);
    }
    Ok(())
}

/// `failureDomains` map → list sorted by name, `controlPlane` always set.
fn failure_domains_to_hub(status: &mut Obj) {
    let Some(Value::Object(domains)) = status.remove("failureDomains") else {
        return;
    };
    let mut names: Vec<&String> = domains.keys().collect();
    names.sort();
    let list = names
        .into_iter()
        .map(|name| {
            let mut domain = match &domains[name] {
                Value::Object(spec) => spec.clone(),
                _ => Obj::new(),
            };
            let control_plane = domain
                .remove("controlPlane")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let mut out = Obj::new();
            out.insert("name".into(), Value::String(name.clone()));
            out.insert("controlPlane".into(), Value::Bool(control_plane));
            out.extend(domain);
            Value::Object(out)
        })
        .collect();
    status.insert("failureDomains".into(), Value::Array(list));
}

/// `failureDomains` list → map by name; `controlPlane: false` omitted.
fn failure_domains_from_hub(status: &mut Obj) {
    let Some(Value::Array(list)) = status.remove("failureDomains") else {
        return;
    };
    let mut map = Obj::new();
    for domain in list {
        let Value::Object(mut domain) = domain else {
            continue;
        };
        let name = match domain.remove("name") {
            Some(Value::String(name)) => name,
            _ => String::new(),
        };
        if domain.get("controlPlane") != Some(&Value::Bool(true)) {
            domain.remove("controlPlane");
        }
        map.insert(name, Value::Object(domain));
    }
    status.insert("failureDomains".into(), Value::Object(map));
}

/// v1beta1's zero `controlPlaneEndpoint` (`{host: "", port: 0}`, which v1beta1's Go types always
/// print) is no endpoint in v1beta2, as Cluster API converts it: its `host` and `port` must be
/// set (`minLength: 1`, `minimum: 1`) when present, so the zero one must not be stored.
fn endpoint_to_hub(spec: &mut Obj) {
    if let Some(endpoint) = child(spec, "controlPlaneEndpoint") {
        if endpoint.get("host").is_some_and(|h| h == "") {
            endpoint.remove("host");
        }
        if endpoint.get("port").is_some_and(|p| p.as_i64() == Some(0)) {
            endpoint.remove("port");
        }
    }
    drop_empty(spec, "controlPlaneEndpoint");
}
