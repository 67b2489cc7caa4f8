//! What the node-law chart shows, from a model and measured runs: each run's time (and energy)
//! at its node count, the model's prediction over the node counts with its interval (or a
//! one-node profile's bounds), the counts the law was fitted on, and a campaign's order of
//! measuring them. Drawn by [`crate::report::plot::node_law_svg`].

use crate::artefact::profile::ProfileFile;
use crate::calibrate::repeats::Replay;
use crate::calibrate::runs::CsvFile;
use crate::error::InputResult;
use crate::model::energy_scope::EnergyScope;
use crate::model::{Config, Model, Outcome};
use crate::search::plan::Plan;
use crate::units::Hertz;
use std::path::Path;

/// One measured run: its configuration, total ranks where given, time and energy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeRun {
    /// The configuration.
    pub config: Config,
    /// Wall time, s.
    pub time_s: f64,
    /// Energy, J, and what it covers.
    pub energy: Option<(f64, EnergyScope)>,
}

/// The model at one node count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Node count.
    pub nodes: u32,
    /// Predicted time, s.
    pub time_s: f64,
    /// The time's interval or bounds (the prediction itself at a measured count).
    pub time_band: (f64, f64),
    /// Predicted energy, J (none without measured power).
    pub energy_j: Option<f64>,
    /// The energy's interval or bounds.
    pub energy_band: Option<(f64, f64)>,
}

/// The node-law chart's data.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSeries {
    /// What and where: `hpgmgfv on icelake`.
    pub title: String,
    /// The configuration the curve is for, a node: `72 cores @ 2.4 GHz`.
    pub per_node: String,
    /// The measured runs of that configuration: `(nodes, time s, energy J of the scope)`.
    pub runs: Vec<(u32, f64, Option<f64>)>,
    /// The model at each node count drawn.
    pub curve: Vec<CurvePoint>,
    /// The counts the node law was fitted on (1 without a law).
    pub fitted_on: Vec<u32>,
    /// The band's name: `80% interval`, `bounds`; none where no count has one.
    pub band: Option<String>,
    /// The energy axis's name (the scope), none without measured power.
    pub energy: Option<String>,
    /// The node count each step of a campaign measured, in order (empty: not from a campaign).
    pub steps: Vec<u32>,
    /// The law in words, for the legend (none without a law).
    pub law: Option<String>,
}

/// Every run of a measured CSV (as `fit` and `validate` read it), in file order.
pub fn runs_of_csv(path: &Path) -> InputResult<Vec<NodeRun>> {
    let mut runs = Vec::new();
    CsvFile(path).replay(&mut |r| {
        let k = r.key;
        runs.push(NodeRun {
            config: Config {
                nodes: k.nodes,
                cores: k.cores,
                freq: Hertz(k.freq_khz as f64 * 1e3),
                gpus: k.gpus,
                gpu_clock_mhz: k.gpu_clock_mhz.map(f64::from),
            },
            time_s: r.time_s,
            energy: r.energy_j.zip(k.scope.and_then(scope_named)),
        });
        Ok(())
    })?;
    Ok(runs)
}

/// The scope a run's key names (by [`EnergyScope::name`]).
fn scope_named(name: &str) -> Option<EnergyScope> {
    [EnergyScope::Node, EnergyScope::Cpu, EnergyScope::Gpu]
        .into_iter()
        .find(|s| s.name() == name)
}

/// The chart of a fit: the model along the node axis at the configuration measured at the
/// most node counts, up to four times the largest count measured (at most the machine's), with
/// every run it was fitted on. `None` where there is no run.
pub fn fit_series(model: &Model<'_>, runs: &[NodeRun]) -> Option<NodeSeries> {
    let first = runs.first()?;
    let largest = runs.iter().map(|r| r.config.nodes).max().unwrap_or(1);
    let max = (4 * largest).min(model.machine.max_nodes).max(largest);
    Some(node_series(model, runs, (first.config, max), Vec::new()))
}

/// The chart of a plan: the model along the plan's node counts at the recommendation's
/// configuration (else the front's first, else the first run's), with `runs` and a campaign's
/// steps where the profile records them. `None` where there is nothing to draw it for.
pub fn plan_series(model: &Model<'_>, plan: &Plan, runs: &[NodeRun]) -> Option<NodeSeries> {
    let prefer = plan
        .recommendation()
        .or(plan.front.first())
        .map(|f| f.prediction.config)
        .or(runs.first().map(|r| r.config))?;
    let max = plan.space.nodes.iter().copied().max().unwrap_or(1);
    let steps = model
        .profile
        .provenance
        .iter()
        .find(|(k, _)| k == crate::artefact::profile::CAMPAIGN_KEY)
        .map(|(_, v)| crate::artefact::profile::campaign_order(v))
        .unwrap_or_default();
    Some(node_series(model, runs, (prefer, max), steps))
}

/// The runs that finished of a profile's sweep record (`profile --nodes`), read from its
/// file; none where the profile has no record or no file (a bundled one).
pub fn runs_of_sweep(profile: &Path) -> InputResult<Vec<NodeRun>> {
    let Ok(text) = crate::input::read_file(profile) else {
        return Ok(Vec::new());
    };
    let file = ProfileFile::parse(profile, &text)?;
    let Some(sweep) = file.sweep else {
        return Ok(Vec::new());
    };
    Ok(sweep
        .record
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| {
            let e = &r.readings.energy_j;
            let domains: Vec<String> = e.keys().cloned().collect();
            NodeRun {
                config: Config {
                    nodes: r.nodes,
                    cores: r.cores,
                    freq: Hertz(r.freq_hz),
                    gpus: r.gpus,
                    gpu_clock_mhz: r.gpu_clock_mhz.map(f64::from),
                },
                time_s: r.wall_s,
                energy: (!e.is_empty()).then(|| (e.values().sum(), EnergyScope::of(&domains))),
            }
        })
        .collect())
}

/// The node counts to draw up to `max`: every count up to 256, then about 64 a doubling, and
/// each of `also`.
fn counts(max: u32, also: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=max.min(256)).collect();
    let mut n = 256.0f64;
    while n < f64::from(max) {
        n *= 2f64.powf(1.0 / 64.0);
        v.push((n.round() as u32).min(max));
    }
    v.extend(also.iter().copied().filter(|&a| a <= max));
    v.sort_unstable();
    v.dedup();
    v
}

/// The configuration a node: the one measured at the most node counts (`prefer` among equals,
/// then the most cores), else `prefer`.
fn chosen(runs: &[NodeRun], prefer: Config, reference_mhz: Option<f64>) -> Config {
    let key = |c: &Config| {
        let clock = c.gpu_clock_mhz.or(reference_mhz).map(f64::to_bits);
        (c.cores, c.freq.0.to_bits(), c.gpus, clock)
    };
    let mut best: Option<(usize, bool, u32, Config)> = None;
    for r in runs {
        let k = key(&r.config);
        let mut nodes: Vec<u32> = runs
            .iter()
            .filter(|s| key(&s.config) == k)
            .map(|s| s.config.nodes)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        let rank = (nodes.len(), k == key(&prefer), r.config.cores, r.config);
        if best.is_none_or(|b| (rank.0, rank.1, rank.2) > (b.0, b.1, b.2)) {
            best = Some(rank);
        }
    }
    best.map_or(prefer, |b| Config { nodes: 1, ..b.3 })
}

/// The chart's data: the model along the node axis up to `max_nodes` at the configuration of
/// `runs` measured at the most node counts (else `prefer`), with those runs; `steps` is a
/// campaign's order of measuring (empty where the profile is not a campaign's).
pub fn node_series(
    model: &Model<'_>,
    runs: &[NodeRun],
    (prefer, max_nodes): (Config, u32),
    steps: Vec<u32>,
) -> NodeSeries {
    // A run without a GPU clock ran at the profile's reference clock where it has a clock
    // law: runs at other clocks are other configurations, not the spread of this one.
    let reference_mhz = model.profile.gpu_clock.as_ref().map(|l| l.reference_mhz);
    let c = chosen(runs, prefer, reference_mhz);
    let clock = |x: &Config| x.gpu_clock_mhz.or(reference_mhz).filter(|_| x.gpus > 0);
    let scope: EnergyScope = model.profile.energy_scope();
    let time_only = model.machine.time_only();
    let same = |r: &&NodeRun| {
        r.config.cores == c.cores
            && r.config.freq == c.freq
            && r.config.gpus == c.gpus
            && clock(&r.config) == clock(&c)
    };
    let picked: Vec<(u32, f64, Option<f64>)> = runs
        .iter()
        .filter(same)
        .map(|r| {
            let e = r.energy.filter(|e| e.1 == scope && !time_only).map(|e| e.0);
            (r.config.nodes, r.time_s, e)
        })
        .collect();
    let fitted_on = model
        .profile
        .node_law
        .as_ref()
        .map_or(vec![1], |l| l.measured_nodes.clone());
    let largest = picked
        .iter()
        .map(|r| r.0)
        .chain(fitted_on.iter().copied())
        .max();
    let max = max_nodes.max(largest.unwrap_or(1)).max(2);
    let mut also: Vec<u32> = picked.iter().map(|r| r.0).collect();
    also.extend(&fitted_on);
    let mut band = None;
    let curve = counts(max, &also)
        .into_iter()
        .filter_map(|n| match model.predict(Config { nodes: n, ..c }) {
            Ok(Outcome::Finite(p)) => {
                if let Some(i) = p.interval {
                    band.get_or_insert_with(|| i.what());
                }
                let t = p.interval.map_or((p.time.0, p.time.0), |i| i.time_s);
                let e = p.interval.map_or((p.energy.0, p.energy.0), |i| i.energy_j);
                Some(CurvePoint {
                    nodes: n,
                    time_s: p.time.0,
                    time_band: t,
                    energy_j: (!time_only).then_some(p.energy.0),
                    energy_band: (!time_only).then_some(e),
                })
            }
            _ => None,
        })
        .collect();
    NodeSeries {
        title: format!("{} on {}", model.profile.program, model.machine.name),
        per_node: format!(
            "{} @ {} GHz{}{}",
            crate::units::count(c.cores, "core", "cores"),
            c.freq.ghz(),
            gpus_words(c.gpus),
            clock(&c).map_or(String::new(), |m| format!(" @ {m} MHz"))
        ),
        runs: picked,
        curve,
        fitted_on,
        band,
        energy: (!time_only).then(|| scope.name().to_string()),
        steps,
        law: model.profile.node_law.as_ref().map(|l| l.law().describe()),
    }
}

/// ` + 2 GPUs`, or nothing without GPUs.
fn gpus_words(g: u32) -> String {
    match g {
        0 => String::new(),
        1 => " + 1 GPU".into(),
        g => format!(" + {g} GPUs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_every_count_then_a_geometric_few_and_the_measured_ones() {
        let v = counts(16, &[3, 40]);
        assert_eq!(v, (1..=16).collect::<Vec<_>>());
        let v = counts(4096, &[1000]);
        assert!(v.contains(&1000) && v.contains(&4096) && v.len() < 256 + 4 * 64 + 2);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
    }
}
