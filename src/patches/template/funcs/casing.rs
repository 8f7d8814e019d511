//! sprig's case conversions (`snakecase`, `kebabcase`, `camelcase`), following the word rules of
//! the xstrings library sprig uses.

/// Word classes of the case-conversion scanner.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    End,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// A letter that is not a CJK ideograph.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{20000}'..='\u{2FFFF}')
}

/// Go's `unicode.IsPunct` for ASCII (symbols such as `$`, `+`, `<` are not punctuation).
fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
}

/// Byte offset after the run of chars from `start` that satisfy `pred`.
fn run_end(s: &str, start: usize, pred: impl Fn(char) -> bool) -> usize {
    s[start..]
        .char_indices()
        .find(|&(_, c)| !pred(c))
        .map_or(s.len(), |(i, _)| start + i)
}

/// Splits off the next word: its class, the word and the rest.
fn next_word(s: &str) -> (Word, &str, &str) {
    let Some(first) = s.chars().next() else {
        return (Word::End, "", "");
    };
    let after = first.len_utf8();
    let (kind, end) = if is_connector(first) {
        (Word::Connector, run_end(s, after, is_connector))
    } else if is_punct(first) {
        (Word::Punct, run_end(s, after, is_punct))
    } else if first.is_uppercase() {
        let end = match s[after..].chars().next() {
            Some(c) if c.is_uppercase() => {
                let end = run_end(s, after, char::is_uppercase);
                // "HTTPStatus" splits into "HTTP" and "Status".
                match s[end..].chars().next() {
                    Some(next) if is_alphabet(next) => s[..end].char_indices().last().map_or(end, |(i, _)| i),
                    _ => end,
                }
            }
            Some(c) if is_alphabet(c) => run_end(s, after, |c| is_alphabet(c) && !c.is_uppercase()),
            _ => after,
        };
        (Word::Upper, end)
    } else if is_alphabet(first) {
        (
            Word::Alphabet,
            run_end(s, after, |c| is_alphabet(c) && !c.is_uppercase()),
        )
    } else if first.is_numeric() {
        (Word::Number, run_end(s, after, char::is_numeric))
    } else {
        let other = |c: char| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c));
        (Word::Other, run_end(s, after, other))
    };
    (kind, &s[..end], &s[end..])
}

fn push_lower(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

/// `snakecase` (`_`) and `kebabcase` (`-`): words lower-cased and joined by `connector`.
pub(super) fn delimited(text: &str, connector: char) -> String {
    let mut out = String::new();
    let (mut kind, mut word, mut rest) = next_word(text);
    while !rest.is_empty() {
        if kind != Word::Connector {
            push_lower(&mut out, kind, word, connector);
        }
        let (prev, last) = (kind, word);
        (kind, word, rest) = next_word(rest);
        match prev {
            Word::Number => {
                while matches!(kind, Word::Alphabet | Word::Number) {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word, rest) = next_word(rest);
                }
                if !matches!(kind, Word::End | Word::Punct | Word::Connector) {
                    out.push(connector);
                }
            }
            Word::Connector => push_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if kind != Word::Number {
                    if !matches!(kind, Word::Connector | Word::Punct) {
                        out.push(connector);
                    }
                    continue;
                }
                if rest.is_empty() {
                    continue;
                }
                let number = word;
                (kind, word, rest) = next_word(rest);
                if kind != Word::Alphabet {
                    // A number directly after a word belongs to it ("Bld4Floor" => "bld4_floor").
                    push_lower(&mut out, Word::Number, number, connector);
                    if !matches!(kind, Word::Connector | Word::Punct) {
                        out.push(connector);
                    }
                    continue;
                }
                // Lower-case letters after a number start a new word ("HTTP2xx" => "http_2xx").
                out.push(connector);
                push_lower(&mut out, Word::Number, number, connector);
                while matches!(kind, Word::Alphabet | Word::Number) {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word, rest) = next_word(rest);
                }
                if !matches!(kind, Word::End | Word::Connector | Word::Punct) {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, kind, word, connector);
    out
}

fn upper(c: char) -> char {
    c.to_uppercase().next().unwrap_or(c)
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// `camelcase` (xstrings `ToPascalCase`): connectors removed, each word capitalised.
pub(super) fn pascal(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    let mut first_upper = false;
    // Leading connectors are kept.
    let mut current = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_upper = c.is_uppercase();
            current = Some(upper(c));
            break;
        }
        out.push(c);
    }
    let Some(mut r0) = current else {
        return out;
    };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = r0.is_uppercase();
            r0 = upper(r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_and_kebab_follow_xstrings() {
        let cases = [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
            ("http2xx", "http_2xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
            ("Hello, World", "hello,_world"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(delimited(input, '_'), want, "{input}");
        }
        assert_eq!(delimited("myVar_name", '-'), "my-var-name");
    }

    #[test]
    fn pascal_follows_xstrings() {
        let cases = [
            ("some_words", "SomeWords"),
            ("http_server", "HttpServer"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("some words", "SomeWords"),
            ("GOLANG_IS_GREAT", "GolangIsGreat"),
            ("x", "X"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(pascal(input), want, "{input}");
        }
    }
}
