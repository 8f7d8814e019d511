//! The operator's scenarios against `capi-topology serve`: the quickstart admitted and
//! defaulted, bad changes refused with field path and reason, and a certificate rotation under
//! load without a failed request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::class_status;
use crate::env::Env;
use crate::manifests::{quickstart_object, quickstart_templates, render};
use crate::process::poll;
use crate::refusals;
use crate::webhook::{fingerprint, generate_certs, read_pem};

/// An environment with webhooks, the quickstart templates and classes (`extra`) applied and
/// reconciled, and the dev and prod Clusters admitted.
fn quickstart_env(label: &str, extra: &[Value]) -> Env {
    let env = Env::with_webhooks(label);
    let mut classes = vec![quickstart_object("00-clusterclass.yaml", "ClusterClass")];
    classes.extend_from_slice(extra);
    let admitted = env
        .kubectl
        .accepts(&render(&quickstart_templates()))
        .and_then(|_| {
            for class in &classes {
                env.kubectl.accepts(&render(std::slice::from_ref(class)))?;
                let name = class["metadata"]["name"].as_str().unwrap_or_default();
                class_status::wait_reconciled(&env.kubectl, "default", name)?;
            }
            for file in ["10-cluster-dev.yaml", "11-cluster-prod.yaml"] {
                env.kubectl
                    .accepts(&render(&[quickstart_object(file, "Cluster")]))?;
            }
            Ok(())
        });
    if let Err(e) = admitted {
        panic!("the quickstart was not admitted: {e}\n{}", env.logs());
    }
    env
}

/// The quickstart examples are admitted; the Cluster webhook's defaults and the version's "v"
/// prefix show in what the API server stored.
#[test]
fn quickstart_is_admitted_and_defaulted() {
    let env = quickstart_env("quickstart", &[]);
    let dev = env
        .kubectl
        .get_json("cluster", "default", "dev")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dev["spec"]["topology"]["version"], "v1.31.2", "{dev:#}");
    assert_eq!(
        dev["spec"]["topology"]["variables"],
        // Appended in the order of the class's status.variables: by name, as Cluster API sorts them.
        json!([
            {"name": "etcd", "value": {"dataDir": "/var/lib/etcd", "imageTag": "3.5.16-0"}},
            {"name": "imageRepository", "value": "registry.k8s.io"},
            {"name": "nodeLabels", "value": {}},
            {"name": "preLoadImages", "value": []},
        ]),
        "{dev:#}"
    );
    let prod = env
        .kubectl
        .get_json("cluster", "default", "prod")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prod["spec"]["topology"]["version"], "v1.31.2", "{prod:#}");
    let class = env
        .kubectl
        .get_json("clusterclass", "default", "quick-start")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(class["metadata"]["generation"], 1, "{class:#}");
}

/// Every bad change is refused with the field path and the reason in kubectl's output, and
/// nothing changed.
#[test]
fn bad_changes_are_refused() {
    let env = quickstart_env("refusals", &refusals::extra_classes());
    let failures: Vec<String> = refusals::cases()
        .into_iter()
        .filter_map(|case| {
            case.check(&env.kubectl)
                .err()
                .map(|e| format!("{}: {e}\nmanifest:\n{}", case.what, case.manifest))
        })
        .collect();
    let mut failures = failures;
    let deleted = env
        .kubectl
        .run(&["delete", "clusterclass", "quick-start", "--wait=false"], None);
    let deleted = deleted.unwrap_or_else(|e| panic!("{e}"));
    let in_use = r#"ClusterClass.cluster.x-k8s.io "quick-start" is forbidden: ClusterClass cannot be deleted because it is used by Cluster(s): default/dev, default/prod"#;
    if deleted.success || !deleted.stderr.contains(in_use) {
        failures.push(format!(
            "deleting a class in use: {}{}",
            deleted.stdout, deleted.stderr
        ));
    }
    assert!(
        failures.is_empty(),
        "{} refusal(s) failed:\n\n{}\n{}",
        failures.len(),
        failures.join("\n\n"),
        env.logs()
    );

    let prod = env
        .kubectl
        .get_json("cluster", "default", "prod")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prod["spec"]["topology"]["version"], "v1.31.2");
    let class = env
        .kubectl
        .get_json("clusterclass", "default", "quick-start")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        class["metadata"]["generation"], 1,
        "a refused change must not reach storage"
    );
}

/// Rotating the serving certificate while kubectl keeps applying fails no request: the new CA
/// is trusted first, the files are replaced, the server presents the new certificate, the old
/// CA is dropped, and requests keep succeeding throughout.
#[test]
fn certificate_rotation_fails_no_request() {
    let mut env = quickstart_env("rotation", &[]);
    let cert_dir = env.server().cert_dir().to_owned();
    let rotated = env.run.join("rotated-certs");
    generate_certs(&rotated).unwrap_or_else(|e| panic!("{e}"));
    let read = |dir: &std::path::Path, file: &str| read_pem(dir, file).unwrap_or_else(|e| panic!("{e}"));
    let (old_ca, new_ca) = (read(&cert_dir, "ca.crt"), read(&rotated, "ca.crt"));
    let new_fingerprint = fingerprint(&read(&rotated, "tls.crt")).unwrap_or_else(|e| panic!("{e}"));

    // Trust both CAs before the server switches (a no-op when `certs` kept the CA).
    let both = if old_ca == new_ca {
        old_ca.clone()
    } else {
        format!("{old_ca}{new_ca}")
    };
    let kubectl = env.kubectl.clone();
    env.server()
        .register(&kubectl, &both)
        .unwrap_or_else(|e| panic!("{e}"));

    let load = Load::start(&env);
    load.wait_for_more(2)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    for file in ["ca.crt", "tls.key", "tls.crt"] {
        let staged = cert_dir.join(format!(".{file}.new"));
        std::fs::copy(rotated.join(file), &staged).expect("stage a rotated file");
        std::fs::rename(&staged, cert_dir.join(file)).expect("replace a certificate file");
    }
    let switched = poll(
        "the server to present the rotated certificate",
        Duration::from_secs(60),
        || {
            let served = env.server().served_fingerprint()?;
            if served == new_fingerprint {
                Ok(())
            } else {
                Err(format!("still serving {served}"))
            }
        },
    );
    let dropped_old_ca = switched.and_then(|()| env.server().register(&kubectl, &new_ca));
    let more = dropped_old_ca.and_then(|()| load.wait_for_more(5));
    let (applied, failures) = load.stop();
    if let Err(e) = more {
        panic!("{e}\n{}", env.logs());
    }
    assert!(
        failures.is_empty(),
        "{} of {applied} applies failed during rotation:\n{}\n{}",
        failures.len(),
        failures.join("\n"),
        env.logs()
    );
    assert!(applied >= 5, "only {applied} applies ran during rotation");
}

/// A background loop of `kubectl apply --dry-run=server` of the dev Cluster.
struct Load {
    stop: Arc<AtomicBool>,
    applied: Arc<AtomicUsize>,
    worker: thread::JoinHandle<Vec<String>>,
}

impl Load {
    fn start(env: &Env) -> Load {
        let kubectl = env.kubectl.clone();
        let manifest = render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]);
        let (stop, applied) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (stop_flag, counter) = (stop.clone(), applied.clone());
        let worker = thread::spawn(move || {
            let mut failures = Vec::new();
            while !stop_flag.load(Ordering::SeqCst) {
                match kubectl.apply(&manifest, &["--dry-run=server"]) {
                    Ok(out) if out.success => {}
                    Ok(out) => failures.push(format!("{}{}", out.stdout, out.stderr)),
                    Err(e) => failures.push(e),
                }
                counter.fetch_add(1, Ordering::SeqCst);
            }
            failures
        });
        Load {
            stop,
            applied,
            worker,
        }
    }

    /// Waits until `n` more applies have finished.
    fn wait_for_more(&self, n: usize) -> Result<(), String> {
        let target = self.applied.load(Ordering::SeqCst) + n;
        poll(&format!("{n} more applies"), Duration::from_secs(60), || {
            let done = self.applied.load(Ordering::SeqCst);
            if done >= target {
                Ok(())
            } else {
                Err(format!("{done} of {target}"))
            }
        })
    }

    /// Stops the loop: how many applies ran and the failures.
    fn stop(self) -> (usize, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        let failures = self
            .worker
            .join()
            .unwrap_or_else(|_| vec!["the load thread panicked".into()]);
        (self.applied.load(Ordering::SeqCst), failures)
    }
}
