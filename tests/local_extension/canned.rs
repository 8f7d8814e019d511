//! A Runtime Extension on a loopback port whose handlers give canned answers: Discovery lists
//! them, each answers its hook with the JSON it was given. For the offline commands' calls of
//! hooks the example extension does not serve (GenerateUpgradePlan, an empty DiscoverVariables).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::routing::post;
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use super::hostile::serve_router;
use super::server::HOOKS_PATH;

/// One handler: its name, its hook (`GenerateUpgradePlan`) and its answer.
pub struct Handler {
    /// The handler's name.
    pub name: &'static str,
    /// The hook it serves.
    pub hook: &'static str,
    /// What it answers every request.
    pub answer: Value,
}

/// The extension, stopped when dropped.
pub struct CannedExtension {
    /// Where it listens.
    pub addr: SocketAddr,
    ca_pem: String,
    calls: Arc<AtomicUsize>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl CannedExtension {
    /// Starts the extension serving `handlers`, on a free port and a runtime of its own.
    pub fn start(handlers: Vec<Handler>) -> Self {
        let listed: Vec<Value> = handlers
            .iter()
            .map(|h| {
                json!({"name": h.name, "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": h.hook}})
            })
            .collect();
        let discovery = json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "DiscoveryResponse",
            "status": "Success", "handlers": listed});
        let calls = Arc::new(AtomicUsize::new(0));
        let mut router = Router::new().route(
            &format!("{HOOKS_PATH}/discovery"),
            post(move || async move { Json(discovery) }),
        );
        for handler in handlers {
            let path = format!("{HOOKS_PATH}/{}/{}", handler.hook.to_lowercase(), handler.name);
            let (answer, counted) = (handler.answer, Arc::clone(&calls));
            router = router.route(
                &path,
                post(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    Json(answer)
                }),
            );
        }
        let (addr, ca_pem, runtime) = serve_router(router);
        Self {
            addr,
            ca_pem,
            calls,
            runtime: Some(runtime),
        }
    }

    /// The hook calls answered (Discovery aside).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// An ExtensionConfig `name` registering it, as YAML for the files of `plan`.
    pub fn config_yaml(&self, name: &str) -> String {
        format!(
            "apiVersion: runtime.cluster.x-k8s.io/v1beta2\nkind: ExtensionConfig\nmetadata:\n  name: {name}\n\
             spec:\n  clientConfig:\n    url: https://{}\n    caBundle: {}\n",
            self.addr,
            STANDARD.encode(&self.ca_pem)
        )
    }
}

impl Drop for CannedExtension {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
