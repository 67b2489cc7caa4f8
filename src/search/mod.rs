//! The search: every configuration of the space, the exact `(T, E)` Pareto front, and the
//! queries of MODEL.md section 7.
//!
//! Configurations are evaluated, never stored: memory grows with the front. For each group
//! `(c, f, g)` the node counts are swept by bisection: a range of node counts whose lower bounds
//! on `T` and `E` ([`Group::lower_bounds`]) are strictly dominated by the front so far is
//! discarded whole (every configuration in it is dominated, so exactness is kept); the rest is
//! evaluated one by one. Saturated configurations (`rho >= 1`) are found by a binary search on
//! `n`, since `rho` grows with `n`. Groups run in parallel (rayon), each worker with its own
//! front; fronts merge exactly, so the result does not depend on the thread count.

pub mod front;
pub mod plan;
pub mod query;
pub mod space;

use crate::error::InputResult;
use crate::model::{Group, Model};
use front::{Front, FrontPoint};
use rayon::prelude::*;
use space::Space;
use std::collections::HashMap;

/// Ranges of node counts at most this long are evaluated point by point.
const LEAF: usize = 16;

/// What the search found.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// Configurations in the space.
    pub evaluated: u64,
    /// Of those, network-saturated (`rho >= 1`).
    pub saturated: u64,
    /// Of those, discarded as a block by the dominance bounds (never on the front).
    pub pruned: u64,
    /// The exact front, fastest first.
    pub front: Vec<FrontPoint>,
    /// The groups `(c, f, g)` of the space, by `(c, f index, g)`.
    groups: HashMap<(u32, usize, u32), Group>,
}

#[derive(Default)]
struct Acc {
    front: Front,
    saturated: u64,
    pruned: u64,
}

impl Acc {
    fn merge(self, other: Acc) -> Acc {
        Acc {
            front: self.front.merge(other.front),
            saturated: self.saturated + other.saturated,
            pruned: self.pruned + other.pruned,
        }
    }
}

impl SearchOutcome {
    /// The group of a front point's key.
    pub fn group_of(&self, key: front::Key) -> Option<&Group> {
        self.groups.get(&(key.1, key.2, key.3))
    }
}

/// Searches the whole space for the exact front, on the current rayon thread pool.
pub fn search(model: &Model<'_>, space: &Space) -> InputResult<SearchOutcome> {
    let groups = space.groups(model)?;
    let nodes = &space.nodes;
    let factors: Vec<f64> = nodes.iter().map(|&n| model.growth_factor(n)).collect();
    let acc = groups
        .par_iter()
        .fold(Acc::default, |mut acc, g| {
            sweep_group(g, nodes, &factors, &mut acc);
            acc
        })
        .reduce(Acc::default, Acc::merge);
    Ok(SearchOutcome {
        evaluated: space.size(),
        saturated: acc.saturated,
        pruned: acc.pruned,
        front: acc.front.into_points(),
        groups: groups
            .into_iter()
            .map(|g| ((g.cores, g.freq_index, g.gpus), g))
            .collect(),
    })
}

fn sweep_group(g: &Group, nodes: &[u32], factors: &[f64], acc: &mut Acc) {
    // rho grows with n: the saturated node counts are a suffix.
    let stable = partition_point(nodes.len(), |i| g.rho(nodes[i], factors[i]) < 1.0);
    acc.saturated += (nodes.len() - stable) as u64;
    sweep_range(g, nodes, factors, 0, stable, acc);
}

fn sweep_range(g: &Group, nodes: &[u32], factors: &[f64], lo: usize, hi: usize, acc: &mut Acc) {
    if lo >= hi {
        return;
    }
    let (t_lb, e_lb) = g.lower_bounds(nodes[lo], nodes[hi - 1], factors[lo]);
    if acc.front.dominates_region(t_lb, e_lb) {
        acc.pruned += (hi - lo) as u64;
        return;
    }
    if hi - lo <= LEAF {
        for i in lo..hi {
            let n = nodes[i];
            match g.eval(n, factors[i]) {
                Some(ev) => acc.front.offer(ev.time, ev.energy, (n, g.cores, g.freq_index, g.gpus)),
                None => acc.saturated += 1,
            }
        }
        return;
    }
    let mid = lo + (hi - lo) / 2;
    // Fewer nodes first: they are the low-energy end, which tightens the bound for the rest.
    sweep_range(g, nodes, factors, lo, mid, acc);
    sweep_range(g, nodes, factors, mid, hi, acc);
}

/// First index in `0..len` where `pred` is false (`pred` true on a prefix).
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
