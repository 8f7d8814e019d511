//! Arbitrary UTF-8 as a patch template, parsed and executed with small limits, its output typed
//! as YAML: parsing, execution and typing must return (an error is fine), never panic or hang.
#![no_main]

use capi_topology::patches::template::{parse_yaml_output, ExecOptions, Template};
use libfuzzer_sys::fuzz_target;

const DATA: &str = r#"{
  "name": "c1", "n": 3, "f": 1.5, "s": "a,b,c", "t": true, "nul": null,
  "list": ["x", 2, {"k": "v"}], "map": {"a": 1, "b": [1, 2], "c": {"d": "e"}},
  "builtin": {"cluster": {"name": "c1", "topology": {"version": "v1.30.2+rke2r1"}},
              "controlPlane": {"version": "v1.30.2", "replicas": 3}}
}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(template) = Template::parse(source) else {
        return;
    };
    let Ok(values) = serde_json::from_str::<serde_json::Value>(DATA) else {
        return;
    };
    for missing_key_error in [false, true] {
        let options = ExecOptions {
            missing_key_error,
            max_output_bytes: 64 * 1024,
            max_steps: 20_000,
        };
        if let Ok(rendered) = template.execute(&values, &options) {
            assert!(rendered.len() <= options.max_output_bytes);
            let _ = parse_yaml_output(&rendered);
        }
    }
    let _ = parse_yaml_output(source);
});
