//! The output edge for text meant for a person: messages, reports and errors carry names, API
//! server answers and extension messages that anyone may have written, so the control characters
//! in them are shown, never sent to the terminal. ESC becomes `^[` and CR `\r`, as kubectl writes
//! them (cli-runtime's terminal escaper); kubectl stops there, we also show the other C0 controls
//! in caret notation (BEL is `^G`), DEL as `^?`, and the C1 controls and bidirectional overrides,
//! which some terminals obey too, as `\u009b`. Line feeds and tabs are kept.
//! Structured output (YAML, JSON) is not passed through here: its writers escape them already.

use std::fmt::Write as _;
use std::io::Write as _;

/// `text` with every control character made visible.
pub fn escaped(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !hidden(c) => out.push(c),
            '\u{1b}' => out.push_str("^["),
            '\r' => out.push_str("\\r"),
            '\u{7f}' => out.push_str("^?"),
            c if u32::from(c) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
        }
    }
    out
}

/// Whether `c` is a control character a terminal may act on (line feed and tab are text).
fn hidden(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        // Bidirectional embeddings, overrides and isolates reorder what is shown.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// Writes `text` to stdout with its control characters shown; a closed pipe is not an error.
pub fn print_text(text: &str) -> std::io::Result<()> {
    super::print_stdout(&escaped(text))
}

/// Writes `line` and a line feed to stderr with its control characters shown.
pub fn eprint_line(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", escaped(line));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crafted_name_cannot_clear_the_screen_or_rewrite_a_line() {
        let name = "dev\u{1b}[2J\u{1b}[H\rCluster default/dev configured \u{7}ok";
        let shown = escaped(&format!("Cluster default/{name} denied"));
        assert_eq!(
            shown,
            "Cluster default/dev^[[2J^[[H\\rCluster default/dev configured ^Gok denied"
        );
        assert!(!shown.chars().any(hidden));
    }

    #[test]
    fn every_control_character_is_shown_and_text_is_kept() {
        assert_eq!(escaped("a\tb\nc é ✓"), "a\tb\nc é ✓");
        assert_eq!(escaped("\u{0}\u{8}\u{1f}\u{7f}"), "^@^H^_^?");
        assert_eq!(escaped("\u{9b}31m\u{202e}txt"), "\\u009b31m\\u202etxt");
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let shown = escaped(&c.to_string());
            assert!(!shown.chars().any(hidden), "{c:?} -> {shown:?}");
        }
    }
}
