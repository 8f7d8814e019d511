//! Limits checked on a CEL expression's text before any parser sees it, with the figures and
//! words of the API server's CEL parser (cel-go): at most 100,000 code points, and a nesting depth
//! of at most 250. The parser we use recurses once per nesting level and per chained operator,
//! so an expression past these limits could exhaust the stack; this scan is linear and iterative.

/// The longest expression, in Unicode code points (cel-go's `expressionSizeCodePointLimit`).
pub const MAX_EXPRESSION_CODE_POINTS: usize = 100_000;
/// The deepest expression (cel-go's default `maxRecursionDepth`).
pub const MAX_RECURSION_DEPTH: usize = 250;

/// Why an expression is refused before parsing, worded as cel-go words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitError {
    /// The expression has more code points than the parser accepts.
    TooLong {
        /// The expression's size in code points.
        size: usize,
    },
    /// Brackets, selections and operator chains nest deeper than the parser accepts.
    TooDeep,
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitError::TooLong { size } => write!(
                f,
                "expression code point size exceeds limit: size: {size}, limit {MAX_EXPRESSION_CODE_POINTS}"
            ),
            LimitError::TooDeep => write!(f, "expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"),
        }
    }
}

/// Checks `expression` against the size and depth limits.
///
/// Depth is counted along the path from the root to the deepest token, the way the parser
/// nests: each open bracket (`(`, `[`, `{`) adds one level; within a level, each link of a chain
/// of member selections (`.`), of multiplicative, additive or relational operators, or of
/// conditionals (`?`) adds one, and a looser operator ends the tighter chains before it (in
/// `a.b.c == d.e` the selections do not add up). `&&` and `||` chains are balanced by the parser
/// and add nothing; a comma starts a sibling and ends every chain of its level.
pub fn check_expression(expression: &str) -> Result<(), LimitError> {
    let size = expression.chars().count();
    if size > MAX_EXPRESSION_CODE_POINTS {
        return Err(LimitError::TooLong { size });
    }
    let mut scan = Scan::default();
    let bytes = expression.as_bytes();
    let mut i = 0;
    let mut operand_before = false;
    while i < bytes.len() {
        let byte = bytes[i];
        let (next, operand) = match byte {
            b'"' | b'\'' => (skip_string(bytes, i), true),
            b'(' | b'[' | b'{' => {
                scan.open()?;
                (i + 1, false)
            }
            b')' | b']' | b'}' => {
                scan.close();
                (i + 1, true)
            }
            b',' => {
                scan.sibling();
                (i + 1, false)
            }
            b'.' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => (i + 1, true),
            b'.' => {
                scan.link(Class::Member)?;
                (i + 1, false)
            }
            b'?' | b'+' | b'*' | b'/' | b'%' | b'<' | b'>' | b'=' | b'!' | b'&' | b'|' | b'-' => {
                let width = operator_width(bytes, i);
                if let Some(class) = binary_class(&bytes[i..i + width], operand_before) {
                    scan.link(class)?;
                }
                (i + width, false)
            }
            b if b.is_ascii_whitespace() => (i + 1, operand_before),
            _ => (i + 1, true),
        };
        i = next;
        operand_before = operand;
    }
    Ok(())
}

/// Binary operators by how tightly they bind, loosest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Conditional,
    Logical,
    Relational,
    Additive,
    Multiplicative,
    Member,
}

const CLASSES: usize = 6;

/// The open levels: for each, the depth of the path when it opened and the chains it
/// interrupted; and the chains of the innermost level.
#[derive(Default)]
struct Scan {
    levels: Vec<(usize, [usize; CLASSES])>,
    chains: [usize; CLASSES],
}

impl Scan {
    fn depth(&self) -> usize {
        let base = self.levels.last().map_or(0, |(depth, _)| *depth);
        let logical = Class::Logical as usize;
        base + self
            .chains
            .iter()
            .enumerate()
            .filter(|(class, _)| *class != logical)
            .map(|(_, links)| links)
            .sum::<usize>()
    }

    fn open(&mut self) -> Result<(), LimitError> {
        let depth = self.depth() + 1;
        if depth > MAX_RECURSION_DEPTH {
            return Err(LimitError::TooDeep);
        }
        self.levels.push((depth, self.chains));
        self.chains = [0; CLASSES];
        Ok(())
    }

    fn close(&mut self) {
        if let Some((_, chains)) = self.levels.pop() {
            self.chains = chains;
        }
    }

    fn sibling(&mut self) {
        self.chains = [0; CLASSES];
    }

    fn link(&mut self, class: Class) -> Result<(), LimitError> {
        self.chains[class as usize] += 1;
        for tighter in &mut self.chains[class as usize + 1..] {
            *tighter = 0;
        }
        if self.depth() > MAX_RECURSION_DEPTH {
            return Err(LimitError::TooDeep);
        }
        Ok(())
    }
}

/// The index just past the string literal starting at `start` (single, double or triple quoted;
/// a backslash escapes the next byte except in raw strings). An unterminated literal runs to the
/// end; the parser reports it.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let raw = start > 0 && matches!(bytes[start - 1], b'r' | b'R');
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if !raw => i += 2,
            b if b == quote && !triple => return i + 1,
            b if b == quote && bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) => {
                return i + 3
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// How many bytes the operator at `i` spans (`==`, `!=`, `<=`, `>=`, `&&`, `||` are two).
fn operator_width(bytes: &[u8], i: usize) -> usize {
    match (bytes[i], bytes.get(i + 1)) {
        (b'=' | b'!' | b'<' | b'>', Some(b'=')) | (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
        _ => 1,
    }
}

/// The class of a binary operator, or `None` for a unary one (`!`, or a sign with no operand
/// before it).
fn binary_class(operator: &[u8], operand_before: bool) -> Option<Class> {
    match operator {
        b"!" => None,
        b"-" | b"+" if !operand_before => None,
        b"?" => Some(Class::Conditional),
        b"&&" | b"||" => Some(Class::Logical),
        b"+" | b"-" => Some(Class::Additive),
        b"*" | b"/" | b"%" => Some(Class::Multiplicative),
        _ => Some(Class::Relational),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_rules_pass() {
        for rule in [
            "self.x == 1",
            "self.all(x, x.matches('^[a-z]+$') && size(x) < 10)",
            "has(self.a) ? self.a.b.c > 0 : true",
            "self.items.map(i, {'k': [i, 1.5, -2]}).size() == 3",
            r#"'a(b[c{' == "))" && r'\' != '''('''"#,
        ] {
            assert_eq!(check_expression(rule), Ok(()), "{rule}");
        }
    }

    #[test]
    fn long_expressions_are_refused_with_their_size() {
        let rule = format!("self == '{}'", "a".repeat(MAX_EXPRESSION_CODE_POINTS));
        let error = check_expression(&rule).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("expression code point size exceeds limit: size: 100010, limit 100000")
        );
    }

    #[test]
    fn code_points_not_bytes_are_counted() {
        let rule = format!("self == '{}'", "é".repeat(MAX_EXPRESSION_CODE_POINTS - 20));
        assert_eq!(check_expression(&rule), Ok(()));
    }

    #[test]
    fn deep_nesting_of_every_kind_is_refused() {
        let deep = MAX_RECURSION_DEPTH + 1;
        for rule in [
            format!("{}1{}", "(".repeat(deep), ")".repeat(deep)),
            format!("{}1{}", "[".repeat(deep), "]".repeat(deep)),
            format!("{}1{}", "{1:".repeat(deep), "}".repeat(deep)),
            format!("{}1{}", "int(".repeat(deep), ")".repeat(deep)),
            format!("self == {}", vec!["1"; deep].join("+")),
            format!("self{} == 1", ".a".repeat(deep)),
            format!("{}1", "true ? 1 : ".repeat(deep)),
            format!("1{}", " - 1".repeat(deep)),
        ] {
            assert_eq!(
                check_expression(&rule),
                Err(LimitError::TooDeep),
                "{}",
                &rule[..40]
            );
        }
    }

    #[test]
    fn depth_adds_up_along_a_path_but_not_across_siblings() {
        let half = MAX_RECURSION_DEPTH / 2;
        let nested_chain = format!(
            "{}{}{}",
            "(".repeat(half),
            vec!["1"; half + 2].join("+"),
            ")".repeat(half)
        );
        assert_eq!(check_expression(&nested_chain), Err(LimitError::TooDeep));
        let siblings = format!("[{}]", vec![vec!["1"; 200].join("+"); 20].join(", "));
        assert_eq!(check_expression(&siblings), Ok(()));
    }

    #[test]
    fn brackets_and_operators_inside_strings_do_not_count() {
        let rule = format!(
            "self == '{}' && self != \"{}\"",
            "(".repeat(1000),
            "+".repeat(1000)
        );
        assert_eq!(check_expression(&rule), Ok(()));
        let triple = format!("self == '''{}'''", "'(".repeat(500));
        assert_eq!(check_expression(&triple), Ok(()));
    }

    #[test]
    fn unary_operators_and_decimal_points_do_not_nest() {
        let rule = format!(
            "{}true && self > 1.5 && self > -{}1",
            "!".repeat(1000),
            "-".repeat(1000)
        );
        assert_eq!(check_expression(&rule), Ok(()));
    }

    #[test]
    fn logical_chains_and_their_terms_do_not_add_up() {
        let rule = vec!["self.a.b.c == 1 + 2 * 3"; 3_000].join(" && ");
        assert_eq!(check_expression(&rule), Ok(()));
        let rule = format!("self{} == 1", ".a".repeat(MAX_RECURSION_DEPTH - 1));
        assert_eq!(check_expression(&rule), Ok(()));
    }
}
