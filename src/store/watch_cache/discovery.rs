//! Start-up discovery: finds the Cluster API group and starts the watchers of the start-up
//! kinds, and finds the served version of any other kind asked for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use kube::api::Api;
use kube::core::ApiResource;
use kube::{discovery, Client};

use super::stream::start_watch;
use super::{Shared, CAPI_GROUP, CAPI_VERSION, WATCHED_KINDS};

/// Pause between attempts to discover the Cluster API group at start-up.
const DISCOVERY_RETRY: Duration = Duration::from_secs(2);

/// Finds the Cluster API group (retrying until it is installed or shutdown) and starts a watcher
/// per installed kind of [`WATCHED_KINDS`].
pub(super) async fn discover_and_watch(shared: Arc<Shared>) {
    let group = loop {
        match discovery::group(&shared.client, CAPI_GROUP).await {
            Ok(group) => break group,
            Err(err) => {
                tracing::warn!(error = %err, "cannot discover {CAPI_GROUP}; are the Cluster API CRDs installed?");
                tokio::select! {
                    () = shared.shutdown.cancelled() => return,
                    () = tokio::time::sleep(DISCOVERY_RETRY) => {}
                }
            }
        }
    };
    let resources = group.versioned_resources(CAPI_VERSION);
    let installed: Vec<ApiResource> = WATCHED_KINDS
        .iter()
        .filter_map(|kind| {
            let found = resources
                .iter()
                .find(|(r, _)| r.kind == *kind)
                .map(|(r, _)| r.clone());
            if found.is_none() {
                tracing::warn!(
                    kind,
                    "{CAPI_GROUP}/{CAPI_VERSION} {kind} is not served; treated as empty"
                );
                mark_empty(&shared, kind);
            }
            found
        })
        .collect();
    // One more start-up kind: the CRDs, whose contract labels give the version a reference is
    // read at and written back in (`/convert` of a Cluster's refs to v1beta1 needs them).
    shared.unsynced.fetch_add(installed.len() + 1, Ordering::AcqRel);
    shared.unsynced.fetch_sub(1, Ordering::AcqRel);
    for resource in installed {
        start_watch(&shared, resource, true);
    }
    start_watch(&shared, crd_resource(), true);
}

/// CustomResourceDefinitions (apiextensions.k8s.io/v1), held for their contract labels.
fn crd_resource() -> ApiResource {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    ApiResource::erase::<CustomResourceDefinition>(&())
}

/// Records a start-up kind the API server does not serve as cached and empty.
fn mark_empty(shared: &Shared, kind: &str) {
    shared
        .watched
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            (CAPI_GROUP.to_owned(), kind.to_owned()),
            Arc::new(AtomicBool::new(true)),
        );
}

/// The served resource of `group` and `kind`: for a provider kind whose CRD lists the versions
/// of the Cluster API contract (`cluster.x-k8s.io/v1beta1: v1beta1_v1beta2`), the newest of them,
/// as Cluster API reads provider objects; otherwise the group's preferred version, or else the
/// most stable and recent version serving the kind (a v1beta1-only provider kind in a group whose
/// other kinds prefer v1beta2 is served, just not at the group's preferred version).
pub(super) async fn find_resource(client: &Client, group: &str, kind: &str) -> Option<ApiResource> {
    let discovered = discovery::group(client, group).await.ok()?;
    let served_at = |version: &str| {
        discovered
            .versioned_resources(version)
            .into_iter()
            .find(|(resource, _)| resource.kind == kind)
            .map(|(resource, _)| resource)
    };
    let preferred = std::iter::once(discovered.preferred_version_or_latest())
        .chain(discovered.versions())
        .find_map(served_at);
    let Some(preferred) = preferred else {
        tracing::warn!(group, kind, "kind is not served by the API server");
        return None;
    };
    let Some(version) = contract_version(client, group, kind)
        .await
        .filter(|v| *v != preferred.version)
    else {
        return Some(preferred);
    };
    let at_contract = served_at(&version);
    if at_contract.is_none() {
        tracing::warn!(
            group,
            kind,
            version,
            "the contract version is not served; reading the preferred version"
        );
    }
    Some(at_contract.unwrap_or(preferred))
}

/// The newest version the kind's CRD lists for the Cluster API contract, when it lists any.
async fn contract_version(client: &Client, group: &str, kind: &str) -> Option<String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let name = crate::contract::crd_name::crd_name(group, kind);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let labels = crds.get_metadata_opt(&name).await.ok()??.metadata.labels?;
    let labels = labels.into_iter().collect();
    crate::contract::versions::newest_for_contract(&name, &labels).ok()
}
