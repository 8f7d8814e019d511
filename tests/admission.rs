//! Runs every admission fixture under `tests/fixtures/admission/cluster*/` (Cluster, ClusterClass,
//! ClusterResourceSet, ClusterResourceSetBinding) and `extensionconfig/`: a request built from
//! the fixture's objects goes through the wire-level entry point, and the answer must match the
//! fixture's `expect` exactly.

use std::path::{Path, PathBuf};

use capi_topology::admission::{self, request::review_json, Webhook};
use capi_topology::store::{parse_manifests, MemoryStore};
use kube::core::admission::{AdmissionReview, Operation};
use kube::core::DynamicObject;
use pretty_assertions::assert_eq;
use rstest::rstest;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fixture {
    description: String,
    path: String,
    operation: Operation,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    objects_from: Vec<PathBuf>,
    old_object: Option<Value>,
    object: Option<Value>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    allowed: bool,
    code: Option<u16>,
    #[serde(default)]
    causes: Vec<Cause>,
    message_contains: Option<String>,
    warnings: Option<Vec<String>>,
    patch: Option<Value>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Cause {
    field: String,
    #[serde(rename = "type")]
    kind: String,
    message: String,
}

fn load_store(fixture: &Fixture, dir: &Path) -> MemoryStore {
    let mut store = MemoryStore::default();
    for file in &fixture.objects_from {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for object in parse_manifests(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            store
                .insert(object)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    for object in &fixture.objects {
        store
            .insert(object.clone())
            .unwrap_or_else(|e| panic!("objects: {e}"));
    }
    store
}

#[rstest]
fn admission_fixture(
    #[files("tests/fixtures/admission/cluster*/*.yaml")]
    #[files("tests/fixtures/admission/extensionconfig/*.yaml")]
    path: PathBuf,
) {
    let text = std::fs::read_to_string(&path).unwrap();
    let fixture: Fixture =
        serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let store = load_store(&fixture, path.parent().unwrap());
    let webhook: Webhook = fixture.path.parse().unwrap();
    let review = review_json(
        webhook.kind,
        &fixture.operation,
        fixture.object.as_ref(),
        fixture.old_object.as_ref(),
    );
    let answer = admission::review(webhook.path(), &serde_json::to_vec(&review).unwrap(), &store);
    let answer: AdmissionReview<DynamicObject> = answer;
    let response = answer.response.expect("a response");
    let what = format!("{} ({})", path.display(), fixture.description);

    let causes: Vec<Cause> = response
        .result
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| Cause {
                    field: c.field.clone(),
                    kind: c.reason.clone(),
                    message: c.message.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        causes, fixture.expect.causes,
        "causes of {what}; message: {}",
        response.result.message
    );
    assert_eq!(
        response.allowed, fixture.expect.allowed,
        "allowed of {what}; message: {}",
        response.result.message
    );
    if let Some(code) = fixture.expect.code {
        assert_eq!(response.result.code, code, "code of {what}");
    } else if !fixture.expect.allowed && !fixture.expect.causes.is_empty() {
        assert_eq!(response.result.code, 422, "code of {what}");
    }
    if let Some(fragment) = &fixture.expect.message_contains {
        assert!(
            response.result.message.contains(fragment),
            "{what}: {:?} lacks {fragment:?}",
            response.result.message
        );
    }
    if let Some(warnings) = &fixture.expect.warnings {
        assert_eq!(
            response.warnings.clone().unwrap_or_default(),
            *warnings,
            "warnings of {what}"
        );
    }
    if let Some(expected) = &fixture.expect.patch {
        let patch: Value = response
            .patch
            .as_ref()
            .map(|p| serde_json::from_slice(p).unwrap())
            .unwrap_or(Value::Array(vec![]));
        assert_eq!(&patch, expected, "patch of {what}");
    }
}
