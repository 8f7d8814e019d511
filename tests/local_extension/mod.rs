//! The example Runtime Extension (examples/extension) served in-process on a loopback port with
//! a fresh development CA, and what a test or benchmark plans against it: shared by
//! `tests/extension_example.rs`, `benches/runtime_extension.rs`, the hostile catalogue and the
//! e2e suite (a hostile extension, `hostile`), each of which uses part of it.
#![allow(dead_code)]

pub mod canned;
#[path = "../../examples/extension/handlers.rs"]
pub mod handlers;
pub mod hostile;
#[path = "../../examples/extension/server.rs"]
pub mod server;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::Engine;
use capi_topology::api::runtime::{ClientConfig, ExtensionConfig, ExtensionConfigSpec};
use capi_topology::api::{Cluster, ObjectMeta};
use capi_topology::server::dev_certs::generate;
use capi_topology::store::{MemoryStore, ObjectSource};
use capi_topology::topology::Blueprint;

/// The class, templates and 10-MachineDeployment Cluster the extension patches.
pub const FIXTURE: &str = include_str!("../fixtures/runtime/extension-10md.yaml");

/// The example extension on `127.0.0.1`, stopped when dropped.
pub struct LocalExtension {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The CA its certificate is signed by, PEM.
    pub ca_pem: String,
    calls: Arc<AtomicUsize>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl LocalExtension {
    /// Starts the extension on a free port, on a runtime of its own.
    pub fn start() -> Self {
        let certificates =
            generate(&[], &[IpAddr::V4(Ipv4Addr::LOCALHOST)], 1).expect("development certificates");
        let tls = server::tls_config(certificates.cert_pem.as_bytes(), certificates.key_pem.as_bytes())
            .expect("the serving certificate loads");
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let calls = Arc::new(AtomicUsize::new(0));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let counted = Arc::clone(&calls);
        runtime.spawn(async move { server::serve(listener, tls, counted).await });
        Self {
            addr,
            ca_pem: certificates.ca_pem,
            calls,
            runtime: Some(runtime),
        }
    }

    /// How many hook requests it has answered.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    /// An ExtensionConfig `name` registering it, with `settings`.
    pub fn config(&self, name: &str) -> ExtensionConfig {
        ExtensionConfig {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            spec: ExtensionConfigSpec {
                client_config: ClientConfig {
                    url: Some(format!("https://{}", self.addr)),
                    ca_bundle: Some(base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)),
                    ..ClientConfig::default()
                },
                ..ExtensionConfigSpec::default()
            },
            ..ExtensionConfig::default()
        }
    }
}

impl Drop for LocalExtension {
    fn drop(&mut self) {
        // Not waiting: a test may drop it from inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The fixture's class as a blueprint and its Cluster `c1`.
pub fn fixture() -> (Blueprint, Cluster) {
    let store = MemoryStore::from_yaml(FIXTURE).expect("the fixture parses");
    let class = store
        .cluster_class("default", "ext-class")
        .expect("the class")
        .class
        .clone();
    let cluster = store
        .get("cluster.x-k8s.io", "Cluster", "default", "c1")
        .expect("the Cluster");
    (
        Blueprint::new(class, &store).expect("the blueprint"),
        serde_json::from_value((*cluster).clone()).expect("the Cluster decodes"),
    )
}
