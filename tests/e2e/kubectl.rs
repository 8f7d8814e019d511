//! The operator's view: the real kubectl against the e2e API server, every call bounded, and the
//! `accepts` / `rejects` assertions the scenarios are written in.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::process::{run_bounded, Finished};

/// The per-request timeout handed to kubectl.
const REQUEST_TIMEOUT: &str = "--request-timeout=20s";
/// The hard limit of one kubectl invocation (several requests for multi-document applies).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(90);

/// kubectl with the admin kubeconfig of one environment.
#[derive(Clone)]
pub struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
}

impl Kubectl {
    /// kubectl `bin` talking to the cluster of `kubeconfig`.
    pub fn new(bin: PathBuf, kubeconfig: PathBuf) -> Kubectl {
        Kubectl { bin, kubeconfig }
    }

    /// Runs `kubectl <args>` with `stdin`; Err only when kubectl could not run or timed out.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Result<Finished, String> {
        let mut command = Command::new(&self.bin);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg(REQUEST_TIMEOUT)
            .args(args);
        run_bounded(command, stdin.map(str::as_bytes), COMMAND_TIMEOUT)
    }

    /// `kubectl <args>` as a command to start (no request timeout: for watches that run until
    /// the caller stops them).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command.arg("--kubeconfig").arg(&self.kubeconfig).args(args);
        command
    }

    /// `kubectl apply -f -` of `manifest` (YAML or JSON, one or more documents) plus `extra` flags.
    pub fn apply(&self, manifest: &str, extra: &[&str]) -> Result<Finished, String> {
        let mut args = vec!["apply", "-f", "-"];
        args.extend_from_slice(extra);
        self.run(&args, Some(manifest))
    }

    /// Applies `manifest` and expects success; returns what kubectl printed.
    pub fn accepts(&self, manifest: &str) -> Result<String, String> {
        let out = self.apply(manifest, &[])?;
        if out.success {
            Ok(out.stdout)
        } else {
            Err(format!(
                "kubectl apply was refused:\n{}{}",
                out.stdout, out.stderr
            ))
        }
    }

    /// Applies `manifest` and expects the API server to refuse it with every one of `fragments`
    /// (field paths and reasons) in kubectl's output.
    ///
    /// kubectl prints an `Invalid` refusal as `The Cluster "x" is invalid: <causes>`, the same
    /// whether the schema or a webhook refused, so the fragments must carry the webhook's wording.
    pub fn rejects(&self, manifest: &str, fragments: &[&str]) -> Result<(), String> {
        let out = self.apply(manifest, &[])?;
        if out.success {
            return Err(format!(
                "kubectl apply succeeded but should have been refused:\n{}",
                out.stdout
            ));
        }
        let said = format!("{}{}", out.stdout, out.stderr);
        let missing: Vec<&str> = fragments.iter().copied().filter(|f| !said.contains(f)).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("kubectl's output lacks {missing:?}:\n{said}"))
        }
    }

    /// `kubectl get <resource> <name> -o json` in `namespace`.
    pub fn get_json(&self, resource: &str, namespace: &str, name: &str) -> Result<Value, String> {
        let out = self.run(&["get", resource, name, "-n", namespace, "-o", "json"], None)?;
        if !out.success {
            return Err(format!("kubectl get {resource} {name}: {}", out.stderr));
        }
        serde_json::from_str(&out.stdout).map_err(|e| format!("kubectl get {resource} {name}: {e}"))
    }

    /// Runs `kubectl <args>` and fails unless it succeeds; returns stdout.
    pub fn ok(&self, args: &[&str]) -> Result<String, String> {
        let out = self.run(args, None)?;
        if out.success {
            Ok(out.stdout)
        } else {
            Err(format!(
                "kubectl {}: {}{}",
                args.join(" "),
                out.stdout,
                out.stderr
            ))
        }
    }

    /// `kubectl patch <resource> <name> -n <namespace> --type=merge -p <patch>`, on the status
    /// subresource when `status` is set.
    pub fn merge_patch(
        &self,
        target: (&str, &str, &str),
        patch: &Value,
        status: bool,
    ) -> Result<String, String> {
        let (resource, namespace, name) = target;
        let body = patch.to_string();
        let mut args = vec![
            "patch",
            resource,
            name,
            "-n",
            namespace,
            "--type=merge",
            "-p",
            &body,
        ];
        if status {
            args.push("--subresource=status");
        }
        self.ok(&args)
    }
}
