//! `capi-topology crds`: the CustomResourceDefinitions of the cluster.x-k8s.io kinds and of our own
//! rollout.capi-topology.io kinds (ClusterClassRollout, ClusterClassRevision), generated
//! from our API types, or written one file per CRD into a directory (`manifests/crds/`).
//! The CRDs of the converted kinds name the conversion webhook; its CA comes from cert-manager's
//! CA injector (the annotation they carry) or, with `--ca-bundle`, from a file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::print_stdout;
use super::yaml_out::to_yaml_of;
use crate::api::crd::{custom_resource_definitions_with, Options};
use crate::api::rollout_crd::rollout_custom_resource_definitions;

/// Arguments of `crds`.
#[derive(Debug, Args)]
pub struct CrdsArgs {
    /// Write one `<group>_<plural>.yaml` per CRD into this directory instead of printing them.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// PEM CA certificate(s) the API server trusts the conversion webhook with (e.g. the
    /// `ca.crt` of `capi-topology certs`), written into `spec.conversion.webhook.clientConfig.caBundle`
    /// instead of the cert-manager CA injection annotation.
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
}

/// Prints (or writes) every CRD as YAML.
pub fn run(args: &CrdsArgs) -> Result<ExitCode> {
    let ca_bundle = match &args.ca_bundle {
        Some(file) => Some(std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?),
        None => None,
    };
    let mut crds =
        custom_resource_definitions_with(&Options { ca_bundle }).context("cannot generate the CRDs")?;
    crds.extend(rollout_custom_resource_definitions());
    match &args.out {
        None => {
            let documents = crds.iter().map(to_yaml).collect::<Result<Vec<_>>>()?;
            print_stdout(&documents.join("---\n"))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            for crd in &crds {
                let file = dir.join(file_name(crd));
                std::fs::write(&file, to_yaml(crd)?)
                    .with_context(|| format!("cannot write {}", file.display()))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The file a CRD is kept in: `cluster.x-k8s.io_clusters.yaml`, as controller-gen names them.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

fn to_yaml(crd: &CustomResourceDefinition) -> Result<String> {
    to_yaml_of(crd).context("cannot encode a CRD")
}
