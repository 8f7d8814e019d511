//! Property names as CEL expressions see them, escaped the way the API server escapes them: CEL
//! reserved words become `__word__`; `__`, `.`, `-` and `/` become `__underscores__`, `__dot__`,
//! `__dash__` and `__slash__`; a name that starts with a digit or holds any other character is
//! not reachable from CEL at all.

use std::borrow::Cow;

/// The words CEL's lexer reserves.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The name a rule uses for property `name`, or `None` when rules cannot reach it. Borrowed
/// when the name needs no escaping, as almost every name does.
pub fn escape(name: &str) -> Option<Cow<'_, str>> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(Cow::Owned(format!("__{name}__")));
    }
    let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if plain && !name.contains("__") {
        return Some(Cow::Borrowed(name));
    }
    let mut out = String::with_capacity(name.len() + 16);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (piece, width) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            c if c.is_ascii_alphanumeric() || c == '_' => {
                out.push(c);
                rest = &rest[1..];
                continue;
            }
            _ => return None,
        };
        out.push_str(piece);
        rest = &rest[width..];
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn names_escape_as_the_api_server_escapes_them() {
        for (name, escaped) in [
            ("replicas", Some("replicas")),
            ("my_field", Some("my_field")),
            ("a__b", Some("a__underscores__b")),
            ("___", Some("__underscores___")),
            ("x.y", Some("x__dot__y")),
            ("x-y", Some("x__dash__y")),
            ("x/y", Some("x__slash__y")),
            (
                "app.kubernetes.io/name",
                Some("app__dot__kubernetes__dot__io__slash__name"),
            ),
            ("namespace", Some("__namespace__")),
            ("in", Some("__in__")),
            ("default", Some("default")),
            ("1st", None),
            ("", None),
            ("a b", None),
            ("café", None),
        ] {
            assert_eq!(escape(name).as_deref(), escaped, "{name}");
        }
    }
}
