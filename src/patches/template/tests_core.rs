//! Table tests of template execution; expected outputs were produced by Go's text/template
//! with sprig v3.3.0 (Cluster API's setup) on the same template and data.

use super::{ExecOptions, Template};

/// The data every table case renders against (as CAPI passes variables: JSON-decoded).
pub(super) const DATA: &str = "{\"name\":\"c1\",\"n\":3,\"f\":1.5,\"big\":1000000,\"s\":\"hello world\",\"empty\":\"\",\"t\":true,\"no\":false,\"nul\":null,\"list\":[\"a\",\"b\",\"c\"],\"nums\":[3,1,2],\"map\":{\"b\":2,\"a\":1,\"c\":{\"d\":\"x\"}},\"emptyList\":[],\"emptyMap\":{},\"v\":\"v1.30.2\",\"pre\":\"v1.31.0-rc.1+build.5\",\"html\":\"<a href='x'>&</a>\",\"ml\":\"line1\\nline2\"}";

/// Parses and executes; errors as their display text.
pub(super) fn render(src: &str, data: &str, missing_key_error: bool) -> Result<String, String> {
    let data: serde_json::Value = serde_json::from_str(data).map_err(|e| e.to_string())?;
    let options = ExecOptions {
        missing_key_error,
        ..ExecOptions::default()
    };
    Template::parse(src)
        .and_then(|t| t.execute(&data, &options))
        .map_err(|e| e.to_string())
}

/// Runs a table, reporting every mismatch at once.
pub(super) fn check_table(cases: &[(&str, Result<&str, &str>)], missing_key_error: bool) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(src, want)| {
            let got = render(src, DATA, missing_key_error);
            let want = want.map(str::to_string).map_err(str::to_string);
            (got != want).then(|| format!("template {src:?}\n  want {want:?}\n  got  {got:?}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[rustfmt::skip]
const CORE: &[(&str, Result<&str, &str>)] = &[
    ("plain text", Ok("plain text")),
    ("{{ .name }}", Ok("c1")),
    ("a {{- .name -}} b", Ok("ac1b")),
    ("a  {{- /* c */ -}}  b", Ok("ab")),
    ("{{/* only */}}x", Ok("x")),
    ("{{ .map.c.d }}", Ok("x")),
    ("{{ .missing }}", Ok("<no value>")),
    ("{{ .missing.deeper }}", Ok("<no value>")),
    ("{{ .nul }}", Ok("<no value>")),
    ("{{ print .nul }}", Ok("<nil>")),
    ("{{ .n }} {{ .f }} {{ .big }} {{ .t }}", Ok("3 1.5 1e+06 true")),
    ("{{ .list }} {{ .map }} {{ .emptyMap }}", Ok("[a b c] map[a:1 b:2 c:map[d:x]] map[]")),
    ("{{ $x := .name }}{{ $x }}-{{ $ .name }}", Err("template: tpl:1:29: executing \"tpl\" at <$>: can't give argument to non-function $")),
    ("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}", Ok("2")),
    ("{{ $.map.a }}", Ok("1")),
    ("{{ with .map }}{{ .a }}{{ end }}", Ok("1")),
    ("{{ with .missing }}yes{{ else }}no{{ end }}", Ok("no")),
    ("{{ with .missing }}a{{ else with .map.a }}{{ . }}{{ end }}", Ok("1")),
    ("{{ if .t }}T{{ else }}F{{ end }}", Ok("T")),
    ("{{ if .no }}1{{ else if .empty }}2{{ else if .n }}3{{ end }}", Ok("3")),
    ("{{ if and .t .n }}y{{ end }}{{ if or .no .empty }}y{{ else }}n{{ end }}", Ok("yn")),
    ("{{ and 1 0 2 }} {{ or 0 \"\" 3 }} {{ and .t .name }}", Ok("0 3 c1")),
    ("{{ not .t }} {{ not .empty }}", Ok("false true")),
    ("{{ range .list }}[{{ . }}]{{ end }}", Ok("[a][b][c]")),
    ("{{ range $i, $v := .list }}{{ $i }}={{ $v }};{{ end }}", Ok("0=a;1=b;2=c;")),
    ("{{ range $k, $v := .map }}{{ $k }}:{{ $v }},{{ end }}", Ok("a:1,b:2,c:map[d:x],")),
    ("{{ range .emptyList }}x{{ else }}empty{{ end }}", Ok("empty")),
    ("{{ range .missing }}x{{ else }}none{{ end }}", Ok("none")),
    ("{{ range $i, $v := .nums }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $v }}{{ end }}", Ok("3")),
    ("{{ range 3 }}{{ . }}{{ end }}", Ok("012")),
    ("{{ range $v := .list }}{{ $v }}{{ end }}", Ok("abc")),
    ("{{ define \"t\" }}<{{ . }}>{{ end }}{{ template \"t\" .name }}{{ template \"t\" }}", Ok("<c1><<no value>>")),
    ("{{ block \"b\" .n }}[{{ . }}]{{ end }}", Ok("[3]")),
    ("{{ \"a\\tb\" }} {{ `raw\\n` }} {{ 'x' }} {{ 1.50 }} {{ 0x10 }} {{ 1e3 }} {{ -7 }} {{ nil | print }}", Err("template: tpl:1:81: executing \"tpl\" at <nil>: nil is not a command")),
    ("{{ .name | printf \"%s-%s\" \"x\" }}", Ok("x-c1")),
    ("{{ (.map).a }} {{ (index .list 1) }}", Ok("1 b")),
    ("{{ len .list }} {{ len .s }} {{ len .map }}", Ok("3 11 3")),
    ("{{ index .list 2 }} {{ index .map \"a\" }} {{ index .map \"zz\" }} {{ index .s 0 }}", Ok("c 1 <no value> 104")),
    ("{{ slice .list 1 }} {{ slice .s 0 5 }}", Err("template: tpl:1:23: executing \"tpl\" at <slice .s 0 5>: error calling slice: list should be type of slice or array but string")),
    ("{{ print 1 2 \"a\" \"b\" 3 .t }}|{{ println .n \"x\" }}|", Ok("1 2ab3 true|3 x\n|")),
    ("{{ printf \"%d %5.2f|%-4s|%q %v %x %t %03d %+d %e %g\" 7 3.14159 \"ab\" \"q\" .list 255 true 5 3 1234.5 0.000012 }}", Ok("7  3.14|ab  |\"q\" [a b c] ff true 005 +3 1.234500e+03 1.2e-05")),
    ("{{ printf \"%d %s\" .n }} {{ printf \"%s\" }} {{ printf \"x\" 1 }}", Ok("%!d(float64=3) %!s(MISSING) %!s(MISSING) x%!(EXTRA int=1)")),
    ("{{ eq .name \"c1\" }} {{ eq .n 3.0 }} {{ eq 1 2 1 }} {{ ne .name \"x\" }} {{ lt 1 2 }} {{ le .f 1.5 }} {{ gt \"b\" \"a\" }} {{ ge 2 3 }}", Ok("true true true true true true true false")),
    ("{{ eq .missing \"x\" }} {{ eq .missing nil }} {{ eq .list nil }}", Ok("false true false")),
    ("{{ html .html }} {{ js .html }} {{ urlquery \"a b&c=d/é\" }} {{ html .missing }}", Ok("&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; \\u003Ca href\\u003D\\'x\\'\\u003E\\u0026\\u003C/a\\u003E a+b%26c%3Dd%2F%C3%A9 &lt;no value&gt;")),
    ("{{ 3 }}{{ \"s\" }}{{ true }}", Ok("3strue")),
    ("{{ eq .n 3 }}", Err("template: tpl:1:3: executing \"tpl\" at <eq .n 3>: error calling eq: incompatible types for comparison: float64 and int")),
    ("{{ lt .name 3 }}", Err("template: tpl:1:3: executing \"tpl\" at <lt .name 3>: error calling lt: incompatible types for comparison: string and int")),
    ("{{ .nul.x }}", Err("template: tpl:1:7: executing \"tpl\" at <.nul.x>: nil pointer evaluating interface {}.x")),
    ("{{ .name.x }}", Err("template: tpl:1:8: executing \"tpl\" at <.name.x>: can't evaluate field x in type interface {}")),
    ("{{ index .list 5 }}", Err("template: tpl:1:3: executing \"tpl\" at <index .list 5>: error calling index: index out of range: 5")),
    ("{{ len 3 }}", Err("template: tpl:1:3: executing \"tpl\" at <len 3>: error calling len: len of type int")),
    ("{{ nil }}", Err("template: tpl:1:3: executing \"tpl\" at <nil>: nil is not a command")),
    ("{{ .map.a 1 }}", Err("template: tpl:1:7: executing \"tpl\" at <.map.a>: a is not a method but has arguments")),
    ("{{ template \"nope\" }}", Err("template: tpl:1:12: executing \"tpl\" at <{{template \"nope\"}}>: template \"nope\" not defined")),
    ("{{ define \"r\" }}{{ template \"r\" }}{{ end }}{{ template \"r\" }}", Err("template: tpl:1:28: executing \"r\" at <{{template \"r\"}}>: exceeded maximum template depth (64)")),
    ("{{ range .n }}x{{ end }}", Err("template: tpl:1:9: executing \"tpl\" at <.n>: range can't iterate over 3")),
    ("{{ printf }}", Err("template: tpl:1:3: executing \"tpl\" at <printf>: wrong number of args for printf: want at least 1 got 0")),
    ("{{ not }}", Err("template: tpl:1:3: executing \"tpl\" at <not>: wrong number of args for not: want 1 got 0")),
    ("{{ 1 2 }}", Err("template: tpl:1:3: executing \"tpl\" at <1>: can't give argument to non-function 1")),
    ("{{ .name", Err("template: tpl:1: unclosed action")),
    ("{{ if .t }}x", Err("template: tpl:1: unexpected EOF")),
    ("{{ end }}", Err("template: tpl:1: unexpected {{end}}")),
    ("{{ $y }}", Err("template: tpl:1: undefined variable \"$y\"")),
    ("{{ nofunc 1 }}", Err("template: tpl:1: function \"nofunc\" not defined")),
    ("{{ break }}", Err("template: tpl:1: {{break}} outside {{range}}")),
    ("{{ else }}", Err("template: tpl:1: unexpected {{else}}")),
    ("{{ . | 1 }}", Err("template: tpl:1: non executable command in pipeline stage 2")),
    ("{{ \"abc }}", Err("template: tpl:1: unterminated quoted string")),
    ("{{ ( .name }}", Err("template: tpl:1: unclosed left paren")),
    ("{{ .name | }}", Ok("c1")),
    ("{{}}", Err("template: tpl:1: missing value for command")),
];

#[rustfmt::skip]
const MISSING_KEY_ERROR: &[(&str, Result<&str, &str>)] = &[
    ("{{ .map.zz }}", Err("template: tpl:1:7: executing \"tpl\" at <.map.zz>: map has no entry for key \"zz\"")),
    ("{{ .missing.x }}", Err("template: tpl:1:11: executing \"tpl\" at <.missing.x>: map has no entry for key \"missing\"")),
    ("{{ .map.a }}", Ok("1")),
    ("{{ index .map \"zz\" }}", Ok("<no value>")),
    ("{{ with .map }}{{ .nope }}{{ end }}", Err("template: tpl:1:18: executing \"tpl\" at <.nope>: map has no entry for key \"nope\"")),
];

#[rustfmt::skip]
const NAMING: &[(&str, &str, Result<&str, &str>)] = &[
    ("{{ .cluster.name }}-{{ .random }}", "{\"cluster\": {\"name\": \"c1\"}, \"random\": \"abcde\"}", Ok("c1-abcde")),
    ("{{ .cluster.nope }}", "{\"cluster\": {\"name\": \"c1\"}}", Err("template: template name generator:1:11: executing \"template name generator\" at <.cluster.nope>: map has no entry for key \"nope\"")),
    ("{{ upper .cluster.name }}", "{\"cluster\": {\"name\": \"c1\"}}", Err("template: template name generator:1: function \"upper\" not defined")),
];

#[test]
fn templates_are_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Template>();
}

#[test]
fn core_language_matches_go() {
    check_table(CORE, false);
}

#[test]
fn missing_key_error_option_matches_go() {
    check_table(MISSING_KEY_ERROR, true);
}

#[test]
fn naming_templates_have_builtins_only_and_fail_on_missing_keys() {
    for (src, data, want) in NAMING {
        let data: serde_json::Value = serde_json::from_str(data).unwrap();
        let options = ExecOptions {
            missing_key_error: true,
            ..ExecOptions::default()
        };
        let got = Template::parse_builtins_only(src)
            .and_then(|t| t.execute(&data, &options))
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map(str::to_string).map_err(str::to_string), "{src}");
    }
}
