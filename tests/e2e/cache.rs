//! The per-machine e2e cache (`$CAPI_TOPOLOGY_E2E_CACHE`, else `~/.cache/capi-topology-e2e`) and
//! the one step that makes sure what a test takes from it is there. Each `ensure` runs its build
//! script (`tests/e2e/build-*.sh`: builds or downloads only what is missing, prints where it is)
//! and checks every path the suite reads. Those paths are reachable only through what an
//! `ensure` returns, so no test reads the cache before it is filled, on a fresh machine too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The Cluster API release the managers are built from (tests/e2e/build-cluster-api.sh).
pub const CLUSTER_API_VERSION: &str = "v1.14.0";
/// The Kubernetes tools the suite runs (tests/e2e/build-binaries.sh).
const KUBERNETES_TOOLS: [&str; 4] = ["etcd", "kube-apiserver", "kubectl", "kube-controller-manager"];
/// Cluster API's managers (tests/e2e/build-cluster-api.sh).
const MANAGERS: [&str; 4] = [
    "capi-manager",
    "kubeadm-control-plane-manager",
    "kubeadm-bootstrap-manager",
    "capd-manager",
];
/// The Cluster API modules whose sources the suite reads (`config/default` rendered with
/// kustomize, the Docker provider's class templates).
pub const CLUSTER_API_MODULES: [&str; 2] = ["sigs.k8s.io/cluster-api", "sigs.k8s.io/cluster-api/test"];

/// A cache directory, and the environment its build scripts run with beside the cache's.
pub struct Cache {
    root: PathBuf,
    env: Vec<(&'static str, OsString)>,
}

/// etcd, kube-apiserver, kubectl and kube-controller-manager, ensured.
pub struct Kubernetes {
    bin: PathBuf,
}

impl Kubernetes {
    /// The path of one of the tools.
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }
}

/// Cluster API's managers and the sources of its modules, ensured.
pub struct ClusterApiBuild {
    bin: PathBuf,
    modules: PathBuf,
}

impl ClusterApiBuild {
    /// The path of one of the managers.
    pub fn manager(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// The source directory of one of [`CLUSTER_API_MODULES`] at [`CLUSTER_API_VERSION`].
    pub fn module(&self, module: &str) -> PathBuf {
        assert!(
            CLUSTER_API_MODULES.contains(&module),
            "{module} is not among the modules build-cluster-api.sh downloads"
        );
        module_dir(&self.modules, module)
    }
}

fn module_dir(modules: &Path, module: &str) -> PathBuf {
    modules.join(format!("{module}@{CLUSTER_API_VERSION}"))
}

impl Cache {
    /// This machine's cache.
    pub fn machine() -> Cache {
        let root = std::env::var_os("CAPI_TOPOLOGY_E2E_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/capi-topology-e2e")
            });
        Cache {
            root,
            env: Vec::new(),
        }
    }

    /// The cache at `root`, its scripts run with `env` too (the fresh-cache check's stub Go).
    pub fn at(root: &Path, env: Vec<(&'static str, OsString)>) -> Cache {
        Cache {
            root: root.to_path_buf(),
            env,
        }
    }

    /// Runs `tests/e2e/<script>` (first run: builds, its progress on our stderr) and returns the
    /// last line it prints.
    fn run(&self, script: &str) -> Result<PathBuf, String> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/e2e")
            .join(script);
        let mut command = Command::new("bash");
        command
            .arg(&file)
            .env("CAPI_TOPOLOGY_E2E_CACHE", &self.root)
            .stderr(Stdio::inherit());
        command.envs(self.env.iter().map(|(name, value)| (name, value)));
        let output = command
            .output()
            .map_err(|e| format!("cannot run {script}: {e}"))?;
        if !output.status.success() {
            return Err(format!("tests/e2e/{script} failed ({})", output.status));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        Ok(PathBuf::from(stdout.lines().last().unwrap_or_default().trim()))
    }

    /// Builds (once per machine) and checks the Kubernetes tools.
    pub fn kubernetes(&self) -> Result<Kubernetes, String> {
        let bin = self.run("build-binaries.sh")?;
        present(KUBERNETES_TOOLS.iter().map(|tool| bin.join(tool)))?;
        Ok(Kubernetes { bin })
    }

    /// Builds (once per machine) and checks Cluster API's managers and module sources.
    pub fn cluster_api(&self) -> Result<ClusterApiBuild, String> {
        let bin = self.run("build-cluster-api.sh")?;
        let modules = self.root.join("gomodcache");
        present(MANAGERS.iter().map(|manager| bin.join(manager)))?;
        present(
            CLUSTER_API_MODULES
                .iter()
                .map(|module| module_dir(&modules, module)),
        )?;
        Ok(ClusterApiBuild { bin, modules })
    }

    /// Builds (once per machine, per version of its sources) the test Runtime Extension.
    pub fn extension(&self) -> Result<PathBuf, String> {
        let binary = self.run("build-extension.sh")?;
        present([binary.clone()])?;
        Ok(binary)
    }
}

/// Fails naming the first of `paths` that does not exist.
fn present(paths: impl IntoIterator<Item = PathBuf>) -> Result<(), String> {
    match paths.into_iter().find(|path| !path.exists()) {
        Some(missing) => Err(format!("{} is missing after its build", missing.display())),
        None => Ok(()),
    }
}

/// The Kubernetes tools of this machine's cache, ensured once per test process.
pub fn kubernetes() -> &'static Kubernetes {
    static ENSURED: OnceLock<Kubernetes> = OnceLock::new();
    ENSURED.get_or_init(|| Cache::machine().kubernetes().unwrap_or_else(|e| panic!("{e}")))
}

/// Cluster API's managers and sources in this machine's cache, ensured once per test process.
pub fn cluster_api() -> &'static ClusterApiBuild {
    static ENSURED: OnceLock<ClusterApiBuild> = OnceLock::new();
    ENSURED.get_or_init(|| Cache::machine().cluster_api().unwrap_or_else(|e| panic!("{e}")))
}

#[cfg(test)]
mod fresh {
    use super::*;

    /// A stand-in for `go` that builds nothing: it records each call, makes `go build -o OUT`
    /// an executable reporting `$K8S_VERSION`, and `go mod download M@V` the module's directory.
    const STUB_GO: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "$*" >> "$STUB_LOG"
case "$1 ${2:-}" in
  "env GOVERSION") echo go1.26.0 ;;
  "mod download")
    shift 2
    if [[ "${1:-}" == -json ]]; then
      mkdir -p "$GOMODCACHE/cache"
      printf 'module k8s.io/kubernetes\nrequire (\n\tk8s.io/api v0.0.0\n)\n' > "$GOMODCACHE/cache/kubernetes.mod"
      printf '{"GoMod": "%s"}\n' "$GOMODCACHE/cache/kubernetes.mod"
    else
      for module in "$@"; do mkdir -p "$GOMODCACHE/$module"; done
    fi ;;
  "build "*)
    out=""
    while [[ $# -gt 0 ]]; do [[ "$1" == -o ]] && out="$2"; shift; done
    printf '#!/bin/sh\necho "stub %s"\n' "${K8S_VERSION:-}" > "$out"
    chmod +x "$out" ;;
esac
"#;

    /// On an empty cache, each ensure step fills in every path the suite then reads (the
    /// managers' `config/default` comes from the module sources: a step that builds binaries
    /// but leaves a module undownloaded fails here), and a second run builds nothing.
    #[test]
    fn a_fresh_cache_is_filled_before_any_test_reads_it() {
        let root = std::env::temp_dir().join(format!("e2e-fresh-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let stub = root.join("stub-bin");
        std::fs::create_dir_all(&stub).unwrap();
        std::fs::write(stub.join("go"), STUB_GO).unwrap();
        std::process::Command::new("chmod")
            .args(["+x"])
            .arg(stub.join("go"))
            .status()
            .unwrap();
        let log = root.join("go-calls.log");
        let mut path = OsString::from(&stub);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let env = vec![
            ("PATH", path),
            ("STUB_LOG", log.clone().into_os_string()),
            ("K8S_VERSION", "v1.34.4".into()),
        ];
        let cache = Cache::at(&root.join("cache"), env);

        let ensure_all = || -> Result<(), String> {
            let kubernetes = cache.kubernetes()?;
            assert!(kubernetes.tool("kubectl").is_file());
            let cluster_api = cache.cluster_api()?;
            for module in CLUSTER_API_MODULES {
                assert!(cluster_api.module(module).is_dir(), "{module}");
            }
            cache.extension().map(drop)
        };
        ensure_all().unwrap_or_else(|e| panic!("{e}"));
        let calls = std::fs::read_to_string(&log).unwrap();
        let builds = calls.lines().filter(|l| l.starts_with("build ")).count();
        // kube-apiserver, kubectl, kube-controller-manager, etcd; four managers; the extension.
        assert_eq!(builds, 4 + 4 + 1, "every binary built once:\n{calls}");

        ensure_all().unwrap_or_else(|e| panic!("{e}"));
        let again = std::fs::read_to_string(&log).unwrap();
        assert_eq!(again, calls, "a filled cache is used as it is");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
