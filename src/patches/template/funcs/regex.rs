//! sprig regular-expression functions (RE2 syntax, compiled with size limits).

use regex::{NoExpand, Regex, RegexBuilder};

use super::super::value::Value;
use super::{fixed, int_arg, str_arg, Ctx, Func, Param};

use Param::{Int, Str};

/// Largest compiled program (and lazy DFA cache) of a template regex.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Finds a sprig regex function.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "regexMatch" => fixed(&[Str, Str], |ctx, a| {
            Ok(Value::Bool(
                compile(ctx, str_arg(&a, 0)).is_ok_and(|re| re.is_match(str_arg(&a, 1))),
            ))
        }),
        "mustRegexMatch" => fixed(&[Str, Str], |ctx, a| {
            Ok(Value::Bool(
                compile(ctx, str_arg(&a, 0))?.is_match(str_arg(&a, 1)),
            ))
        }),
        "regexFind" | "mustRegexFind" => fixed(&[Str, Str], |ctx, a| {
            let re = compile(ctx, str_arg(&a, 0))?;
            Ok(Value::Str(
                re.find(str_arg(&a, 1))
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
            ))
        }),
        "regexFindAll" | "mustRegexFindAll" => fixed(&[Str, Str, Int], |ctx, a| {
            let re = compile(ctx, str_arg(&a, 0))?;
            let limit = usize::try_from(int_arg(&a, 2)).unwrap_or(usize::MAX);
            let mut found = Vec::new();
            for m in re.find_iter(str_arg(&a, 1)).take(limit) {
                ctx.charge(1)?;
                found.push(m.as_str().to_string());
            }
            Ok(Value::str_list(found))
        }),
        "regexReplaceAll" | "mustRegexReplaceAll" => fixed(&[Str, Str, Str], |ctx, a| {
            let re = compile(ctx, str_arg(&a, 0))?;
            let out = re.replace_all(str_arg(&a, 1), str_arg(&a, 2)).into_owned();
            ctx.check_len(out.len())?;
            Ok(Value::Str(out))
        }),
        "regexReplaceAllLiteral" | "mustRegexReplaceAllLiteral" => fixed(&[Str, Str, Str], |ctx, a| {
            let re = compile(ctx, str_arg(&a, 0))?;
            let out = re
                .replace_all(str_arg(&a, 1), NoExpand(str_arg(&a, 2)))
                .into_owned();
            ctx.check_len(out.len())?;
            Ok(Value::Str(out))
        }),
        "regexSplit" | "mustRegexSplit" => fixed(&[Str, Str, Int], |ctx, a| {
            let re = compile(ctx, str_arg(&a, 0))?;
            let parts = split(&re, str_arg(&a, 0), str_arg(&a, 1), int_arg(&a, 2));
            ctx.charge(parts.len())?;
            Ok(Value::str_list(parts))
        }),
        "regexQuoteMeta" => fixed(&[Str], |_, a| Ok(Value::Str(regex::escape(str_arg(&a, 0))))),
        _ => return None,
    })
}

fn compile(ctx: &mut Ctx<'_>, pattern: &str) -> Result<Regex, String> {
    ctx.charge(pattern.len() / 8 + 1)?;
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail
                .lines()
                .last()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
            // Go quotes the pattern with backquotes when it can.
            let can_backquote = !pattern.chars().any(|c| c == '`' || (c.is_control() && c != '\t'));
            let quoted = if can_backquote {
                format!("`{pattern}`")
            } else {
                super::super::format::quote(pattern)
            };
            format!("regexp: Compile({quoted}): error parsing regexp: {last}")
        })
}

/// Go's `Regexp.Split`.
fn split(re: &Regex, pattern: &str, text: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !pattern.is_empty() && text.is_empty() {
        return vec![String::new()];
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let mut parts = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for m in re.find_iter(text).take(limit) {
        if n > 0 && parts.len() as i64 == n - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            parts.push(text[beg..end].to_string());
        }
        beg = m.end();
    }
    if end != text.len() {
        parts.push(text[beg..].to_string());
    }
    parts
}
