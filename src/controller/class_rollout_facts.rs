//! What the class rollout controller reads and keeps around a step: the revision of the class
//! as it is now (created when new), each Cluster's health at its revision, and the revisions no
//! Cluster runs any more (deleted).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use std::sync::Arc;

use kube::core::ApiResource;

use super::events::EventRecorder;
use super::revisions::Revisions;
use super::scope::Scope;
use crate::api::class_revision::{ClusterClassRevision, ClusterClassRevisionSpec, REVISION_CLASS_LABEL};
use crate::api::class_rollout::{
    ClassRolloutClassRef, ClusterClassRolloutStatus, REVISION_KIND, ROLLOUT_GROUP,
};
use crate::api::crd::GROUP as CAPI_GROUP;
use crate::api::Cluster;
use crate::metrics::Metrics;
use crate::rollout::health::health;
use crate::rollout::pin::Pins;
use crate::rollout::revision::{in_use, revision_name, snapshot, SnapshotError};
use crate::rollout::step::ClusterFacts;
use crate::rollout::waves::Member;
use crate::store::ObjectSource;
use crate::store::WatchCache;

/// What a reconcile of a rollout reads and writes through.
pub struct Context {
    /// The objects, from the watch caches the webhooks also read.
    pub cache: WatchCache,
    /// The management cluster.
    pub client: kube::Client,
    /// The ClusterClassRollout resource.
    pub resource: ApiResource,
    /// Events on the rollout.
    pub recorder: EventRecorder,
    /// Revisions shared with the topology controller.
    pub revisions: Arc<Revisions>,
    /// The objects this instance reconciles.
    pub scope: Scope,
    /// Where the rollouts' state and steps are counted.
    pub metrics: Option<Metrics>,
}

/// Longest label value.
const MAX_LABEL_VALUE: usize = 63;

/// Why a rollout was not reconciled; it is retried.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    /// An API call failed.
    #[error("cannot {what}: {source}")]
    Api {
        /// What was attempted.
        what: String,
        /// The failure.
        source: kube::Error,
    },
    /// A revision of that name holds other content (a hash prefix shared by two contents).
    #[error("ClusterClassRevision {0} exists with other content")]
    Collision(String),
    /// An object could not be encoded.
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// The name of the revision of the class `namespace/class` as it is now, created if new;
/// `None` while no revision can be taken (the class not reconciled yet, a template missing).
pub async fn ensure_revision(
    ctx: &Context,
    policy: &Value,
    namespace: &str,
    class: &str,
) -> Result<Option<String>, RolloutError> {
    let taken = match snapshot(&ctx.cache, namespace, class) {
        Ok(taken) => taken,
        Err(
            why @ (SnapshotError::ClassNotFound(_)
            | SnapshotError::ClassNotReconciled(_)
            | SnapshotError::TemplateNotFound { .. }),
        ) => {
            tracing::debug!(%why, "no revision of the class yet");
            return Ok(None);
        }
    };
    let name = revision_name(class, &taken.hash);
    if let Some(existing) = ctx.cache.get(ROLLOUT_GROUP, REVISION_KIND, namespace, &name) {
        if existing.pointer("/spec/hash").and_then(Value::as_str) == Some(taken.hash.as_str()) {
            return Ok(Some(name));
        }
        return Err(RolloutError::Collision(name));
    }
    let number = revisions_of(ctx, namespace, class)
        .iter()
        .filter_map(|r| r.pointer("/spec/revision").and_then(Value::as_i64))
        .max()
        .unwrap_or(0)
        + 1;
    let labels = (class.len() <= MAX_LABEL_VALUE)
        .then(|| BTreeMap::from([(REVISION_CLASS_LABEL.to_owned(), class.to_owned())]));
    let revision = ClusterClassRevision {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.to_owned()),
            labels,
            owner_references: Some(vec![owner_of(policy)]),
            ..ObjectMeta::default()
        },
        spec: ClusterClassRevisionSpec {
            class_ref: ClassRolloutClassRef {
                name: class.to_owned(),
            },
            revision: number,
            hash: taken.hash,
            class: taken.class,
            templates: taken.templates,
        },
    };
    let api: Api<ClusterClassRevision> = Api::namespaced(ctx.client.clone(), namespace);
    match api.create(&PostParams::default(), &revision).await {
        Ok(created) => {
            tracing::info!(%namespace, %class, revision = %name, number, "new ClusterClassRevision");
            if let Ok(value) = serde_json::to_value(&created) {
                ctx.cache.observe(value);
            }
            Ok(Some(name))
        }
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Some(name)),
        Err(source) => Err(RolloutError::Api {
            what: format!("create ClusterClassRevision {namespace}/{name}"),
            source,
        }),
    }
}

/// The revisions of the class `namespace/class` in the cache.
fn revisions_of(ctx: &Context, namespace: &str, class: &str) -> Vec<std::sync::Arc<Value>> {
    ctx.cache
        .list(ROLLOUT_GROUP, REVISION_KIND, namespace)
        .into_iter()
        .filter(|r| r.pointer("/spec/classRef/name").and_then(Value::as_str) == Some(class))
        .collect()
}

/// The owner reference a revision carries to its rollout policy (deleting the policy deletes
/// its revisions: every Cluster then follows its class again).
fn owner_of(policy: &Value) -> OwnerReference {
    let text = |pointer: &str| {
        policy
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    OwnerReference {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        name: text("/metadata/name"),
        uid: text("/metadata/uid"),
        ..OwnerReference::default()
    }
}

/// Each Cluster of the class `namespace/class` with its health at the revision `status` gives it
/// (its entry, else the target).
pub fn cluster_facts(
    ctx: &Context,
    status: Option<&ClusterClassRolloutStatus>,
    namespace: &str,
    class: &str,
) -> Vec<ClusterFacts> {
    let pins = Pins::of(status);
    ctx.cache
        .clusters_using_class(namespace, class)
        .iter()
        .map(|cluster| facts_of(ctx, &pins, cluster))
        .collect()
}

fn facts_of(ctx: &Context, pins: &Pins<'_>, cluster: &Cluster) -> ClusterFacts {
    let namespace = cluster.metadata.namespace.clone().unwrap_or_default();
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let revision = pins.revision(&namespace, &name).unwrap_or_default();
    let applied = ctx
        .revisions
        .applied(&namespace, &name)
        .is_some_and(|a| a == revision);
    let object = ctx.cache.get(CAPI_GROUP, "Cluster", &namespace, &name);
    let reference = &cluster.spec.control_plane_ref;
    let control_plane = (!reference.is_unset())
        .then(|| {
            ctx.cache
                .get(&reference.api_group, &reference.kind, &namespace, &reference.name)
        })
        .flatten();
    let machine_deployments = ctx
        .cache
        .list_of_cluster(CAPI_GROUP, "MachineDeployment", &namespace, &name);
    let deployments: Vec<&Value> = machine_deployments.iter().map(|md| &**md).collect();
    let health = match &object {
        Some(object) => health(object, control_plane.as_deref(), &deployments, applied),
        None => crate::rollout::health::Health::Waiting("the Cluster is not in the cache".to_owned()),
    };
    let labels = cluster
        .metadata
        .labels
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    ClusterFacts {
        member: Member {
            namespace,
            name,
            labels,
        },
        health,
    }
}

/// Deletes the class's revisions this policy owns that are not in use (see [`in_use`]).
pub async fn remove_unused_revisions(
    ctx: &Context,
    policy: &Value,
    (namespace, class): (&str, &str),
    status: &ClusterClassRolloutStatus,
    live: Option<&str>,
) -> Result<(), RolloutError> {
    let kept = in_use(status, live);
    let owner = policy.pointer("/metadata/uid");
    let api: Api<ClusterClassRevision> = Api::namespaced(ctx.client.clone(), namespace);
    for revision in revisions_of(ctx, namespace, class) {
        let name = revision
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let owned = revision
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|refs| refs.iter().any(|r| r.get("uid") == owner));
        if kept.contains(name) || !owned {
            continue;
        }
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {
                tracing::info!(%namespace, revision = %name, "ClusterClassRevision no Cluster runs, deleted")
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(source) => {
                return Err(RolloutError::Api {
                    what: format!("delete ClusterClassRevision {namespace}/{name}"),
                    source,
                })
            }
        }
    }
    Ok(())
}
