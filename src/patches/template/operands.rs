//! Parses pipelines, commands and operands (the inside of an action).

use super::ast::{Arg, Command, Pipeline, Term};
use super::lexer::Tok;
use super::parser::{ParseError, Parser};

impl Parser<'_> {
    /// Parses a pipeline up to `}}` (or `)` when `in_paren`), including declarations.
    pub(super) fn pipeline(&mut self, context: &str, is_range: bool) -> Result<Pipeline, ParseError> {
        self.pipeline_until(context, is_range, false)
    }

    fn pipeline_until(
        &mut self,
        context: &str,
        is_range: bool,
        in_paren: bool,
    ) -> Result<Pipeline, ParseError> {
        self.skip_space();
        let pos = self.pos();
        let mut pipe = Pipeline {
            pos,
            decl: Vec::new(),
            is_assign: false,
            cmds: Vec::new(),
        };
        if !in_paren {
            self.declarations(&mut pipe, context, is_range)?;
        }
        loop {
            self.skip_space();
            match self.peek() {
                Tok::Close if !in_paren => {
                    self.i += 1;
                    break;
                }
                Tok::RParen if in_paren => {
                    self.i += 1;
                    break;
                }
                Tok::Close | Tok::Eof => {
                    return Err((
                        self.pos(),
                        if in_paren {
                            "unclosed left paren".into()
                        } else {
                            "unclosed action".into()
                        },
                    ));
                }
                _ => {
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                    if *self.peek() == Tok::Pipe {
                        self.i += 1;
                    }
                }
            }
        }
        if pipe.cmds.is_empty() {
            return Err((pos, format!("missing value for {context}")));
        }
        for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
            if let Some(first) = cmd.args.first() {
                if matches!(
                    first.term,
                    Term::Bool(_) | Term::Dot | Term::Nil | Term::Int(..) | Term::Float(..) | Term::Str(..)
                ) {
                    return Err((
                        cmd.pos,
                        format!("non executable command in pipeline stage {}", i + 1),
                    ));
                }
            }
        }
        Ok(pipe)
    }

    fn declarations(&mut self, pipe: &mut Pipeline, context: &str, is_range: bool) -> Result<(), ParseError> {
        let start = self.i;
        let Tok::Variable(first) = self.peek().clone() else {
            return Ok(());
        };
        self.i += 1;
        self.skip_space();
        match self.peek().clone() {
            tok @ (Tok::Declare | Tok::Assign) => {
                self.i += 1;
                self.declare(pipe, first, tok == Tok::Assign)
            }
            Tok::Comma if is_range => {
                self.i += 1;
                let Tok::Variable(second) = self.next_non_space() else {
                    return Err((self.pos(), "range can only initialize variables".to_string()));
                };
                match self.next_non_space() {
                    tok @ (Tok::Declare | Tok::Assign) => {
                        self.declare(pipe, first, tok == Tok::Assign)?;
                        self.declare(pipe, second, tok == Tok::Assign)
                    }
                    tok => self.unexpected(&tok, context),
                }
            }
            Tok::Comma => Err((self.pos(), format!("too many declarations in {context}"))),
            _ => {
                self.i = start;
                Ok(())
            }
        }
    }

    fn declare(&mut self, pipe: &mut Pipeline, name: String, assign: bool) -> Result<(), ParseError> {
        if assign && !self.vars.contains(&name) {
            return Err((self.pos(), format!("undefined variable {name:?}")));
        }
        pipe.is_assign = assign;
        if !assign {
            self.vars.push(name.clone());
        }
        pipe.decl.push(name);
        Ok(())
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        let pos = self.pos();
        let mut args = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Tok::Close | Tok::RParen | Tok::Pipe | Tok::Eof => break,
                _ => {}
            }
            let arg = self.operand()?;
            args.push(arg);
            match self.peek() {
                Tok::Space | Tok::Close | Tok::RParen | Tok::Pipe => {}
                tok => {
                    let tok = tok.clone();
                    return self.unexpected(&tok, "operand");
                }
            }
        }
        if args.is_empty() {
            return Err((pos, "empty command".to_string()));
        }
        Ok(Command { pos, args })
    }

    fn operand(&mut self) -> Result<Arg, ParseError> {
        let pos = self.pos();
        let mut term = self.term()?;
        let mut pos = pos;
        let mut chain = Vec::new();
        while let Tok::Field(f) = self.peek().clone() {
            // Go locates a field chain at its first chained field.
            if chain.is_empty() {
                pos = self.pos();
            }
            self.i += 1;
            chain.push(f);
        }
        if !chain.is_empty() {
            term = match term {
                Term::Field(mut fields) => {
                    fields.extend(chain);
                    Term::Field(fields)
                }
                Term::Variable(name, mut fields) => {
                    fields.extend(chain);
                    Term::Variable(name, fields)
                }
                Term::Pipe(pipe, mut fields) => {
                    fields.extend(chain);
                    Term::Pipe(pipe, fields)
                }
                other => return Err((pos, format!("unexpected . after term {:?}", other.to_string()))),
            };
        }
        Ok(Arg { pos, term })
    }

    fn term(&mut self) -> Result<Term, ParseError> {
        let pos = self.pos();
        Ok(match self.next() {
            Tok::Ident(name) => {
                if !(self.is_func)(&name) {
                    return Err((pos, format!("function {name:?} not defined")));
                }
                Term::Func(name)
            }
            Tok::Dot => Term::Dot,
            Tok::Nil => Term::Nil,
            Tok::Variable(name) => {
                if !self.vars.contains(&name) {
                    return Err((pos, format!("undefined variable {name:?}")));
                }
                Term::Variable(name, Vec::new())
            }
            Tok::Field(f) => Term::Field(vec![f]),
            Tok::Bool(b) => Term::Bool(b),
            Tok::Char(c, text) => Term::Int(c, text),
            Tok::Number(text) => number(&text).ok_or((pos, format!("bad number syntax: {text:?}")))?,
            Tok::Str(s, text) => Term::Str(s, text),
            Tok::LParen => {
                self.enter()?;
                let pipe = self.pipeline_until("parenthesized pipeline", false, true)?;
                self.depth -= 1;
                Term::Pipe(Box::new(pipe), Vec::new())
            }
            tok => {
                self.i -= 1;
                return self.unexpected(&tok, "operand");
            }
        })
    }
}

/// Parses a Go number literal: integers (with base prefixes and `_`) or floats.
fn number(text: &str) -> Option<Term> {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let clean = body.replace('_', "");
    let lower = clean.to_ascii_lowercase();
    let int = if let Some(hex) = lower.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else if !lower.is_empty() && lower.bytes().all(|b| b.is_ascii_digit()) {
        lower.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Some(Term::Int(if neg { -i } else { i }, text.to_string()));
    }
    if lower.starts_with("0x") || lower.contains("inf") || lower.contains("nan") {
        return None;
    }
    let f: f64 = lower.parse().ok()?;
    Some(Term::Float(if neg { -f } else { f }, text.to_string()))
}
