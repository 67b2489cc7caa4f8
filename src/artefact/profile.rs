//! The names and keys a profile file is written in (`jouleplan-profile/1`): its format tag,
//! the communication growth laws, and the key that tells measured frequencies apart.

use crate::units::Hertz;

/// Format tag written in and expected from profile files.
pub const PROFILE_FORMAT: &str = "jouleplan-profile/1";

/// How the messages a process sends per iteration grow with the node count `n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Growth {
    /// `eta` messages whatever `n` (> 1).
    Constant,
    /// `eta` messages to each of `min(n - 1, k)` neighbours.
    Neighbours(u32),
    /// `eta * ceil(log2 n)`: tree collectives.
    Log2,
    /// `eta * (n - 1)`: all-to-all.
    AllToAll,
}

impl Growth {
    /// The factor on `eta` at `n` nodes; 0 when `n = 1` (no inter-node messages).
    pub fn factor(self, n: u32) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        match self {
            Growth::Constant => 1.0,
            Growth::Neighbours(k) => f64::from((n - 1).min(k)),
            Growth::Log2 => f64::from(32 - (n - 1).leading_zeros()),
            Growth::AllToAll => f64::from(n - 1),
        }
    }

    /// The name used in profile files.
    pub fn name(self) -> &'static str {
        match self {
            Growth::Constant => "constant",
            Growth::Neighbours(_) => "neighbours",
            Growth::Log2 => "log2",
            Growth::AllToAll => "all_to_all",
        }
    }
}

/// A frequency as whole kHz: the key that tells two measured frequencies apart.
pub fn freq_key(f: Hertz) -> u64 {
    (f.0 / 1e3).round() as u64
}
