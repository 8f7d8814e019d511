//! `capi-topology contract -f DIR`: checks a provider's CRDs and ClusterRoles against the
//! infrastructure provider contract (seed 001) before they are installed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::files::read;
use super::terminal::{eprint_line, print_text};
use super::yaml_out::to_yaml_of;
use super::{print_stdout, EXIT_FAILURE, EXIT_FINDINGS};
use crate::contract::check::{check_provider, Report};

/// Output formats of `contract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per broken rule, then a summary per kind.
    Text,
    /// The whole report as one JSON object.
    Json,
}

/// Arguments of `contract`.
#[derive(Debug, Args)]
pub struct ContractArgs {
    /// Files or directories holding the provider's CRDs and ClusterRoles (e.g. the output of
    /// `kustomize build config/default`, or a release's infrastructure-components.yaml).
    /// Regular files only, at most 32 MiB each.
    #[arg(short = 'f', long = "filename", value_name = "PATH", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,
    /// The InfraCluster kinds to check (default: every CRD kind ending in `Cluster`).
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Print, instead of the report, a ClusterRole granting what the aggregated ClusterRoles lack
    /// (labelled to aggregate into the manager), ready to ship beside the CRDs.
    #[arg(long, conflicts_with = "output")]
    pub print_rbac: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
}

/// Checks the files; exit 1 when a rule is broken, 2 when there is nothing to check.
pub fn run(args: &ContractArgs) -> Result<ExitCode> {
    let objects: Vec<_> = read(&args.files)?.objects.into_iter().map(|o| o.object).collect();
    let report = match check_provider(&objects, &args.kinds) {
        Ok(report) => report,
        Err(message) => {
            eprint_line(&format!("error: {message}"));
            return Ok(ExitCode::from(EXIT_FAILURE));
        }
    };
    if args.print_rbac {
        let text = match report.cluster_role() {
            Some(role) => to_yaml_of(&role).context("cannot encode the ClusterRole")?,
            None => "# the aggregated ClusterRoles among the files grant everything the controllers need\n"
                .to_owned(),
        };
        print_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    match args.output {
        Format::Text => print_text(&render_text(&report))?,
        Format::Json => {
            print_stdout(
                &(serde_json::to_string_pretty(&report).context("cannot encode the report")? + "\n"),
            )?;
        }
    }
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}

/// The findings, one per line, then one line per kind.
fn render_text(report: &Report) -> String {
    let mut text = String::new();
    for finding in &report.findings {
        text.push_str(&finding.to_string());
        text.push('\n');
    }
    if !report.missing_grants.is_empty() {
        text.push_str("(`--print-rbac` prints a ClusterRole granting what is missing)\n");
    }
    for checked in &report.checked {
        let version = checked.version.as_deref().unwrap_or("no version");
        let verdict = match checked.findings {
            0 => "fits the contract".to_owned(),
            1 => "1 rule broken".to_owned(),
            n => format!("{n} rules broken"),
        };
        text.push_str(&format!(
            "{} ({}, {version}): {verdict}\n",
            checked.kind, checked.crd
        ));
    }
    text
}
