//! The test Runtime Extension (tests/e2e/extension, made with Cluster API's Runtime SDK) as a
//! process on a loopback port with its own dev CA: built once per machine by
//! `tests/e2e/build-extension.sh`, started by `tests/runtime_extension.rs`,
//! `tests/lifecycle_hooks.rs` and the e2e suite, each of which uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

#[path = "tempdir.rs"]
pub mod tempdir;

/// The extension process on a loopback port, killed when dropped.
pub struct Extension {
    /// The process (replaced by [`Extension::start_again`]).
    child: Mutex<Child>,
    /// The binary, to start it again.
    binary: PathBuf,
    /// Where it listens (HTTPS).
    pub addr: SocketAddr,
    /// The PEM of the CA that signed its certificate.
    pub ca_pem: String,
    /// Its certificate directory, removed when it is dropped.
    dir: Option<tempdir::Dir>,
    /// Where its lifecycle hooks read their answers and record their calls, when served.
    control: Option<PathBuf>,
}

/// One lifecycle hook call the extension recorded (a line of its `calls.jsonl`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct HookCall {
    /// The hook, e.g. `BeforeClusterCreate`.
    pub hook: String,
    /// The ExtensionConfig's setting `id`, if any.
    #[serde(default)]
    pub id: String,
    /// `<namespace>/<name>` of the Cluster.
    pub cluster: String,
    /// The request's from version, if any.
    #[serde(default)]
    pub from: String,
    /// The request's to version, if any.
    #[serde(default)]
    pub to: String,
    /// The request's kubernetesVersion, if any.
    #[serde(default)]
    pub version: String,
}

impl Extension {
    /// Builds (once per machine) and starts the extension with a certificate for 127.0.0.1,
    /// made as the e2e suite makes it; retries on another port if the one picked was taken.
    pub fn start() -> Extension {
        Self::launch(None)
    }

    /// [`Extension::start`] serving the lifecycle hooks and GenerateUpgradePlan too, answering
    /// as [`Extension::answer`] says (Success by default) and recording every call
    /// ([`Extension::calls`]) in `control` (a directory that outlives the process, so a
    /// restarted extension keeps the record).
    pub fn with_lifecycle_hooks(control: &Path) -> Extension {
        std::fs::create_dir_all(control).expect("the control directory");
        Self::launch(Some(control.to_owned()))
    }

    fn launch(control: Option<PathBuf>) -> Extension {
        let binary = build();
        let dir = tempdir::Dir::new("runtime-extension");
        let certs = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
            .args(["certs", "--ip", "127.0.0.1", "--out"])
            .arg(dir.path())
            .output()
            .expect("capi-topology certs runs");
        assert!(
            certs.status.success(),
            "{}",
            String::from_utf8_lossy(&certs.stderr)
        );
        let ca_pem = std::fs::read_to_string(dir.join("ca.crt")).unwrap();
        for _ in 0..3 {
            let addr = free_port();
            let mut extension = Extension {
                child: Mutex::new(spawn(&binary, dir.path(), addr, control.as_deref())),
                binary: binary.clone(),
                addr,
                ca_pem: ca_pem.clone(),
                dir: None,
                control: control.clone(),
            };
            if extension.wait_until_listening() {
                extension.dir = Some(dir);
                return extension;
            }
        }
        panic!("the extension did not start listening on three ports");
    }

    /// Kills the process (SIGKILL): nothing answers on [`Extension::addr`] until
    /// [`Extension::start_again`].
    pub fn kill(&self) {
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Starts the extension again, killed or not, on the same address with the same certificate
    /// and control directory, and waits until it serves TLS; false if it could not (the port
    /// taken meanwhile).
    pub fn start_again(&self) -> bool {
        self.kill();
        let dir = self.dir.as_ref().expect("a started extension's certificates");
        *self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            spawn(&self.binary, dir.path(), self.addr, self.control.as_deref());
        self.wait_until_listening()
    }

    /// Sets what the lifecycle hooks answer (all of `answers.json`: `{"<Hook>[/<id>]": {"status",
    /// "message", "retryAfterSeconds"}, "GenerateUpgradePlan": {...}}`), read by every call.
    pub fn answer(&self, answers: &serde_json::Value) {
        let control = self.control.as_ref().expect("an extension with lifecycle hooks");
        let staged = control.join("answers.json.new");
        std::fs::write(&staged, answers.to_string()).expect("write the answers");
        std::fs::rename(&staged, control.join("answers.json")).expect("replace the answers");
    }

    /// The lifecycle hook calls recorded so far, in the order they came.
    pub fn calls(&self) -> Vec<HookCall> {
        let control = self.control.as_ref().expect("an extension with lifecycle hooks");
        let text = std::fs::read_to_string(control.join("calls.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// True once a TLS handshake with this extension's own CA succeeds (so it is this process
    /// that answers, not another test's extension that took the port); false if the process
    /// exits first (port taken).
    fn wait_until_listening(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let exited = self
                .child
                .lock()
                .map(|mut c| c.try_wait().ok().flatten().is_some());
            if exited.unwrap_or(true) {
                return false;
            }
            if self.handshakes() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the extension did not serve TLS on {} within 30 s", self.addr);
    }

    /// Whether a blocking TLS handshake with the dev CA as the only root succeeds.
    fn handshakes(&self) -> bool {
        let Ok(mut tcp) = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)) else {
            return false;
        };
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
        let mut roots = rustls::RootCertStore::empty();
        let Ok(ca) = CertificateDer::from_pem_slice(self.ca_pem.as_bytes()) else {
            return false;
        };
        if roots.add(ca).is_err() {
            return false;
        }
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let server_name = ServerName::try_from("127.0.0.1").expect("an IP server name");
        let Ok(mut connection) = rustls::ClientConnection::new(Arc::new(config), server_name) else {
            return false;
        };
        while connection.is_handshaking() {
            if connection.complete_io(&mut tcp).is_err() {
                return false;
            }
        }
        true
    }
}

impl Drop for Extension {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts the extension `binary` on `addr` with the certificates of `certs` (and the lifecycle
/// hooks when `control` is given).
fn spawn(binary: &Path, certs: &Path, addr: SocketAddr, control: Option<&Path>) -> Child {
    let mut command = Command::new(binary);
    command
        .arg("--cert-dir")
        .arg(certs)
        .args(["--host", "127.0.0.1", "--port", &addr.port().to_string()]);
    if let Some(control) = control {
        command.arg("--control-dir").arg(control);
    }
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the extension starts")
}

/// The extension binary: `tests/e2e/build-extension.sh` prints its path on its last line.
fn build() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/build-extension.sh");
    let output = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{} failed (it needs Go and the Go module proxy)",
        script.display()
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    PathBuf::from(stdout.lines().last().expect("the binary's path").trim())
}

fn free_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
}
