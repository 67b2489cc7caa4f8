//! One message size of an MPI ping-pong as recorded: what `calibrate network` measures
//! (`measure::pingpong`) and fits (`calibrate::network_fit`).

use serde::{Deserialize, Serialize};

/// One message size: every repeat's one-way time (half a round trip), s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeSample {
    /// Message size, bytes.
    pub bytes: u64,
    /// One-way time of each repeat, s.
    pub one_way_s: Vec<f64>,
}

impl SizeSample {
    /// Median one-way time, s.
    pub fn median(&self) -> f64 {
        let mut v = self.one_way_s.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return f64::NAN;
        }
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
}
