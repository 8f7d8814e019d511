//! `capi-topology admit`: replay one AdmissionReview against objects from files.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use super::admit_context::{kubectl_lines, state_warnings};
use super::files::{admitted_store, load_store};
use super::print_stdout;
use super::terminal::eprint_line;
use crate::admission::{self, Webhook, MAX_BODY_BYTES};

/// Arguments of `admit`.
#[derive(Debug, Args)]
pub struct AdmitArgs {
    /// Files or directories of objects the webhook may read (ClusterClasses, Clusters, control
    /// planes, MachineDeployments...), taken as given: a ClusterClass counts as reconciled only
    /// if its status says so, as in a cluster. Regular files only, at most 32 MiB each.
    #[arg(long = "objects", value_name = "PATH", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    /// Apply the --objects through the webhooks first, as `check`, `plan` and `serve --objects`
    /// do: defaulted, and each ClusterClass given the status its reconciler would write. Without
    /// it, a ClusterClass with no status is not reconciled yet, and a Cluster's variables are
    /// admitted unchecked, with a warning from the validating webhook (what the API server
    /// answers in the seconds before the ClusterClass controller has run).
    #[arg(long)]
    pub as_applied: bool,
    /// The webhook path the review was sent to, e.g. /validate-cluster-x-k8s-io-v1beta2-cluster (the
    /// webhooks are registered at the v1beta2 paths; the v1beta1 ones answer v1beta1 reviews).
    #[arg(long, value_name = "WEBHOOK_PATH", value_parser = parse_webhook)]
    pub path: Webhook,
}

fn parse_webhook(path: &str) -> Result<Webhook, String> {
    path.parse()
        .map_err(|err: admission::webhook::UnknownWebhook| err.to_string())
}

/// Reads the review from stdin, answers it on stdout. Exit 0 whenever it answered.
pub fn run(args: &AdmitArgs) -> Result<ExitCode> {
    let store = if args.as_applied {
        admitted_store(&args.objects)?
    } else {
        load_store(&args.objects)?
    };
    let mut body = Vec::new();
    std::io::stdin()
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .context("cannot read the AdmissionReview from stdin")?;
    let answer = admission::review(args.path.path(), &body, &store);
    let mut stderr = state_warnings(&body, &store, args.as_applied)
        .into_iter()
        .map(|warning| format!("Warning: {warning}"))
        .collect::<Vec<_>>();
    stderr.extend(kubectl_lines(args.path, &answer));
    let bytes = admission::encode_review(&answer).context("cannot encode the answer")?;
    let pretty: serde_json::Value = serde_json::from_slice(&bytes).context("cannot encode the answer")?;
    let text = serde_json::to_string_pretty(&pretty).context("cannot encode the answer")?;
    print_stdout(&(text + "\n"))?;
    for line in stderr {
        eprint_line(&line);
    }
    Ok(ExitCode::SUCCESS)
}
