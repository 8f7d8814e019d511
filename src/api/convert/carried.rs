//! The places whose value a kind's conversion carries between the hub and the spoke as it is
//! (the same JSON, at the same place or at the other end of a declared [`Move`]): a change of
//! the hub object at such a place is the same change of the spoke at its place. The admission's
//! JSONPatch against an object sent in the spoke version is the hub's patch so mapped, checked
//! against the object as sent.

use std::borrow::Cow;

use serde_json::Value;

use super::kept::is_index;
use super::kind::Kind;
use super::topology;

/// Where a spoke of `kind` keeps the value the hub keeps at `hub` (a JSON pointer's encoded
/// tokens) when the conversion carries `value` there as it is; `None` when it rewrites the value
/// or its place (a duration, a health check, a ref, an annotation) or declares nothing for it.
pub(super) fn spoke_place<'a>(kind: Kind, hub: &'a [&'a str], value: &Value) -> Option<Cow<'a, [&'a str]>> {
    match kind {
        Kind::Cluster => cluster(hub, value),
        _ => None,
    }
}

const TOPOLOGY: [&str; 2] = ["spec", "topology"];

fn cluster<'a>(hub: &'a [&'a str], value: &Value) -> Option<Cow<'a, [&'a str]>> {
    let below = hub.strip_prefix(&TOPOLOGY[..])?;
    if topology::CARRIED.iter().any(|place| within(below, place)) {
        return Some(Cow::Borrowed(hub));
    }
    let class = topology::CLASS.iter().find(|class| class.hub == below)?;
    // The way back writes an absent name as `""` and leaves an empty namespace out: only a set
    // string is carried as it is.
    value.as_str().filter(|text| !text.is_empty())?;
    Some(Cow::Owned(TOPOLOGY.iter().chain(class.spoke).copied().collect()))
}

/// Whether `path` is `place` or below it (`*` in `place` is any list index).
fn within(path: &[&str], place: &[&str]) -> bool {
    path.len() >= place.len()
        && place
            .iter()
            .zip(path)
            .all(|(want, token)| want == token || (*want == "*" && is_index(token)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn place(pointer: &str, value: Value) -> Option<String> {
        let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
        spoke_place(Kind::Cluster, &tokens, &value).map(|tokens| format!("/{}", tokens.join("/")))
    }

    #[test]
    fn the_version_and_the_variable_lists_are_carried_where_they_are() {
        for pointer in [
            "/spec/topology/version",
            "/spec/topology/variables",
            "/spec/topology/variables/3/value/a~1b",
            "/spec/topology/controlPlane/variables/overrides/0",
            "/spec/topology/workers/machineDeployments/12/variables/overrides/1/value",
            "/spec/topology/workers/machinePools/0/variables/overrides",
        ] {
            assert_eq!(place(pointer, json!("x")).as_deref(), Some(pointer));
        }
    }

    #[test]
    fn the_class_moves_when_it_is_a_set_string() {
        assert_eq!(
            place("/spec/topology/classRef/namespace", json!("ns")).as_deref(),
            Some("/spec/topology/classNamespace")
        );
        assert_eq!(
            place("/spec/topology/classRef/name", json!("c")).as_deref(),
            Some("/spec/topology/class")
        );
        assert_eq!(place("/spec/topology/classRef/namespace", json!("")), None);
        assert_eq!(place("/spec/topology/classRef", json!({"name": "c"})), None);
    }

    #[test]
    fn rewritten_places_have_no_spoke_place() {
        for pointer in [
            "/metadata/annotations/cluster.x-k8s.io~1v1beta1-fields",
            "/spec/topology",
            "/spec/topology/controlPlane/variables",
            "/spec/topology/controlPlane/healthCheck/checks/nodeStartupTimeoutSeconds",
            "/spec/topology/controlPlane/deletion/nodeDrainTimeoutSeconds",
            "/spec/topology/workers/machineDeployments/x/variables/overrides",
            "/spec/topology/workers/machineDeployments/01/variables/overrides",
            "/spec/controlPlaneRef",
        ] {
            assert_eq!(place(pointer, json!("x")), None, "{pointer}");
        }
        let tokens = ["spec", "topology", "version"];
        assert!(spoke_place(Kind::ClusterClass, &tokens, &json!("v1")).is_none());
    }
}
