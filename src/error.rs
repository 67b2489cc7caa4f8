//! Errors of the library, each naming where the bad input is and what was expected.

use std::borrow::Cow;
use std::path::PathBuf;

/// Bad input: a file, a key in it, or a command-line value that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be read at all.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why (not a `source`: the message already holds it, and `{:#}` would print it twice).
        reason: std::io::Error,
    },
    /// The file is not well-formed TOML/JSON; `detail` carries the parser's line and column.
    #[error("{file}: not valid {format}: {detail}")]
    Syntax {
        /// The file.
        file: PathBuf,
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The parser's message, with line and column.
        detail: String,
    },
    /// A key is missing, of the wrong type, or out of range.
    #[error("{file}: key `{}`: expected {expected}, got {}", clipped(.key), clipped(.got))]
    Key {
        /// The file.
        file: PathBuf,
        /// Dotted path of the key (`power.core_active_w[2]`).
        key: String,
        /// What a valid value looks like.
        expected: String,
        /// What was found.
        got: String,
    },
    /// A command-line value that cannot be used.
    #[error("{flag}: expected {expected}, got `{}`", shown(.got))]
    Argument {
        /// The flag (`--nodes`).
        flag: String,
        /// What a valid value looks like.
        expected: String,
        /// What was given.
        got: String,
    },
    /// The inputs are individually valid but do not fit together (for example a configuration
    /// that needs a baseline point the profile lacks).
    #[error("{0}")]
    Mismatch(String),
}

impl InputError {
    /// The same refusal said under `to` where it was said under the flag `from` (a value the
    /// user gave under another flag, or none: a measured row's configuration).
    pub fn under(self, from: &str, to: &str) -> InputError {
        match self {
            InputError::Argument {
                flag,
                expected,
                got,
            } if flag == from => InputError::Argument {
                flag: to.into(),
                expected,
                got,
            },
            e => e,
        }
    }
}

/// Shorthand for results whose error is bad input.
pub type InputResult<T> = Result<T, InputError>;

/// Text quoted back from an input (a cell, a value, a name, a whole message) as it may reach a
/// terminal: each control character but a line break or a tab (NUL, ESC, a carriage return,
/// DEL, the C1 controls) and each bidirectional override is written as `\u{..}`, so no byte
/// of an input can start a terminal escape sequence or hide text. Borrowed when nothing needs
/// escaping.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The longest text an error quotes back whole from a file, in characters (a message quoted
/// within another stays whole).
const QUOTED_MAX: usize = 1000;

/// Text quoted back as [`shown`] writes it, and at most [`QUOTED_MAX`] characters of it: a
/// longer cell, header or key (a 10 MB header line) is cut, saying how long it was, so an
/// error stays a line a terminal can show.
pub fn clipped(text: &str) -> Cow<'_, str> {
    let n = text.chars().count();
    if n <= QUOTED_MAX {
        return shown(text);
    }
    let head: String = text.chars().take(QUOTED_MAX / 2).collect();
    let tail: String = text.chars().skip(n - QUOTED_MAX / 4).collect();
    Cow::Owned(format!(
        "{} ... {} ({n} characters in all)",
        shown(&head),
        shown(&tail)
    ))
}

/// Whether `c` must not reach a terminal raw: a control character other than a line break or
/// a tab, or a bidirectional embedding, override or isolate (U+202A..U+202E, U+2066..U+2069).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn long_quotes_are_cut_saying_how_long_they_were() {
        let long = format!("a{}z", "x".repeat(10_000));
        let c = super::clipped(&long);
        assert!(c.len() < 1000, "{c}");
        assert!(
            c.starts_with("ax") && c.ends_with("xz (10002 characters in all)"),
            "{c}"
        );
        assert_eq!(super::clipped("short"), "short");
        assert_eq!(super::clipped("\u{1b}"), "\\u{1b}");
    }

    #[test]
    fn control_bytes_are_written_as_escapes() {
        assert_eq!(shown("a\0b"), "a\\u{0}b");
        assert_eq!(shown("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(
            shown("x\r\u{7f}\u{9b}\u{202e}"),
            "x\\u{d}\\u{7f}\\u{9b}\\u{202e}"
        );
        assert_eq!(shown("two\nlines\tµs"), "two\nlines\tµs");
    }
}
