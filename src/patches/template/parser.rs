//! Builds the template tree from tokens: text, actions, control structures and `define`s,
//! checking functions and variables like Go's parser (pipelines are in `operands`).

use std::collections::BTreeMap;

use super::ast::{Branch, BranchKind, List, Node};
use super::lexer::{Tok, Token};

/// Deepest nesting of actions and parentheses accepted.
const MAX_PARSE_DEPTH: usize = 100;

/// A parse error: byte offset and message.
pub(crate) type ParseError = (usize, String);

/// A parsed template set: the main body and the `define`d templates.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub main: List,
    pub defines: BTreeMap<String, List>,
}

/// How a list ended.
enum Terminator {
    Eof,
    End,
    Else(usize),
}

/// Parses tokens; `is_func` tells whether a function name exists.
pub(crate) fn parse(tokens: &[Token], is_func: &dyn Fn(&str) -> bool) -> Result<Parsed, ParseError> {
    let mut p = Parser {
        toks: tokens,
        i: 0,
        vars: vec!["$".to_string()],
        range_depth: 0,
        depth: 0,
        defines: BTreeMap::new(),
        is_func,
    };
    let (main, end) = p.list(true)?;
    match end {
        Terminator::Eof => {}
        Terminator::End => return Err((p.pos(), "unexpected {{end}}".to_string())),
        Terminator::Else(pos) => return Err((pos, "unexpected {{else}}".to_string())),
    }
    Ok(Parsed {
        main,
        defines: p.defines,
    })
}

/// Whether a body holds nothing but whitespace (Go lets such a body be redefined).
fn is_empty_list(list: &List) -> bool {
    list.iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

/// Parser state (shared with the pipeline parser in `operands`).
pub(super) struct Parser<'a> {
    pub(super) toks: &'a [Token],
    pub(super) i: usize,
    pub(super) vars: Vec<String>,
    pub(super) range_depth: usize,
    pub(super) depth: usize,
    pub(super) defines: BTreeMap<String, List>,
    pub(super) is_func: &'a dyn Fn(&str) -> bool,
}

/// How a token reads in error messages.
pub(super) fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Text(_) => "text".into(),
        Tok::Open => "\"{{\"".into(),
        Tok::Close => "\"}}\"".into(),
        Tok::Space => "space".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::LParen => "\"(\"".into(),
        Tok::RParen => "\")\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        Tok::Str(_, text) | Tok::Char(_, text) => text.clone(),
        Tok::Number(n) => format!("<{n}>"),
        Tok::Bool(b) => format!("<{b}>"),
        Tok::Nil => "<nil>".into(),
        Tok::Dot => "<.>".into(),
        Tok::Field(f) => format!("<.{f}>"),
        Tok::Variable(v) => format!("<{v}>"),
        Tok::Ident(i) => format!("<{i}>"),
        Tok::Keyword(k) => format!("<{k}>"),
        Tok::Eof => "EOF".into(),
    }
}

impl Parser<'_> {
    pub(super) fn peek(&self) -> &Tok {
        self.toks.get(self.i).map_or(&Tok::Eof, |t| &t.kind)
    }

    pub(super) fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(0, |t| t.pos)
    }

    pub(super) fn next(&mut self) -> Tok {
        let tok = self.peek().clone();
        if self.i < self.toks.len() {
            self.i += 1;
        }
        tok
    }

    pub(super) fn skip_space(&mut self) {
        while *self.peek() == Tok::Space {
            self.i += 1;
        }
    }

    pub(super) fn next_non_space(&mut self) -> Tok {
        self.skip_space();
        self.next()
    }

    pub(super) fn unexpected<T>(&self, tok: &Tok, context: &str) -> Result<T, ParseError> {
        Err((self.pos(), format!("unexpected {} in {context}", describe(tok))))
    }

    pub(super) fn expect_close(&mut self, context: &str) -> Result<(), ParseError> {
        match self.next_non_space() {
            Tok::Close => Ok(()),
            tok => self.unexpected(&tok, context),
        }
    }

    pub(super) fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err((
                self.pos(),
                format!("template nesting deeper than {MAX_PARSE_DEPTH}"),
            ));
        }
        Ok(())
    }

    /// Parses nodes until EOF, `{{end}}` or `{{else}}`.
    fn list(&mut self, top: bool) -> Result<(List, Terminator), ParseError> {
        let mut list = List::new();
        loop {
            match self.next() {
                Tok::Eof => return Ok((list, Terminator::Eof)),
                Tok::Text(t) => list.push(Node::Text(t)),
                Tok::Open => {
                    self.skip_space();
                    let pos = self.pos();
                    match self.peek().clone() {
                        Tok::Keyword("end") => {
                            self.i += 1;
                            self.expect_close("end")?;
                            return Ok((list, Terminator::End));
                        }
                        Tok::Keyword("else") => {
                            self.i += 1;
                            return Ok((list, Terminator::Else(pos)));
                        }
                        Tok::Keyword("define") if top => {
                            self.i += 1;
                            self.define()?;
                        }
                        _ => list.push(self.action()?),
                    }
                }
                tok => return self.unexpected(&tok, "input"),
            }
        }
    }

    fn action(&mut self) -> Result<Node, ParseError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Keyword(kw @ ("if" | "range" | "with")) => {
                self.i += 1;
                let kind = match kw {
                    "if" => BranchKind::If,
                    "range" => BranchKind::Range,
                    _ => BranchKind::With,
                };
                self.control(kind)
            }
            Tok::Keyword("template") => {
                self.i += 1;
                self.template_call("template")
            }
            Tok::Keyword("block") => {
                self.i += 1;
                let node = self.template_call("block")?;
                if let Node::Template { name, .. } = &node {
                    let name = name.clone();
                    let body = self.body(pos)?;
                    self.add_define(pos, name, body)?;
                }
                Ok(node)
            }
            Tok::Keyword(kw @ ("break" | "continue")) => {
                self.i += 1;
                self.expect_close(kw)?;
                if self.range_depth == 0 {
                    return Err((pos, format!("{{{{{kw}}}}} outside {{{{range}}}}")));
                }
                Ok(if kw == "break" {
                    Node::Break
                } else {
                    Node::Continue
                })
            }
            Tok::Keyword(kw) => Err((pos, format!("unexpected <{kw}> in command"))),
            _ => {
                let pipe = self.pipeline("command", false)?;
                Ok(Node::Action(pipe))
            }
        }
    }

    /// Parses a `define`/`block` body up to its `{{end}}`, with only `$` in scope.
    fn body(&mut self, pos: usize) -> Result<List, ParseError> {
        let saved = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        self.enter()?;
        let (body, end) = self.list(false)?;
        self.depth -= 1;
        self.vars = saved;
        match end {
            Terminator::End => Ok(body),
            Terminator::Else(at) => Err((at, "unexpected {{else}}".to_string())),
            Terminator::Eof => Err((pos, "unexpected EOF".to_string())),
        }
    }

    fn define(&mut self) -> Result<(), ParseError> {
        let pos = self.pos();
        let name = match self.next_non_space() {
            Tok::Str(s, _) => s,
            tok => return self.unexpected(&tok, "define clause"),
        };
        self.expect_close("define clause")?;
        let body = self.body(pos)?;
        self.add_define(pos, name, body)
    }

    fn add_define(&mut self, pos: usize, name: String, body: List) -> Result<(), ParseError> {
        match self.defines.get(&name) {
            Some(existing) if !is_empty_list(existing) && !is_empty_list(&body) => {
                Err((pos, format!("template: multiple definition of template {name:?}")))
            }
            Some(existing) if !is_empty_list(existing) => Ok(()),
            _ => {
                self.defines.insert(name, body);
                Ok(())
            }
        }
    }

    /// `{{template "name" [pipeline]}}`; the node sits at the name, as in Go.
    fn template_call(&mut self, context: &str) -> Result<Node, ParseError> {
        self.skip_space();
        let pos = self.pos();
        let name = match self.next() {
            Tok::Str(s, _) => s,
            tok => return self.unexpected(&tok, &format!("{context} clause")),
        };
        self.skip_space();
        let pipe = if *self.peek() == Tok::Close {
            self.i += 1;
            None
        } else {
            Some(self.pipeline(context, false)?)
        };
        Ok(Node::Template { pos, name, pipe })
    }

    fn control(&mut self, kind: BranchKind) -> Result<Node, ParseError> {
        let context = match kind {
            BranchKind::If => "if",
            BranchKind::Range => "range",
            BranchKind::With => "with",
        };
        self.enter()?;
        let mark = self.vars.len();
        let pipe = self.pipeline(context, kind == BranchKind::Range)?;
        if kind == BranchKind::Range {
            self.range_depth += 1;
        }
        let (list, end) = self.list(false)?;
        if kind == BranchKind::Range {
            self.range_depth -= 1;
        }
        let else_list = match end {
            Terminator::Eof => return Err((self.pos(), "unexpected EOF".to_string())),
            Terminator::End => None,
            Terminator::Else(pos) => {
                self.skip_space();
                // Only `{{if}}` chains `{{else if}}` and only `{{with}}` chains `{{else with}}`.
                let chained = match (kind, self.peek()) {
                    (BranchKind::If, Tok::Keyword("if")) => Some(BranchKind::If),
                    (BranchKind::With, Tok::Keyword("with")) => Some(BranchKind::With),
                    _ => None,
                };
                if let Some(inner) = chained {
                    self.i += 1;
                    Some(vec![self.control(inner)?])
                } else {
                    self.expect_close("else")?;
                    let (else_list, end) = self.list(false)?;
                    match end {
                        Terminator::End => Some(else_list),
                        Terminator::Else(_) => return Err((pos, "expected end; found {{else}}".to_string())),
                        Terminator::Eof => return Err((self.pos(), "unexpected EOF".to_string())),
                    }
                }
            }
        };
        self.vars.truncate(mark);
        self.depth -= 1;
        Ok(Node::Branch(Box::new(Branch {
            kind,
            pipe,
            list,
            else_list,
        })))
    }
}
