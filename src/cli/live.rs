//! The current state of the Clusters named in some files, read from a live management cluster:
//! read-only (only `get` and `list`; the verbs are those of `manifests/current-state-reader.yaml`).
//! What is read: each Cluster, its ClusterClass and the class's templates, the objects the
//! Cluster's references point at, the objects labelled with its name (its topology's clones,
//! MachineDeployments, MachineSets, Machines, MachinePools, MachineHealthChecks), every
//! ExtensionConfig, and the CRDs of the kinds referenced (for their contract versions). For a
//! ClusterClass in the files: the ClusterClassRollouts and ClusterClassRevisions of its namespace,
//! and, when a rollout governs it, every Cluster of the class.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use kube::api::{Api, DynamicObject, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{ApiCapabilities, Discovery, Scope};
use kube::Client;
use serde_json::Value;

use super::api_reads::{bounded_client, RequestTimeout};
use crate::api::class_rollout::{REVISION_KIND, ROLLOUT_GROUP, ROLLOUT_KIND};
use crate::api::labels::CLUSTER_NAME_LABEL;
use crate::contract::crd_name::crd_name;
use crate::contract::ref_versions::template_refs;
use crate::kube_credentials::redacted;
use crate::managed_fields::{slim, TOPOLOGY_MANAGER};
use crate::store::group_of;

/// The groups whose kinds a topology reads and owns.
const CAPI_GROUP: &str = "cluster.x-k8s.io";
const RUNTIME_GROUP: &str = "runtime.cluster.x-k8s.io";
/// Cluster API's kinds read for a Cluster's rollout state, besides the topology's own.
const MACHINE_KINDS: [&str; 5] = [
    "MachineDeployment",
    "MachineSet",
    "Machine",
    "MachinePool",
    "MachineHealthCheck",
];
/// Most objects read for one kind and Cluster (a bound on memory; a Cluster with more is refused).
const MAX_LISTED: usize = 5000;
/// Objects asked for per list request (`limit`, then `continue`): each answer stays far under
/// the bound on an answer's size.
const PAGE: u32 = 250;

/// Where the management cluster is: a kubeconfig (else `KUBECONFIG`, then `~/.kube/config`) and
/// an optional context.
#[derive(Debug, Clone, Default)]
pub struct Target<'a> {
    /// The kubeconfig file.
    pub kubeconfig: Option<&'a Path>,
    /// The context to use instead of the current one.
    pub context: Option<&'a str>,
    /// How long one request may take.
    pub request_timeout: RequestTimeout,
}

/// Reads the current state of every Cluster in `files` (objects as written); the objects read,
/// as the API server returns them.
pub fn read_current(target: &Target<'_>, files: &[Value]) -> Result<Vec<Value>> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let client = client(target).await?;
        Reader::new(client).await?.read(files).await
    })
}

/// Every Cluster with a `spec.topology`, in every namespace, as the API server returns it, in
/// namespace/name order (read-only: one `list`).
pub fn topology_clusters(target: &Target<'_>) -> Result<Vec<Value>> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let client = client(target).await?;
        let mut reader = Reader::new(client).await?;
        reader.list_all(CAPI_GROUP, "Cluster").await?;
        let mut clusters: Vec<Value> = reader
            .read
            .into_iter()
            .filter(|cluster| cluster["spec"]["topology"].is_object())
            .collect();
        clusters.sort_by_key(|c| (namespace_of(c), text(c, "/metadata/name")));
        Ok(clusters)
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime to read the management cluster")
}

async fn client(target: &Target<'_>) -> Result<Client> {
    let options = KubeConfigOptions {
        context: target.context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let config = match target.kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path).map_err(|err| {
                anyhow::anyhow!(
                    "cannot read the kubeconfig {}: {}",
                    path.display(),
                    redacted(&err)
                )
            })?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(|err| {
                    anyhow::anyhow!("cannot use the kubeconfig {}: {}", path.display(), redacted(&err))
                })?
        }
        None => kube::Config::from_kubeconfig(&options).await.map_err(|err| {
            anyhow::anyhow!(
                "cannot find a kubeconfig (set KUBECONFIG or give --kubeconfig PATH): {}",
                redacted(&err)
            )
        })?,
    };
    bounded_client(config, target.request_timeout)
}

/// A read-only view of the management cluster.
struct Reader {
    client: Client,
    discovery: Discovery,
    read: Vec<Value>,
    seen: BTreeSet<(String, String, String, String)>,
}

impl Reader {
    async fn new(client: Client) -> Result<Self> {
        let discovery = Discovery::new(client.clone())
            .run()
            .await
            .context("cannot discover the management cluster's API resources")?;
        Ok(Reader {
            client,
            discovery,
            read: Vec::new(),
            seen: BTreeSet::new(),
        })
    }

    async fn read(mut self, files: &[Value]) -> Result<Vec<Value>> {
        let mut classes: BTreeSet<(String, String)> = BTreeSet::new();
        for object in files.iter().filter(|o| is_capi(o, "ClusterClass")) {
            classes.insert((namespace_of(object), text(object, "/metadata/name")));
        }
        let governed = self.read_rollouts(&classes).await?;
        let mut clusters = Vec::new();
        for file_cluster in files.iter().filter(|o| is_capi(o, "Cluster")).chain(&governed) {
            let (namespace, name) = (namespace_of(file_cluster), text(file_cluster, "/metadata/name"));
            let live = self.get(CAPI_GROUP, "Cluster", &namespace, &name).await?;
            for cluster in [Some(file_cluster), live.as_ref()].into_iter().flatten() {
                classes.extend(class_of(cluster, &namespace));
            }
            let Some(cluster) = live else { continue };
            for pointer in ["/spec/infrastructureRef", "/spec/controlPlaneRef"] {
                let Some(reference) = cluster.pointer(pointer) else {
                    continue;
                };
                let (group, kind) = (text(reference, "/apiGroup"), text(reference, "/kind"));
                let ref_name = text(reference, "/name");
                if !kind.is_empty() && !ref_name.is_empty() {
                    self.get(&group, &kind, &namespace, &ref_name).await?;
                    self.get_crd(&group, &kind).await?;
                }
            }
            for kind in MACHINE_KINDS {
                self.list_labelled(CAPI_GROUP, kind, &namespace, &name).await?;
            }
            clusters.push((namespace, name));
        }
        // The kinds of the classes' templates: the templates themselves, and the clones and
        // objects made from them, which carry the Cluster's name.
        let mut kinds: BTreeSet<(String, String)> = BTreeSet::new();
        for (namespace, name) in classes {
            let Some(class) = self.get(CAPI_GROUP, "ClusterClass", &namespace, &name).await? else {
                continue;
            };
            for reference in template_refs(&class) {
                let group = group_of(&text(reference, "/apiVersion")).to_owned();
                let (kind, template) = (text(reference, "/kind"), text(reference, "/name"));
                self.get(&group, &kind, &namespace, &template).await?;
                self.get_crd(&group, &kind).await?;
                if let Some(object_kind) = kind.strip_suffix("Template") {
                    kinds.insert((group.clone(), object_kind.to_owned()));
                }
                kinds.insert((group, kind));
            }
        }
        for (namespace, cluster) in &clusters {
            for (group, kind) in &kinds {
                self.list_labelled(group, kind, namespace, cluster).await?;
            }
        }
        self.list_all(RUNTIME_GROUP, "ExtensionConfig").await?;
        // The Clusters' Namespaces, for their labels: an ExtensionConfig's namespaceSelector
        // decides whether its handlers are called for a Cluster.
        let namespaces: BTreeSet<String> = clusters.iter().map(|(namespace, _)| namespace.clone()).collect();
        for namespace in namespaces {
            self.get("", "Namespace", "", &namespace).await?;
        }
        Ok(self.read)
    }

    /// The ClusterClassRollouts and ClusterClassRevisions of the namespaces of `classes`, and
    /// every Cluster of a class a rollout governs (a class change rolls out over all of them).
    async fn read_rollouts(&mut self, classes: &BTreeSet<(String, String)>) -> Result<Vec<Value>> {
        let namespaces: BTreeSet<&String> = classes.iter().map(|(namespace, _)| namespace).collect();
        let mut governed = Vec::new();
        for namespace in namespaces {
            let read_before = self.read.len();
            self.list(ROLLOUT_GROUP, ROLLOUT_KIND, Some(namespace), None)
                .await?;
            let policies: Vec<Value> = self.read[read_before..].to_vec();
            if policies.is_empty() {
                continue;
            }
            self.list(ROLLOUT_GROUP, REVISION_KIND, Some(namespace), None)
                .await?;
            let read_before = self.read.len();
            self.list(CAPI_GROUP, "Cluster", Some(namespace), None).await?;
            let governs = |cluster: &Value| {
                class_of(cluster, namespace).is_some_and(|(class_namespace, class)| {
                    classes.contains(&(class_namespace, class.clone()))
                        && policies.iter().any(|p| text(p, "/spec/classRef/name") == class)
                })
            };
            governed.extend(self.read[read_before..].iter().filter(|c| governs(c)).cloned());
        }
        Ok(governed)
    }

    /// The resource serving `kind` of `group` in its preferred version, if the server has it.
    fn resource(&self, group: &str, kind: &str) -> Option<(ApiResource, ApiCapabilities)> {
        self.discovery.get(group)?.recommended_kind(kind)
    }

    fn api(
        &self,
        resource: &ApiResource,
        caps: &ApiCapabilities,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        match (caps.scope.clone(), namespace) {
            (Scope::Namespaced, Some(namespace)) => {
                Api::namespaced_with(self.client.clone(), namespace, resource)
            }
            _ => Api::all_with(self.client.clone(), resource),
        }
    }

    /// Keeps `object` once.
    fn keep(&mut self, object: Value) {
        let key = (
            text(&object, "/apiVersion"),
            text(&object, "/kind"),
            text(&object, "/metadata/namespace"),
            text(&object, "/metadata/name"),
        );
        if self.seen.insert(key) {
            self.read.push(object);
        }
    }

    /// `get` of one object; `None` when it or its kind does not exist.
    async fn get(&mut self, group: &str, kind: &str, namespace: &str, name: &str) -> Result<Option<Value>> {
        let Some((resource, caps)) = self.resource(group, kind) else {
            return Ok(None);
        };
        let api = self.api(&resource, &caps, Some(namespace));
        let found = api
            .get_opt(name)
            .await
            .with_context(|| format!("cannot get {kind} {namespace}/{name}"))?;
        Ok(found.map(|object| {
            let value = live_value(&object, &resource);
            self.keep(value.clone());
            value
        }))
    }

    /// `get` of the CRD serving `kind` of `group` (its contract labels).
    async fn get_crd(&mut self, group: &str, kind: &str) -> Result<()> {
        let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        let resource = ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions");
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource);
        let name = crd_name(group, kind);
        let found = api
            .get_opt(&name)
            .await
            .with_context(|| format!("cannot get CustomResourceDefinition {name}"))?;
        if let Some(object) = found {
            self.keep(live_value(&object, &resource));
        }
        Ok(())
    }

    /// `list` of the objects of `kind` in `namespace` labelled with Cluster `cluster`'s name.
    async fn list_labelled(&mut self, group: &str, kind: &str, namespace: &str, cluster: &str) -> Result<()> {
        let selector = format!("{CLUSTER_NAME_LABEL}={cluster}");
        self.list(group, kind, Some(namespace), Some(&selector)).await
    }

    /// `list` of every object of `kind`.
    async fn list_all(&mut self, group: &str, kind: &str) -> Result<()> {
        self.list(group, kind, None, None).await
    }

    async fn list(
        &mut self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<()> {
        let Some((resource, caps)) = self.resource(group, kind) else {
            return Ok(());
        };
        let api = self.api(&resource, &caps, namespace);
        let mut params = ListParams::default().limit(PAGE);
        if let Some(selector) = selector {
            params = params.labels(selector);
        }
        let mut listed = 0;
        loop {
            let page = api.list(&params).await.with_context(|| {
                format!("cannot list {kind} in {}", namespace.unwrap_or("every namespace"))
            })?;
            listed += page.items.len();
            if listed > MAX_LISTED {
                anyhow::bail!("more than {MAX_LISTED} {kind} objects to read for one Cluster");
            }
            for object in &page.items {
                self.keep(live_value(object, &resource));
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(next) => params = params.continue_token(&next),
                None => return Ok(()),
            }
        }
    }
}

/// An object read, as the API server returns it, with `apiVersion` and `kind` (list items may
/// lack them) and `managedFields` slimmed as the controller's cache slims them. Unlike the
/// cache's copy, `kubectl apply`'s last-applied annotation is kept: the files are applied over
/// the object as kubectl merges them, which needs it to remove what the files no longer set.
fn live_value(object: &DynamicObject, resource: &ApiResource) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    slim(&mut value, TOPOLOGY_MANAGER);
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_owned(), Value::from(resource.api_version.clone()));
        map.insert("kind".to_owned(), Value::from(resource.kind.clone()));
    }
    value
}

fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn namespace_of(object: &Value) -> String {
    match text(object, "/metadata/namespace") {
        namespace if namespace.is_empty() => "default".to_owned(),
        namespace => namespace,
    }
}

fn is_capi(object: &Value, kind: &str) -> bool {
    group_of(object["apiVersion"].as_str().unwrap_or_default()) == CAPI_GROUP && object["kind"] == kind
}

/// The ClusterClass (namespace, name) a Cluster of either version names.
fn class_of(cluster: &Value, namespace: &str) -> Option<(String, String)> {
    let topology = &cluster["spec"]["topology"];
    // v1beta2 `classRef`, v1beta1 `class` and `classNamespace`.
    let (name, class_namespace) = match topology.get("classRef") {
        Some(class_ref) => (text(class_ref, "/name"), text(class_ref, "/namespace")),
        None => (text(topology, "/class"), text(topology, "/classNamespace")),
    };
    if name.is_empty() {
        return None;
    }
    let class_namespace = if class_namespace.is_empty() {
        namespace.to_owned()
    } else {
        class_namespace
    };
    Some((class_namespace, name))
}
