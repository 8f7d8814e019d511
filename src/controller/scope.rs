//! Which objects this instance's controllers reconcile, so that several instances split a fleet
//! as Cluster API's managers do: `--watch-filter VALUE` keeps the objects labelled
//! `cluster.x-k8s.io/watch-filter=VALUE`, `--namespace` keeps those namespaces. The webhooks
//! are not scoped: every instance admits every object.

use std::collections::BTreeSet;

use kube::api::{Api, DynamicObject, ObjectMeta};
use kube::core::ApiResource;
use kube::runtime::watcher;
use kube::Client;
use sha2::{Digest, Sha256};

/// The label Cluster API's managers filter their watches by (`--watch-filter`).
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// The leader Lease of an instance that reconciles everything.
const LEASE_NAME: &str = "capi-topology-controllers";

/// The objects the controllers of this instance reconcile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only objects whose watch-filter label has this value (`None`: any object).
    pub watch_filter: Option<String>,
    /// Only objects of these namespaces (empty: every namespace).
    pub namespaces: BTreeSet<String>,
}

impl Scope {
    /// True when the object with `metadata` is this instance's to reconcile. Cluster-scoped
    /// objects (no namespace) are kept by the namespace rule; the watch filter applies to all.
    pub fn admits(&self, metadata: &ObjectMeta) -> bool {
        let label = metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(WATCH_FILTER_LABEL));
        self.admits_parts(label.map(String::as_str), metadata.namespace.as_deref())
    }

    /// [`Scope::admits`] for an object as JSON.
    pub fn admits_value(&self, object: &serde_json::Value) -> bool {
        let metadata = &object["metadata"];
        self.admits_parts(
            metadata["labels"][WATCH_FILTER_LABEL].as_str(),
            metadata["namespace"].as_str(),
        )
    }

    /// True for an object with the watch-filter label `label` in `namespace` (`None`: cluster-scoped).
    fn admits_parts(&self, label: Option<&str>, namespace: Option<&str>) -> bool {
        let labelled = self
            .watch_filter
            .as_deref()
            .is_none_or(|filter| label == Some(filter));
        let in_namespace = match namespace {
            Some(namespace) if !self.namespaces.is_empty() => self.namespaces.contains(namespace),
            _ => true,
        };
        labelled && in_namespace
    }

    /// A watch configuration that asks the API server for the filtered objects only.
    pub fn watcher_config(&self) -> watcher::Config {
        let config = watcher::Config::default().any_semantic();
        match &self.watch_filter {
            Some(filter) => config.labels(&format!("{WATCH_FILTER_LABEL}={filter}")),
            None => config,
        }
    }

    /// The API of `resource` to watch: the one namespace when only one is in scope, else all
    /// (the events of namespaces out of scope are then dropped by [`Scope::admits`]).
    pub fn api(&self, client: Client, resource: &ApiResource) -> Api<DynamicObject> {
        match (self.namespaces.len(), self.namespaces.first()) {
            (1, Some(only)) => Api::namespaced_with(client, only, resource),
            _ => Api::all_with(client, resource),
        }
    }

    /// The leader Lease of the instances with this scope: instances of different scopes lead
    /// apart. An unscoped instance keeps the one name every earlier release used.
    pub fn lease_name(&self) -> String {
        if self.watch_filter.is_none() && self.namespaces.is_empty() {
            return LEASE_NAME.to_owned();
        }
        let mut hasher = Sha256::new();
        hasher.update(self.watch_filter.as_deref().unwrap_or_default());
        for namespace in &self.namespaces {
            hasher.update([0]);
            hasher.update(namespace);
        }
        let digest = hasher.finalize();
        let suffix: String = digest.iter().take(5).map(|byte| format!("{byte:02x}")).collect();
        format!("{LEASE_NAME}-{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn meta(namespace: Option<&str>, filter: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            namespace: namespace.map(str::to_owned),
            labels: filter.map(|value| BTreeMap::from([(WATCH_FILTER_LABEL.to_owned(), value.to_owned())])),
            ..ObjectMeta::default()
        }
    }

    fn scope(filter: Option<&str>, namespaces: &[&str]) -> Scope {
        Scope {
            watch_filter: filter.map(str::to_owned),
            namespaces: namespaces.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    #[test]
    fn an_unscoped_instance_admits_everything() {
        let all = Scope::default();
        assert!(all.admits(&meta(Some("a"), None)));
        assert!(all.admits(&meta(Some("a"), Some("shard-1"))));
        assert!(all.admits(&meta(None, None)));
        assert_eq!(all.lease_name(), "capi-topology-controllers");
    }

    #[test]
    fn the_watch_filter_keeps_only_objects_labelled_with_its_value() {
        let shard = scope(Some("shard-1"), &[]);
        assert!(shard.admits(&meta(Some("a"), Some("shard-1"))));
        assert!(!shard.admits(&meta(Some("a"), Some("shard-2"))));
        assert!(!shard.admits(&meta(Some("a"), None)));
        assert!(
            !shard.admits(&meta(None, None)),
            "the filter applies to cluster-scoped objects too"
        );
    }

    #[test]
    fn objects_as_json_are_judged_alike() {
        let shard = scope(Some("shard-1"), &["team-a"]);
        let object = |namespace: &str, filter: &str| serde_json::json!({"metadata": {"namespace": namespace, "labels": {WATCH_FILTER_LABEL: filter}}});
        assert!(shard.admits_value(&object("team-a", "shard-1")));
        assert!(!shard.admits_value(&object("team-b", "shard-1")));
        assert!(!shard.admits_value(&object("team-a", "shard-2")));
        assert!(!shard.admits_value(&serde_json::json!({"metadata": {"namespace": "team-a"}})));
        assert!(Scope::default().admits_value(&serde_json::json!({"metadata": {}})));
    }

    #[test]
    fn namespaces_keep_their_objects_and_every_cluster_scoped_one() {
        let shard = scope(None, &["team-a", "team-b"]);
        assert!(shard.admits(&meta(Some("team-a"), None)));
        assert!(shard.admits(&meta(Some("team-b"), Some("x"))));
        assert!(!shard.admits(&meta(Some("team-c"), None)));
        assert!(shard.admits(&meta(None, None)));
    }

    #[test]
    fn scopes_lead_apart_and_the_same_scope_shares_its_lease() {
        let names = [
            scope(Some("shard-1"), &[]).lease_name(),
            scope(Some("shard-2"), &[]).lease_name(),
            scope(None, &["shard-1"]).lease_name(),
            scope(Some("shard-1"), &["a"]).lease_name(),
        ];
        let distinct: BTreeSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        assert_eq!(scope(Some("shard-1"), &[]).lease_name(), names[0]);
        assert!(names
            .iter()
            .all(|name| name.len() <= 63 && name.starts_with(LEASE_NAME)));
    }

    #[test]
    fn the_watch_asks_the_api_server_for_the_label() {
        let config = scope(Some("shard-1"), &[]).watcher_config();
        assert_eq!(
            config.label_selector.as_deref(),
            Some("cluster.x-k8s.io/watch-filter=shard-1")
        );
        assert_eq!(Scope::default().watcher_config().label_selector, None);
    }
}
