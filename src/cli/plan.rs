//! `capi-topology plan`: the desired objects of every Cluster in the files, or their difference
//! with the current objects given in the same files; and, when the files hold
//! ClusterResourceSets, what each would apply to each Cluster.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::current::{missing_state_hint, CurrentArgs};
use super::extensions::{runtime_extensions, with_discovered_variables, OfflineHooks};
use super::files::{check_versions, read, SourcedObject};
use super::plan_current::{plan_against_current, At};
use super::plan_format::Format;
use super::plan_output::{render_diff, Planned};
use super::plan_resource_sets::Section;
use super::terminal::{eprint_line, print_text};
use super::yaml_out::to_yaml;
use super::{print_stdout, EXIT_FINDINGS};
use crate::api::convert::{from_hub, is_convertible, ContractVersions, ConvertError};
use crate::api::Cluster;
use crate::offline::apply::Verdict;
use crate::offline::edge::hub_view;
use crate::offline::strict::{apply_validated, Schemas, Validation};
use crate::runtime::RuntimeExtensions;
use crate::store::{MemoryStore, ObjectSource};
use crate::topology::hooks::ProceedingHooks;
use crate::topology::upgrade_report::pending;
use crate::topology::{plan_with_hooks, Blueprint, Current};

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Files or directories with ClusterClasses, templates, Clusters and current objects.
    /// Regular files only, at most 32 MiB each.
    #[arg(short = 'f', long = "filename", value_name = "PATH", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Yaml)]
    pub output: Format,
    /// The version Cluster, ClusterClass, ClusterResourceSet(Binding) and ExtensionConfig are
    /// printed in (ExtensionConfig's older version is v1alpha1). v1beta1 needs the CRDs of the
    /// kinds a Cluster references in the files (their contract label gives the apiVersion).
    /// Machine kinds are always printed in v1beta2.
    #[arg(long, value_enum, default_value_t = OutputVersion::V1beta2)]
    pub output_version: OutputVersion,
    /// The current state to plan against, as the controller would (names kept, the diff is
    /// what the controller writes).
    #[command(flatten)]
    pub state: CurrentArgs,
    /// Field validation, as kubectl's `--validate`: unknown fields refuse the object (`strict`, or
    /// `true`), are warnings (`warn`), or are dropped silently (`ignore`, `false`). A key written
    /// twice is a warning unless ignored: kubectl sends its last value.
    #[arg(long, value_enum, default_value_t = Validation::Strict, value_name = "MODE")]
    pub validate: Validation,
}

/// The versions `plan` prints our kinds in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputVersion {
    /// The stored version (the hub).
    V1beta2,
    /// The older version, converted from v1beta2 as the conversion webhook would.
    V1beta1,
}

/// Fixed timestamp for objects stored while planning, so the output does not depend on the clock.
const PLAN_TIME: &str = "1970-01-01T00:00:00Z";

/// Plans every Cluster with a topology; exit 1 when a Cluster is invalid or its plan fails.
pub fn run(args: &PlanArgs) -> Result<ExitCode> {
    let read = read(&args.files)?;
    let summary = read.summary(&args.files);
    let objects = read.objects;
    check_versions(&objects)?;
    let mut planning = Planning::new(args, &objects)?;
    let clusters = planning.store_objects(objects)?;
    let resource_sets = super::plan_resource_sets::render(&planning.store, args.output, &mut planning.failed);
    let rollouts = super::plan_rollout::render(&planning.store, &planning.extensions, args.output)?;
    if clusters.is_empty() && !planning.failed && rollouts.is_none() {
        eprint_line(&format!("no Cluster with a spec.topology to plan: {summary}"));
    }
    let mut out = String::new();
    let mut list = JsonList::default();
    planning.plan_clusters(clusters, &mut out, &mut list)?;
    match resource_sets {
        Some(Section::Text(text)) => out.push_str(&text),
        Some(Section::Json(sets)) => list.resource_sets = Some(sets),
        None => {}
    }
    match rollouts {
        Some(Section::Text(text)) => out.push_str(&text),
        Some(Section::Json(rollouts)) => list.class_rollouts = Some(rollouts),
        None => {}
    }
    if let Some(document) = list.finish() {
        out.push_str(&(serde_json::to_string_pretty(&document)? + "\n"));
    }
    match args.output {
        // The difference is for reading; YAML and JSON are written escaped.
        Format::Diff => print_text(&out)?,
        Format::Yaml | Format::Json => print_stdout(&out)?,
    }
    Ok(if planning.failed {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// What planning the files' Clusters shares: the store the files are applied to, the
/// extensions their patches call, and whether anything failed on the way.
struct Planning<'a> {
    args: &'a PlanArgs,
    /// The current state was given: Clusters are planned against it, not from nothing.
    given: bool,
    store: MemoryStore,
    /// The files' objects in their hub form, with the stored ExtensionConfigs.
    all: Vec<Value>,
    extensions: RuntimeExtensions,
    /// The files hold ExtensionConfigs, so classes get their variables discovered.
    discovers: bool,
    /// An object was refused or a plan failed: the exit code is 1.
    failed: bool,
}

impl<'a> Planning<'a> {
    /// Loads the current state, if given, and the extensions the files and that state configure.
    fn new(args: &'a PlanArgs, objects: &[SourcedObject]) -> Result<Self> {
        let mut all: Vec<Value> = objects.iter().map(|o| hub_view(&o.object)).collect();
        let written: Vec<Value> = objects.iter().map(|o| o.object.clone()).collect();
        let current = args.state.load(&written)?;
        let given = current.is_some();
        let store = current.map(|c| c.store).unwrap_or_default();
        all.extend(stored_extension_configs(&store));
        // External patches call the extensions of the files' ExtensionConfigs, as the controller would.
        let extensions = runtime_extensions(&[all.as_slice(), &stored_namespaces(&store)].concat());
        // Without ExtensionConfigs in the files, classes keep the discovered variables they list.
        let discovers = all.iter().any(|o| o["kind"] == "ExtensionConfig");
        Ok(Self {
            args,
            given,
            store,
            all,
            extensions,
            discovers,
            failed: false,
        })
    }

    /// Admits and stores each object of the files, as the API server would; returns the
    /// (namespace, resource) of each Cluster with a topology that was stored.
    fn store_objects(&mut self, objects: Vec<SourcedObject>) -> Result<Vec<(String, String)>> {
        let args = self.args;
        let mut clusters = Vec::new();
        let schemas = Schemas::new(objects.iter().map(|o| &o.object));
        for sourced in objects {
            let findings = schemas.findings(&sourced.object);
            sourced.warn_repeated_keys(args.validate);
            let is_cluster =
                sourced.object["kind"] == "Cluster" && sourced.object["spec"]["topology"].is_object();
            let source = sourced.source.display().to_string();
            let object = self.discover_variables(sourced.object, &source);
            let cluster = (!self.given && is_cluster).then(|| object.clone());
            if args.validate == Validation::Warn {
                findings
                    .iter()
                    .for_each(|finding| eprint_line(&format!("Warning: {finding}")));
            }
            let applied = apply_validated(
                &mut self.store,
                self.given,
                object,
                findings,
                args.validate,
                &source,
                PLAN_TIME,
            )?;
            if applied.verdict == Verdict::Denied {
                eprint_line(&format!("{source}: {}", applied.message));
                if let Some(hint) = cluster.and_then(|c| missing_state_hint(&c, &applied.message)) {
                    eprint_line(&hint);
                }
                self.failed = true;
            } else if is_cluster {
                clusters.push((applied.namespace.clone(), applied.resource.clone()));
            }
        }
        Ok(clusters)
    }

    /// `object` with the variables its extensions discover, when the files configure extensions;
    /// `object` unchanged, and the run failed, when discovery fails.
    fn discover_variables(&mut self, object: Value, source: &str) -> Value {
        if !self.discovers {
            return object;
        }
        match with_discovered_variables(object.clone(), &self.extensions, PLAN_TIME) {
            Ok(discovered) => discovered,
            Err(message) => {
                eprint_line(&format!("{source}: {message}"));
                self.failed = true;
                object
            }
        }
    }

    /// Plans each stored Cluster into `out`, or `list` for `-o json`, in the version asked for.
    fn plan_clusters(
        &mut self,
        clusters: Vec<(String, String)>,
        out: &mut String,
        list: &mut JsonList,
    ) -> Result<()> {
        for (namespace, resource) in clusters {
            let name = resource.rsplit('/').next().unwrap_or_default();
            let planned = if self.given {
                plan_against_current(&self.store, &namespace, name, &self.extensions, At::Pinned)
            } else {
                plan_cluster(&self.store, &namespace, name, &self.all, &self.extensions)
            };
            let planned = match (planned, self.args.output_version) {
                (Ok(planned), OutputVersion::V1beta1) => Ok(to_v1beta1(planned, &self.store)?),
                (other, _) => other,
            };
            match planned {
                Ok(planned) => render(out, list, self.args.output, (&namespace, name), planned)?,
                Err(err) => {
                    eprint_line(&format!("Cluster {namespace}/{name}: {err:#}"));
                    self.failed = true;
                }
            }
        }
        Ok(())
    }
}

/// The Namespaces of the current state (an ExtensionConfig's namespaceSelector matches their
/// labels).
pub(super) fn stored_namespaces(store: &MemoryStore) -> Vec<Value> {
    store
        .names_of_kind("", "Namespace")
        .into_iter()
        .filter_map(|(namespace, name)| store.get("", "Namespace", &namespace, &name))
        .map(|object| (*object).clone())
        .collect()
}

/// The ExtensionConfigs of the current state.
pub(super) fn stored_extension_configs(store: &MemoryStore) -> Vec<Value> {
    store
        .names_of_kind(crate::api::runtime::RUNTIME_GROUP, "ExtensionConfig")
        .into_iter()
        .filter_map(|(namespace, name)| {
            store.get(
                crate::api::runtime::RUNTIME_GROUP,
                "ExtensionConfig",
                &namespace,
                &name,
            )
        })
        .map(|object| (*object).clone())
        .collect()
}

/// The plan with our kinds converted to their older version; an error (naming the CRD) when a
/// Cluster references a kind whose CRD with a contract label is not in the files.
fn to_v1beta1(mut planned: Planned, contracts: &dyn ContractVersions) -> Result<Planned> {
    for object in &mut planned.desired {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default();
        if !is_convertible(&api_version, kind).unwrap_or(false) {
            continue;
        }
        let group = crate::store::group_of(&api_version);
        let spoke = if group == crate::api::runtime::RUNTIME_GROUP {
            crate::api::runtime::v1alpha1::VERSION
        } else {
            crate::api::crd::SPOKE_VERSION
        };
        *object =
            from_hub(object.take(), &format!("{group}/{spoke}"), contracts).map_err(|err| match err {
                ConvertError::MissingContract {
                    ref group, ref kind, ..
                } => {
                    let crd = crate::contract::crd_name::crd_name(group, kind);
                    anyhow::anyhow!("{err}; add the CRD {crd} to the files to print v1beta1")
                }
                other => other.into(),
            })?;
    }
    Ok(planned)
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
    let topology = cluster.spec.managed_topology().context("no spec.topology")?;
    let class_ref = &topology.class_ref;
    let class_namespace = if class_ref.namespace.is_empty() {
        namespace.to_owned()
    } else {
        class_ref.namespace.clone()
    };
    let entry = store
        .cluster_class(&class_namespace, &class_ref.name)
        .with_context(|| format!("ClusterClass {class_namespace}/{} not found", class_ref.name))?;
    let blueprint = Blueprint::new(entry.class.clone(), store)?;
    let current = Current::owned_by(name, namespace, all.iter().cloned());
    let hooks = OfflineHooks {
        hooks: ProceedingHooks::NONE,
        extensions,
    };
    let planned = plan_with_hooks(&blueprint, &cluster, &current, extensions, &hooks)?;
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
    let held = pending(&planned.upgrade, &planned.hooks).map(|p| format!("{}: {}", p.reason, p.message));
    Ok(Planned {
        current: current.objects,
        desired,
        held,
        upgrade: planned.upgrade.outline,
        report: None,
        machine_rolls: Vec::new(),
        upgrade_rolls: Vec::new(),
    })
}

/// Appends one Cluster's plan to `out` in `format`.
/// `-o json`: one List of every Cluster's desired objects, whatever the number of Clusters, with
/// the upgrade plan as `upgradePlan` (one Cluster planned) or per Cluster as `upgradePlans`
/// (several), the ClusterResourceSets' previews as `clusterResourceSets`, and the waves of a
/// ClusterClass change under a ClusterClassRollout as `classRollouts`.
#[derive(Default)]
struct JsonList {
    items: Vec<Value>,
    upgrades: Vec<(String, Value)>,
    clusters: usize,
    resource_sets: Option<Vec<Value>>,
    class_rollouts: Option<Vec<Value>>,
}

impl JsonList {
    fn add(&mut self, namespace: &str, name: &str, planned: Planned) -> Result<()> {
        self.clusters += 1;
        if let Some(upgrade) = &planned.upgrade {
            self.upgrades
                .push((format!("{namespace}/{name}"), serde_json::to_value(upgrade)?));
        }
        self.items.extend(planned.desired);
        Ok(())
    }

    /// The document, `None` when there is nothing to print.
    fn finish(self) -> Option<Value> {
        if self.clusters == 0 && self.resource_sets.is_none() && self.class_rollouts.is_none() {
            return None;
        }
        let mut list = json!({"apiVersion": "v1", "kind": "List", "items": self.items});
        match <[_; 1]>::try_from(self.upgrades) {
            Ok([(_, upgrade)]) if self.clusters == 1 => list["upgradePlan"] = upgrade,
            Ok(one) => list["upgradePlans"] = Value::Object(one.into_iter().collect()),
            Err(upgrades) if !upgrades.is_empty() => {
                list["upgradePlans"] = Value::Object(upgrades.into_iter().collect());
            }
            Err(_) => {}
        }
        if let Some(sets) = self.resource_sets {
            list["clusterResourceSets"] = Value::Array(sets);
        }
        if let Some(rollouts) = self.class_rollouts {
            list["classRollouts"] = Value::Array(rollouts);
        }
        Some(list)
    }
}

/// Prints one Cluster's plan in `out`, or adds it to `list` for `-o json`.
fn render(
    out: &mut String,
    list: &mut JsonList,
    format: Format,
    (namespace, name): (&str, &str),
    planned: Planned,
) -> Result<()> {
    match format {
        Format::Yaml => {
            out.push_str(&format!("# Cluster {namespace}/{name}\n"));
            if let Some(upgrade) = &planned.upgrade {
                out.push_str(&upgrade.text("# "));
            }
            out.push_str("---\n");
            let list = json!({"apiVersion": "v1", "kind": "List", "items": planned.desired});
            out.push_str(&to_yaml(&list));
        }
        Format::Json => list.add(namespace, name, planned)?,
        Format::Diff => render_diff(out, namespace, name, &planned),
    }
    Ok(())
}
