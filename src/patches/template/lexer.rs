//! Splits template source into text and action tokens (Go `text/template/parse` lexing rules).

/// One token with its byte offset in the source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub pos: usize,
}

/// Token kinds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Plain text between actions (already trimmed by trim markers).
    Text(String),
    /// `{{` (with or without trim marker).
    Open,
    /// `}}` (with or without trim marker).
    Close,
    /// A run of spaces inside an action.
    Space,
    Pipe,
    LParen,
    RParen,
    Comma,
    /// `:=`
    Declare,
    /// `=`
    Assign,
    /// A decoded string literal (quoted or raw) and its source text.
    Str(String, String),
    /// A character constant (its code point) and its source text.
    Char(i64, String),
    /// Number literal text.
    Number(String),
    Bool(bool),
    Nil,
    /// `.`
    Dot,
    /// `.name` (without the dot).
    Field(String),
    /// `$` or `$name` (with the dollar).
    Variable(String),
    /// A function name.
    Ident(String),
    /// A keyword (`if`, `else`, `end`, `range`, `with`, `define`, `template`, `block`, `break`, `continue`).
    Keyword(&'static str),
    Eof,
}

const KEYWORDS: [&str; 10] = [
    "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue",
];

/// A lexing error: byte offset and message.
pub(crate) type LexError = (usize, String);

/// Tokenizes a whole template.
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, LexError> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
        trim_next_text: false,
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    trim_next_text: bool,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn push(&mut self, kind: Tok, pos: usize) {
        self.tokens.push(Token { kind, pos });
    }

    fn run(&mut self) -> Result<(), LexError> {
        loop {
            let start = self.pos;
            let (text_end, found) = match self.rest().find("{{") {
                Some(i) => (self.pos + i, true),
                None => (self.src.len(), false),
            };
            let mut text = self.src.get(start..text_end).unwrap_or("");
            let after = self.src.get(text_end + 2..).unwrap_or("");
            let left_trim = found && after.starts_with('-') && after[1..].starts_with(is_space);
            if self.trim_next_text {
                text = text.trim_start_matches(is_space);
                self.trim_next_text = false;
            }
            if left_trim {
                text = text.trim_end_matches(is_space);
            }
            if !text.is_empty() {
                self.push(Tok::Text(text.to_string()), start);
            }
            if !found {
                self.push(Tok::Eof, self.src.len());
                return Ok(());
            }
            self.pos = text_end + 2 + if left_trim { 2 } else { 0 };
            self.push(Tok::Open, text_end);
            if self.lex_comment(text_end)? {
                continue;
            }
            self.lex_action()?;
        }
    }

    /// Lexes `/* ... */` directly after the delimiter; returns whether it was a comment.
    fn lex_comment(&mut self, open: usize) -> Result<bool, LexError> {
        if !self.rest().starts_with("/*") {
            return Ok(false);
        }
        let Some(end) = self.rest().find("*/") else {
            return Err((open, "unclosed comment".to_string()));
        };
        self.pos += end + 2;
        self.tokens.pop();
        let rest = self.rest();
        if rest.starts_with("}}") {
            self.pos += 2;
        } else if rest.starts_with(is_space) && rest.trim_start_matches(is_space).starts_with("-}}") {
            let spaces = rest.len() - rest.trim_start_matches(is_space).len();
            if spaces == 0 {
                return Err((open, "comment ends before closing delimiter".to_string()));
            }
            self.pos += spaces + 3;
            self.trim_next_text = true;
        } else {
            return Err((open, "comment ends before closing delimiter".to_string()));
        }
        Ok(true)
    }

    fn lex_action(&mut self) -> Result<(), LexError> {
        loop {
            let rest = self.rest();
            let start = self.pos;
            let Some(c) = rest.chars().next() else {
                return Err((start, "unclosed action".to_string()));
            };
            if is_space(c) {
                let n = rest.len() - rest.trim_start_matches(is_space).len();
                if rest[n..].starts_with("-}}") {
                    self.pos += n + 3;
                    self.push(Tok::Close, start + n);
                    self.trim_next_text = true;
                    return Ok(());
                }
                self.pos += n;
                self.push(Tok::Space, start);
                continue;
            }
            if rest.starts_with("}}") {
                self.pos += 2;
                self.push(Tok::Close, start);
                return Ok(());
            }
            match c {
                '|' => self.single(Tok::Pipe),
                '(' => self.single(Tok::LParen),
                ')' => self.single(Tok::RParen),
                ',' => self.single(Tok::Comma),
                '=' => self.single(Tok::Assign),
                ':' => {
                    if !rest.starts_with(":=") {
                        return Err((start, "expected :=".to_string()));
                    }
                    self.pos += 2;
                    self.push(Tok::Declare, start);
                }
                '"' => self.lex_quoted()?,
                '`' => self.lex_raw_quoted()?,
                '\'' => self.lex_char()?,
                '$' => {
                    let n = 1 + rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
                    self.pos += n;
                    self.push(Tok::Variable(rest[..n].to_string()), start);
                }
                '.' => self.lex_dot()?,
                '+' | '-' | '0'..='9' => self.lex_number()?,
                c if is_alnum(c) => self.lex_word(),
                other => {
                    return Err((start, format!("unrecognized character in action: {other:?}")));
                }
            }
        }
    }

    fn single(&mut self, kind: Tok) {
        let start = self.pos;
        self.pos += 1;
        self.push(kind, start);
    }

    /// A raw string between backquotes (carriage returns dropped, as Go does).
    fn lex_raw_quoted(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let rest = self.rest();
        let Some(end) = rest[1..].find('`') else {
            return Err((start, "unterminated raw quoted string".to_string()));
        };
        let text = rest[1..1 + end].replace('\r', "");
        self.pos += end + 2;
        self.push(Tok::Str(text, rest[..end + 2].to_string()), start);
        Ok(())
    }

    /// After a `.`: a number (`.5`), a field (`.name`), or the dot alone.
    fn lex_dot(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let rest = self.rest();
        let next = rest[1..].chars().next();
        if next.is_some_and(|d| d.is_ascii_digit()) {
            self.lex_number()?;
        } else if next.is_some_and(is_alnum) {
            let n = rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
            self.pos += 1 + n;
            self.push(Tok::Field(rest[1..1 + n].to_string()), start);
        } else {
            self.single(Tok::Dot);
        }
        Ok(())
    }

    /// A word: `true`, `false`, `nil`, a keyword, or a function's name.
    fn lex_word(&mut self) {
        let start = self.pos;
        let rest = self.rest();
        let n = rest.len() - rest.trim_start_matches(is_alnum).len();
        let word = &rest[..n];
        self.pos += n;
        let kind = match word {
            "true" => Tok::Bool(true),
            "false" => Tok::Bool(false),
            "nil" => Tok::Nil,
            _ => match KEYWORDS.iter().find(|k| **k == word) {
                Some(k) => Tok::Keyword(k),
                None => Tok::Ident(word.to_string()),
            },
        };
        self.push(kind, start);
    }

    fn lex_number(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut i = 0;
        if matches!(bytes.first(), Some(b'+' | b'-')) {
            i += 1;
        }
        let hex = rest[i..].starts_with("0x") || rest[i..].starts_with("0X");
        while let Some(&b) = bytes.get(i) {
            let exp_sign = matches!(b, b'+' | b'-')
                && i > 0
                && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
                && !(hex && matches!(bytes[i - 1], b'e' | b'E'));
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exp_sign {
                i += 1;
            } else {
                break;
            }
        }
        let text = &rest[..i];
        if text == "+" || text == "-" {
            return Err((start, format!("bad number syntax: {text:?}")));
        }
        self.pos += i;
        self.push(Tok::Number(text.to_string()), start);
        Ok(())
    }

    fn lex_quoted(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let rest = self.rest();
        let mut out = String::new();
        let mut chars = rest.char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    self.push(Tok::Str(out, rest[..i + 1].to_string()), start);
                    return Ok(());
                }
                '\n' => break,
                '\\' => {
                    let decoded = unescape(&mut chars, '"')
                        .ok_or((start, "invalid syntax in quoted string".to_string()))?;
                    if let Some(ch) = decoded {
                        out.push(ch);
                    }
                }
                c => out.push(c),
            }
        }
        Err((start, "unterminated quoted string".to_string()))
    }

    fn lex_char(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let rest = self.rest();
        let mut chars = rest.char_indices().skip(1);
        let bad = || (start, "malformed character constant".to_string());
        let value = match chars.next() {
            Some((_, '\\')) => unescape(&mut chars, '\'').flatten().ok_or_else(bad)?,
            Some((_, c)) if c != '\'' && c != '\n' => c,
            _ => return Err(bad()),
        };
        match chars.next() {
            Some((i, '\'')) => {
                self.pos += i + 1;
                self.push(
                    Tok::Char(i64::from(u32::from(value)), rest[..i + 1].to_string()),
                    start,
                );
                Ok(())
            }
            _ => Err(bad()),
        }
    }
}

/// Decodes one escape after a backslash (Go `strconv.UnquoteChar`); `Some(None)` never occurs
/// for valid input but keeps the signature open for skipped escapes.
fn unescape(chars: &mut impl Iterator<Item = (usize, char)>, quote: char) -> Option<Option<char>> {
    let (_, c) = chars.next()?;
    let simple = match c {
        'a' => Some('\x07'),
        'b' => Some('\x08'),
        'f' => Some('\x0c'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\x0b'),
        '\\' => Some('\\'),
        c if c == quote => Some(c),
        _ => None,
    };
    if let Some(ch) = simple {
        return Some(Some(ch));
    }
    let (digits, radix) = match c {
        'x' => (2, 16),
        'u' => (4, 16),
        'U' => (8, 16),
        '0'..='7' => (2, 8),
        _ => return None,
    };
    let mut value = if radix == 8 { c.to_digit(8)? } else { 0 };
    for _ in 0..digits {
        let (_, d) = chars.next()?;
        value = value.checked_mul(radix)?.checked_add(d.to_digit(radix)?)?;
    }
    if radix == 8 && value > 255 {
        return None;
    }
    char::from_u32(value).map(Some)
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
