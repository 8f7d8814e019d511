//! What the ClusterRoles aggregated into Cluster API's manager grant (seed 001, "RBAC"): a
//! provider whose API group is not under `cluster.x-k8s.io` labels a ClusterRole
//! `cluster.x-k8s.io/aggregate-to-manager: "true"` to let the Cluster controller read and own its
//! InfraClusters; the groups under `cluster.x-k8s.io` are granted by the controllers' own role,
//! as Cluster API's manager role grants them.

use serde_json::Value;

/// The label that aggregates a ClusterRole into the manager's.
pub const AGGREGATE_LABEL: &str = "cluster.x-k8s.io/aggregate-to-manager";

/// The verbs the controllers use on an InfraCluster: the topology creates and updates it, the
/// Cluster controller reads it, sets its owner and label, and deletes it in order.
pub const INFRA_CLUSTER_VERBS: [&str; 7] = ["create", "delete", "get", "list", "patch", "update", "watch"];

/// The verbs the topology uses on an InfraClusterTemplate.
pub const TEMPLATE_VERBS: [&str; 3] = ["get", "list", "watch"];

/// The suffix of the API groups whose kinds the controllers' own role grants in full
/// (`infrastructure.cluster.x-k8s.io`, ...): a provider in such a group needs no aggregated role.
pub const CORE_GROUP_SUFFIX: &str = ".cluster.x-k8s.io";

/// Whether the controllers' own role already grants every verb on the kinds of `group`.
pub fn granted_to_core(group: &str) -> bool {
    group.ends_with(CORE_GROUP_SUFFIX)
}

/// One rule of an aggregated ClusterRole.
#[derive(Debug, Clone, Default)]
struct Rule {
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
}

/// The union of every aggregated ClusterRole among some objects.
#[derive(Debug, Clone, Default)]
pub struct AggregatedGrants {
    rules: Vec<Rule>,
    roles: usize,
}

impl AggregatedGrants {
    /// Collects the rules of every ClusterRole labelled [`AGGREGATE_LABEL`]`: "true"`.
    pub fn from_objects(objects: &[Value]) -> Self {
        let mut grants = Self::default();
        for role in objects.iter().filter(|o| is_aggregated_role(o)) {
            grants.roles += 1;
            let rules = role.get("rules").and_then(Value::as_array).into_iter().flatten();
            grants.rules.extend(rules.map(|rule| Rule {
                groups: strings(rule.get("apiGroups")),
                resources: strings(rule.get("resources")),
                verbs: strings(rule.get("verbs")),
            }));
        }
        grants
    }

    /// How many aggregated ClusterRoles were found.
    pub fn roles(&self) -> usize {
        self.roles
    }

    /// The verbs of `wanted` no aggregated rule grants on `resource` in `group`.
    pub fn missing<'w>(&self, group: &str, resource: &str, wanted: &[&'w str]) -> Vec<&'w str> {
        let covers = |list: &[String], item: &str| list.iter().any(|v| v == item || v == "*");
        wanted
            .iter()
            .copied()
            .filter(|verb| {
                !self.rules.iter().any(|rule| {
                    covers(&rule.groups, group)
                        && covers(&rule.resources, resource)
                        && covers(&rule.verbs, verb)
                })
            })
            .collect()
    }
}

fn is_aggregated_role(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("ClusterRole")
        && object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(AGGREGATE_LABEL))
            .and_then(Value::as_str)
            == Some("true")
}

fn strings(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_labelled_roles_grant_and_wildcards_cover() {
        let objects = [
            json!({"kind": "ClusterRole", "metadata": {"name": "unlabelled"},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
            json!({"kind": "ClusterRole", "metadata": {"name": "foo",
                    "labels": {AGGREGATE_LABEL: "true"}},
                "rules": [{"apiGroups": ["infrastructure.foo.com"], "resources": ["fooclusters"],
                    "verbs": ["get", "list", "watch"]},
                    {"apiGroups": ["infrastructure.foo.com"], "resources": ["*"], "verbs": ["patch"]}]}),
        ];
        let grants = AggregatedGrants::from_objects(&objects);
        assert_eq!(grants.roles(), 1);
        assert_eq!(
            grants.missing("infrastructure.foo.com", "fooclusters", &INFRA_CLUSTER_VERBS),
            ["create", "delete", "update"]
        );
        assert_eq!(grants.missing("other.io", "fooclusters", &["get"]), ["get"]);
    }

    #[test]
    fn groups_under_cluster_x_k8s_io_are_the_core_roles() {
        assert!(granted_to_core("infrastructure.cluster.x-k8s.io"));
        assert!(granted_to_core("controlplane.cluster.x-k8s.io"));
        assert!(!granted_to_core("infrastructure.foo.com"));
        assert!(!granted_to_core("cluster.x-k8s.io.evil.com"));
    }
}
