//! Time-resolved metrics (seed 003): per window of the timeline, load balance, serialisation
//! and transfer.

use serde::Serialize;

/// One window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Window {
    /// Start, seconds from the trace start.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// `mean_i U_i / max_i U_i` within the window.
    pub load_balance: f64,
    /// `max_i U_i / ideal time of the window`.
    pub serialisation: f64,
    /// `ideal time / window length`.
    pub transfer: f64,
    /// `LB x Ser x Trf`.
    pub parallel_efficiency: f64,
}
