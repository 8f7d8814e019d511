//! Arbitrary bytes to every admission endpoint, against a store holding the reconciled quickstart
//! class and a Cluster using it:
//! the entry point must answer (never panic, never hang) whatever arrives.
#![no_main]

use std::sync::OnceLock;

use capi_topology::admission::{self, Webhook};
use capi_topology::store::MemoryStore;
use libfuzzer_sys::fuzz_target;

fn store() -> &'static MemoryStore {
    static STORE: OnceLock<MemoryStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let text = concat!(
            include_str!("../../tests/fixtures/admission/common/class-quickstart.yaml"),
            "\n---\n",
            include_str!("../../tests/fixtures/admission/common/cluster-prod.yaml"),
        );
        MemoryStore::from_yaml(text).expect("the quickstart example loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((selector, body)) = data.split_first() else { return };
    let webhook = Webhook::ALL[usize::from(*selector) % Webhook::ALL.len()];
    let answer = admission::review(webhook.path(), body, store());
    assert!(answer.response.is_some(), "every review gets a response");
});
