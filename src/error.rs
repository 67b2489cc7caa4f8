//! Errors of the library, each naming where the bad input is and what was expected.

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
    #[error("{file}: key `{key}`: expected {expected}, got {got}")]
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
    #[error("{flag}: expected {expected}, got `{got}`")]
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

/// Shorthand for results whose error is bad input.
pub type InputResult<T> = Result<T, InputError>;
