//! A throw-away Kubernetes control plane on loopback: etcd and kube-apiserver built by
//! `build-binaries.sh` (ensured by [`crate::cache`]), an admin token, and a kubeconfig for kubectl and capi-topology.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cache::{kubernetes, Kubernetes};
use crate::kubectl::Kubectl;
use crate::process::{free_port, http_get, http_post, poll, run_bounded, RunDir, Supervised};

/// How long the API server may take to become ready (the first start migrates storage).
const APISERVER_READY: Duration = Duration::from_secs(90);
const ETCD_READY: Duration = Duration::from_secs(30);
/// The audit policy of [`ControlPlane::start_audited`], in the run directory.
const AUDIT_POLICY: &str = "audit-policy.yaml";
/// The second admin user of an audited API server.
const AUDITED_USER: &str = "capi-topology";

/// etcd plus kube-apiserver (and, when asked for, the garbage collector of
/// kube-controller-manager), stopped when dropped (controller manager, API server, etcd).
pub struct ControlPlane {
    garbage_collector: Option<Supervised>,
    apiserver: Supervised,
    etcd: Supervised,
    kubeconfig: PathBuf,
    /// How the API server was started, to start it again.
    launch: Launch,
}

/// What starting the API server again needs.
struct Launch {
    run: PathBuf,
    prefix: String,
    etcd_port: u16,
    port: u16,
    token: String,
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver in `run` and waits until both are ready.
    pub fn start(run: &RunDir) -> ControlPlane {
        ControlPlane::start_named(run, "")
    }

    /// Starts another control plane in `run`, its files and processes prefixed with `name`
    /// (a workload cluster beside the management cluster).
    pub fn start_named(run: &RunDir, name: &str) -> ControlPlane {
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("{name}-")
        };
        let bin = kubernetes();
        let (etcd, etcd_port) = start_etcd(run, bin, &prefix);
        let launch = Launch {
            run: run.path().to_path_buf(),
            prefix,
            etcd_port,
            port: free_port(),
            token: format!("e2e-admin-{}", std::process::id()),
        };
        let (apiserver, kubeconfig) = start_apiserver(run, bin, &launch);
        let mut plane = ControlPlane {
            garbage_collector: None,
            apiserver,
            etcd,
            kubeconfig,
            launch,
        };
        plane.wait_ready();
        plane
    }

    /// Starts kube-controller-manager with only its garbage collector, so that objects whose
    /// owners are gone are deleted as in a real cluster.
    pub fn start_garbage_collector(&mut self, run: &RunDir) {
        let mut command = Command::new(kubernetes().tool("kube-controller-manager"));
        command.args([
            &format!("--kubeconfig={}", self.kubeconfig.display()),
            "--controllers=garbagecollector",
            "--leader-elect=false",
            "--secure-port=0",
            "--use-service-account-credentials=false",
            "--v=1",
        ]);
        self.garbage_collector = Some(Supervised::spawn(run, "kube-controller-manager", command));
    }

    /// The value etcd stores at `key` (e.g. `/registry/cluster.x-k8s.io/clusters/default/dev`),
    /// read through etcd's JSON gateway, parsed as JSON (custom resources are stored as JSON).
    pub fn etcd_value(&self, key: &str) -> Result<Value, String> {
        use base64::Engine as _;
        let base64 = base64::engine::general_purpose::STANDARD;
        let request = serde_json::json!({"key": base64.encode(key)}).to_string();
        let (code, body) = http_post(self.launch.etcd_port, "/v3/kv/range", &request)?;
        if code != 200 {
            return Err(format!("etcd range {key}: {code}: {body}"));
        }
        let answer: Value =
            serde_json::from_str(&body).map_err(|e| format!("etcd range {key}: {e}: {body}"))?;
        let value = answer["kvs"][0]["value"]
            .as_str()
            .ok_or_else(|| format!("etcd holds no {key}: {body}"))?;
        let bytes = base64
            .decode(value)
            .map_err(|e| format!("etcd value of {key}: {e}"))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("etcd value of {key} is not JSON: {e}"))
    }

    /// etcd's current revision (from the header of a range read).
    pub fn etcd_revision(&self) -> Result<i64, String> {
        let request = serde_json::json!({"key": etcd_key("/registry/")}).to_string();
        let answer = self.etcd_call("/v3/kv/range", &request)?;
        answer["header"]["revision"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| format!("no revision in etcd's answer: {answer}"))
    }

    /// Writes `value` (JSON, as custom resources are stored) at `key`, past the API server.
    pub fn etcd_put(&self, key: &str, value: &Value) -> Result<(), String> {
        let bytes = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, value.to_string());
        let request = serde_json::json!({"key": etcd_key(key), "value": bytes}).to_string();
        self.etcd_call("/v3/kv/put", &request).map(drop)
    }

    /// Compacts etcd's history up to its current revision (physically): a watch resuming from an
    /// older revision gets 410 Gone. Returns the revision.
    pub fn etcd_compact(&self) -> Result<i64, String> {
        let revision = self.etcd_revision()?;
        let request = serde_json::json!({"revision": revision.to_string(), "physical": true}).to_string();
        self.etcd_call("/v3/kv/compaction", &request)?;
        Ok(revision)
    }

    fn etcd_call(&self, path: &str, request: &str) -> Result<Value, String> {
        let (code, body) = http_post(self.launch.etcd_port, path, request)?;
        if code != 200 {
            return Err(format!("etcd {path}: {code}: {body}"));
        }
        serde_json::from_str(&body).map_err(|e| format!("etcd {path}: {e}: {body}"))
    }

    /// [`ControlPlane::start`] with the API server writing an audit log of `policy` (an
    /// `audit.k8s.io/v1` Policy, JSON lines in `<run>/audit.log`), and a second admin user,
    /// `capi-topology`, whose requests the log tells apart ([`ControlPlane::kubeconfig_of`]).
    pub fn start_audited(run: &RunDir, policy: &str) -> ControlPlane {
        fs::write(run.join(AUDIT_POLICY), policy).expect("write the audit policy");
        ControlPlane::start(run)
    }

    /// A kubeconfig for the second admin user `user` of [`ControlPlane::start_audited`].
    pub fn kubeconfig_of(&self, user: &str) -> PathBuf {
        let path = self
            .launch
            .run
            .join(format!("{}kubeconfig-{user}", self.launch.prefix));
        let token = format!("{}-{user}", self.launch.token);
        fs::write(&path, render_kubeconfig(self.launch.port, &token, &self.certs()))
            .expect("write the kubeconfig");
        path
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The admin kubeconfig with the CA inlined and `namespace` as the default namespace, as a
    /// `<cluster>-kubeconfig` Secret holds it.
    pub fn portable_kubeconfig(&self, namespace: &str) -> String {
        let certs = self.certs();
        let ca = fs::read(certs.join("apiserver.crt")).expect("the API server's certificate");
        let ca = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, ca);
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority-data: {ca}
users:
- name: e2e-admin
  user:
    token: {token}
contexts:
- name: e2e
  context: {{cluster: e2e, user: e2e-admin, namespace: {namespace}}}
current-context: e2e
",
            port = self.launch.port,
            token = self.launch.token,
        )
    }

    /// Stops the API server (etcd keeps running).
    pub fn stop_apiserver(&mut self) {
        self.apiserver.stop();
    }

    /// Kills the API server at once (SIGKILL: a crash; etcd keeps running).
    pub fn kill_apiserver(&mut self) {
        self.apiserver.kill();
    }

    /// Starts the API server again, on the same port with the same certificates, and waits
    /// until it is ready.
    pub fn restart_apiserver(&mut self) {
        let run = RunDir::adopt(&self.launch.run);
        let (apiserver, _) = start_apiserver(&run, kubernetes(), &self.launch);
        self.apiserver = apiserver;
        self.wait_ready();
    }

    fn certs(&self) -> PathBuf {
        self.launch
            .run
            .join(format!("{}apiserver-certs", self.launch.prefix))
    }

    /// A kubectl for the admin.
    pub fn kubectl(&self) -> Kubectl {
        Kubectl::new(kubernetes().tool("kubectl"), self.kubeconfig.clone())
    }

    /// The end of the API server's log, for failure messages.
    pub fn apiserver_log(&self) -> String {
        self.apiserver.log_tail(30)
    }

    fn wait_ready(&mut self) {
        let kubectl = self.kubectl();
        let (apiserver, etcd) = (&mut self.apiserver, &mut self.etcd);
        let ready = poll("kube-apiserver /readyz", APISERVER_READY, || {
            etcd.ensure_running()?;
            apiserver.ensure_running()?;
            let out = kubectl.run(&["get", "--raw", "/readyz"], None)?;
            if out.success && out.stdout.trim() == "ok" {
                Ok(())
            } else {
                Err(format!("{}{}", out.stdout, out.stderr))
            }
        });
        if let Err(e) = ready {
            panic!("{e}\n--- kube-apiserver log ---\n{}", self.apiserver.log_tail(40));
        }
    }
}

/// An etcd key as its JSON gateway takes it (base64).
fn etcd_key(key: &str) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, key)
}

fn start_etcd(run: &RunDir, bin: &Kubernetes, prefix: &str) -> (Supervised, u16) {
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let mut command = Command::new(bin.tool("etcd"));
    command.args([
        "--name=e2e",
        &format!("--data-dir={}", run.join(&format!("{prefix}etcd")).display()),
        &format!("--listen-client-urls={client_url}"),
        &format!("--advertise-client-urls={client_url}"),
        &format!("--listen-peer-urls={peer_url}"),
        &format!("--initial-advertise-peer-urls={peer_url}"),
        &format!("--initial-cluster=e2e={peer_url}"),
        "--listen-metrics-urls=",
        "--unsafe-no-fsync",
        "--log-level=warn",
    ]);
    let mut etcd = Supervised::spawn(run, &format!("{prefix}etcd"), command);
    let ready = poll("etcd /health", ETCD_READY, || {
        etcd.ensure_running()?;
        match http_get(client, "/health")? {
            (200, body) if body.contains("\"true\"") => Ok(()),
            (code, body) => Err(format!("{code}: {body}")),
        }
    });
    if let Err(e) = ready {
        panic!("{e}\n--- etcd log ---\n{}", etcd.log_tail(40));
    }
    (etcd, client)
}

fn start_apiserver(run: &RunDir, bin: &Kubernetes, launch: &Launch) -> (Supervised, PathBuf) {
    let (port, etcd_port, token, prefix) = (launch.port, launch.etcd_port, &launch.token, &launch.prefix);
    let certs = run.join(&format!("{prefix}apiserver-certs"));
    fs::create_dir_all(&certs).expect("create the API server's cert dir");
    let sa_key = certs.join("sa.key");
    if !sa_key.is_file() {
        generate_key(&sa_key);
    }
    let tokens = certs.join("tokens.csv");
    let mut users = format!("{token},e2e-admin,e2e-admin,system:masters\n");
    let policy = launch.run.join(AUDIT_POLICY);
    let audited = prefix.is_empty() && policy.is_file();
    if audited {
        users.push_str(&format!(
            "{token}-{AUDITED_USER},{AUDITED_USER},{AUDITED_USER},system:masters\n"
        ));
    }
    fs::write(&tokens, users).expect("write the token file");

    let mut command = Command::new(bin.tool("kube-apiserver"));
    command.args([
        &format!("--etcd-servers=http://127.0.0.1:{etcd_port}"),
        &format!("--cert-dir={}", certs.display()),
        &format!("--secure-port={port}"),
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        "--service-cluster-ip-range=10.0.0.0/24",
        &format!("--service-account-issuer=https://127.0.0.1:{port}"),
        &format!("--service-account-key-file={}", sa_key.display()),
        &format!("--service-account-signing-key-file={}", sa_key.display()),
        &format!("--token-auth-file={}", tokens.display()),
        "--authorization-mode=RBAC",
        "--disable-admission-plugins=ServiceAccount",
        "--allow-privileged=true",
        "--v=1",
    ]);
    if audited {
        command.args([
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", run.join("audit.log").display()),
            "--audit-log-format=json".to_owned(),
        ]);
    }
    let apiserver = Supervised::spawn(run, &format!("{prefix}kube-apiserver"), command);

    let kubeconfig = run.join(&format!("{prefix}kubeconfig"));
    fs::write(&kubeconfig, render_kubeconfig(port, token, &certs)).expect("write the kubeconfig");
    (apiserver, kubeconfig)
}

/// A private key for the API server's service-account tokens.
fn generate_key(path: &Path) {
    let mut command = Command::new("openssl");
    command
        .args(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out"])
        .arg(path);
    let out = run_bounded(command, None, Duration::from_secs(30)).expect("run openssl");
    assert!(out.success, "openssl could not generate a key: {}", out.stderr);
}

fn render_kubeconfig(port: u16, token: &str, certs: &Path) -> String {
    // kube-apiserver writes its self-signed serving certificate (with its CA) on startup.
    let ca = certs.join("apiserver.crt");
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority: {ca}
users:
- name: e2e-admin
  user:
    token: {token}
contexts:
- name: e2e
  context: {{cluster: e2e, user: e2e-admin, namespace: default}}
current-context: e2e
",
        ca = ca.display()
    )
}
