//! YAML typing of rendered output against sigs.k8s.io/yaml v1.4 (go-yaml v2): expected JSON
//! values (or errors) were produced by Go for the same text.

use super::parse_yaml_output;

/// Expected JSON (or error) as sigs.k8s.io/yaml v1.4 gives it for the same text.
#[rustfmt::skip]
const CASES: &[(&str, Result<&str, &str>)] = &[
("yes", Ok("true")),
("Yes", Ok("true")),
("YES", Ok("true")),
("y", Ok("true")),
("N", Ok("false")),
("no", Ok("false")),
("on", Ok("true")),
("Off", Ok("false")),
("true", Ok("true")),
("False", Ok("false")),
("TRUE", Ok("true")),
("tRue", Ok("\"tRue\"")),
("\"yes\"", Ok("\"yes\"")),
("'on'", Ok("\"on\"")),
("8080", Ok("8080")),
("-17", Ok("-17")),
("+5", Ok("5")),
("0x1F", Ok("31")),
("0o17", Ok("15")),
("017", Ok("15")),
("08", Ok("8")),
("1_000", Ok("1000")),
("0b101", Ok("5")),
("1.5", Ok("1.5")),
("1.0", Ok("1")),
("-.5", Ok("-0.5")),
(".5", Ok("0.5")),
("1e3", Ok("1000")),
("6.02e+23", Ok("6.02e+23")),
(".inf", Err("error converting YAML to JSON: json: unsupported value: +Inf")),
("-.Inf", Err("error converting YAML to JSON: json: unsupported value: -Inf")),
(".nan", Err("error converting YAML to JSON: json: unsupported value: NaN")),
("~", Ok("null")),
("null", Ok("null")),
("", Ok("null")),
("  ", Ok("null")),
("Null", Ok("null")),
("NULL", Ok("null")),
("nULL", Ok("\"nULL\"")),
("1.2.3", Ok("\"1.2.3\"")),
("v1.30.0", Ok("\"v1.30.0\"")),
("2001-12-14", Ok("\"2001-12-14\"")),
("12:30:45", Ok("\"12:30:45\"")),
("a: 1\nb: [yes, \"no\", 3]\n", Ok("{\"a\":1,\"b\":[true,\"no\",3]}")),
("- x\n- {k: on}\n", Ok("[\"x\",{\"k\":true}]")),
("|\n  block\n", Ok("\"block\\n\"")),
("key: >-\n  folded\n  text\n", Ok("{\"key\":\"folded text\"}")),
("a: &x {p: 1}\nb: *x\nc:\n  <<: *x\n  q: 2\n", Ok("{\"a\":{\"p\":1},\"b\":{\"p\":1},\"c\":{\"p\":1,\"q\":2}}")),
("1: a\ntrue: b\n1.5: c\n", Ok("{\"1\":\"a\",\"1.5\":\"c\",\"true\":\"b\"}")),
("[1, 2", Err("error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'")),
("a: b: c", Err("error converting YAML to JSON: yaml: mapping values are not allowed in this context")),
("---\nfirst\n---\nsecond\n", Ok("\"first\"")),
("!!str 123", Ok("\"123\"")),
("18446744073709551615", Ok("18446744073709551615")),
("-9223372036854775809", Ok("-9223372036854776000")),
("9223372036854775808", Ok("9223372036854775808")),
("0.1", Ok("0.1")),
("100000000000000000000", Ok("100000000000000000000")),
("\"multi\nline\"", Ok("\"multi line\"")),
("foo # comment", Ok("\"foo\"")),
("- 1\n- - 2\n  - 3\n", Ok("[1,[2,3]]")),
("{}", Ok("{}")),
("[]", Ok("[]")),
("x: null\ny: ~\nz:\n", Ok("{\"true\":null,\"x\":null,\"z\":null}")),
    ("a: &x [1, 2]\nb: *x\n", Ok("{\"a\":[1,2],\"b\":[1,2]}")),
    ("? a\n: b\n", Ok("{\"a\":\"b\"}")),
    ("a: multi\n  line plain\n", Ok("{\"a\":\"multi line plain\"}")),
    ("a: 1 # c\n# full\nb: 2\n", Ok("{\"a\":1,\"b\":2}")),
    ("a: 1\n...\n", Ok("{\"a\":1}")),
    ("%YAML 1.1\n---\na: 1\n", Ok("{\"a\":1}")),
    ("\"quoted key\": v\n'k2': yes\n", Ok("{\"k2\":true,\"quoted key\":\"v\"}")),
    ("a: {b: [c, {d: e}], f: ~}\n", Ok("{\"a\":{\"b\":[\"c\",{\"d\":\"e\"}],\"f\":null}}")),
    ("b: !!binary aGVsbG8=\n", Ok("{\"b\":\"hello\"}")),
    ("a: !!int \"3\"\n", Ok("{\"a\":3}")),
    ("a: !!float 1\n", Ok("{\"a\":1}")),
    ("a: !!bool yes\n", Ok("{\"a\":true}")),
    ("- !!str true\n- !!null ''\n", Ok("[\"true\",null]")),
    ("a:\n- 1\n- 2\n", Ok("{\"a\":[1,2]}")),
    ("a: |+\n  keep\n\nb: 1\n", Ok("{\"a\":\"keep\\n\\n\",\"b\":1}")),
    ("a: >2\n   indented\n", Ok("{\"a\":\" indented\\n\"}")),
    ("x: \"\\u00e9\\t\\x41\"\n", Ok("{\"x\":\"\\u00e9\\tA\"}")),
    ("x: 'it''s'\n", Ok("{\"x\":\"it's\"}")),
    ("[a, b]: c\n", Err("error converting YAML to JSON: yaml: invalid map key: []interface {}{\"a\", \"b\"}")),
    ("{a: 1}: c\n", Err("error converting YAML to JSON: yaml: invalid map key: map[interface {}]interface {}{\"a\":1}")),
    ("a: b\na: c\n", Ok("{\"a\":\"c\"}")),
    ("<<: {a: 1}\nb: 2\n", Ok("{\"a\":1,\"b\":2}")),
    ("c:\n  <<: [{a: 1}, {a: 2, b: 3}]\n", Ok("{\"c\":{\"a\":1,\"b\":3}}")),
    ("   \n\n", Ok("null")),
    ("# only comment\n", Ok("null")),
    ("- \n-\n", Ok("[null,null]")),
    ("a: 'unterminated\n", Err("error converting YAML to JSON: yaml: line 2: found unexpected end of stream")),
    ("key with spaces: value with: colon\n", Err("error converting YAML to JSON: yaml: mapping values are not allowed in this context")),
    ("url: http://x.y/z?a=b#c\n", Ok("{\"url\":\"http://x.y/z?a=b#c\"}")),
    ("t: 2001-12-14t21:59:43.10-05:00\n", Ok("{\"t\":\"2001-12-14t21:59:43.10-05:00\"}")),
    ("n: 0.\n", Ok("{\"false\":0}")),
    ("e: 1e+3\n", Ok("{\"e\":1000}")),
    ("v: .5.\n", Ok("{\"v\":\".5.\"}")),
    ("f: -.5e-3\n", Ok("{\"f\":-0.0005}")),
];

#[test]
fn output_is_typed_like_go_yaml_v2() {
    let mut failures = Vec::new();
    for (text, want) in CASES {
        let got = parse_yaml_output(text);
        let ok = match (want, &got) {
            (Ok(json), Ok(value)) => serde_json::from_str::<serde_json::Value>(json).unwrap() == *value,
            (Err(msg), Err(err)) if msg.contains("json:") => err.to_string() == *msg,
            (Err(_), Err(err)) => err
                .to_string()
                .starts_with("error converting YAML to JSON: yaml: "),
            _ => false,
        };
        if !ok {
            failures.push(format!("{text:?}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
