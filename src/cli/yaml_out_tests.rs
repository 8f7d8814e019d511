use serde_json::json;

use super::*;

/// Strings YAML 1.1 (go-yaml v2, kubectl) or YAML 1.2 types as something else when plain.
const TYPED_WHEN_PLAIN: &[&str] = &[
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "~",
    "null",
    "Null",
    "NULL",
    "",
    "1_000",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "-0b101",
    "+12",
    "1e3",
    "1.5",
    ".5",
    "3.",
    "-1",
    "1:20",
    "190:20:30",
    "-1:30:00.5",
    ".inf",
    "-.Inf",
    "+.INF",
    ".nan",
    ".NaN",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "=",
    "<<",
    "8080",
    "9223372036854775808",
    "0",
    "-0",
    "1_0.5",
    "1__",
];

/// Strings that read back as themselves when plain.
const PLAIN: &[&str] = &[
    "v1.31.2",
    "kindest/node:v1.31.2",
    "Yes please",
    "yess",
    "onion",
    "nope",
    "NaN",
    "inf",
    "0.1.2",
    "1-2",
    "_x",
    "x@y",
    "a,b",
    "x]",
    "-x",
    "?x",
    ":x",
    "a#b",
    "100%",
    "registry.k8s.io/pause",
    "http://example.com/a?b=c",
    "é",
    "2001-12",
    "1:2:3:x",
    "0x",
    "0xZZ",
    "1e",
    "a b",
    "1_x",
];

/// Reads `text` as kubectl does (YAML 1.1, go-yaml v2's resolution) and as our reader does.
fn read_back(text: &str) -> (Value, Value) {
    let go_yaml = parse_yaml_output(text).unwrap_or_else(|err| panic!("{text:?}: {err}"));
    let ours: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|err| panic!("{text:?}: {err}"));
    (go_yaml, ours)
}

fn assert_round_trips(value: &Value) {
    let text = to_yaml(value);
    let (go_yaml, ours) = read_back(&text);
    assert_eq!(&go_yaml, value, "YAML 1.1 read of:\n{text}");
    assert_eq!(&ours, value, "YAML 1.2 read of:\n{text}");
}

#[test]
fn strings_typed_when_plain_are_quoted() {
    for s in TYPED_WHEN_PLAIN {
        assert!(!plain_reads_back(s), "{s:?} must be quoted");
        let value = json!({ "label": s, *s: "key" });
        assert_round_trips(&value);
        assert_round_trips(&json!([s]));
    }
    assert_eq!(to_yaml(&json!({"a": "on", "on": "NO"})), "a: 'on'\n'on': 'NO'\n");
    assert_eq!(to_yaml(&json!({"x": "1_000"})), "x: '1_000'\n");
}

#[test]
fn strings_that_read_back_stay_plain() {
    for s in PLAIN {
        assert!(plain_reads_back(s), "{s:?} can be plain");
        assert_eq!(to_yaml(&json!({ "k": s })), format!("k: {s}\n"));
        assert_round_trips(&json!({ "k": s, *s: [s] }));
    }
}

#[test]
fn awkward_strings_round_trip() {
    let samples = [
        "a: b",
        "a #c",
        "- x",
        "---",
        "...",
        "x:",
        " lead",
        "trail ",
        "it's",
        "\"q\"",
        "a\tb",
        "bell\u{7}",
        "esc\u{1b}[2J",
        "cr\rlf",
        "nul\0",
        "\u{85}",
        "\u{2028}",
        "\u{feff}bom",
        "\u{9b}csi",
        "\u{10ffff}",
        "\u{fffe}",
        "line\nbreak",
        "two\n",
        "keep\n\n",
        "\n",
        "\nlead",
        " indented\nsecond",
        "space \nbreak",
        "tab\tline\nx",
        "trailing\nspace ",
        "#hash",
        "@at",
        "`tick",
        "%pct",
        "!bang",
        "&amp",
        "*star",
        "|pipe",
        ">gt",
        "[x",
        "{x",
        "}x",
        ",x",
    ];
    for s in samples {
        assert_round_trips(&json!({ "k": s }));
        assert_round_trips(&json!([s, { "k": [s] }]));
        assert_round_trips(&json!({ s: { s: s } }));
    }
    let long_key = "k".repeat(200) + "\non";
    assert_round_trips(&json!({ long_key.clone(): {"a": [1, {"b": "yes"}]}, "x": [] }));
}

#[test]
fn the_layout_is_libyamls() {
    let value = json!({
        "apiVersion": "v1",
        "metadata": {"name": "x", "labels": {"a": "yes", "b": "1"}},
        "list": [{"a": 1, "b": [true, null]}, [1.5, []], {}],
        "text": "line one\nline two\n",
        "empty": {},
    });
    let expected = "\
apiVersion: v1
metadata:
  name: x
  labels:
    a: 'yes'
    b: '1'
list:
- a: 1
  b:
  - true
  - null
- - 1.5
  - []
- {}
text: |
  line one
  line two
empty: {}
";
    assert_eq!(to_yaml(&value), expected);
    assert_round_trips(&value);
    assert_eq!(to_yaml(&json!("on")), "'on'\n");
    assert_eq!(to_yaml(&json!({})), "{}\n");
}

#[test]
fn it_writes_what_serde_yaml_ng_wrote_for_unambiguous_values() {
    let value = json!({
        "spec": {"topology": {"version": "v1.31.2", "workers": {"machineDeployments": [
            {"class": "default-worker", "name": "md-0", "replicas": 3}]},
            "variables": [{"name": "imageRepository", "value": "registry.k8s.io"}]}},
        "script": "#!/bin/sh\necho hi\n",
    });
    let theirs = serde_yaml_ng::to_string(&value).unwrap_or_default();
    assert_eq!(to_yaml(&value), theirs);
}
