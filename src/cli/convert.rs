//! `capi-topology convert`: rewrite manifests of Cluster, ClusterClass, ClusterResourceSet,
//! ClusterResourceSetBinding and ExtensionConfig into another served version, with the same
//! lossless converter the `/convert` webhook runs. Every other document is passed through as
//! written (comments included); a converted document is printed as stable YAML (keys in their
//! original order, new fields after them) that kubectl's YAML 1.1 reader reads back as the same
//! values (see [`super::yaml_out`]). Nothing is written when any object cannot be
//! converted: the command says why for each and exits 1.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde_json::Value;

use super::files::{manifest_files, read_text};
use super::terminal::eprint_line;
use super::yaml_out::to_yaml;
use super::{print_stdout, EXIT_FINDINGS};
use crate::api::convert::{convert, is_convertible, to_hub, without_written_forms, ContractVersions};
use crate::store::bounds::Budget;
use crate::store::contract::CRD_KIND;
use crate::store::{group_of, parse_manifests, parse_manifests_within, MemoryStore};

/// The versions `convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// cluster.x-k8s.io/v1beta2, addons.cluster.x-k8s.io/v1beta2, runtime.cluster.x-k8s.io/v1beta2.
    V1beta2,
    /// cluster.x-k8s.io/v1beta1, addons.cluster.x-k8s.io/v1beta1, runtime.cluster.x-k8s.io/v1alpha1.
    V1beta1,
}

impl Target {
    /// The apiVersion of `group` this target writes.
    fn api_version(self, group: &str) -> String {
        let version = match (self, group) {
            (Self::V1beta2, _) => crate::api::HUB_VERSION,
            (Self::V1beta1, crate::api::runtime::RUNTIME_GROUP) => crate::api::runtime::v1alpha1::VERSION,
            (Self::V1beta1, _) => crate::api::crd::SPOKE_VERSION,
        };
        format!("{group}/{version}")
    }
}

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Manifest files or directories (directories walked in name order). Regular files only,
    /// at most 32 MiB each.
    #[arg(short = 'f', long = "filename", value_name = "PATH", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,
    /// The version to write. v1beta1 needs, among the files, the CRDs of the kinds a Cluster's
    /// infrastructureRef and controlPlaneRef name (their contract label gives the apiVersion).
    #[arg(long, value_enum)]
    pub to: Target,
    /// Write the files into this directory (same names, relative to the directory given with -f)
    /// instead of printing them.
    #[arg(short = 'o', long = "out", value_name = "DIR", conflicts_with = "in_place")]
    pub out: Option<PathBuf>,
    /// Rewrite the files in place (only those with something converted).
    #[arg(long)]
    pub in_place: bool,
}

/// One manifest file and its text after conversion.
struct Converted {
    root: PathBuf,
    file: PathBuf,
    text: String,
    changed: bool,
}

/// Converts every file; exit 1 (nothing written) when an object cannot be converted.
pub fn run(args: &ConvertArgs) -> Result<ExitCode> {
    let mut inputs = Vec::new();
    let mut budget = Budget::default();
    for (root, file) in manifest_files(&args.files)? {
        let text = read_text(&file)?;
        let objects = parse_manifests_within(&text, &mut budget)
            .with_context(|| format!("{}", file.display()))?
            .into_iter()
            .map(|(object, _)| object)
            .collect::<Vec<_>>();
        inputs.push((root, file, text, objects));
    }
    // The CRDs among the files give the versions of the kinds Clusters reference.
    let mut contracts = MemoryStore::default();
    for (_, file, _, objects) in &inputs {
        for crd in objects.iter().filter(|o| o["kind"] == CRD_KIND) {
            contracts
                .insert(crd.clone())
                .with_context(|| format!("{}", file.display()))?;
        }
    }
    let mut problems = Vec::new();
    let mut converted = Vec::new();
    for (root, file, text, _) in inputs {
        let source = file.display().to_string();
        let json = file.extension().is_some_and(|e| e == "json");
        let mut changed = false;
        let mut out = String::new();
        for (separator, document) in documents(&text) {
            out.push_str(separator);
            match convert_document(document, json, args.to, &contracts, &source) {
                Ok(Some(rewritten)) => {
                    changed = true;
                    out.push_str(&rewritten);
                }
                Ok(None) => out.push_str(document),
                Err(reasons) => problems.extend(reasons),
            }
        }
        converted.push(Converted {
            root,
            file,
            text: out,
            changed,
        });
    }
    if !problems.is_empty() {
        for problem in &problems {
            eprint_line(&format!("error: {problem}"));
        }
        return Ok(ExitCode::from(EXIT_FINDINGS));
    }
    write(args, &converted)?;
    Ok(ExitCode::SUCCESS)
}

fn write(args: &ConvertArgs, converted: &[Converted]) -> Result<()> {
    if args.in_place {
        for c in converted.iter().filter(|c| c.changed) {
            std::fs::write(&c.file, &c.text).with_context(|| format!("cannot write {}", c.file.display()))?;
        }
        return Ok(());
    }
    let Some(dir) = &args.out else {
        let texts: Vec<&str> = converted.iter().map(|c| c.text.as_str()).collect();
        return Ok(print_stdout(&join_streams(&texts))?);
    };
    for c in converted {
        let target = dir.join(relative(&c.root, &c.file));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, &c.text).with_context(|| format!("cannot write {}", target.display()))?;
    }
    Ok(())
}

/// Where `file`, found under `root`, goes below the output directory.
fn relative(root: &Path, file: &Path) -> PathBuf {
    match file.strip_prefix(root) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_path_buf(),
        _ => file.file_name().map(PathBuf::from).unwrap_or_default(),
    }
}

/// Several files' texts as one YAML stream.
fn join_streams(texts: &[&str]) -> String {
    let mut out = String::new();
    for text in texts.iter().filter(|t| !t.trim().is_empty()) {
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("---\n");
        }
        out.push_str(text);
    }
    out
}

/// The YAML documents of `text`, each with the separator line before it (`""` for the first).
fn documents(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut separator = "";
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") {
            out.push((separator, &text[start..offset]));
            separator = line;
            start = offset + line.len();
        }
        offset += line.len();
    }
    out.push((separator, &text[start..]));
    out
}

/// The document rewritten in the target version, `None` when nothing in it converts, or why not
/// (one reason per object).
fn convert_document(
    document: &str,
    json: bool,
    to: Target,
    contracts: &dyn ContractVersions,
    source: &str,
) -> Result<Option<String>, Vec<String>> {
    let objects = parse_manifests(document).map_err(|err| vec![format!("{source}: {err}")])?;
    if objects.is_empty() {
        return Ok(None);
    }
    let mut value: Value =
        serde_yaml_ng::from_str(document).map_err(|err| vec![format!("{source}: {err}")])?;
    let mut changed = false;
    let mut reasons = Vec::new();
    let list = value.get("items").is_some_and(Value::is_array)
        && value["kind"].as_str().is_some_and(|k| k.ends_with("List"));
    let targets: Vec<&mut Value> = if list {
        value["items"]
            .as_array_mut()
            .map(|items| items.iter_mut().collect())
            .unwrap_or_default()
    } else {
        vec![&mut value]
    };
    for object in targets {
        match convert_object(object, to, contracts) {
            Ok(true) => changed = true,
            Ok(false) => {}
            Err(reason) => reasons.push(format!("{source}: {reason}")),
        }
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    if !changed {
        return Ok(None);
    }
    let text = if json {
        serde_json::to_string_pretty(&value)
            .map(|t| t + "\n")
            .map_err(|e| vec![e.to_string()])?
    } else {
        to_yaml(&value)
    };
    Ok(Some(text))
}

/// Converts `object` in place when it is one of the converted kinds; true when it changed.
fn convert_object(object: &mut Value, to: Target, contracts: &dyn ContractVersions) -> Result<bool, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
    let kind = object["kind"].as_str().unwrap_or_default().to_owned();
    // An unserved version: the converter's own error names the object.
    let convertible = is_convertible(&api_version, &kind).map_err(|e| {
        to_hub(object.clone())
            .err()
            .map_or_else(|| e.to_string(), |e| e.to_string())
    })?;
    if !convertible {
        return Ok(false);
    }
    let target = to.api_version(group_of(&api_version));
    if target == api_version {
        return Ok(false);
    }
    *object = convert(object.take(), &target, contracts).map_err(|e| e.to_string())?;
    without_written_forms(object);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_keep_their_separators_and_text() {
        let text = "# head\na: 1\n---\nb: 2\n--- # c\nc: 3\n";
        let docs = documents(text);
        assert_eq!(
            docs,
            [
                ("", "# head\na: 1\n"),
                ("---\n", "b: 2\n"),
                ("--- # c\n", "c: 3\n")
            ]
        );
        let rebuilt: String = docs.iter().map(|(s, d)| format!("{s}{d}")).collect();
        assert_eq!(rebuilt, text);
    }

    #[test]
    fn other_documents_pass_through_and_ours_convert() {
        let contracts = MemoryStore::default();
        let config_map = "# keep me\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
        let kept = convert_document(config_map, false, Target::V1beta2, &contracts, "f.yaml");
        assert_eq!(kept, Ok(None));
        let set = "apiVersion: addons.cluster.x-k8s.io/v1beta1\nkind: ClusterResourceSet\n\
                   metadata:\n  name: s\n  namespace: ns\nspec:\n  clusterSelector: {}\n";
        let converted = convert_document(set, false, Target::V1beta2, &contracts, "f.yaml");
        let text = converted.ok().flatten().unwrap_or_default();
        assert!(text.starts_with("apiVersion: addons.cluster.x-k8s.io/v1beta2\nkind: ClusterResourceSet\n"));
        let unknown = "apiVersion: cluster.x-k8s.io/v1alpha3\nkind: Cluster\nmetadata: {name: c}\n";
        let refused = convert_document(unknown, false, Target::V1beta2, &contracts, "f.yaml");
        assert_eq!(
            refused,
            Err(vec![
                "f.yaml: cannot convert Cluster c: apiVersion cluster.x-k8s.io/v1alpha3 is not served \
                 (served: v1beta1, v1beta2)"
                    .to_owned()
            ])
        );
    }

    #[test]
    fn a_file_found_in_a_directory_keeps_its_relative_path() {
        assert_eq!(
            relative(Path::new("ex"), Path::new("ex/a/b.yaml")),
            PathBuf::from("a/b.yaml")
        );
        assert_eq!(
            relative(Path::new("ex/b.yaml"), Path::new("ex/b.yaml")),
            PathBuf::from("b.yaml")
        );
    }
}
