//! The serving certificate rotated under load (#34): while a `kubectl apply` loop rewrites a
//! Cluster (each write admitted by our webhooks), the certificate and key that `serve` reloads
//! from its certificate directory are replaced by a new pair signed by the same CA, the one the
//! webhook configurations' `caBundle` trusts. The key is replaced first and the certificate
//! [`HALFWAY`] later, as a writer that is not atomic would do: the server must keep the old pair
//! in service while the two do not match. Checked: no write refused, and the server presents the
//! new certificate afterwards (its fingerprint over TLS). The time until it does is printed.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::class_status;
use crate::controllers::provision_control_plane;
use crate::env::Env;
use crate::faults_webhook::{apply_loop, Write};
use crate::manifests::{quickstart_object, render};
use crate::process::{poll, run_bounded};
use crate::runtime_extensions::expect;
use crate::webhook::{fingerprint, read_pem};

/// Between the new key and the new certificate (the server polls its directory every 2 s).
const HALFWAY: Duration = Duration::from_secs(5);
/// How long the loop writes after the new certificate is served.
const AFTER: Duration = Duration::from_secs(8);

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let mut command = Command::new("openssl");
    command.args(args).current_dir(dir);
    let out = run_bounded(command, None, Duration::from_secs(30))?;
    out.success
        .then_some(())
        .ok_or_else(|| format!("openssl {}: {}", args.join(" "), out.stderr))
}

/// `openssl req`'s arguments for a new P-256 key, unencrypted.
const NEW_KEY: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
];

/// A CA in `dir` (`ca.crt`, `ca.key`).
fn own_ca(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let args = [
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=faults CA",
    ];
    openssl(dir, &[&["req", "-x509"][..], &NEW_KEY, &args].concat())
}

/// A serving certificate for 127.0.0.1 and localhost with `serial`, signed by the CA of `ca`,
/// written to `out` as `tls.key`, `tls.crt`, with the CA's `ca.crt`.
fn signed(ca: &Path, out: &Path, serial: u32) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        .map_err(|e| e.to_string())?;
    let args = ["-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=localhost"];
    openssl(out, &[&["req"][..], &NEW_KEY, &args].concat())?;
    let (ca_crt, ca_key) = (ca.join("ca.crt"), ca.join("ca.key"));
    openssl(
        out,
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            &ca_crt.display().to_string(),
            "-CAkey",
            &ca_key.display().to_string(),
            "-set_serial",
            &serial.to_string(),
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "tls.crt",
        ],
    )?;
    std::fs::copy(&ca_crt, out.join("ca.crt"))
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Replaces `file` of `dir` by `from`'s at once (a rename).
fn replace(from: &Path, dir: &Path, file: &str) -> Result<(), String> {
    let staged = dir.join(format!(".{file}.new"));
    std::fs::copy(from.join(file), &staged).map_err(|e| e.to_string())?;
    std::fs::rename(&staged, dir.join(file)).map_err(|e| e.to_string())
}

#[test]
fn serving_certificate_rotated_under_writes_refuses_none() {
    let ca_dir = std::env::temp_dir().join(format!("faults-ca-{}", std::process::id()));
    let ca = ca_dir.clone();
    let mut env = Env::with_webhooks_certified("faults-certificate", |dir| {
        own_ca(&ca)?;
        signed(&ca, dir, 1)
    });
    let result = scenario(&mut env, &ca_dir);
    let _ = std::fs::remove_dir_all(&ca_dir);
    if let Err(e) = result {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(env: &mut Env, ca: &Path) -> Result<(), String> {
    let kubectl = env.kubectl.clone();
    class_status::install_quickstart(&kubectl)?;
    kubectl.accepts(&render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]))?;
    provision_control_plane(&kubectl, "dev", "v1.31.2")?;
    let cert_dir = env.server().cert_dir().to_owned();
    let rotated = env.run.join("rotated-certs");
    signed(ca, &rotated, 2)?;
    let (old, new) = (
        fingerprint(&read_pem(&cert_dir, "tls.crt")?)?,
        fingerprint(&read_pem(&rotated, "tls.crt")?)?,
    );
    expect(
        env.server().served_fingerprint()? == old,
        "the server presents the first certificate".to_owned(),
    )?;
    let (stop, writes) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
    let looping = {
        let (kubectl, stop, writes) = (kubectl.clone(), stop.clone(), writes.clone());
        std::thread::spawn(move || apply_loop(kubectl, stop, writes))
    };
    std::thread::sleep(Duration::from_secs(5));
    let started = Instant::now();
    replace(&rotated, &cert_dir, "tls.key")?;
    std::thread::sleep(HALFWAY);
    let halfway_served = env.server().served_fingerprint()?;
    replace(&rotated, &cert_dir, "tls.crt")?;
    let switched = poll("the new certificate served", Duration::from_secs(30), || {
        let served = env.server().served_fingerprint()?;
        (served == new).then(|| started.elapsed()).ok_or(served)
    })?;
    std::thread::sleep(AFTER);
    stop.store(true, Ordering::Relaxed);
    looping.join().map_err(|_| "the apply loop panicked".to_owned())?;
    env.server().ensure_running()?;
    let writes: Vec<Write> = writes.lock().expect("the writes").clone();
    check(env, &writes, started, halfway_served == old, switched)
}

/// No write refused; enough of them across the rotation; the old pair served halfway.
fn check(
    env: &Env,
    writes: &[Write],
    started: Instant,
    old_kept_halfway: bool,
    switched: Duration,
) -> Result<(), String> {
    let refused: Vec<&Write> = writes.iter().filter(|w| w.refused.is_some()).collect();
    let across = writes
        .iter()
        .filter(|w| w.ended > started && w.started < started + switched)
        .count();
    let landed = writes
        .iter()
        .filter(|w| w.refused.is_none() && !w.unchanged)
        .count();
    let log = std::fs::read_to_string(env.run.join("capi-topology.log")).unwrap_or_default();
    let reloads = log
        .lines()
        .filter(|l| l.contains("serving certificate reloaded"))
        .count();
    eprintln!(
        "faults: serving certificate rotated (same CA) under a kubectl apply loop: new key, then \
         {HALFWAY:?} later the new certificate; the old pair kept in service halfway: \
         {old_kept_halfway}; the new certificate served {switched:?} after the new key; {} writes \
         ({landed} landed, {across} during the rotation), {} refused; {reloads} reloads logged",
        writes.len(),
        refused.len(),
    );
    expect(
        old_kept_halfway,
        "the old pair kept while the key and certificate differ".to_owned(),
    )?;
    expect(across >= 3, format!("writes ran during the rotation: {across}"))?;
    expect(refused.is_empty(), format!("no write refused: {refused:?}"))
}
