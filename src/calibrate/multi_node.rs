//! `jouleplan fit` on runs over several nodes (MODEL.md 6c a-c): the single-node profile is
//! completed with the per-node core counts the multi-node runs used, the time its terms do
//! not explain is carried by a node law ([`super::node_fit::fit_law`]), and node power is
//! fitted on every run with energy ([`super::node_fit::node_power`]).

use super::node_fit::{self, LawPoint, NodePower, Rule};
use super::repeats::{ConfigKey, Moments2, Replay};
use super::reproduce::EnergyScope;
use super::runs::{Measured, merge_by};
use crate::error::{InputError, InputResult};
use crate::model::machine::{Machine, Power};
use crate::model::node_law::NodeFit;
use crate::model::workload::{BaselinePoint, Profile, freq_key};
use crate::model::{Model, Outcome, Prediction};
use crate::units::{Hertz, Seconds, Watts};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Derived points for each per-node core count of `multi` at a frequency the single-node
/// points have but not at that count: the nearest measured count's work divided evenly over
/// the cores (the same total cycles, `U = 1`; no energy), so that the model can evaluate the
/// multi-node layouts. What the law then finds is measured against that even division.
pub fn derive_points(
    points: &mut Vec<BaselinePoint>,
    multi: &[Measured],
    weak: bool,
) -> Vec<String> {
    let mut said = Vec::new();
    let mut range: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
    let counts = multi
        .iter()
        .map(|m| (m.config.cores, m.config.freq))
        .chain(points.iter().map(|p| (p.cores, p.freq)));
    for (c, f) in counts {
        let r = range.entry(freq_key(f)).or_insert((c, c));
        *r = (r.0.min(c), r.1.max(c));
    }
    if multi.is_empty() {
        return said;
    }
    // Every count between the fewest and the most cores used: the search and `validate` ask
    // for any of them.
    let wanted: Vec<(u32, u64)> = range
        .iter()
        .flat_map(|(&fk, &(lo, hi))| (lo..=hi).map(move |c| (c, fk)))
        .collect();
    let mut by_source: BTreeMap<(u32, u64), Vec<u32>> = BTreeMap::new();
    for (c, fk) in wanted {
        if points
            .iter()
            .any(|p| p.cores == c && freq_key(p.freq) == fk)
        {
            continue;
        }
        let Some(near) = points
            .iter()
            .filter(|p| freq_key(p.freq) == fk && p.measured)
            .min_by_key(|p| (p.cores.abs_diff(c), p.cores))
            .cloned()
        else {
            continue;
        };
        let mut d = near.clone();
        d.cores = c;
        let ratio = f64::from(c) / f64::from(near.cores);
        if weak {
            // Each core keeps its work: the cycles grow with the cores, the time does not.
            d.cycles *= ratio;
            d.stall_cycles *= ratio;
            d.mem_stall_cycles *= ratio;
        } else {
            d.wall_time = Seconds(near.wall_time.0 / ratio);
        }
        d.energy = None;
        d.measured = false;
        by_source.entry((near.cores, fk)).or_default().push(c);
        points.push(d);
    }
    for ((from, fk), cs) in by_source {
        let list: Vec<u64> = cs.iter().map(|&c| u64::from(c)).collect();
        said.push(format!(
            "cores {{{}}} at {:.2} GHz derived from the measured {from} cores, {}",
            crate::model::workload::compact_list(&list),
            fk as f64 / 1e6,
            if weak {
                "the same work per core (weak scaling)"
            } else {
                "work divided evenly"
            }
        ));
    }
    said
}

/// What a profile fitted without single-node runs assumes.
pub const FROM_SMALLEST: &str = "no run on one node: the one-node points are the runs on the \
     fewest nodes with their ranks' core-seconds on one node (perfect scaling between one node \
     and that count); one-node predictions are optimistic by whatever that scaling lost";

/// Single-node rows derived from the runs on the fewest nodes, when none was measured on one:
/// each run's core-seconds `R T` on its per-node core count (time `R T / c`, no energy), its
/// repeats kept.
pub fn one_node_from_smallest(multi: &[Measured], weak: bool) -> Vec<Measured> {
    let Some(n0) = multi.iter().map(|m| m.config.nodes).min() else {
        return Vec::new();
    };
    multi
        .iter()
        .filter(|m| m.config.nodes == n0)
        .map(|m| {
            let ranks = f64::from(m.ranks.unwrap_or(m.config.nodes * m.config.cores));
            let mut one = m.clone();
            // Weak scaling: one node of the same ranks a node runs as long.
            let k = if weak {
                1.0
            } else {
                ranks / f64::from(m.config.cores)
            };
            one.runs = m.runs.time_scaled(k);
            one.time_s = one.runs.time_mean();
            one.energy = None;
            one.ranks = None;
            one.config.nodes = 1;
            one.source = format!("{} on one node (derived)", m.source);
            one
        })
        .collect()
}

/// The model's prediction of a measured row, without a node law when the profile has none.
fn predicted(file: &Path, model: &Model<'_>, m: &Measured) -> InputResult<Prediction> {
    match model.predict_ranks(m.config, m.ranks)? {
        Outcome::Finite(p) => Ok(p),
        Outcome::Saturated { rho, .. } => Err(InputError::Mismatch(format!(
            "{}: {} is network-saturated in the model (rho {rho:.2}); the node law cannot be \
             fitted against it",
            file.display(),
            m.source
        ))),
    }
}

/// Fits the node law on the multi-node rows (`multi`, repeats averaged by configuration);
/// `one_node`: whether runs on one node were measured too; `weak`: weak scaling.
pub fn fit_law(
    file: &Path,
    profile: &Profile,
    machine: &Machine,
    multi: &[Measured],
    (one_node, weak): (bool, bool),
    rule: &Rule,
) -> InputResult<Option<NodeFit>> {
    if multi.is_empty() {
        return Ok(None);
    }
    let mut model = Model::new(machine, profile)?;
    model.set_weak(weak)?;
    let mut pts = Vec::new();
    for m in averaged(multi) {
        let p = predicted(file, &model, &m)?;
        pts.push(LawPoint {
            nodes: m.config.nodes,
            measured: m.time_s,
            model: p.time.0,
        });
    }
    let horizon = (machine.max_nodes, weak);
    let fit = node_fit::fit_law_within(&pts, one_node, horizon, (rule, repeat_spread(multi)));
    Ok(fit.map(|f| NodeFit { weak, ..f }))
}

/// Judges the energy over node counts (MODEL.md 6c; [`super::energy_law`]) on the multi-node
/// rows with energy, with the profile's node law and the machine's fitted power; `None` without
/// a node law judged on left-out counts or without energy.
pub fn fit_energy_law(
    file: &Path,
    profile: &Profile,
    machine: &Machine,
    multi: &[Measured],
    rule: &Rule,
) -> InputResult<Option<crate::model::node_law::EnergyLaw>> {
    use super::energy_law::{EnergyInputs, EnergyPoint};
    let Some(law) = profile.node_law.as_ref() else {
        return Ok(None);
    };
    let mut model = Model::new(machine, profile)?;
    model.set_weak(law.weak)?;
    let n0 = law.smallest();
    let scoped = |p: &Prediction, s: EnergyScope| match s {
        EnergyScope::Cpu => p.e.cpu + p.e.mem + p.e.idle,
        _ => p.energy.0,
    };
    let mut pts = Vec::new();
    for m in averaged(multi) {
        let Some((e, s)) = m.energy else { continue };
        let p = predicted(file, &model, &m)?;
        let at_n0 = crate::model::Config {
            nodes: n0,
            ..m.config
        };
        let Outcome::Finite(a) = model.predict(at_n0)? else {
            continue;
        };
        let idle = machine
            .frequency_index(m.config.freq)
            .map_or(0.0, |i| machine.power.idle[i].0);
        pts.push(EnergyPoint {
            nodes: m.config.nodes,
            measured: e,
            derived: scoped(&p, s),
            anchor: scoped(&a, s),
            wait_w: f64::from(m.config.nodes) * idle,
            time: m.time_s,
            predicted_time: p.time.0,
        });
    }
    let Some(top) = averaged(multi)
        .into_iter()
        .filter(|m| m.energy.is_some())
        .max_by_key(|m| m.config.nodes)
    else {
        return Ok(None);
    };
    let scope = top.energy.map_or(EnergyScope::Node, |e| e.1);
    let far = |n: u32| -> Option<(f64, f64)> {
        let at = |nodes| match model.predict(crate::model::Config {
            nodes,
            ..top.config
        }) {
            Ok(Outcome::Finite(p)) => Some(scoped(&p, scope)),
            _ => None,
        };
        Some((at(n)?, at(n0)?))
    };
    let inputs = EnergyInputs {
        anchor: n0,
        time_folds: &law.folds,
        repeat_rel: repeat_spread(multi),
        horizon: machine.max_nodes,
        far: &far,
    };
    Ok(super::energy_method::fit(&pts, &inputs, rule))
}

/// The pooled run-to-run spread of repeated configurations (relative standard deviation),
/// `None` where nothing was repeated.
pub fn repeat_spread(rows: &[Measured]) -> Option<f64> {
    let (mut ss, mut dof) = (0.0, 0usize);
    for g in averaged(rows).iter().filter(|g| g.runs.count >= 2) {
        ss += g.runs.time_sq_dev() / (g.time_s * g.time_s);
        dof += g.runs.count - 1;
    }
    (dof > 0).then(|| (ss / dof as f64).sqrt())
}

/// Rows averaged per configuration (nodes, cores, frequency, ranks), in that order.
fn averaged(rows: &[Measured]) -> Vec<Measured> {
    merge_by(rows, |k| (k.nodes, k.cores, k.freq_khz, k.ranks))
}

/// Node power fitted at each measured frequency, and the machine's power with it.
#[derive(Debug, Clone)]
pub struct NodePowerFit {
    /// `(frequency, fit, runs)` for each frequency with enough energy.
    pub fitted: Vec<(Hertz, NodePower, usize)>,
    /// The machine's frequencies kept from its file (no energy measured there).
    pub kept: Vec<Hertz>,
    /// The energy scope fitted (every row's must agree).
    pub scope: EnergyScope,
    /// The machine's `[power]` with the fitted values.
    pub power: Power,
}

/// What each configuration with energy adds to node power: its frequency's key, its nodes
/// and the busy core-seconds the model gives it.
type Terms = HashMap<ConfigKey, (u64, f64, f64)>;

/// Fits node power on every run with energy: `E = P_idle n T + P_core (busy core-seconds)`,
/// busy core-seconds as the model (with its node law) gives each configuration. The fit sees
/// each frequency's runs through their moments ([`Moments2::equivalent_points`]: the same
/// weighted least squares, whatever the number of runs); the largest residual is taken over
/// every run, read again from `runs`.
pub fn fit_power(
    file: &Path,
    profile: &Profile,
    machine: &Machine,
    rows: &[Measured],
    runs: &dyn Replay,
) -> InputResult<Option<NodePowerFit>> {
    let model = Model::new(machine, profile)?;
    let mut by_freq: BTreeMap<u64, (Hertz, Moments2)> = BTreeMap::new();
    let mut terms = Terms::new();
    let mut scope = None;
    for m in rows {
        let Some((_, s)) = m.energy else { continue };
        if scope.is_some_and(|(x, _)| x != s) || s == EnergyScope::Gpu {
            let before = scope.map_or(String::new(), |(x, at): (EnergyScope, &str)| {
                format!(": {} has {}", super::runs::line_of(at), x.name())
            });
            return Err(InputError::Key {
                file: file.to_path_buf(),
                key: format!("{}, column energy_scope", super::runs::line_of(&m.source)),
                expected: format!(
                    "one energy scope for every row, node or cpu (fit reads CPU runs){before}"
                ),
                got: s.name().into(),
            });
        }
        scope = Some((s, m.source.as_str()));
        let p = predicted(file, &model, m)?;
        let ranks = f64::from(m.ranks.unwrap_or(m.config.nodes * m.config.cores));
        let (fk, nodes, busy) = (
            freq_key(m.config.freq),
            f64::from(m.config.nodes),
            ranks * (p.t.cpu + p.t.mem),
        );
        let entry = by_freq
            .entry(fk)
            .or_insert((m.config.freq, Moments2::default()));
        // Each run's weighted design row is (n T / E, busy / E), its right-hand side 1.
        entry.1.merge(&m.runs.power_moments().scaled(nodes, busy));
        terms.insert(m.key(), (fk, nodes, busy));
    }
    let Some((scope, _)) = scope else {
        return Ok(None);
    };
    let mut power = machine.power.clone();
    let mut fitted = Vec::new();
    for (f, moments) in by_freq.values() {
        let pts = moments.power_points();
        let (Some(i), Some(np)) = (machine.frequency_index(*f), node_fit::node_power(&pts)) else {
            continue;
        };
        power.idle[i] = Watts(np.idle);
        power.core_active[i] = Watts(np.core);
        power.core_stall[i] = Watts(np.core);
        fitted.push((*f, np, moments.n));
    }
    if fitted.is_empty() {
        return Ok(None);
    }
    largest_residuals(file, &mut fitted, &terms, runs)?;
    Ok(Some(node_power_fit(machine, fitted, scope, power)))
}

/// Each fitted frequency's largest relative energy residual over every run with energy, read
/// again; refused where the runs read are not those fitted (the file changed in between).
fn largest_residuals(
    file: &Path,
    fitted: &mut [(Hertz, NodePower, usize)],
    terms: &Terms,
    runs: &dyn Replay,
) -> InputResult<()> {
    let mut seen: HashMap<u64, (f64, f64, f64, usize)> = fitted
        .iter()
        .map(|(f, np, _)| (freq_key(*f), (np.idle, np.core, 0.0, 0)))
        .collect();
    runs.replay(&mut |run| {
        let (Some(e), Some(&(fk, nodes, busy))) = (run.energy_j, terms.get(&run.key)) else {
            return Ok(());
        };
        if let Some((idle, core, largest, n)) = seen.get_mut(&fk) {
            let rel = ((*idle * (nodes * run.time_s) + *core * busy) / e - 1.0).abs();
            *largest = largest.max(rel);
            *n += 1;
        }
        Ok(())
    })?;
    for (f, np, fitted_runs) in fitted.iter_mut() {
        match seen.get(&freq_key(*f)) {
            Some(&(_, _, largest, n)) if n == *fitted_runs => np.residual_max = largest,
            _ => {
                return Err(InputError::Mismatch(format!(
                    "{}: changed while it was read (read again for the energy residuals, its \
                     runs at {:.2} GHz are not those fitted); fit it again",
                    file.display(),
                    f.ghz()
                )));
            }
        }
    }
    Ok(())
}

/// The node power fit with the machine's `[power]` carrying it: the residual bounds rounded
/// up past the written digits, the frequencies without energy kept.
fn node_power_fit(
    machine: &Machine,
    fitted: Vec<(Hertz, NodePower, usize)>,
    scope: EnergyScope,
    mut power: Power,
) -> NodePowerFit {
    power.memory = Watts(0.0);
    // The bound the reproduction check allows is the largest residual of this very fit,
    // rounded up past the written digits, so that what `fit` writes `plan` accepts.
    let largest = fitted.iter().map(|x| x.1.residual_max).fold(0.0, f64::max);
    power.fit_residual_rel = Some(super::power_fit::round_up(largest));
    let rms = fitted.iter().map(|x| x.1.residual_rms).fold(0.0, f64::max);
    power.fit_residual_rms = Some(super::power_fit::round_up(rms));
    let kept = machine
        .frequencies
        .iter()
        .copied()
        .filter(|f| !fitted.iter().any(|x| freq_key(x.0) == freq_key(*f)))
        .collect();
    NodePowerFit {
        fitted,
        kept,
        scope,
        power,
    }
}

/// A hint where runs over several nodes look like the other scaling than they are fitted as
/// (`weak`: fitted with `--weak`), judged on each count's fullest layout: fitted as strong,
/// the time at the most nodes measured is over 1.5 times the time at the fewest (strong
/// scaling carries that growth to every count beyond; `--weak` is what such runs usually
/// need); fitted as weak, it is under the time at the fewest over 1.5 (one problem divided
/// over the nodes). `None` where the time does not move so, or with one node count.
pub fn scaling_hint(rows: &[Measured], weak: bool) -> Option<String> {
    let fullest = |n: u32| {
        rows.iter()
            .filter(|r| r.config.nodes == n)
            .max_by_key(|r| r.ranks.unwrap_or(n * r.config.cores))
    };
    let lo = rows.iter().map(|r| r.config.nodes).min()?;
    let hi = rows.iter().map(|r| r.config.nodes).max()?;
    let (a, b) = (fullest(lo)?, fullest(hi)?);
    let t = |s: f64| crate::units::fmt_duration(crate::units::Seconds(s));
    let (from, to) = (
        format!(
            "{} on {}",
            t(a.time_s),
            crate::units::count(lo, "node", "nodes")
        ),
        format!(
            "{} on {}",
            t(b.time_s),
            crate::units::count(hi, "node", "nodes")
        ),
    );
    match weak {
        _ if hi == lo => None,
        false if b.time_s > 1.5 * a.time_s => Some(format!(
            "the time rises with the nodes, from {from} to {to}: fitted as strong scaling (one \
             problem divided over the nodes), every count beyond is predicted slower still; if \
             each rank keeps its share of the work as the nodes grow (weak scaling), fit with \
             --weak"
        )),
        true if 1.5 * b.time_s < a.time_s => Some(format!(
            "the time falls with the nodes, from {from} to {to}: fitted as weak scaling (--weak: \
             each rank keeps its work, the problem grows with the nodes), which such a fall \
             rarely is; if one problem is divided over the nodes (strong scaling), fit without \
             --weak"
        )),
        _ => None,
    }
}
