use super::*;

fn kinds(src: &str) -> Vec<Tok> {
    lex(src).unwrap().into_iter().map(|t| t.kind).collect()
}

#[test]
fn trim_markers_remove_adjacent_whitespace() {
    assert_eq!(
        kinds("a \n{{- 1 -}}\n b"),
        vec![
            Tok::Text("a".into()),
            Tok::Open,
            Tok::Number("1".into()),
            Tok::Close,
            Tok::Text("b".into()),
            Tok::Eof
        ]
    );
}

#[test]
fn negative_number_is_not_a_trim_marker() {
    assert_eq!(
        kinds("{{-3}}"),
        vec![Tok::Open, Tok::Number("-3".into()), Tok::Close, Tok::Eof]
    );
}

#[test]
fn comments_are_dropped() {
    assert_eq!(
        kinds("a {{- /* x */ -}} b"),
        vec![Tok::Text("a".into()), Tok::Text("b".into()), Tok::Eof]
    );
    assert_eq!(
        lex("{{/* x */ }}").unwrap_err().1,
        "comment ends before closing delimiter"
    );
    assert_eq!(lex("{{/* x ").unwrap_err().1, "unclosed comment");
}

#[test]
fn literals_decode() {
    assert_eq!(
        kinds(r#"{{"a\tb\x41\u00e9" `r\n` 'x' '\n'}}"#),
        vec![
            Tok::Open,
            Tok::Str("a\tbAé".into(), r#""a\tb\x41\u00e9""#.into()),
            Tok::Space,
            Tok::Str("r\\n".into(), "`r\\n`".into()),
            Tok::Space,
            Tok::Char(120, "'x'".into()),
            Tok::Space,
            Tok::Char(10, "'\\n'".into()),
            Tok::Close,
            Tok::Eof
        ]
    );
}

#[test]
fn fields_variables_and_keywords() {
    assert_eq!(
        kinds("{{if $x.a}}{{end}}"),
        vec![
            Tok::Open,
            Tok::Keyword("if"),
            Tok::Space,
            Tok::Variable("$x".into()),
            Tok::Field("a".into()),
            Tok::Close,
            Tok::Open,
            Tok::Keyword("end"),
            Tok::Close,
            Tok::Eof
        ]
    );
}

#[test]
fn errors_have_positions() {
    assert_eq!(
        lex("ab{{ \"x").unwrap_err(),
        (5, "unterminated quoted string".to_string())
    );
    assert_eq!(lex("{{ .a ").unwrap_err().1, "unclosed action");
    assert_eq!(
        lex("{{ # }}").unwrap_err().1,
        "unrecognized character in action: '#'"
    );
}
