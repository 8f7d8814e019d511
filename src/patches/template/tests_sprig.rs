//! Table tests of the sprig functions; expected outputs were produced by Go with sprig v3.3.0
//! (map key order, random in Go, is sorted here).

use super::tests_core::check_table;

#[rustfmt::skip]
const SPRIG: &[(&str, Result<&str, &str>)] = &[
    ("{{ upper .s }} {{ lower \"AbC\" }} {{ title \"hello wOrld-x_y\" }} {{ trim \"  x  \" }} {{ trimAll \"$\" \"$$5$\" }}", Ok("HELLO WORLD abc Hello WOrld-X_y x 5")),
    ("{{ trimPrefix \"v\" .v }} {{ .v | trimPrefix \"v\" }} {{ trimSuffix \"+rke2r1\" \"v1.30.0+rke2r1\" }}", Ok("1.30.2 1.30.2 v1.30.0")),
    ("{{ trunc 5 .s }} {{ trunc -5 .s }} {{ trunc 50 .s }}", Ok("hello world hello world")),
    ("{{ replace \" \" \"-\" .s }} {{ .s | replace \"o\" \"0\" }}", Ok("hello-world hell0 w0rld")),
    ("{{ contains \"wor\" .s }} {{ hasPrefix \"hel\" .s }} {{ hasSuffix \"x\" .s }}", Ok("true true false")),
    ("{{ repeat 3 \"ab\" }} {{ nospace .s }}", Ok("ababab helloworld")),
    ("{{ split \" \" .s }} {{ (split \" \" .s)._1 }} {{ splitList \",\" \"a,b,,c\" }} {{ join \"-\" .list }} {{ join \",\" .nums }}", Ok("map[_0:hello _1:world] world [a b  c] a-b-c 3,1,2")),
    ("{{ quote .name }} {{ quote .n .missing \"x\" }} {{ squote .name }} {{ .name | quote }} {{ cat \"a\" 1 .nul \"b\" }}", Ok("\"c1\" \"3\" \"x\" 'c1' \"c1\" a 1 b")),
    ("{{ toString .n }} {{ toString .list }} {{ toStrings .nums }}", Ok("3 [a b c] [3 1 2]")),
    ("{{ indent 2 .ml }}|{{ nindent 4 .ml }}", Ok("  line1\n  line2|\n    line1\n    line2")),
    ("{{ default \"d\" .missing }} {{ default \"d\" .empty }} {{ default \"d\" .name }} {{ .missing | default \"p\" }} {{ default 5 0 }}", Ok("d d c1 p 5")),
    ("{{ empty .emptyList }} {{ empty .n }} {{ empty .missing }} {{ coalesce .missing .empty \"c\" }} {{ ternary \"y\" \"n\" .t }} {{ ternary \"y\" \"n\" false }}", Ok("true false true c y n")),
    ("{{ list 1 \"a\" .n }} {{ append .list \"d\" }} {{ first .list }} {{ last .list }} {{ first .emptyList }} {{ has \"b\" .list }} {{ has 3 .list }}", Ok("[1 a 3] [a b c d] a c <no value> true false")),
    ("{{ uniq (list 1 2 1 \"a\" \"a\") }} {{ rest .list }} {{ initial .list }} {{ reverse .list }} {{ without .list \"b\" }} {{ compact (list 0 1 \"\" \"x\") }} {{ sortAlpha .list }}", Ok("[1 2 a] [b c] [a b] [c b a] [a c] [1 x] [a b c]")),
    ("{{ $d := dict \"k\" \"v\" \"n\" 1 }}{{ $d }} {{ get $d \"k\" }} {{ get $d \"zz\" }} {{ hasKey $d \"n\" }} {{ $_ := set $d \"z\" 9 }}{{ $d.z }} {{ keys $d }} {{ keys .map }}", Ok("map[k:v n:1] v  true 9 [k n z] [a b c]")),
    ("{{ pluck \"a\" .map (dict \"a\" 5) }} {{ values (dict \"b\" 2 \"a\" 1) }} {{ dict \"odd\" }}", Ok("[1 5] [1 2] map[odd:]")),
    ("{{ add 1 2 3 }} {{ add .n 1 }} {{ sub 10 .n }} {{ mul 2 3 4 }} {{ div 7 2 }} {{ mod 7 3 }} {{ max 1 9 3 }} {{ min 4 2 8 }} {{ add1 .f }}", Ok("6 4 7 24 3 1 9 2 2")),
    ("{{ int .f }} {{ int64 \"42\" }} {{ float64 \"2.5\" }} {{ atoi \"12\" }} {{ atoi \"x\" }} {{ int \"0x10\" }} {{ add \"5.0\" 1 }}", Ok("1 42 2.5 12 0 16 6")),
    ("{{ eq (add .n 1) 4 }} {{ typeOf .n }} {{ typeOf .name }} {{ typeOf .list }} {{ typeOf .map }} {{ typeOf .missing }} {{ kindIs \"map\" .map }} {{ kindIs \"string\" .name }} {{ kindOf .list }}", Ok("true float64 string []interface {} map[string]interface {} <nil> true true slice")),
    ("{{ toJson .map }} {{ toJson .html }} {{ toJson .list }} {{ toJson .f }}|{{ toPrettyJson .map }}|{{ toRawJson .html }}", Ok("{\"a\":1,\"b\":2,\"c\":{\"d\":\"x\"}} \"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\" [\"a\",\"b\",\"c\"] 1.5|{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": {\n    \"d\": \"x\"\n  }\n}|\"<a href='x'>&</a>\"")),
    ("{{ (fromJson \"{\\\"a\\\":[1,2]}\").a }} {{ fromJson \"bad\" }}", Ok("[1 2] <no value>")),
    ("{{ b64enc .s }} {{ b64dec \"aGVsbG8=\" }} {{ b64dec \"!!\" }} {{ sha256sum \"abc\" }}", Ok("aGVsbG8gd29ybGQ= hello illegal base64 data at input byte 0 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")),
    ("{{ regexMatch \"^h.*d$\" .s }} {{ regexMatch \"(\" .s }} {{ regexFind \"o.\" .s }} {{ regexFindAll \"o\" .s -1 }} {{ regexFindAll \"l\" .s 2 }}", Ok("true false o  [o o] [l l]")),
    ("{{ regexReplaceAll \"(o)(r?)\" .s \"<$1${2}>\" }} {{ regexReplaceAllLiteral \"o\" .s \"$1\" }} {{ regexSplit \" \" .s -1 }} {{ regexSplit \"l\" .s 2 }} {{ regexSplit \"x\" \"\" -1 }}", Ok("hell<o> w<or>ld hell$1 w$1rld [hello world] [he lo world] []")),
    ("{{ regexReplaceAll \"(\" .s \"\" }}", Err("template: tpl:1:3: executing \"tpl\" at <regexReplaceAll \"(\" .s \"\">: error calling regexReplaceAll: regexp: Compile(`(`): error parsing regexp: unclosed group")),
    ("{{ snakecase \"FirstName\" }} {{ snakecase \"HTTPServer\" }} {{ kebabcase \"myVar_name\" }} {{ camelcase \"http_server\" }} {{ camelcase \"foo-bar baz\" }}", Ok("first_name http_server my-var-name HttpServer FooBarBaz")),
    ("{{ $v := semver .v }}{{ $v.Major }}.{{ $v.Minor }}.{{ $v.Patch }} {{ $v }} {{ $v.Original }} {{ (semver .pre).Prerelease }} {{ (semver .pre).Metadata }} {{ semver \"1.2\" }}", Ok("1.30.2 1.30.2 v1.30.2 rc.1 build.5 1.2.0")),
    ("{{ semverCompare \">=1.30.0\" .v }} {{ semverCompare \"<1.30\" .v }} {{ semverCompare \"~1.30.0\" .v }} {{ semverCompare \"^1.29\" .v }} {{ semverCompare \"1.30.x\" .v }} {{ semverCompare \">=1.31.0\" .pre }} {{ semverCompare \">=1.31.0-0\" .pre }} {{ semverCompare \">1.2, <2 || =3.0.0\" \"3.0.0\" }} {{ semverCompare \"1.1 - 1.31\" .v }} {{ semverCompare \"!=1.30.2\" .v }} {{ semverCompare \"*\" .v }}", Ok("true false true true true false true true true false true")),
    ("{{ gt (semver .v).Minor 29 }} {{ eq (semver .v).Major 1 }}", Ok("true true")),
    ("{{ semver \"not-a-version\" }}", Err("template: tpl:1:3: executing \"tpl\" at <semver \"not-a-version\">: error calling semver: Invalid Semantic Version")),
    ("{{ semverCompare \"!!\" \"1.0.0\" }}", Err("template: tpl:1:3: executing \"tpl\" at <semverCompare \"!!\" \"1.0.0\">: error calling semverCompare: improper constraint: !!")),
    ("{{ upper .n }}", Err("template: tpl:1:9: executing \"tpl\" at <.n>: wrong type for value; expected string; got float64")),
    ("{{ upper .missing }}", Err("template: tpl:1:9: executing \"tpl\" at <.missing>: invalid value; expected string")),
    ("{{ .missing | upper }}", Err("template: tpl:1:14: executing \"tpl\" at <upper>: invalid value; expected string")),
    ("{{ div 1 0 }}", Err("template: tpl:1:3: executing \"tpl\" at <div 1 0>: error calling div: runtime error: integer divide by zero")),
    ("{{ fail \"boom\" }}", Err("template: tpl:1:3: executing \"tpl\" at <fail \"boom\">: error calling fail: boom")),
    ("{{ trunc .n .s }}", Err("template: tpl:1:9: executing \"tpl\" at <.n>: wrong type for value; expected int; got float64")),
    ("{{ first \"x\" }}", Err("template: tpl:1:3: executing \"tpl\" at <first \"x\">: error calling first: Cannot find first on type string")),
];

#[test]
fn sprig_functions_match_go() {
    check_table(SPRIG, false);
}
