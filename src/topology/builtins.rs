//! The variables a patch sees: the Cluster's values (with per-scope overrides) plus `builtin`.

use serde_json::{json, Map, Value};

use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::{ClusterNetwork, ClusterVariable};

/// The Cluster's values by name, only those meant for inline patches (`definitionFrom` empty or
/// `inline`, seed 003): built once per plan, the base of every scope's variables.
pub fn inline_values(values: &[ClusterVariable]) -> Map<String, Value> {
    let mut out = Map::new();
    insert_inline(&mut out, values);
    out
}

/// One scope's variables: `base` (see [`inline_values`]), then its `overrides` meant for inline
/// patches on top, then `builtin`.
pub fn variables(
    base: &Map<String, Value>,
    overrides: &[ClusterVariable],
    builtin: Value,
) -> Map<String, Value> {
    // A copy of the map keeps its hashes: cheaper than inserting every value again.
    let mut out = base.clone();
    insert_inline(&mut out, overrides);
    out.insert("builtin".to_owned(), builtin);
    out
}

/// Inserts the values of `values` meant for inline patches into `out`, later ones winning.
fn insert_inline(out: &mut Map<String, Value>, values: &[ClusterVariable]) {
    for value in values {
        if value.definition_from.is_empty() || value.definition_from == VARIABLE_DEFINITION_FROM_INLINE {
            out.insert(value.name.clone(), value.value.clone());
        }
    }
}

/// Merges `extra` object keys into `base` recursively (used to add scope-specific builtins).
pub fn merge(base: &Value, extra: Value) -> Value {
    match (base, extra) {
        (Value::Object(left), Value::Object(right)) => {
            let mut out = left.clone();
            for (key, value) in right {
                let merged = match out.get(&key) {
                    Some(existing) => merge(existing, value),
                    None => value,
                };
                out.insert(key, merged);
            }
            Value::Object(out)
        }
        (_, extra) => extra,
    }
}

/// What `builtin.cluster` is made of.
#[derive(Debug, Clone)]
pub struct ClusterFacts<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `metadata.namespace`.
    pub namespace: &'a str,
    /// `metadata.uid` (empty for a Cluster not stored yet).
    pub uid: &'a str,
    /// The desired Cluster's labels and annotations (its own with the topology's labels, see
    /// `plan`), when set.
    pub metadata: Option<Value>,
    /// `spec.topology.classRef.name`.
    pub class: &'a str,
    /// The class's namespace.
    pub class_namespace: &'a str,
    /// `spec.topology.version`.
    pub version: &'a str,
    /// `spec.clusterNetwork`.
    pub network: &'a ClusterNetwork,
}

/// The `builtin.cluster` block, as Cluster API v1.14 builds it: `uid` and `metadata` when set,
/// the class as `topology.classRef` and as the deprecated `class`/`classNamespace`, and
/// `network` only when the Cluster sets a service domain or CIDR blocks.
pub fn cluster(facts: &ClusterFacts<'_>) -> Value {
    let mut cluster = Map::new();
    cluster.insert("name".into(), json!(facts.name));
    cluster.insert("namespace".into(), json!(facts.namespace));
    if !facts.uid.is_empty() {
        cluster.insert("uid".into(), json!(facts.uid));
    }
    if let Some(metadata) = &facts.metadata {
        cluster.insert("metadata".into(), metadata.clone());
    }
    cluster.insert(
        "topology".into(),
        json!({"version": facts.version,
            "classRef": {"name": facts.class, "namespace": facts.class_namespace},
            "class": facts.class, "classNamespace": facts.class_namespace}),
    );
    let network = self::network(facts.network);
    if network.as_object().is_some_and(|n| !n.is_empty()) {
        cluster.insert("network".into(), network);
    }
    json!({ "cluster": cluster })
}

/// `builtin.cluster.network`: the service domain, and the service and pod CIDR blocks as lists
/// (each left out when empty; v1.14 has no `ipFamily`).
fn network(network: &ClusterNetwork) -> Value {
    let (services, pods) = (&network.services.cidr_blocks, &network.pods.cidr_blocks);
    let mut out = Map::new();
    if !network.service_domain.is_empty() {
        out.insert("serviceDomain".into(), json!(network.service_domain));
    }
    if !services.is_empty() {
        out.insert("services".into(), json!(services));
    }
    if !pods.is_empty() {
        out.insert("pods".into(), json!(pods));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_block_has_what_is_set_and_cidr_lists() {
        let network: ClusterNetwork = serde_json::from_value(json!({
            "serviceDomain": "cluster.local", "pods": {"cidrBlocks": ["192.168.0.0/16"]}, "apiServerPort": 6443}))
        .unwrap();
        let facts = ClusterFacts {
            name: "c1",
            namespace: "ns",
            uid: "u-1",
            metadata: Some(json!({"labels": {"env": "prod"}})),
            class: "k",
            class_namespace: "ns",
            version: "v1.31.0",
            network: &network,
        };
        assert_eq!(
            cluster(&facts),
            json!({"cluster": {"name": "c1", "namespace": "ns", "uid": "u-1", "metadata": {"labels": {"env": "prod"}},
                "topology": {"version": "v1.31.0", "classRef": {"name": "k", "namespace": "ns"}, "class": "k", "classNamespace": "ns"},
                "network": {"serviceDomain": "cluster.local", "pods": ["192.168.0.0/16"]}}})
        );
        let bare = ClusterFacts {
            uid: "",
            metadata: None,
            network: &ClusterNetwork::default(),
            ..facts.clone()
        };
        assert_eq!(
            cluster(&bare),
            json!({"cluster": {"name": "c1", "namespace": "ns", "topology": {"version": "v1.31.0",
                "classRef": {"name": "k", "namespace": "ns"}, "class": "k", "classNamespace": "ns"}}})
        );
    }

    #[test]
    fn overrides_win_and_external_values_are_skipped() {
        let value = |name: &str, value: Value, from: &str| ClusterVariable {
            name: name.into(),
            definition_from: from.into(),
            value,
        };
        let values = [
            value("a", json!(1), ""),
            value("b", json!(2), "ext"),
            value("c", json!(3), "inline"),
        ];
        let overrides: Vec<ClusterVariable> = serde_yaml_ng::from_str("[{name: a, value: 9}]").unwrap();
        let vars = variables(&inline_values(&values), &overrides, json!({}));
        assert_eq!(Value::Object(vars), json!({"a": 9, "c": 3, "builtin": {}}));
    }

    #[test]
    fn merge_is_deep() {
        let merged = merge(
            &json!({"cluster": {"name": "c"}}),
            json!({"cluster": {"x": 1}, "cp": 2}),
        );
        assert_eq!(merged, json!({"cluster": {"name": "c", "x": 1}, "cp": 2}));
    }
}
