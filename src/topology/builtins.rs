//! The variables a patch sees: the Cluster's values (with per-scope overrides) plus `builtin`.

use serde_json::{json, Map, Value};

use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::{ClusterNetwork, ClusterVariable};

/// The Cluster's values by name, only those meant for inline patches (`definitionFrom` empty or
/// `inline`): built once per plan, the base of every scope's variables.
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
    /// `metadata.labels` and `metadata.annotations`, when either is set.
    pub metadata: Option<Value>,
    /// `spec.topology.class`.
    pub class: &'a str,
    /// The class's namespace.
    pub class_namespace: &'a str,
    /// `spec.topology.version`.
    pub version: &'a str,
    /// `spec.clusterNetwork`.
    pub network: Option<&'a ClusterNetwork>,
}

/// The `builtin.cluster` block, as Cluster API builds it: `uid` and `metadata` when set, and
/// `network` only when the Cluster has a `clusterNetwork`.
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
        json!({"version": facts.version, "class": facts.class, "classNamespace": facts.class_namespace}),
    );
    if let Some(network) = facts.network {
        cluster.insert("network".into(), self::network(network));
    }
    json!({ "cluster": cluster })
}

/// `builtin.cluster.network`: the IP family, the service domain, and the service and pod CIDR
/// blocks as lists (each left out when empty).
fn network(network: &ClusterNetwork) -> Value {
    let blocks = |ranges: &Option<crate::api::NetworkRanges>| {
        ranges.as_ref().map(|r| r.cidr_blocks.clone()).unwrap_or_default()
    };
    let (services, pods) = (blocks(&network.services), blocks(&network.pods));
    let mut out = Map::new();
    out.insert("ipFamily".into(), json!(ip_family(&pods, &services)));
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

/// The Cluster's IP family from its pod and service CIDR blocks, as Cluster API names it: IPv4
/// when none is given, IPv4, IPv6 or DualStack from the blocks, Invalid when they do not parse,
/// are more than two per list, or pods and services disagree.
pub fn ip_family(pods: &[String], services: &[String]) -> &'static str {
    match (family_of(pods), family_of(services)) {
        (None, None) => "IPv4",
        (Some(Ok(family)), None) | (None, Some(Ok(family))) => family,
        (Some(Ok(pods)), Some(Ok(services))) if pods == services => pods,
        _ => "Invalid",
    }
}

/// The family of one list of CIDR blocks; `None` for an empty list.
fn family_of(blocks: &[String]) -> Option<Result<&'static str, ()>> {
    if blocks.is_empty() {
        return None;
    }
    if blocks.len() > 2 {
        return Some(Err(()));
    }
    let (mut v4, mut v6) = (false, false);
    for block in blocks {
        let Some((address, prefix)) = block.split_once('/') else {
            return Some(Err(()));
        };
        match (address.parse::<std::net::IpAddr>(), prefix.parse::<u8>()) {
            (Ok(std::net::IpAddr::V4(_)), Ok(bits)) if bits <= 32 => v4 = true,
            (Ok(std::net::IpAddr::V6(_)), Ok(bits)) if bits <= 128 => v6 = true,
            _ => return Some(Err(())),
        }
    }
    Some(Ok(match (v4, v6) {
        (true, true) => "DualStack",
        (false, true) => "IPv6",
        _ => "IPv4",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn ip_family_follows_the_cidr_blocks() {
        assert_eq!(ip_family(&[], &[]), "IPv4");
        assert_eq!(ip_family(&strings(&["10.0.0.0/16"]), &[]), "IPv4");
        assert_eq!(ip_family(&[], &strings(&["fd00::/108"])), "IPv6");
        assert_eq!(
            ip_family(
                &strings(&["10.0.0.0/16", "fd00::/48"]),
                &strings(&["10.1.0.0/16", "fd01::/108"])
            ),
            "DualStack"
        );
        assert_eq!(
            ip_family(&strings(&["10.0.0.0/16"]), &strings(&["fd00::/108"])),
            "Invalid"
        );
        assert_eq!(ip_family(&strings(&["10.0.0.0"]), &[]), "Invalid");
        assert_eq!(ip_family(&strings(&["a", "b", "c"]), &[]), "Invalid");
    }

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
            network: Some(&network),
        };
        assert_eq!(
            cluster(&facts),
            json!({"cluster": {"name": "c1", "namespace": "ns", "uid": "u-1", "metadata": {"labels": {"env": "prod"}},
                "topology": {"version": "v1.31.0", "class": "k", "classNamespace": "ns"},
                "network": {"ipFamily": "IPv4", "serviceDomain": "cluster.local", "pods": ["192.168.0.0/16"]}}})
        );
        let bare = ClusterFacts {
            uid: "",
            metadata: None,
            network: None,
            ..facts.clone()
        };
        assert_eq!(
            cluster(&bare),
            json!({"cluster": {"name": "c1", "namespace": "ns", "topology": {"version": "v1.31.0", "class": "k", "classNamespace": "ns"}}})
        );
    }

    #[test]
    fn overrides_win_and_external_values_are_skipped() {
        let values: Vec<ClusterVariable> = serde_yaml_ng::from_str(
            "[{name: a, value: 1}, {name: b, value: 2, definitionFrom: ext}, {name: c, value: 3, definitionFrom: inline}]",
        )
        .unwrap();
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
