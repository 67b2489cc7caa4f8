//! The plan: the searched space, its exact front with every term, and the recommendation.

use super::query::{self, Answer, Query, Reference};
use super::space::Space;
use super::{SearchOutcome, search_filtered};
use crate::error::{InputError, InputResult};
use crate::model::{Config, Model, Outcome, Prediction};
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};
use std::path::PathBuf;

/// A front point with its full prediction and how many configurations tie with it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontEntry {
    /// The representative's prediction.
    pub prediction: Prediction,
    /// Configurations with exactly this `(T, E)`, the representative included.
    pub ties: u64,
}

/// Everything `plan` reports.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Machine name.
    pub machine: String,
    /// Machine file.
    pub machine_file: PathBuf,
    /// Program name.
    pub program: String,
    /// Profile file.
    pub profile_file: PathBuf,
    /// What every predicted energy covers: the profile's energy scope, or the node's where the
    /// machine adds the host's to a profile of GPU energy.
    pub energy_scope: crate::model::energy_scope::EnergyScope,
    /// How that energy was come by ([`Profile::planned_energy`]).
    ///
    /// [`Profile::planned_energy`]: crate::model::workload::Profile::planned_energy
    pub energy_read: crate::model::energy_scope::EnergyRead,
    /// The space searched.
    pub space: Space,
    /// Configurations in the space.
    pub evaluated: u64,
    /// Network-saturated configurations.
    pub saturated: u64,
    /// Configurations discarded by the dominance bounds.
    pub pruned: u64,
    /// The front, fastest first.
    pub front: Vec<FrontEntry>,
    /// The query.
    pub query: Query,
    /// The slowdown reference, when a slowdown was asked for.
    pub reference: Option<Reference>,
    /// The answer.
    pub answer: Answer,
    /// What the planner left out or assumed, for the user to see.
    pub notes: Vec<String>,
    /// What the recommendation must warn of (filled by the caller, which knows the inputs).
    pub warnings: Vec<String>,
    /// Node counts to measure before trusting the recommendation: where it lies beyond twice
    /// the largest measured count, or its interval is wider than [`MEASURE_TOLERANCE`], with
    /// their cost (MODEL.md 6c d, i); empty otherwise.
    pub measure_next: Vec<MeasureNext>,
    /// Where the recommendation's interval crosses the deadline or the budget (MODEL.md 6c i).
    pub risk: Option<Risk>,
    /// The front point next to the recommendation past its limit whose interval reaches within
    /// it: what measuring it could save (MODEL.md 7).
    pub chance: Option<super::chance::Chance>,
    /// Decimals that print the machine's frequencies apart in GHz ([`Machine::ghz_decimals`]).
    ///
    /// [`Machine::ghz_decimals`]: crate::model::machine::Machine::ghz_decimals
    pub ghz_decimals: usize,
}

/// The relative half-width of a time interval beyond which the recommended node count is worth
/// measuring before the run.
pub const MEASURE_TOLERANCE: f64 = 0.10;

/// A recommendation whose interval crosses the limit it was chosen under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Risk {
    /// `deadline` (s) or `budget` (J).
    pub what: &'static str,
    /// The limit.
    pub limit: f64,
    /// The recommendation's interval end beyond it.
    pub far_end: f64,
    /// Whether that range is bounds (a profile measured on one node), not an interval.
    pub bounds: bool,
    /// The front configuration that meets the limit with its interval's far end (least energy
    /// for a deadline, least time for a budget), when one does.
    pub safe: Option<Prediction>,
}

/// The risk in words, for the warnings: times and energies as every other line prints them
/// (`7m00.0s`, `2.07 MJ`), and bounds called bounds.
pub fn describe_risk(r: &Risk, coverage: f64) -> String {
    let fmt = |x: f64| {
        if r.what == "deadline" {
            fmt_duration(Seconds(x))
        } else {
            fmt_energy(Joules(x))
        }
    };
    let (range, reach) = if r.bounds {
        ("bounds", "reach")
    } else {
        ("interval", "reaches")
    };
    let safe = match &r.safe {
        Some(p) => format!(
            "{} meets it even at the far end of its {range} ({}, {} predicted)",
            label(&p.config),
            fmt_duration(p.time),
            fmt_energy(p.energy)
        ),
        None => format!("no configuration of the front meets it at the far end of its {range}"),
    };
    let whose = if r.bounds {
        "bounds (no gain past the node measured)".to_string()
    } else {
        format!("{} interval", crate::units::coverage_pct(coverage))
    };
    format!(
        "{} risk: the recommendation's {whose} {reach} {}, past the {} of {}; {safe}",
        r.what,
        fmt(r.far_end),
        r.what,
        fmt(r.limit)
    )
}

/// The risk of the recommendation `pick` under `query`: its interval's far end past the
/// deadline or budget, and the front point whose far end is within it.
pub fn risk(query: &Query, front: &[FrontEntry], pick: Option<usize>) -> Option<Risk> {
    let rec = &front.get(pick?)?.prediction;
    let hi_t = |p: &Prediction| p.interval.map_or(p.time.0, |i| i.time_s.1);
    let hi_e = |p: &Prediction| p.interval.map_or(p.energy.0, |i| i.energy_j.1);
    let within = |p: &Prediction| {
        query.deadline.is_none_or(|d| hi_t(p) <= d.0) && query.budget.is_none_or(|b| hi_e(p) <= b.0)
    };
    let (what, limit, far_end) = match (query.deadline, query.budget) {
        (Some(d), _) if hi_t(rec) > d.0 => ("deadline", d.0, hi_t(rec)),
        (_, Some(b)) if hi_e(rec) > b.0 => ("budget", b.0, hi_e(rec)),
        _ => return None,
    };
    let safe = front.iter().map(|f| &f.prediction).filter(|p| within(p));
    let safe = if what == "deadline" {
        safe.min_by(|a, b| a.energy.0.total_cmp(&b.energy.0))
    } else {
        safe.min_by(|a, b| a.time.0.total_cmp(&b.time.0))
    };
    Some(Risk {
        what,
        limit,
        far_end,
        bounds: rec
            .interval
            .is_some_and(|i| i.kind == crate::model::evidence::IntervalKind::Bounds),
        safe: safe.cloned(),
    })
}

/// A node count to measure next and what it costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasureNext {
    /// The configuration to run (the recommendation's cores, frequency and GPUs).
    pub config: Config,
    /// Its cost, node-hours: `n` times the high end of its time interval (the prediction
    /// where it has none).
    pub node_hours: f64,
}

/// The node counts to measure before trusting the recommendation. Beyond twice the largest
/// measured count: doublings of the largest measured count below the recommendation (at most
/// two: the first and the last), then the recommended count itself. Elsewhere, the
/// recommended count alone where its time interval is wider than [`MEASURE_TOLERANCE`] either
/// side.
pub fn measure_next(model: &Model<'_>, rec: &Prediction) -> InputResult<Vec<MeasureNext>> {
    let largest = model.largest_measured();
    let n = rec.config.nodes;
    if u64::from(n) <= 2 * u64::from(largest) {
        let wide = rec
            .interval
            .is_some_and(|i| (i.time_s.1 - i.time_s.0) / 2.0 > MEASURE_TOLERANCE * rec.time.0);
        let t = rec.interval.map_or(rec.time.0, |i| i.time_s.1);
        return Ok(if wide && n > 1 {
            vec![MeasureNext {
                config: rec.config,
                node_hours: f64::from(n) * t / 3600.0,
            }]
        } else {
            Vec::new()
        });
    }
    let mut counts: Vec<u32> =
        std::iter::successors(Some(largest.saturating_mul(2)), |&c| c.checked_mul(2))
            .take_while(|&c| c < n)
            .collect();
    if counts.len() > 2 {
        counts = vec![counts[0], counts[counts.len() - 1]];
    }
    counts.push(n);
    let mut out = Vec::new();
    for c in counts {
        let config = Config {
            nodes: c,
            ..rec.config
        };
        if let Outcome::Finite(p) = model.predict(config)? {
            let t = p.interval.map_or(p.time.0, |i| i.time_s.1);
            out.push(MeasureNext {
                config,
                node_hours: f64::from(c) * t / 3600.0,
            });
        }
    }
    Ok(out)
}

impl Plan {
    /// Whether the plan ranks by time and node-hours (no power measured): its "energies" are
    /// node-seconds. Every prediction of a plan is of one machine, so its first point says it
    /// for all (asked once a row, a scan of the front made a page of a long front quadratic).
    pub fn time_only(&self) -> bool {
        self.front.first().is_some_and(|f| f.prediction.time_only)
    }

    /// The recommended configuration, if the query is feasible.
    pub fn recommendation(&self) -> Option<&FrontEntry> {
        self.answer.pick.map(|i| &self.front[i])
    }
}

/// A configuration as users write it: `(n, c, f GHz, g)`.
pub fn label(c: &Config) -> String {
    c.label()
}

/// Searches `space` and answers `query`. `reference` names the slowdown reference configuration
/// (default: the fastest configuration of the space).
pub fn plan(
    model: &Model<'_>,
    space: &Space,
    query: Query,
    reference: Option<Config>,
) -> InputResult<Plan> {
    space.validate(model.machine)?;
    let mut space = space.clone();
    let notes: Vec<String> = space
        .filter_single_process(model.profile)?
        .into_iter()
        .chain(space.filter_memory(model.machine, model.profile)?)
        .collect();
    let space = &space;
    let outcome = search_filtered(model, space, query.min_efficiency)?;
    let front = entries(model, &outcome);
    refuse_unevaluable(model, &front)?;
    let reference = reference_of(model, &query, reference, &front)?;
    let configs: Vec<Config> = front.iter().map(|f| f.prediction.config).collect();
    let (far, coverage) = far_ends(model, &front);
    let ranking = query::Ranking {
        cost: match model.machine.time_only() {
            true => query::Cost::NodeHours,
            false => query::Cost::Energy,
        },
        far: (&far, coverage),
    };
    let mut answer = query::answer(&query, &outcome.front, (reference.as_ref(), ranking), |p| {
        let i = outcome.front.iter().position(|q| q == p).unwrap_or(0);
        configs.get(i).map(label).unwrap_or_default()
    });
    if let Some(m) = query.min_efficiency.filter(|_| front.is_empty()) {
        answer.reason = nearest_efficiency(model, space, m)?;
    } else if let (Some(m), true) = (query.min_efficiency, answer.feasible) {
        answer.reason += &format!(", among configurations of predicted parallel efficiency >= {m}");
    }
    let measure_next = match answer.pick.and_then(|i| front.get(i)) {
        Some(rec) => measure_next(model, &rec.prediction)?,
        None => Vec::new(),
    };
    let risk = risk(&query, &front, answer.pick);
    let chance = answer.pick.and_then(|i| {
        let at = |j: Option<usize>| j.and_then(|j| front.get(j)).map(|f| &f.prediction);
        let pair = (at(i.checked_sub(1)), at(Some(i + 1)));
        super::chance::chance(&answer, &front[i].prediction, pair, ranking.cost)
    });
    let (energy_scope, energy_read) = model.profile.planned_energy(model.machine);
    Ok(Plan {
        measure_next,
        risk,
        chance,
        machine: model.machine.name.clone(),
        machine_file: model.machine.file.clone(),
        program: model.profile.program.clone(),
        profile_file: model.profile.file.clone(),
        energy_scope,
        energy_read,
        space: space.clone(),
        evaluated: outcome.evaluated,
        saturated: outcome.saturated,
        pruned: outcome.pruned,
        front,
        query,
        reference,
        answer,
        notes,
        warnings: Vec::new(),
        ghz_decimals: model.machine.ghz_decimals(),
    })
}

/// Refuses a front with a point the model cannot evaluate (a time or energy not finite, a time
/// of 0 or less, a negative energy), naming the files and the configuration.
fn refuse_unevaluable(model: &Model<'_>, front: &[FrontEntry]) -> InputResult<()> {
    if let Some(bad) = front.iter().find(|f| {
        let p = &f.prediction;
        !(p.time.0.is_finite() && p.energy.0.is_finite() && p.time.0 > 0.0 && p.energy.0 >= 0.0)
    }) {
        return Err(InputError::Mismatch(format!(
            "{} (with {}): the model gives {} s and {} J at {}: the inputs hold values the \
             model cannot evaluate (check the profile's baseline points, node_law and \
             gpu_clock and the machine file for extreme numbers: time and energy are never 0 \
             or less)",
            model.profile.file.display(),
            model.machine.file.display(),
            bad.prediction.time.0,
            bad.prediction.energy.0,
            label(&bad.prediction.config)
        )));
    }
    Ok(())
}

/// Each front entry's far end `(T, E)`: the high ends of its interval, the prediction itself
/// where it has none (a measured node count); and the intervals' coverage. Only a fitted node
/// law's intervals are calibrated (docs/NODE_AXIS.md): one node's bounds beyond it span perfect
/// scaling to none, so a profile without a law ranks by the prediction (no far ends).
fn far_ends(model: &Model<'_>, front: &[FrontEntry]) -> (Vec<(f64, f64)>, Option<f64>) {
    if model.profile.node_law.is_none() {
        return (Vec::new(), None);
    }
    let coverage = front
        .iter()
        .find_map(|f| f.prediction.interval.map(|i| i.coverage));
    let far = front
        .iter()
        .map(|f| {
            let p = &f.prediction;
            p.interval.map_or((p.time.0, p.energy.0), |i| {
                (i.time_s.1.max(p.time.0), i.energy_j.1.max(p.energy.0))
            })
        })
        .collect();
    (far, coverage)
}

/// The slowdown reference: the configuration the user named, else the fastest of the front.
fn reference_of(
    model: &Model<'_>,
    query: &Query,
    reference: Option<Config>,
    front: &[FrontEntry],
) -> InputResult<Option<Reference>> {
    Ok(match (query.slowdown, reference) {
        (None, _) => None,
        (Some(_), Some(cfg)) => match model
            .predict(cfg)
            .map_err(|e| e.under("--config", "--reference"))?
        {
            Outcome::Finite(p) => Some(Reference {
                time: p.time,
                what: format!("the reference {}", label(&cfg)),
            }),
            Outcome::Saturated { rho, .. } => {
                return Err(InputError::Mismatch(format!(
                    "--reference {}: the network is saturated there (rho = {rho:.3}), so it has no finite time",
                    label(&cfg)
                )));
            }
        },
        (Some(_), None) => front.first().map(|f| Reference {
            time: f.prediction.time,
            what: format!("the fastest configuration {}", label(&f.prediction.config)),
        }),
    })
}

/// Why no configuration reaches `min`: the configuration of highest predicted parallel
/// efficiency in the space.
fn nearest_efficiency(model: &Model<'_>, space: &Space, min: f64) -> InputResult<String> {
    Ok(match super::best_efficiency(model, space)? {
        Some((p, pe)) => format!(
            "no configuration has a predicted parallel efficiency >= {min}; the highest is \
             {pe:.3}, at {} ({:.3} s, {:.1} J)",
            label(&p.config),
            p.time.0,
            p.energy.0
        ),
        None => format!(
            "no configuration has a predicted parallel efficiency >= {min} (none has a finite \
             prediction)"
        ),
    })
}

fn entries(model: &Model<'_>, outcome: &SearchOutcome) -> Vec<FrontEntry> {
    outcome
        .front
        .iter()
        .filter_map(|p| {
            let g = outcome.group_of(p.key)?;
            let n = p.key.0;
            let ev = g.eval(n, model.growth_factor(n))?;
            Some(FrontEntry {
                prediction: g.prediction(n, &ev),
                ties: p.ties,
            })
        })
        .collect()
}
