//! Every patch template and enabledIf of the real-world ClusterClass corpus, rendered with the
//! example Cluster's variables and with builtins only; expectations come from Go (see the note in
//! `testdata/realworld.json`).

use super::{parse_yaml_output, ExecOptions, Template};

#[test]
fn realworld_templates_render_and_type_like_go() {
    let corpus: serde_json::Value = serde_json::from_str(include_str!("testdata/realworld.json")).unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 196);
    let mut failures = Vec::new();
    for case in cases {
        let provider = case["provider"].as_str().unwrap();
        let template = case["template"].as_str().unwrap();
        let full = &corpus["data"][provider];
        let data = match case["variant"].as_str() {
            Some("cluster") => full.clone(),
            _ => serde_json::json!({ "builtin": full["builtin"] }),
        };
        let rendered = Template::parse(template)
            .and_then(|t| t.execute(&data, &ExecOptions::default()))
            .map_err(|e| e.to_string());
        let want = match (&case["output"], &case["error"]) {
            (serde_json::Value::String(out), _) => Ok(out.clone()),
            (_, serde_json::Value::String(err)) => Err(err.clone()),
            _ => panic!("case without expectation: {case}"),
        };
        if rendered != want {
            failures.push(format!(
                "{provider}: {template:?}\n  want {want:?}\n  got  {rendered:?}"
            ));
            continue;
        }
        if let (Ok(out), Some(typed)) = (&rendered, case["typed"].as_str()) {
            let want: serde_json::Value = serde_json::from_str(typed).unwrap();
            let got = parse_yaml_output(out);
            if got.as_ref() != Ok(&want) {
                failures.push(format!(
                    "{provider}: typing {out:?}\n  want {want}\n  got  {got:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
