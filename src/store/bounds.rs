//! Manifest text checked for its nesting depth and its number of values *as it is parsed*, in
//! one linear pass, before the full reader decodes it: the full reader (libyaml, through
//! serde_yaml_ng) loads a whole document before its own depth limit applies and takes time
//! quadratic in flow nesting (a 200 KB `[[[...]]]` took a minute), and its events and the
//! decoded values cost some 50 times the text. This pass stops at the first value past a bound.

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

/// Deepest nesting of mappings and sequences read (serde_yaml_ng's own limit, and the API
/// server's JSON decoder nests no deeper than Go's 10,000; real manifests nest under 30).
pub const MAX_DEPTH: usize = 128;

/// Most values (mappings, sequences, keys and scalars, aliases counted as what they repeat) one
/// command reads from all its manifests together. Each costs some 130 bytes decoded, so this
/// bounds the decoded manifests to about 512 MiB; 10,000 Clusters hold some 300,000.
pub const MAX_VALUES: usize = 4_000_000;

/// The values a command may still read; shared by every file it reads.
#[derive(Debug)]
pub struct Budget {
    left: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { left: MAX_VALUES }
    }
}

/// Why a text was refused before it was decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Bound {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("document {document}: nested deeper than {MAX_DEPTH} levels at line {line} column {column}")]
    TooDeep {
        /// 1-based document.
        document: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// More values than the budget left.
    #[error(
        "document {document}: more than {MAX_VALUES} values in the manifests read (at line {line}); \
         split the input and run the command on each part"
    )]
    TooMany {
        /// 1-based document.
        document: usize,
        /// 1-based line.
        line: usize,
    },
    /// Not YAML, and too deeply bracketed to hand to the full reader for its message.
    #[error("document {document}: {message}")]
    Syntax {
        /// 1-based document.
        document: usize,
        /// The parser's message, with its position.
        message: String,
    },
}

/// Checks `text` against [`MAX_DEPTH`] and takes its values from `budget`. A syntax error is
/// left to the full reader (which words it as kubectl's reader does) when the text after it
/// cannot nest past the bound; otherwise it is the answer.
pub fn check(text: &str, budget: &mut Budget) -> Result<(), Bound> {
    let mut parser = Parser::new_from_str(text);
    let mut walk = Walk::default();
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(next) => next,
            // The scanner reads ahead of the events and stops at 256 open brackets itself.
            Err(err) if err.info() == "recursion limit exceeded" => {
                return Err(Bound::TooDeep {
                    document: walk.document.max(1),
                    line: err.marker().line(),
                    column: err.marker().col() + 1,
                })
            }
            Err(err) => return syntax(text, walk.document.max(1), err.marker(), err.to_string()),
        };
        match walk.step(event, budget) {
            Step::More => {}
            Step::End => return Ok(()),
            Step::Deep => {
                return Err(Bound::TooDeep {
                    document: walk.document,
                    line: mark.line(),
                    column: mark.col() + 1,
                })
            }
            Step::Many => {
                return Err(Bound::TooMany {
                    document: walk.document,
                    line: mark.line(),
                })
            }
        }
    }
}

/// A syntax error at `mark`: the full reader's to word when the rest of the text holds fewer
/// brackets than the depth bound (so it cannot nest past it in flow style, the quadratic case).
fn syntax(text: &str, document: usize, mark: &Marker, message: String) -> Result<(), Bound> {
    let rest = text
        .char_indices()
        .nth(mark.index())
        .map_or("", |(at, _)| &text[at..]);
    let brackets = rest
        .bytes()
        .filter(|b| matches!(b, b'[' | b'{'))
        .take(MAX_DEPTH + 1)
        .count();
    if brackets <= MAX_DEPTH {
        Ok(())
    } else {
        Err(Bound::Syntax { document, message })
    }
}

/// What one event did to the walk.
enum Step {
    More,
    End,
    Deep,
    Many,
}

/// The walk's state: the document, the open collections (with the count when each opened and
/// its anchor), and the size of each anchored node.
#[derive(Default)]
struct Walk {
    document: usize,
    open: Vec<(usize, usize)>,
    count: usize,
    anchored: std::collections::HashMap<usize, usize>,
}

impl Walk {
    fn step(&mut self, event: Event, budget: &mut Budget) -> Step {
        let added = match event {
            Event::StreamEnd => return Step::End,
            Event::DocumentStart => {
                self.document += 1;
                self.anchored.clear();
                0
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.open.len() >= MAX_DEPTH {
                    return Step::Deep;
                }
                self.open.push((anchor, self.count));
                1
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, start)) = self.open.pop() {
                    self.remember(anchor, start);
                }
                0
            }
            Event::Scalar(_, _, anchor, _) => {
                self.remember(anchor, self.count);
                1
            }
            Event::Alias(anchor) => self.anchored.get(&anchor).copied().unwrap_or(1),
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => 0,
        };
        self.count = self.count.saturating_add(added);
        match budget.left.checked_sub(added) {
            Some(left) => {
                budget.left = left;
                Step::More
            }
            None => Step::Many,
        }
    }

    /// Notes the size of the node anchored as `anchor` (0: none), opened when `start` values
    /// had been read; a scalar counts one.
    fn remember(&mut self, anchor: usize, start: usize) {
        if anchor != 0 {
            let size = self.count.saturating_sub(start).max(1);
            self.anchored.insert(anchor, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_and_block_nesting_stop_at_the_bound() {
        let deep = format!("x: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let err = check(&deep, &mut Budget::default()).unwrap_err();
        assert!(
            matches!(
                err,
                Bound::TooDeep {
                    document: 1,
                    line: 1,
                    ..
                }
            ),
            "{err}"
        );
        let mut block = String::new();
        for level in 0..200 {
            block.push_str(&format!("{}a:\n", "  ".repeat(level)));
        }
        let err = check(&block, &mut Budget::default()).unwrap_err();
        assert!(matches!(err, Bound::TooDeep { line: 129, .. }), "{err}");
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(check(&fine, &mut Budget::default()), Ok(()));
    }

    #[test]
    fn values_are_taken_from_one_budget_and_aliases_count_what_they_repeat() {
        let mut budget = Budget { left: 10 };
        assert_eq!(check("a: [1, 2]\n---\nb: c\n", &mut budget), Ok(()));
        assert_eq!(budget.left, 2);
        let err = check("a: b\n", &mut budget).unwrap_err();
        assert!(matches!(err, Bound::TooMany { document: 1, .. }), "{err}");
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
                      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n";
        let mut budget = Budget { left: 5_000 };
        assert!(matches!(check(laughs, &mut budget), Err(Bound::TooMany { .. })));
    }

    #[test]
    fn syntax_errors_are_left_to_the_full_reader_unless_deep_brackets_follow() {
        assert_eq!(check("a: [1, 2\nb: 'x", &mut Budget::default()), Ok(()));
        let hostile = format!("a: b: c\n{}", "[".repeat(1_000));
        assert!(matches!(
            check(&hostile, &mut Budget::default()),
            Err(Bound::Syntax { document: 1, .. })
        ));
    }
}
