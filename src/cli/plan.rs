//! `capi-topology plan`: the desired objects of every Cluster in the files, or their difference
//! with the current objects given in the same files; and, when the files hold
//! ClusterResourceSets, what each would apply to each Cluster.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::files::read;
use super::{print_stdout, EXIT_FINDINGS};
use crate::api::runtime::{DiscoverVariablesRequest, ExtensionConfig};
use crate::api::{Cluster, ClusterClass};
use crate::decode::decode_value;
use crate::offline::apply::{apply, Verdict};
use crate::runtime::{NamespaceLabels, RuntimeExtensions};
use crate::store::{MemoryStore, ObjectSource};
use crate::topology::class_status::{class_status, discovering_patches, VARIABLE_DISCOVERY_FAILED_REASON};
use crate::topology::diff::{diff, Change};
use crate::topology::upgrade_report::pending;
use crate::topology::{plan, Blueprint, Current};

/// Output formats of `plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One Kubernetes `List` per Cluster, as YAML documents.
    Yaml,
    /// One Kubernetes `List` per Cluster, as JSON.
    Json,
    /// Created / changed (per field) / deleted objects against the current objects in the files, and what of an upgrade is held and why.
    Diff,
}

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Files or directories with ClusterClasses, templates, Clusters and current objects.
    #[arg(short = 'f', long = "filename", value_name = "PATH", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Yaml)]
    pub output: Format,
}

/// Fixed timestamp for objects stored while planning, so the output does not depend on the clock.
const PLAN_TIME: &str = "1970-01-01T00:00:00Z";

/// Plans every Cluster with a topology; exit 1 when a Cluster is invalid or its plan fails.
pub fn run(args: &PlanArgs) -> Result<ExitCode> {
    let read = read(&args.files)?;
    let summary = read.summary(&args.files);
    let objects = read.objects;
    let all: Vec<Value> = objects.iter().map(|o| o.object.clone()).collect();
    // External patches call the extensions of the files' ExtensionConfigs, as the controller would.
    let extensions = runtime_extensions(&all);
    // Without ExtensionConfigs in the files, classes keep the discovered variables they list.
    let discovers = all.iter().any(|o| o["kind"] == "ExtensionConfig");
    let mut store = MemoryStore::default();
    let mut clusters = Vec::new();
    let mut failed = false;
    for sourced in objects {
        let is_cluster =
            sourced.object["kind"] == "Cluster" && sourced.object["spec"]["topology"].is_object();
        let source = sourced.source.display().to_string();
        let mut object = sourced.object;
        if discovers && object["apiVersion"] == "cluster.x-k8s.io/v1beta1" && object["kind"] == "ClusterClass"
        {
            match with_discovered_variables(object.clone(), &extensions) {
                Ok(discovered) => object = discovered,
                Err(message) => {
                    eprintln!("{source}: {message}");
                    failed = true;
                }
            }
        }
        let applied = apply(&mut store, object, &source, PLAN_TIME)?;
        if applied.verdict == Verdict::Denied {
            eprintln!("{source}: {}", applied.message);
            failed = true;
        } else if is_cluster {
            clusters.push((applied.namespace.clone(), applied.resource.clone()));
        }
    }
    let resource_sets = super::plan_resource_sets::render(&store, args.output);
    if clusters.is_empty() && !failed && resource_sets.is_none() {
        eprintln!("no Cluster with a spec.topology to plan: {summary}");
    }
    let mut out = String::new();
    for (namespace, resource) in clusters {
        let name = resource.rsplit('/').next().unwrap_or_default();
        match plan_cluster(&store, &namespace, name, &all, &extensions) {
            Ok(planned) => render(&mut out, args.output, &namespace, name, &planned)?,
            Err(err) => {
                eprintln!("Cluster {namespace}/{name}: {err:#}");
                failed = true;
            }
        }
    }
    out.push_str(&resource_sets.unwrap_or_default());
    print_stdout(&out)?;
    Ok(if failed {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// One Cluster's plan as printed.
struct Planned {
    /// The current objects owned by the Cluster.
    current: Vec<Value>,
    /// The desired objects, the Cluster first.
    desired: Vec<Value>,
    /// What of the upgrade still waits, and for what (reason: message).
    held: Option<String>,
}

/// The current and the desired objects of one Cluster (the Cluster itself first in the desired).
fn plan_cluster(
    store: &MemoryStore,
    namespace: &str,
    name: &str,
    all: &[Value],
    extensions: &RuntimeExtensions,
) -> Result<Planned> {
    let stored = store
        .get("cluster.x-k8s.io", "Cluster", namespace, name)
        .context("Cluster not stored")?;
    let cluster: Cluster =
        serde_json::from_value((*stored).clone()).context("decoding the defaulted Cluster")?;
    let topology = cluster.spec.topology.as_ref().context("no spec.topology")?;
    let class_namespace = topology
        .class_namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| namespace.to_owned());
    let entry = store
        .cluster_class(&class_namespace, &topology.class)
        .with_context(|| format!("ClusterClass {class_namespace}/{} not found", topology.class))?;
    let blueprint = Blueprint::new(entry.class.clone(), store)?;
    let current = Current::owned_by(name, namespace, all.iter().cloned());
    let planned = plan(&blueprint, &cluster, &current, extensions)?;
    let mut cluster_object = planned.cluster;
    if let Some(meta) = cluster_object["metadata"].as_object_mut() {
        for key in [
            "creationTimestamp",
            "uid",
            "resourceVersion",
            "generation",
            "managedFields",
        ] {
            meta.remove(key);
        }
    }
    let mut desired = vec![cluster_object];
    desired.extend(planned.objects);
    let held = pending(&planned.upgrade).map(|p| format!("{}: {}", p.reason, p.message));
    Ok(Planned {
        current: current.objects,
        desired,
        held,
    })
}

/// The ClusterClass `class` with the definitions its external patches' DiscoverVariables hooks
/// answer listed in `status.variables`, as the ClusterClass controller lists them (the offline
/// store then keeps them); unchanged when it has no such patch; why not when a hook fails.
fn with_discovered_variables(mut class: Value, extensions: &RuntimeExtensions) -> Result<Value, String> {
    let Ok(typed) = decode_value::<ClusterClass>(class.clone()) else {
        return Ok(class);
    };
    let patches: Vec<_> = discovering_patches(&typed).collect();
    if patches.is_empty() {
        return Ok(class);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the Runtime Extension client: {e}"))?;
    let namespace = typed.metadata.namespace.clone().unwrap_or_default();
    let discoveries: Vec<_> = patches
        .into_iter()
        .map(|(patch, handler, settings)| {
            let request = DiscoverVariablesRequest {
                settings: settings.clone(),
                ..DiscoverVariablesRequest::default()
            };
            let outcome = runtime.block_on(extensions.discover_variables(handler, &namespace, &request));
            (patch.to_owned(), outcome)
        })
        .collect();
    let status = class_status(&typed, 0, &discoveries, PLAN_TIME);
    let condition = &status["conditions"][0];
    if condition["reason"] == VARIABLE_DISCOVERY_FAILED_REASON {
        return Err(condition["message"].as_str().unwrap_or_default().to_owned());
    }
    class["status"]["variables"] = status["variables"].clone();
    Ok(class)
}

/// The Runtime Extensions the ExtensionConfigs among `objects` register, called for objects in
/// the namespaces among them (with their labels).
fn runtime_extensions(objects: &[Value]) -> RuntimeExtensions {
    let of_kind = |api_version: &'static str, kind: &'static str| {
        objects
            .iter()
            .filter(move |o| o["apiVersion"] == api_version && o["kind"] == kind)
    };
    let configs = of_kind("runtime.cluster.x-k8s.io/v1alpha1", "ExtensionConfig")
        .filter_map(|o| decode_value::<ExtensionConfig>(o.clone()).ok())
        .collect();
    let namespaces: NamespaceLabels = of_kind("v1", "Namespace")
        .filter_map(|o| {
            let name = o["metadata"]["name"].as_str()?.to_owned();
            let labels = serde_json::from_value(o["metadata"]["labels"].clone()).unwrap_or_default();
            Some((name, labels))
        })
        .collect();
    RuntimeExtensions::new(configs, namespaces)
}

/// Appends one Cluster's plan to `out` in `format`.
fn render(out: &mut String, format: Format, namespace: &str, name: &str, planned: &Planned) -> Result<()> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": planned.desired});
    match format {
        Format::Yaml => {
            out.push_str(&format!("# Cluster {namespace}/{name}\n---\n"));
            out.push_str(&serde_yaml_ng::to_string(&list)?);
        }
        Format::Json => out.push_str(&(serde_json::to_string_pretty(&list)? + "\n")),
        Format::Diff => {
            out.push_str(&format!("Cluster {namespace}/{name}:\n"));
            // The Cluster is compared only for its references.
            let changes = diff(&planned.current, planned.desired.get(1..).unwrap_or_default());
            if changes.is_empty() && planned.held.is_none() {
                out.push_str("  no changes\n");
            }
            for change in changes {
                match change {
                    Change::Created(what) => out.push_str(&format!("  + created {what}\n")),
                    Change::Deleted(what) => out.push_str(&format!("  - deleted {what}\n")),
                    Change::Changed(what, fields) => {
                        out.push_str(&format!("  ~ changed {what}\n"));
                        for field in fields {
                            out.push_str(&format!("      {}: {} -> {}\n", field.path, field.from, field.to));
                        }
                    }
                }
            }
            if let Some(line) = &planned.held {
                out.push_str(&format!("  = held {line}\n"));
            }
        }
    }
    Ok(())
}
