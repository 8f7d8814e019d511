//! Arbitrary UTF-8 as a CEL rule and as a message expression of a variable schema: checking the
//! parser's limits, compiling (with the definition-time checks) and evaluating against a few
//! values must return (an error is fine), never panic, overflow the stack or hang.
#![no_main]

use capi_topology::api::JSONSchemaProps;
use capi_topology::field::FieldPath;
use capi_topology::variables::cel::CelRules;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Ok(expression) = std::str::from_utf8(data) else {
        return;
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 64},
            "replicas": {"type": "integer"},
            "tags": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 16}},
            "labels": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string", "maxLength": 16}}
        },
        "x-kubernetes-validations": [
            {"rule": expression, "message": "m"},
            {"rule": "true", "messageExpression": expression}
        ]
    });
    let Ok(props) = serde_json::from_value::<JSONSchemaProps>(schema) else {
        return;
    };
    let Ok(rules) = CelRules::compile(&props, &FieldPath::new("schema")) else {
        return;
    };
    let path = FieldPath::new("value");
    for value in [
        json!({}),
        json!({"name": "c1", "replicas": 3, "tags": ["a", "b"], "labels": {"k": "v"}}),
        json!({"name": "", "replicas": -1, "tags": [], "labels": {}}),
    ] {
        let old = json!({"name": "c0", "replicas": 1});
        let _ = rules.validate(&value, Some(&old), &path);
        let _ = rules.validate(&value, None, &path);
    }
});
