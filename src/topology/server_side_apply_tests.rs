use serde_json::{json, Value};

use super::*;

fn entry(manager: &str, operation: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields})
}

fn stored(object: Value, entries: Value) -> Value {
    let mut object = object;
    object["metadata"]["managedFields"] = entries;
    object
}

fn paths(changes: &[FieldChange]) -> Vec<String> {
    changes
        .iter()
        .map(|c| format!("{}: {} -> {}", c.path, c.from, c.to))
        .collect()
}

#[test]
fn a_field_only_we_applied_and_no_longer_set_is_removed() {
    let current = stored(
        json!({"metadata": {"name": "x"}, "spec": {"a": 1, "b": 2}}),
        json!([entry(
            "capi-topology",
            "Apply",
            json!({"f:spec": {"f:a": {}, "f:b": {}}})
        )]),
    );
    let effect = apply_effect(&current, &json!({"metadata": {"name": "x"}, "spec": {"a": 1}}));
    assert!(effect.changed.is_empty(), "{:?}", effect.changed);
    assert_eq!(paths(&effect.removed), ["spec.b: 2 -> null"]);
    assert_eq!(effect.after["spec"], json!({"a": 1}));
    assert!(!effect.is_noop());
}

#[test]
fn a_field_another_manager_also_owns_stays_and_theirs_alone_are_left_alone() {
    let current = stored(
        json!({"metadata": {"name": "x", "labels": {"ours": "1", "shared": "2", "theirs": "3"}},
            "spec": {"a": 1}, "status": {"ready": true}}),
        json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:metadata": {"f:labels": {".": {}, "f:ours": {}, "f:shared": {}}}, "f:spec": {"f:a": {}}})
            ),
            entry(
                "cluster-api-controller-manager",
                "Apply",
                json!({"f:metadata": {"f:labels": {"f:shared": {}, "f:theirs": {}}}})
            ),
            entry("manager", "Update", json!({"f:status": {"f:ready": {}}})),
        ]),
    );
    let effect = apply_effect(&current, &json!({"metadata": {"name": "x"}, "spec": {"a": 1}}));
    assert_eq!(paths(&effect.removed), ["metadata.labels.ours: \"1\" -> null"]);
    assert_eq!(
        effect.after["metadata"]["labels"],
        json!({"shared": "2", "theirs": "3"})
    );
    assert_eq!(effect.after["status"], current["status"]);
}

#[test]
fn a_struct_we_no_longer_set_goes_whole_with_what_no_one_owns_under_it() {
    let current = stored(
        json!({"metadata": {"name": "x"}, "spec": {"a": 1, "tls": {"enabled": true, "defaulted": "x"}}}),
        json!([entry(
            "capi-topology",
            "Apply",
            json!({"f:spec": {"f:a": {}, "f:tls": {"f:enabled": {}}}})
        )]),
    );
    let effect = apply_effect(&current, &json!({"spec": {"a": 1}}));
    assert_eq!(
        paths(&effect.removed),
        [r#"spec.tls: {"enabled":true,"defaulted":"x"} -> null"#]
    );
    assert_eq!(effect.after["spec"], json!({"a": 1}));
}

#[test]
fn list_maps_merge_by_key_and_lose_only_our_items() {
    let current = stored(
        json!({"spec": {"files": [
            {"path": "/a", "content": "a"},
            {"path": "/b", "content": "b", "owner": "root"},
            {"path": "/theirs", "content": "t"},
        ]}}),
        json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:files": {
                    r#"k:{"path":"/a"}"#: {".": {}, "f:path": {}, "f:content": {}},
                    r#"k:{"path":"/b"}"#: {".": {}, "f:path": {}, "f:content": {}},
                }}})
            ),
            entry(
                "kubeadm",
                "Update",
                json!({"f:spec": {"f:files": {
                    r#"k:{"path":"/b"}"#: {"f:owner": {}},
                    r#"k:{"path":"/theirs"}"#: {".": {}, "f:path": {}, "f:content": {}},
                }}})
            ),
        ]),
    );
    let desired = json!({"spec": {"files": [
        {"path": "/b", "content": "B"},
        {"path": "/c", "content": "c"},
    ]}});
    let effect = apply_effect(&current, &desired);
    assert_eq!(
        paths(&effect.changed),
        [
            r#"spec.files[path=/b].content: "b" -> "B""#,
            r#"spec.files[path=/c]: null -> {"path":"/c","content":"c"}"#,
        ]
    );
    assert_eq!(
        paths(&effect.removed),
        [r#"spec.files[path=/a]: {"path":"/a","content":"a"} -> null"#]
    );
    assert_eq!(
        effect.after["spec"]["files"],
        json!([
            {"path": "/b", "content": "B", "owner": "root"},
            {"path": "/theirs", "content": "t"},
            {"path": "/c", "content": "c"},
        ])
    );
}

#[test]
fn atomic_lists_are_replaced_whole_and_sets_merge_by_value() {
    let current = stored(
        json!({"spec": {"args": ["a", "b"], "finalizers": ["theirs", "old"]}}),
        json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:args": {}, "f:finalizers": {r#"v:"old""#: {}}}})
            ),
            entry(
                "other",
                "Update",
                json!({"f:spec": {"f:finalizers": {r#"v:"theirs""#: {}}}})
            ),
        ]),
    );
    let desired = json!({"spec": {"args": ["a"], "finalizers": ["ours"]}});
    let effect = apply_effect(&current, &desired);
    assert_eq!(
        paths(&effect.changed),
        [
            r#"spec.args: ["a","b"] -> ["a"]"#,
            r#"spec.finalizers[ours]: null -> "ours""#,
        ]
    );
    assert_eq!(paths(&effect.removed), [r#"spec.finalizers[old]: "old" -> null"#]);
    assert_eq!(effect.after["spec"]["finalizers"], json!(["theirs", "ours"]));
}

#[test]
fn without_records_nothing_is_removed_and_lists_are_atomic() {
    let current = json!({"spec": {"a": 1, "b": 2, "items": [{"name": "x"}, {"name": "y"}]}});
    let effect = apply_effect(&current, &json!({"spec": {"a": 1, "items": [{"name": "x"}]}}));
    assert!(effect.removed.is_empty());
    assert_eq!(
        paths(&effect.changed),
        [r#"spec.items: [{"name":"x"},{"name":"y"}] -> [{"name":"x"}]"#]
    );
    let settled = apply_effect(&current, &json!({"spec": {"b": 2.0}}));
    assert!(settled.is_noop(), "{settled:?}");
}

#[test]
fn our_updates_and_status_applies_are_not_what_an_apply_prunes() {
    let current = stored(
        json!({"spec": {"a": 1, "b": 2}}),
        json!([
            entry("capi-topology", "Update", json!({"f:spec": {"f:b": {}}})),
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:a": {}, "f:b": {}}})
            ),
        ]),
    );
    let effect = apply_effect(&current, &json!({"spec": {"a": 1}}));
    assert!(effect.is_noop(), "{effect:?}");
}

#[test]
fn removals_in_a_list_map_item_we_keep_and_a_deleted_item_we_shared() {
    let current = stored(
        json!({"spec": {"workers": [{"name": "md-0", "replicas": 1, "labels": {"a": "1"}}, {"name": "md-1"}]}}),
        json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:workers": {
                    r#"k:{"name":"md-0"}"#: {".": {}, "f:name": {}, "f:replicas": {}, "f:labels": {".": {}, "f:a": {}}},
                    r#"k:{"name":"md-1"}"#: {".": {}, "f:name": {}},
                }}})
            ),
            entry(
                "gitops",
                "Apply",
                json!({"f:spec": {"f:workers": {r#"k:{"name":"md-1"}"#: {".": {}, "f:name": {}}}}})
            ),
        ]),
    );
    let effect = apply_effect(
        &current,
        &json!({"spec": {"workers": [{"name": "md-0", "replicas": 1}]}}),
    );
    assert_eq!(
        paths(&effect.removed),
        [r#"spec.workers[name=md-0].labels: {"a":"1"} -> null"#]
    );
    assert_eq!(
        effect.after["spec"]["workers"],
        json!([{"name": "md-0", "replicas": 1}, {"name": "md-1"}])
    );
}

#[test]
fn the_slimmed_records_of_the_watch_cache_give_the_same_effect() {
    let current = stored(
        json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"a": 1, "c": 3}}),
        json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}, "f:spec": {"f:a": {}, "f:c": {}}})
            ),
            entry(
                "manager",
                "Update",
                json!({"f:metadata": {"f:labels": {"f:b": {}}}, "f:status": {}})
            ),
        ]),
    );
    let desired = json!({"metadata": {"labels": {}}, "spec": {"a": 2}});
    let mut slimmed = current.clone();
    crate::managed_fields::slim(&mut slimmed, TOPOLOGY_MANAGER);
    let (full, slim) = (apply_effect(&current, &desired), apply_effect(&slimmed, &desired));
    assert_eq!(full.changed, slim.changed);
    assert_eq!(full.removed, slim.removed);
    assert_eq!(
        paths(&full.removed),
        ["metadata.labels.a: \"1\" -> null", "spec.c: 3 -> null"]
    );
}
