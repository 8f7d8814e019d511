//! Pathological templates stop with an error: steps, output size, nesting, regex size.

use super::{ExecOptions, Template, TemplateError};

fn run(src: &str, options: &ExecOptions) -> Result<String, TemplateError> {
    Template::parse(src)?.execute(&serde_json::json!({"s": "abc"}), options)
}

fn small() -> ExecOptions {
    ExecOptions {
        missing_key_error: false,
        max_output_bytes: 10_000,
        max_steps: 5_000,
    }
}

fn message(result: Result<String, TemplateError>) -> String {
    match result {
        Err(TemplateError::Exec { message, .. } | TemplateError::Parse { message, .. }) => message,
        other => panic!("expected an execution or parse error, got {other:?}"),
    }
}

#[test]
fn endless_ranges_exhaust_the_step_budget() {
    let err = message(run("{{ range 100000 }}{{ end }}", &small()));
    assert_eq!(err, "exceeded the limit of 5000 evaluation steps");
    let err = message(run(
        "{{ range $i := 4000 }}{{ range 4000 }}x{{ end }}{{ end }}",
        &ExecOptions {
            max_output_bytes: usize::MAX,
            ..small()
        },
    ));
    assert_eq!(err, "exceeded the limit of 5000 evaluation steps");
}

#[test]
fn output_is_capped() {
    let err = message(run("{{ range 100 }}{{ repeat 500 \"x\" }}{{ end }}", &small()));
    assert_eq!(err, "output exceeds the limit of 10000 bytes");
    let err = message(run("{{ repeat 1000000000000 \"xy\" }}", &small()));
    assert_eq!(
        err,
        "error calling repeat: result exceeds the limit of 10000 bytes"
    );
    let err = message(run(
        "{{ $s := \"ab\" }}{{ range 40 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}",
        &small(),
    ));
    assert_eq!(
        err,
        "error calling printf: output exceeds the limit of 10000 bytes"
    );
}

#[test]
fn exponential_structures_stop() {
    let doubling = "{{ $l := list 1 }}{{ range 60 }}{{ $l = list $l $l }}{{ end }}";
    let err = message(run(&format!("{doubling}{{{{ $l }}}}"), &small()));
    assert_eq!(err, "output exceeds the limit of 10000 bytes");
    let err = message(run(&format!("{doubling}{{{{ mustToJson $l }}}}"), &small()));
    assert_eq!(
        err,
        "error calling mustToJson: json: value too large or too deeply nested"
    );
    let err = message(run(&format!("{doubling}{{{{ deepEqual $l $l }}}}"), &small()));
    assert_eq!(
        err,
        "error calling deepEqual: values too large or too deeply nested to compare"
    );
}

#[test]
fn self_referencing_maps_do_not_recurse_forever() {
    let err = message(run(
        "{{ $d := dict }}{{ $_ := set $d \"me\" $d }}{{ $d }}",
        &small(),
    ));
    assert_eq!(err, "value nested too deeply to print");
}

#[test]
fn recursive_templates_stop() {
    let err = message(run(
        "{{ define \"a\" }}{{ template \"a\" }}{{ end }}{{ template \"a\" }}",
        &small(),
    ));
    assert_eq!(err, "exceeded maximum template depth (64)");
    // Deep control nesting inside a recursive template hits the overall nesting limit.
    let inner = format!(
        "{}{{{{ template \"b\" }}}}{}",
        "{{ if 1 }}".repeat(90),
        "{{ end }}".repeat(90)
    );
    let src = format!("{{{{ define \"b\" }}}}{inner}{{{{ end }}}}{{{{ template \"b\" }}}}");
    let err = message(run(
        &src,
        &ExecOptions {
            max_steps: 1_000_000,
            ..small()
        },
    ));
    assert_eq!(err, "exceeded maximum nesting depth (256)");
}

#[test]
fn deep_parse_nesting_is_rejected() {
    let src = format!("{{{{ {}1{} }}}}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(message(run(&src, &small())), "template nesting deeper than 100");
    let src = format!("{}x{}", "{{ if 1 }}".repeat(5000), "{{ end }}".repeat(5000));
    assert_eq!(message(run(&src, &small())), "template nesting deeper than 100");
}

#[test]
fn huge_regexes_fail_to_compile() {
    let err = message(run("{{ regexFind \"((a{100}){100}){100}\" .s }}", &small()));
    assert!(
        err.starts_with(
            "error calling regexFind: regexp: Compile(`((a{100}){100}){100}`): error parsing regexp: "
        ),
        "{err}"
    );
    // regexMatch swallows compile errors like sprig does.
    assert_eq!(
        run("{{ regexMatch \"((a{100}){100}){100}\" .s }}", &small()).unwrap(),
        "false"
    );
}

#[test]
fn printf_widths_are_bounded() {
    assert_eq!(
        run("{{ printf \"%1000000000d|%.2000000s\" 1 \"x\" }}", &small()).unwrap(),
        "%!(BADWIDTH)1|%!(BADPREC)x"
    );
}

#[test]
fn deep_data_is_rejected() {
    let mut data = serde_json::json!(1);
    for _ in 0..1000 {
        data = serde_json::json!([data]);
    }
    let err = Template::parse("{{ . }}")
        .unwrap()
        .execute(&data, &small())
        .unwrap_err();
    assert!(err.to_string().ends_with("data nested deeper than 200"), "{err}");
}

#[test]
fn yaml_bombs_are_rejected() {
    let mut doc = String::from("a0: [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = i - 1;
        doc = doc.replace(&format!("a{prev}:"), &format!("a{prev}: &a{prev}"));
        doc.push_str(&format!("a{i}: [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
    }
    let err = super::parse_yaml_output(&doc).unwrap_err();
    assert_eq!(
        err.to_string(),
        "error converting YAML to JSON: yaml: document expands to more than 100000 nodes"
    );
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let err = super::parse_yaml_output(&deep).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("error converting YAML to JSON: yaml: "),
        "{err}"
    );
    let deep = format!(
        "{}1",
        (0..300)
            .map(|i| format!("{}- ", "  ".repeat(i)))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let err = super::parse_yaml_output(&deep).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("error converting YAML to JSON: yaml: "),
        "{err}"
    );
}

/// Deterministic token soup: every template parses or fails, executes or fails, never panics.
#[test]
fn token_soup_never_panics() {
    const PIECES: &[&str] = &[
        "{{",
        "}}",
        "{{-",
        "-}}",
        " ",
        "\n",
        "(",
        ")",
        "|",
        ".",
        ".a",
        ".b.c",
        "$",
        "$x",
        ":=",
        "=",
        ",",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-2",
        "3.5",
        "1e9",
        "0x1F",
        "true",
        "nil",
        "eq",
        "len",
        "index",
        "slice",
        "printf",
        "\"%v%d%s%q%5.2f%-3x%*d\"",
        "and",
        "or",
        "not",
        "default",
        "list",
        "dict",
        "set",
        "append",
        "repeat",
        "regexFind",
        "\"(a*)*b\"",
        "semver",
        "semverCompare",
        "\">=1.2 <2 || ~3\"",
        "toJson",
        "fromJson",
        "split",
        "join",
        "upper",
        "trunc",
        "indent",
        "uniq",
        "has",
        "keys",
        "/*",
        "*/",
        "\"v1.2.3-rc.1+m\"",
        "quote",
        "b64dec",
        "atoi",
        "div",
        "mod",
        "sub",
        "max",
        "x",
        "é",
        "\\",
    ];
    let data = serde_json::json!({"a": [1, "two", null, {"k": true}], "b": {"c": "d"}, "s": "v1.2.3"});
    let options = ExecOptions {
        missing_key_error: false,
        max_output_bytes: 4096,
        max_steps: 2_000,
    };
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut executed = 0;
    for _ in 0..3000 {
        let len = 1 + next() % 24;
        let src: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        if let Ok(template) = Template::parse(&src) {
            executed += 1;
            if let Ok(out) = template.execute(&data, &options) {
                assert!(out.len() <= 4096, "{src}");
                let _ = super::parse_yaml_output(&out);
            }
        }
        let _ = super::parse_yaml_output(&src);
    }
    assert!(executed > 100, "only {executed} templates parsed");
}

#[test]
fn float_precisions_beyond_the_rust_formatter_print_exact_digits_then_zeros() {
    let roomy = ExecOptions {
        max_output_bytes: 1_000_000,
        ..small()
    };
    let fixed = run("{{ printf \"%.70000f\" 1.5 }}", &roomy).unwrap();
    assert_eq!(fixed.len(), 70_002);
    assert!(fixed.starts_with("1.5000") && fixed.bytes().skip(2).skip(1).all(|b| b == b'0'));
    let exponent = run("{{ printf \"%.70000e\" 0.1 }}", &roomy).unwrap();
    assert!(
        exponent.starts_with("1.000000000000000055511151231257827"),
        "exact digits of 0.1"
    );
    assert!(exponent.ends_with("0e-01"));
    assert_eq!(exponent.len(), 2 + 70_000 + 4);
    // Found by the fuzzer: %g with a six-figure precision, through a bad verb.
    let general = run("{{ printf \"%.88888g|%.88888^v\" 2.5 1.25 }}", &roomy).unwrap();
    assert!(general.starts_with("2.5|"), "{}", &general[..20]);
}
