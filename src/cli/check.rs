//! `capi-topology check`: apply manifests to an empty in-memory cluster through the webhooks, as
//! `kubectl apply` would, and say what the API server would answer for each object. The Runtime
//! Extensions of ExtensionConfigs in the files declare their classes' external variables.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::current::{missing_state_hint, CurrentArgs};
use super::extensions::{runtime_extensions, with_discovered_variables};
use super::files::{check_versions, read};
use super::terminal::{eprint_line, print_text};
use super::EXIT_FINDINGS;
use crate::clock::now_rfc3339;
use crate::offline::apply::{Applied, Verdict};
use crate::offline::strict::{apply_validated, Schemas, Validation};

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// What kubectl prints, one line per object (warnings on stderr).
    Text,
    /// One JSON array with an entry per object.
    Json,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Manifest files or directories, applied in order (directories in name order). Regular
    /// files only, at most 32 MiB each.
    #[arg(short = 'f', long = "filename", value_name = "PATH", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// The current state the files are applied over.
    #[command(flatten)]
    pub state: CurrentArgs,
    /// Field validation, as kubectl's `--validate`: unknown fields refuse the object (`strict`, or
    /// `true`), are warnings (`warn`), or are dropped silently (`ignore`, `false`). A key written
    /// twice is a warning unless ignored: kubectl sends its last value.
    #[arg(long, value_enum, default_value_t = Validation::Strict, value_name = "MODE")]
    pub validate: Validation,
}

/// One object's line of the JSON report.
#[derive(Debug, Serialize)]
struct Report<'a> {
    file: String,
    #[serde(flatten)]
    applied: &'a Applied,
}

/// Applies every object; exit 1 when any was denied, 2 (before applying any) when one is of our
/// groups in a version no CRD serves.
pub fn run(args: &CheckArgs) -> Result<ExitCode> {
    let read = read(&args.files)?;
    if read.objects.is_empty() {
        eprint_line(&format!("nothing to check: {}", read.summary(&args.files)));
        return Ok(ExitCode::SUCCESS);
    }
    let objects = read.objects;
    check_versions(&objects)?;
    // Classes take the variables their external patches' extensions declare, as the ClusterClass
    // controller would list them, when the files register those extensions.
    let registering: Vec<_> = objects
        .iter()
        .filter(|o| matches!(o.object["kind"].as_str(), Some("ExtensionConfig" | "Namespace")))
        .map(|o| o.object.clone())
        .collect();
    let discovers = registering.iter().any(|o| o["kind"] == "ExtensionConfig");
    let extensions = runtime_extensions(&registering);
    let written: Vec<_> = objects.iter().map(|o| o.object.clone()).collect();
    let current = args.state.load(&written)?;
    let given = current.is_some();
    let mut store = current.map(|c| c.store).unwrap_or_default();
    let now = now_rfc3339();
    let mut results = Vec::with_capacity(objects.len());
    let mut hints = Vec::new();
    let schemas = Schemas::new(objects.iter().map(|o| &o.object));
    for sourced in objects {
        let findings = schemas.findings(&sourced.object);
        sourced.warn_repeated_keys(args.validate);
        let source = sourced.source.display().to_string();
        let mut object = sourced.object;
        if discovers {
            match with_discovered_variables(object.clone(), &extensions, &now) {
                Ok(discovered) => object = discovered,
                Err(message) => eprint_line(&format!("Warning: {source}: {message}")),
            }
        }
        let cluster = (object["kind"] == "Cluster").then(|| object.clone());
        let applied = apply_validated(&mut store, given, object, findings, args.validate, &source, &now)?;
        if !given && applied.verdict == Verdict::Denied {
            if let Some(hint) = cluster.and_then(|c| missing_state_hint(&c, &applied.message)) {
                hints.push(hint);
            }
        }
        results.push((sourced.source, applied));
    }
    print_results(&results, args.output)?;
    for hint in hints {
        eprint_line(&hint);
    }
    let denied = results
        .iter()
        .any(|(_, applied)| applied.verdict == Verdict::Denied);
    Ok(if denied {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints what was applied as kubectl does (refusals on stderr, in file order), or the JSON
/// report.
fn print_results(results: &[(PathBuf, Applied)], format: Format) -> Result<()> {
    let mut out = String::new();
    match format {
        Format::Text => {
            for (_, applied) in results {
                for warning in &applied.warnings {
                    eprint_line(&format!("Warning: {warning}"));
                }
                // As kubectl: what was applied on stdout, a refusal on stderr, in file order.
                match applied.verdict {
                    Verdict::Denied => {
                        print_text(&std::mem::take(&mut out))?;
                        eprint_line(&applied.message);
                    }
                    _ => out.push_str(&format!("{} {}\n", applied.resource, applied.verdict)),
                }
            }
        }
        Format::Json => {
            let reports: Vec<Report> = results
                .iter()
                .map(|(file, applied)| Report {
                    file: file.display().to_string(),
                    applied,
                })
                .collect();
            out = serde_json::to_string_pretty(&reports)? + "\n";
        }
    }
    print_text(&out)?;
    Ok(())
}
