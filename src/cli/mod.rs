//! The command line: one file per subcommand, each a thin adapter over the engine.

mod admit;
mod admit_context;
mod api_reads;
mod certs;
mod check;
mod cluster_api;
mod cluster_api_deployments;
mod cluster_api_switch;
mod contract;
mod convert;
mod crds;
mod current;
mod extensions;
mod files;
mod fleet_plan;
mod live;
mod plan;
mod plan_current;
mod plan_format;
mod plan_output;
mod plan_resource_sets;
mod plan_rollout;
mod serve;
mod terminal;
mod yaml_out;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::kube_credentials::redacted_messages;

/// capi-topology: Cluster API ClusterClass and managed topology, as webhooks, controllers and an
/// offline CLI.
#[derive(Debug, Parser)]
#[command(name = "capi-topology", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Answer one AdmissionReview (stdin) as the webhook server would, against objects from files.
    Admit(admit::AdmitArgs),
    /// Apply manifests to an empty in-memory cluster through the webhooks, as `kubectl apply`
    /// would, and report what the API server would say.
    Check(check::CheckArgs),
    /// Print the objects the topology controller would create for every Cluster in the files,
    /// or their difference with the current objects given (`-o diff`).
    Plan(plan::PlanArgs),
    /// Rewrite manifests of Cluster, ClusterClass, ClusterResourceSet(Binding) and ExtensionConfig
    /// into v1beta2 or v1beta1 (ExtensionConfig v1alpha1), as the conversion webhook converts them;
    /// other objects are passed through as written.
    Convert(convert::ConvertArgs),
    /// Check a provider's CRDs and ClusterRoles against the infrastructure provider contract
    /// (seed 001) before installing them.
    Contract(contract::ContractArgs),
    /// Print the CustomResourceDefinitions of the cluster.x-k8s.io kinds, generated from the API
    /// types (or write them into a directory).
    Crds(crds::CrdsArgs),
    /// Write a development CA and a serving certificate signed by it (`ca.crt`, `tls.crt`,
    /// `tls.key`), for local use and tests. Production uses cert-manager.
    Certs(certs::CertsArgs),
    /// Beside Cluster API's own managers: check a management cluster and say which topology
    /// controller owns the fleet (`doctor`); move a fleet from Cluster API's topology controller
    /// to capi-topology's (`take-over`) and back (`give-back`), a dry run unless `--apply`.
    #[command(name = "cluster-api")]
    ClusterApi(cluster_api::ClusterApiArgs),
    /// Serve the admission webhooks over HTTPS, reading objects from the API server (or files),
    /// with /metrics, /healthz and /readyz on a side port.
    Serve(Box<serve::ServeArgs>),
}

/// Exit code when a command ran but found problems (a denied object).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code when a command could not do its job (unreadable input, bad arguments).
pub const EXIT_FAILURE: u8 = 2;

/// Writes `text` to stdout; a closed pipe (`capi-topology ... | head`) is not an error.
fn print_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Parses the command line and runs the command; the process exit code is the result.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Admit(args) => admit::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Contract(args) => contract::run(&args),
        Command::Crds(args) => crds::run(&args),
        Command::Certs(args) => certs::run(&args),
        Command::ClusterApi(args) => cluster_api::run(&args),
        Command::Serve(args) => serve::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            terminal::eprint_line(&format!("error: {}", render_error(&err)));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// An error and its causes on one line, each said once: many error types repeat their
/// source's message in their own, so a cause already in the text before it is left out. A cause
/// carrying credentials (a failing exec credential plugin, a kubeconfig that does not parse) is
/// told without them.
pub fn render_error(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for message in redacted_messages(err.as_ref()) {
        if text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_causes_are_said_once() {
        let io = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "No such file or directory (os error 2)",
        );
        let err = anyhow::Error::new(io).context("cannot read /x: No such file or directory (os error 2)");
        assert_eq!(
            render_error(&err),
            "cannot read /x: No such file or directory (os error 2)"
        );
        let err = anyhow::anyhow!("root").context("outer");
        assert_eq!(render_error(&err), "outer: root");
    }
}
