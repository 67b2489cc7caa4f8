//! The time windows of a trace (seed 003): useful time, ideal clocks and MPI events per rank
//! over fixed base windows, merged into fixed or adaptive windows at the end.

use super::bad;
use crate::error::InputResult;
use crate::metrics::windows::Window;
use std::path::Path;

/// Per-window accumulators over fixed base windows.
pub(super) struct Grid {
    pub(super) len: u64,
    pub(super) count: usize,
    /// Per rank: useful in each base window.
    pub(super) useful: Vec<Vec<f64>>,
    /// Per rank: ideal clock at each base boundary (index k = start of window k), NaN until known.
    pub(super) ideal_at: Vec<Vec<f64>>,
    /// Per rank: MPI events in each base window.
    pub(super) events: Vec<Vec<u32>>,
}

/// Most window cells (tasks x windows) a grid may hold: 2^22 cells, about 100 MB at most
/// (found by the Paraver fuzz target: 2^26 cells took over 2 GB).
const MAX_CELLS: u64 = 1 << 22;

/// Most windows a trace may be cut into: each becomes a row of the output, and 65,536 rows
/// already resolve a run far finer than any chart or table shows (the fuzz target spent most
/// of its time writing millions of windows that the cell cap still allowed).
const MAX_WINDOWS: u64 = 1 << 16;

/// The window grid, refused when the header's end time over the window length asks for more
/// cells than any trace needs: a corrupt end time must not size memory. Rows are added as
/// records name tasks ([`Grid::grow_to`]), checked against the cell cap.
pub(super) fn grid_for(path: &Path, end: u64, len: u64) -> InputResult<Grid> {
    let windows = end.div_ceil(len.max(1)).max(1);
    if windows > MAX_WINDOWS {
        return Err(bad(
            path,
            1,
            &format!(
                "an end time that gives at most {MAX_WINDOWS} windows (use a longer --window)"
            ),
            &format!("{windows} windows"),
        ));
    }
    Ok(Grid::new(end, len))
}

impl Grid {
    pub(super) fn new(end: u64, len: u64) -> Grid {
        let len = len.max(1);
        let count = (end.div_ceil(len) as usize).max(1);
        Grid {
            len,
            count,
            useful: Vec::new(),
            ideal_at: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Rows for `rows` tasks in all; refused, before any is added, past `MAX_CELLS`
    /// task-window cells.
    pub(super) fn grow_to(&mut self, rows: usize) -> Result<(), String> {
        if (rows as u64).saturating_mul(self.count as u64) > MAX_CELLS {
            return Err(format!(
                "{rows} tasks x {} windows: more than {MAX_CELLS} task-window cells (use a \
                 longer --window)",
                self.count
            ));
        }
        while self.useful.len() < rows {
            self.add_row();
        }
        Ok(())
    }

    fn add_row(&mut self) {
        self.useful.push(vec![0.0; self.count]);
        self.ideal_at.push(vec![f64::NAN; self.count + 1]);
        self.events.push(vec![0; self.count]);
    }

    pub(super) fn idx(&self, t: u64) -> usize {
        ((t / self.len) as usize).min(self.count - 1)
    }

    /// Records that rank `r` had ideal clock `clock` at time `t` after executing up to `t`:
    /// fills every boundary in (prev, t] that is still unknown.
    pub(super) fn boundary(&mut self, r: usize, prev: u64, t: u64, clock_at: impl Fn(u64) -> f64) {
        let first = prev.div_ceil(self.len) as usize;
        let last = ((t / self.len) as usize).min(self.count);
        for k in first..=last {
            if self.ideal_at[r][k].is_nan() {
                self.ideal_at[r][k] = clock_at(k as u64 * self.len);
            }
        }
    }

    pub(super) fn add_useful(&mut self, r: usize, b: u64, e: u64) {
        let mut t = b;
        while t < e {
            let k = self.idx(t);
            let edge = ((k as u64 + 1) * self.len).min(e).max(t + 1);
            let edge = if k == self.count - 1 { e } else { edge };
            self.useful[r][k] += (edge - t) as f64;
            t = edge;
        }
    }
}

/// Windows from the base grid: fixed (one per base window) or adaptive (merged until every rank
/// has at least `min_events` MPI events).
pub(super) fn windows(g: &Grid, end: u64, u: f64, min_events: Option<u32>) -> Vec<Window> {
    let n = g.useful.len();
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < g.count {
        let mut stop = start + 1;
        if let Some(min) = min_events {
            let mut ev = vec![0u32; n];
            loop {
                for (r, e) in ev.iter_mut().enumerate() {
                    *e += g.events[r][stop - 1];
                }
                if ev.iter().all(|&e| e >= min) || stop == g.count {
                    break;
                }
                stop += 1;
            }
        }
        let t0 = start as u64 * g.len;
        let t1 = (stop as u64 * g.len).min(end.max(t0 + 1));
        let us: Vec<f64> = (0..n)
            .map(|r| g.useful[r][start..stop].iter().sum::<f64>())
            .collect();
        let max_u = us.iter().copied().fold(0.0, f64::max);
        let mean_u = us.iter().sum::<f64>() / n as f64;
        let hi = |k: usize| (0..n).map(|r| g.ideal_at[r][k]).fold(0.0, f64::max);
        let ideal = (hi(stop) - hi(start)).max(0.0);
        let len = (t1 - t0) as f64;
        let lb = if max_u > 0.0 { mean_u / max_u } else { 0.0 };
        let ser = if ideal > 0.0 {
            (max_u / ideal).min(1.0)
        } else {
            0.0
        };
        let trf = if len > 0.0 {
            (ideal / len).min(1.0)
        } else {
            0.0
        };
        out.push(Window {
            start_s: t0 as f64 * u,
            end_s: t1 as f64 * u,
            load_balance: lb,
            serialisation: ser,
            transfer: trf,
            parallel_efficiency: lb * ser * trf,
        });
        start = stop;
    }
    out
}
