//! The search: every configuration of the space, the exact `(T, E)` Pareto front, and the
//! queries of MODEL.md section 7.
//!
//! Configurations are evaluated, never stored: memory grows with the front. Two passes:
//! 1. *Seed*: every group `(c, f, g)` is evaluated at a few node counts; their front is a
//!    read-only filter. Its points are real configurations, so whatever one of them strictly
//!    dominates is off the front (and ties with nothing on it).
//! 2. *Sweep*: for each group the node counts are bisected: a range whose lower bounds on `T` and
//!    `E` ([`Group::lower_bounds`]) the seed or the front so far strictly dominates is discarded
//!    whole; the rest is evaluated one by one, and only points the seed does not strictly
//!    dominate are offered to the front (which keeps its insertions, and their cost, few).
//!
//! Saturated configurations (`rho >= 1`) are found by a binary search on `n`, since `rho` grows
//! with `n`. Groups run in parallel (rayon), each worker with its own front; fronts merge
//! exactly, so the result does not depend on the thread count.

pub mod chance;
pub mod front;
pub mod gpu_clocks;
pub mod inputs;
pub mod plan;
pub mod planner;
pub mod query;
pub mod sample;
pub mod space;
pub mod staircase;

use crate::error::InputResult;
use crate::model::kernel::NodeTable;
use crate::model::{Group, Model};
use front::{Front, FrontPoint};
use rayon::prelude::*;
use space::Space;
use staircase::Staircase;

/// Ranges of node counts at most this long are evaluated point by point.
const LEAF: usize = crate::model::kernel::CHUNK;
/// Node counts evaluated at once when the bounds are off.
const BLOCK: usize = 256;
/// Node counts per group evaluated in the seed pass.
const SEED_SAMPLES: usize = 8;

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
    /// The groups `(c, f, g)` of the space, sorted by `(c, f index, g)`.
    groups: Vec<Group>,
}

#[derive(Default)]
struct Acc {
    front: Front,
    saturated: u64,
    pruned: u64,
    /// Times and energies of the block being evaluated (kept to spare an allocation a block).
    buf: (Vec<f64>, Vec<f64>),
}

impl Acc {
    fn merge(self, other: Acc) -> Acc {
        Acc {
            front: self.front.merge(other.front),
            saturated: self.saturated + other.saturated,
            pruned: self.pruned + other.pruned,
            buf: self.buf,
        }
    }
}

impl SearchOutcome {
    /// The group of a front point's key.
    pub fn group_of(&self, key: front::Key) -> Option<&Group> {
        let k = (key.1, key.2, key.3, key.4);
        self.groups
            .binary_search_by_key(&k, |g| (g.cores, g.freq_index, g.gpus, g.clock_index))
            .ok()
            .map(|i| &self.groups[i])
    }
}

/// Searches the whole space for the exact front, on the current rayon thread pool.
pub fn search(model: &Model<'_>, space: &Space) -> InputResult<SearchOutcome> {
    search_filtered(model, space, None)
}

/// Whether an evaluation at `n` nodes reaches the minimum predicted parallel efficiency.
fn eligible(min_pe: Option<f64>, g: &crate::model::Group, n: u32, ev: &crate::model::Eval) -> bool {
    min_pe.is_none_or(|m| g.host_tree(n, ev).parallel_efficiency >= m)
}

/// As [`search`], over the configurations whose predicted host parallel efficiency is at least
/// `min_pe`. The pruning stays exact: a range is discarded only when an eligible configuration
/// (all that the seed and the front hold) strictly dominates its bounds.
pub fn search_filtered(
    model: &Model<'_>,
    space: &Space,
    min_pe: Option<f64>,
) -> InputResult<SearchOutcome> {
    sweep_space(model, space, min_pe, true)
}

/// As [`search`] with the bounds switched off: every configuration is evaluated, as in a space
/// whose bounds prune nothing (the worst case, measured in `benches/search.rs`; the same front).
pub fn search_unpruned(model: &Model<'_>, space: &Space) -> InputResult<SearchOutcome> {
    sweep_space(model, space, None, false)
}

fn sweep_space(
    model: &Model<'_>,
    space: &Space,
    min_pe: Option<f64>,
    bounds: bool,
) -> InputResult<SearchOutcome> {
    let groups = space.groups(model)?;
    let nodes = &space.nodes;
    let tab = NodeTable::new(
        nodes,
        |n| model.growth_factor(n),
        |n| model.node_wait(n),
        model.is_weak(),
    )
    .with_energy(|n| model.energy_mix(n));
    // rho grows with n: the saturated node counts of a group are a suffix.
    let stable: Vec<usize> = groups
        .par_iter()
        .map(|g| partition_point(nodes.len(), |i| g.rho(nodes[i], tab.factor(i)) < 1.0))
        .collect();
    // Most groups share one unsaturated length: their seed indices are computed once.
    let common = seed_indices(nodes.len()).collect::<Vec<_>>();
    let seed = groups
        .par_iter()
        .zip(&stable)
        .fold(Front::new, |mut f, (g, &len)| {
            let own;
            let indices = if len == nodes.len() {
                &common
            } else {
                own = seed_indices(len).collect::<Vec<_>>();
                &own
            };
            for &i in indices {
                if let Some(ev) = g
                    .eval(nodes[i], tab.factor(i))
                    .filter(|ev| eligible(min_pe, g, nodes[i], ev))
                {
                    f.offer(
                        ev.time,
                        ev.energy,
                        (nodes[i], g.cores, g.freq_index, g.gpus, g.clock_index),
                    );
                }
            }
            f
        })
        .reduce(Front::new, Front::merge);
    let sweep = Sweep {
        nodes,
        tab: &tab,
        stairs: Staircase::of(&seed),
        bounds,
        seed: &seed,
        min_pe,
    };
    let acc = groups
        .par_iter()
        .zip(&stable)
        .fold(Acc::default, |mut acc, (g, &len)| {
            acc.saturated += (nodes.len() - len) as u64;
            sweep.range(g, 0, len, &mut acc);
            acc
        })
        .reduce(Acc::default, Acc::merge);
    Ok(SearchOutcome {
        evaluated: space.size(),
        saturated: acc.saturated,
        pruned: acc.pruned,
        front: acc.front.into_points(),
        groups: {
            let mut groups = groups;
            groups.sort_by_key(|g| (g.cores, g.freq_index, g.gpus, g.clock_index));
            groups
        },
    })
}

/// The configuration of highest predicted host parallel efficiency in the whole space (ties:
/// the faster), with that efficiency: the nearest answer when `--min-efficiency` excludes
/// every configuration. Evaluates every configuration once, in parallel.
pub fn best_efficiency(
    model: &Model<'_>,
    space: &Space,
) -> InputResult<Option<(crate::model::Prediction, f64)>> {
    let groups = space.groups(model)?;
    let nodes = &space.nodes;
    let best = groups
        .par_iter()
        .filter_map(|g| {
            let mut best: Option<(f64, f64, u32)> = None;
            for &n in nodes {
                if let Some(ev) = g.eval(n, model.growth_factor(n)) {
                    let pe = g.host_tree(n, &ev).parallel_efficiency;
                    if best.is_none_or(|b| (pe, -ev.time) > (b.0, -b.1)) {
                        best = Some((pe, ev.time, n));
                    }
                }
            }
            best.map(|(pe, t, n)| (pe, t, n, g))
        })
        .max_by(|a, b| {
            (a.0, -a.1)
                .partial_cmp(&(b.0, -b.1))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    Ok(best.and_then(|(pe, _, n, g)| {
        g.eval(n, model.growth_factor(n))
            .map(|ev| (g.prediction(n, &ev), pe))
    }))
}

/// Up to [`SEED_SAMPLES`] indices spread geometrically over `0..len`, both ends included.
fn seed_indices(len: usize) -> impl Iterator<Item = usize> {
    let last = len.saturating_sub(1) as f64;
    let mut v: Vec<usize> = (0..SEED_SAMPLES.min(len))
        .map(|k| {
            let x = k as f64 / (SEED_SAMPLES - 1) as f64;
            ((last + 1.0).powf(x) - 1.0).round() as usize
        })
        .collect();
    v.dedup();
    v.into_iter()
}

struct Sweep<'a> {
    nodes: &'a [u32],
    tab: &'a NodeTable,
    stairs: Staircase,
    /// Whether ranges are discarded by their bounds (off: every configuration is evaluated).
    bounds: bool,
    seed: &'a Front,
    min_pe: Option<f64>,
}

impl Sweep<'_> {
    fn range(&self, g: &Group, lo: usize, hi: usize, acc: &mut Acc) {
        if lo >= hi {
            return;
        }
        if !self.bounds {
            for start in (lo..hi).step_by(BLOCK) {
                self.leaf(g, start, (start + BLOCK).min(hi), acc);
            }
            return;
        }
        let nodes = self.nodes;
        let (t_lb, e_lb) = g.lower_bounds(nodes[lo], nodes[hi - 1], self.tab.factor(lo));
        if self.seed.dominates_region(t_lb, e_lb) || acc.front.dominates_region(t_lb, e_lb) {
            acc.pruned += (hi - lo) as u64;
            return;
        }
        if hi - lo <= LEAF {
            self.leaf(g, lo, hi, acc);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        // Fewer nodes first: they are the low-energy end, which tightens the bound for the rest.
        self.range(g, lo, mid, acc);
        self.range(g, mid, hi, acc);
    }

    /// Evaluates node counts `lo..hi` (at most [`BLOCK`]) at once and offers those the seed
    /// does not strictly dominate: [`LEAF`] at a time first all together (their least time and
    /// least energy), then one by one, through the seed's staircase before the seed itself.
    fn leaf(&self, g: &Group, lo: usize, hi: usize, acc: &mut Acc) {
        let (mut t, mut e) = std::mem::take(&mut acc.buf);
        let len = hi - lo;
        t.resize(BLOCK, 0.0);
        e.resize(BLOCK, 0.0);
        let mut least = [[0.0; 2]; BLOCK / LEAF];
        g.eval_chunks(self.tab, lo, &mut t[..len], &mut e[..len], &mut least);
        for (c, start) in (0..len).step_by(LEAF).enumerate() {
            let [t_min, e_min] = least[c];
            // (A saturated point has T = E = +inf: the least of a chunk is finite unless all
            // are; the sweep's ranges hold none, having been cut where rho reaches 1.)
            if t_min == f64::INFINITY || !self.stairs.dominates(t_min, e_min) {
                for k in start..(start + LEAF).min(len) {
                    self.offer(g, lo + k, t[k], e[k], acc);
                }
            }
        }
        acc.buf = (t, e);
    }

    /// Offers node count index `i` of group `g` (time `time`, energy `energy`) unless it is
    /// saturated, the seed strictly dominates it, or it misses the efficiency floor.
    fn offer(&self, g: &Group, i: usize, time: f64, energy: f64, acc: &mut Acc) {
        let n = self.nodes[i];
        if time == f64::INFINITY {
            acc.saturated += 1;
            return;
        }
        if self.stairs.dominates(time, energy) || self.seed.dominates_region(time, energy) {
            return;
        }
        if self.min_pe.is_some()
            && !g
                .eval(n, self.tab.factor(i))
                .is_some_and(|ev| eligible(self.min_pe, g, n, &ev))
        {
            return;
        }
        acc.front.offer(
            time,
            energy,
            (n, g.cores, g.freq_index, g.gpus, g.clock_index),
        );
    }
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
