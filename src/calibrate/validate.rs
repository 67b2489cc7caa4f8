//! `jouleplan validate`: the model's predictions against measured runs (held out of the fit
//! or not: the rows given are scored as they are, [`fitted_on`] counts the fit's own), in the
//! layout of the seed's Table 2 (mean, standard deviation and maximum of the absolute
//! percentage error, time and energy separately) plus SMAPE. The measurements are either a
//! CSV of measured runs, or the profile's own measured points held out of the fit
//! (`--use-cores`), or each interior measured core count in turn (leave-one-out).

use super::core_fill::fit_to_machine;
use super::repeats::{ConfigKey, Repeats, Replay};
use super::reproduce::EnergyScope;
use super::runs::Measured;
use super::trust::{Checks, Trust, bind};
use crate::error::{InputError, InputResult};
use crate::model::gpu_clock::{ClockInterval, mhz_list};
use crate::model::machine::Machine;
use crate::model::workload::{BaselinePoint, Profile};
use crate::model::{Config, Model, Outcome};
use std::collections::HashMap;
use std::path::Path;

/// One measured configuration against its prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The measurement.
    pub measured: Measured,
    /// Predicted time, s (`None`: network-saturated).
    pub time_s: Option<f64>,
    /// Predicted energy of the measured scope, J.
    pub energy_j: Option<f64>,
    /// Why nothing was predicted there (outside what the profile covers), when so.
    pub not_predicted: Option<String>,
    /// The prediction's interval at the node counts not measured: time, and energy of the
    /// measured scope where it has one.
    pub interval: Option<(Range, Option<Range>)>,
    /// Whether it is at a GPU clock outside the clock law's measured range (the law carried
    /// beyond it: [`Model::extrapolate_gpu_clocks`]).
    pub extrapolated: bool,
}

/// A `(low, high)` range.
pub type Range = (f64, f64);

/// How often the intervals held the measurements.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coverage {
    /// Points with a time interval.
    pub time_points: usize,
    /// Of which the interval held the measured time.
    pub time_covered: usize,
    /// Points with an energy interval and measured energy.
    pub energy_points: usize,
    /// Of which the interval held the measured energy.
    pub energy_covered: usize,
}

/// The intervals' coverage of the measured (mean) values.
pub fn coverage(rows: &[Compared]) -> Coverage {
    let inside = |v: f64, (lo, hi): (f64, f64)| lo <= v && v <= hi;
    let mut c = Coverage::default();
    for r in rows {
        let Some((t, e)) = r.interval else { continue };
        c.time_points += 1;
        c.time_covered += usize::from(inside(r.measured.time_s, t));
        if let (Some(e), Some((m, _))) = (e, r.measured.energy) {
            c.energy_points += 1;
            c.energy_covered += usize::from(inside(m, e));
        }
    }
    c
}

impl Compared {
    /// Leaves the energy unpredicted (and out of the interval): it is not scored.
    fn unscore_energy(&mut self) {
        self.energy_j = None;
        if let Some((t, _)) = self.interval {
            self.interval = Some((t, None));
        }
    }

    /// Relative time error (predicted / measured - 1).
    pub fn time_error(&self) -> Option<f64> {
        self.time_s.map(|t| t / self.measured.time_s - 1.0)
    }

    /// Relative energy error.
    pub fn energy_error(&self) -> Option<f64> {
        match (self.energy_j, self.measured.energy) {
            (Some(p), Some((m, _))) => Some(p / m - 1.0),
            _ => None,
        }
    }
}

/// Mean, standard deviation and maximum of the absolute percentage error, and SMAPE.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorStats {
    /// Points.
    pub n: usize,
    /// Mean absolute percentage error, %.
    pub mape: f64,
    /// Standard deviation of the absolute percentage error, %.
    pub sd: f64,
    /// Largest absolute percentage error, %.
    pub max: f64,
    /// Symmetric MAPE, %: mean of |p - m| / ((|p| + |m|) / 2).
    pub smape: f64,
}

/// Error statistics accumulated one `(predicted, measured)` pair at a time (the standard
/// deviation by Welford's update), so that every run counts without being kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatsAcc {
    n: usize,
    mean: f64,
    m2: f64,
    max: f64,
    smape: f64,
}

impl StatsAcc {
    /// Adds a pair.
    pub fn add(&mut self, p: f64, m: f64) {
        let ape = 100.0 * (p - m).abs() / m.abs();
        self.n += 1;
        let d = ape - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (ape - self.mean);
        self.max = self.max.max(ape);
        self.smape += 200.0 * (p - m).abs() / (p.abs() + m.abs());
    }

    /// The statistics of the pairs added.
    pub fn stats(&self) -> ErrorStats {
        if self.n == 0 {
            return ErrorStats::default();
        }
        let n = self.n as f64;
        ErrorStats {
            n: self.n,
            mape: self.mean,
            sd: (self.m2 / n).sqrt(),
            max: self.max,
            smape: self.smape / n,
        }
    }
}

/// Predicts every measurement. A configuration the profile cannot predict (a core count
/// outside the measured range, a frequency it cannot derive) is kept with the reason, and left
/// out of the statistics.
pub fn compare(model: &Model<'_>, measured: &[Measured]) -> InputResult<Vec<Compared>> {
    measured
        .iter()
        .map(|m| {
            let outcome = match model.predict_ranks(m.config, m.ranks) {
                Ok(o) => o,
                Err(e) => {
                    return Ok(Compared {
                        measured: m.clone(),
                        time_s: None,
                        energy_j: None,
                        // Said of the row's configuration: the model names `--config`, a flag
                        // no measured row came from.
                        not_predicted: Some(e.under("--config", "its configuration").to_string()),
                        interval: None,
                        extrapolated: false,
                    });
                }
            };
            Ok(match outcome {
                Outcome::Finite(p) => {
                    let ev = crate::model::Eval {
                        time: p.time.0,
                        energy: p.energy.0,
                        derived_energy: p.energy.0,
                        rho: p.rho,
                        t: p.t,
                        e: p.e,
                    };
                    let scope = m.energy.map(|(_, s)| s);
                    let energy_j = scope.map(|s| s.model_energy(&ev));
                    let interval = p.interval.map(|i| {
                        let e = match (scope, energy_j) {
                            (Some(EnergyScope::Node), _) => Some(i.energy_j),
                            (Some(EnergyScope::Cpu), Some(e)) => Some(i.cpu_energy(p.time.0, e)),
                            // GPU energy: the GPU clock's part (MODEL.md 6e).
                            (Some(EnergyScope::Gpu), Some(e)) if i.gpu_clock != (0.0, 0.0) => {
                                Some((e * i.energy_span.0, e * i.energy_span.1))
                            }
                            _ => None,
                        };
                        (i.time_s, e)
                    });
                    Compared {
                        measured: m.clone(),
                        time_s: Some(p.time.0),
                        energy_j,
                        not_predicted: None,
                        interval,
                        extrapolated: model.beyond_clock_range(&m.config),
                    }
                }
                Outcome::Saturated { .. } => Compared {
                    measured: m.clone(),
                    time_s: None,
                    energy_j: None,
                    not_predicted: Some("network-saturated (rho >= 1)".into()),
                    interval: None,
                    extrapolated: false,
                },
            })
        })
        .collect()
}

/// Time and energy statistics of compared points, every measured run counted (points not
/// predicted are left out, and counted by the caller): the runs read again from `runs`, or,
/// without it, each row taken as one run.
pub fn summary(
    rows: &[Compared],
    runs: Option<&dyn Replay>,
) -> InputResult<(ErrorStats, ErrorStats)> {
    let (mut t, mut e) = (StatsAcc::default(), StatsAcc::default());
    let Some(runs) = runs else {
        for r in rows {
            if let Some(p) = r.time_s {
                t.add(p, r.measured.time_s);
            }
            if let (Some(p), Some((m, _))) = (r.energy_j, r.measured.energy) {
                e.add(p, m);
            }
        }
        return Ok((t.stats(), e.stats()));
    };
    let predicted: HashMap<ConfigKey, (Option<f64>, Option<f64>)> = rows
        .iter()
        .map(|r| (r.measured.key(), (r.time_s, r.energy_j)))
        .collect();
    // A run whose configuration is not among the rows (a refit that failed) is left out.
    runs.replay(&mut |run| {
        if let Some(&(pt, pe)) = predicted.get(&run.key) {
            if let Some(p) = pt {
                t.add(p, run.time_s);
            }
            if let (Some(p), Some(m)) = (pe, run.energy_j) {
                e.add(p, m);
            }
        }
        Ok(())
    })?;
    Ok((t.stats(), e.stats()))
}

/// A validation: what was fitted and predicted, the rows and their statistics.
#[derive(Debug, Clone)]
pub struct Validation {
    /// What was fitted and what predicted.
    pub title: String,
    /// Each measured configuration against its prediction.
    pub rows: Vec<Compared>,
    /// The intervals' nominal coverage.
    pub coverage: f64,
    /// Whether the ranges beyond the measured node counts are bounds (a profile measured on
    /// one node, no node law), not intervals: then no coverage is stated.
    pub bounds: bool,
    /// Time and energy error statistics over every measured run.
    pub stats: (ErrorStats, ErrorStats),
    /// Why the energy was not scored (the runs measured a scope the profile's model does not
    /// predict), when so: the energy statistics are then empty.
    pub energy_not_scored: Option<String>,
    /// How many rows are at what the profile was fitted on ([`fitted_on`]): its fit saw runs
    /// there, so their errors show how it reproduces them, not how it predicts. `None` where
    /// not counted.
    pub fitted_on: Option<usize>,
    /// The errors at the rows not at what the profile was fitted on, where some rows are and
    /// some are not: how it predicts, apart from how it reproduces its runs.
    pub not_fitted: Option<NotFitted>,
}

/// The order rows are shown in: by configuration (nodes, cores, frequency, GPUs, as the
/// columns), runs of one configuration in the order read.
pub fn by_configuration(a: &Compared, b: &Compared) -> std::cmp::Ordering {
    let (x, y) = (&a.measured.config, &b.measured.config);
    (x.nodes, x.cores)
        .cmp(&(y.nodes, y.cores))
        .then(x.freq.0.total_cmp(&y.freq.0))
        .then(x.gpus.cmp(&y.gpus))
}

impl Validation {
    /// A block of `rows`, sorted by configuration ([`by_configuration`], not the file's
    /// order), its statistics over every run read again from `runs` (without it, each row is
    /// one run).
    pub fn new(
        title: String,
        mut rows: Vec<Compared>,
        coverage: f64,
        runs: Option<&dyn Replay>,
    ) -> InputResult<Validation> {
        // The statistics are over every run, in any order.
        let stats = summary(&rows, runs)?;
        rows.sort_by(by_configuration);
        Ok(Validation {
            title,
            rows,
            coverage,
            bounds: false,
            stats,
            energy_not_scored: None,
            fitted_on: None,
            not_fitted: None,
        })
    }

    /// What its ranges beyond the measured node counts are: `80% intervals`, or bounds from
    /// perfect division of the work to no gain (a one-node profile: no coverage to state).
    pub fn ranges_name(&self) -> String {
        if self.bounds {
            "bounds (perfect division of the work to no gain past the node measured)".into()
        } else {
            format!("{} intervals", crate::units::coverage_pct(self.coverage))
        }
    }
}

/// Rows not predicted, grouped by why, most frequent first.
pub fn not_predicted_reasons(rows: &[Compared]) -> Vec<(String, usize)> {
    let mut by: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in rows {
        if let Some(why) = r.not_predicted.as_deref() {
            *by.entry(why).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = by.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// A measured baseline point as a one-node measurement.
pub fn as_measured(profile: &Profile, p: &BaselinePoint) -> Measured {
    let scope = profile.point_scope(p);
    Measured {
        config: Config {
            nodes: 1,
            cores: p.cores,
            freq: p.freq,
            gpus: p.gpus,
            gpu_clock_mhz: None,
        },
        ranks: None,
        time_s: p.wall_time.0,
        energy: p.energy.map(|e| (e.0, scope)),
        source: "profile point".into(),
        runs: Repeats::one(p.wall_time.0, p.energy.map(|e| e.0)),
    }
}

/// Each measured core count strictly inside the measured range of its `(f, g)` group, left
/// out in turn and predicted from the others.
pub fn leave_cores_out(
    machine: &Machine,
    profile: &Profile,
    checks: &Checks,
) -> InputResult<Validation> {
    let cores = profile.core_counts();
    let mut rows = Vec::new();
    for &c in cores.iter().skip(1).take(cores.len().saturating_sub(2)) {
        let mut p = profile.clone();
        let keep: Vec<u32> = cores.iter().copied().filter(|&k| k != c).collect();
        let held = p.restrict_cores(&keep);
        let measured: Vec<Measured> = held.iter().map(|h| as_measured(&p, h)).collect();
        fit_to_machine(&mut p, machine);
        let mut t = Trust::default();
        let mut checks = *checks;
        checks.accept.model_error = true;
        let model = bind(machine, &p, &checks, &mut t, &mut Vec::new())?;
        rows.extend(compare(&model, &measured)?);
    }
    Validation::new(
        "leave-one-out: each interior measured core count predicted from the others".into(),
        rows,
        crate::model::evidence::DEFAULT_COVERAGE,
        None,
    )
}

/// Why `--loo` left nothing out of `profile` (fewer than 3 measured core counts), and what
/// stands in for it where the profile has a GPU clock law: the law's own left-out error, which
/// `fit` kept as its interval (MODEL.md 6e).
pub fn nothing_left_out(profile: &Profile) -> String {
    let cores = profile.core_counts();
    let mut s = format!(
        "--loo left nothing out: it predicts each measured core count that lies between two \
         others from the rest, and the profile was measured at {} ({}); measure 3 or more core \
         counts to score the core-count fill this way",
        crate::units::count(cores.len() as u64, "core count", "core counts"),
        crate::units::count_ranges(cores.iter().copied())
    );
    if let Some((law, i)) = profile
        .gpu_clock
        .as_ref()
        .and_then(|l| l.interval.as_ref().map(|i| (l, i)))
    {
        let energy = match law.power {
            Some(_) => format!(" and {:.1}% in GPU energy", 100.0 * i.energy_rel),
            None => String::new(),
        };
        s.push_str(&format!(
            ". Its GPU clock law was scored that way when `fit` made it: the clocks measured \
             between two others ({} MHz, of {} MHz), each predicted from the rest, missed by at \
             most {:.1}% in time{energy} (at least {:.0}% and {:.0}%), the half-widths of the \
             intervals at the clocks not measured; to score the law on clocks it was not fitted \
             on, run `jouleplan validate --measured` on runs at those clocks",
            mhz_list(&law.measured_mhz[1..law.measured_mhz.len().saturating_sub(1)]),
            mhz_list(&law.measured_mhz),
            100.0 * i.time_rel,
            100.0 * ClockInterval::TIME_FLOOR,
            100.0 * ClockInterval::ENERGY_FLOOR,
        ));
    }
    s
}

/// How many of `measured` are at what `profile` was fitted on ([`at_fitted`]).
pub fn fitted_on(profile: &Profile, measured: &[Measured]) -> usize {
    measured.iter().filter(|m| at_fitted(profile, m)).count()
}

/// Whether `m` is at what `profile` was fitted on: one of its measured points (one node, the
/// same cores, frequency and GPUs), or a node count over one its node law was fitted on (`fit`
/// fits the law on every run at those counts, at whatever layout; the law does not keep which,
/// so a layout never run at such a count counts too); a GPU row only at a clock its clock law
/// was fitted at, as written.
pub fn at_fitted(profile: &Profile, m: &Measured) -> bool {
    let key = |c: u32, f: crate::units::Hertz, g: u32| (c, crate::model::workload::freq_key(f), g);
    let clock_fitted = match (&profile.gpu_clock, m.config.gpu_clock_mhz) {
        (Some(law), Some(mhz)) if m.config.gpus > 0 => {
            law.measured_mhz.iter().any(|f| (f - mhz).abs() < 1e-9)
        }
        (None, Some(mhz)) if m.config.gpus > 0 => profile.measured_at_clock(mhz),
        _ => true,
    };
    let law_nodes: &[u32] = profile.node_law.as_ref().map_or(&[], |l| &l.measured_nodes);
    let own = || {
        profile.baseline.iter().any(|p| {
            p.measured
                && key(p.cores, p.freq, p.gpus) == key(m.config.cores, m.config.freq, m.config.gpus)
        })
    };
    // Over one node, any layout at a count the law was fitted on: the law keeps its counts,
    // not the layouts its runs had (which need not be the one-node points').
    clock_fitted
        && match m.config.nodes {
            1 => own(),
            n => law_nodes.contains(&n),
        }
}

/// The error statistics over the rows not at what `profile` was fitted on (every run of
/// them, read again from `runs` where given): how the model predicts, apart from how it
/// reproduces its own runs. `None` where every row, or none, is at a fitted point.
fn not_fitted_stats(
    profile: &Profile,
    rows: &[Compared],
    runs: Option<&dyn Replay>,
) -> InputResult<Option<NotFitted>> {
    // Only predicted rows count: a row outside the profile is neither.
    let predicted = rows.iter().filter(|r| r.time_s.is_some());
    let (fitted, rest): (Vec<&Compared>, Vec<&Compared>) =
        predicted.partition(|r| at_fitted(profile, &r.measured));
    if rest.is_empty() || fitted.is_empty() {
        return Ok(None);
    }
    let rest: Vec<Compared> = rest.into_iter().cloned().collect();
    Ok(Some(NotFitted {
        configurations: rest.len(),
        stats: summary(&rest, runs)?,
    }))
}

/// The errors at the configurations a validation's profile was not fitted on.
#[derive(Debug, Clone, Copy)]
pub struct NotFitted {
    /// How many such configurations were predicted.
    pub configurations: usize,
    /// Their time and energy error statistics, every run counted.
    pub stats: (ErrorStats, ErrorStats),
}

/// Leaves unpredicted the energy of rows measured in a scope the model of a profile whose
/// energy is in `modelled` cannot give (node energy against a CPU-energy model, which has no
/// power for the rest of the node), and says why, naming `file`: comparing the two would score
/// one scope against another.
pub fn unscored_energy(modelled: EnergyScope, file: &str, rows: &mut [Compared]) -> Option<String> {
    let mut unscored = None;
    for r in rows.iter_mut() {
        let Some((_, measured)) = r.measured.energy else {
            continue;
        };
        if modelled.predicts(measured) {
            continue;
        }
        r.unscore_energy();
        unscored.get_or_insert(measured);
    }
    unscored.map(|measured| {
        format!(
            "{file}: energy not scored: the runs measured {}, the profile's model predicts {}; \
             give runs of the same scope",
            measured.name(),
            modelled.describe()
        )
    })
}

/// Leaves unpredicted the measured energy of the rows at a GPU clock other than the law's
/// reference where the profile's clock law has no GPU power (fitted on runs without GPU
/// energy): the model would give the machine's `gpu_active_w` at every clock, which no run
/// measured. Says why, naming `file`.
fn unpriced_energy(profile: &Profile, file: &str, rows: &mut [Compared]) -> Option<String> {
    let law = profile.gpu_clock.as_ref().filter(|l| l.power.is_none())?;
    let mut any = false;
    for r in rows.iter_mut().filter(|r| r.energy_j.is_some()) {
        if r.measured
            .config
            .gpu_clock_mhz
            .is_some_and(|c| c != law.reference_mhz)
        {
            r.unscore_energy();
            any = true;
        }
    }
    any.then(|| {
        format!(
            "{file}: energy not scored at GPU clocks other than {} MHz: {}'s GPU clock law has \
             no GPU power (its runs measured no GPU energy), so the energy there would be the \
             machine's gpu_active_w at every clock; fit runs with GPU energy (gpu_energy_j, or \
             energy_j with energy_scope gpu) to score it",
            law.reference_mhz,
            profile.file.display()
        )
    })
}

/// Leaves unpredicted the measured energy of every row where `machine` has no `[power]` (its
/// model's "energy" is node-seconds), and says why, naming `file`: time is scored alone.
fn unpowered_energy(machine: &Machine, file: &str, rows: &mut [Compared]) -> Option<String> {
    if !machine.time_only() {
        return None;
    }
    let mut any = false;
    for r in rows.iter_mut().filter(|r| r.measured.energy.is_some()) {
        r.unscore_energy();
        any = true;
    }
    any.then(|| {
        format!(
            "{file}: energy not scored: the runs measured energy, but {} has no [power] section \
             to predict it from; time alone is scored. To score energy, give it {}",
            machine.file.display(),
            crate::model::machine::POWER_HINT
        )
    })
}

/// Refuses a row of `file` at a GPU clock `machine` does not list, naming its line, and takes
/// one within half a MHz of a listed clock as that clock, as `fit` does (saying so): a clock
/// the GPU cannot be set to was not measured as written. Returns that note
/// ([`super::gpu_fit::snapped_note`]).
pub fn check_gpu_clocks(
    file: &Path,
    machine: &Machine,
    rows: &mut [Measured],
) -> InputResult<Option<String>> {
    let bad = |r: &Measured, col: &str, expected: String, got: String| InputError::Key {
        file: file.to_path_buf(),
        key: format!("{}, column {col}", super::from_measured::line_of(&r.source)),
        expected,
        got,
    };
    super::gpu_fit::no_clock_among_clocks(rows, machine, &bad)?;
    let note = super::gpu_fit::snapped_note(file, rows, machine);
    for r in rows.iter_mut() {
        if r.config.gpu_clock_mhz.is_some() {
            r.config.gpu_clock_mhz = Some(super::gpu_fit::clock_of(r, machine, &bad)?);
        }
    }
    Ok(note)
}

/// The GPU memory clock `file`'s runs name ([`crate::artefact::measured::memory_clock`]),
/// refused where it is not the one they are fitted or predicted at: the machine file's
/// `gpu_memory_clock_mhz` (the one its job scripts set), else the one `profile`'s clock law
/// was measured at. A kernel's time against the core clock changes with the memory clock, so
/// a law is per memory clock. `None` where no row names one (the file is read again only
/// where `rows`, its runs, have GPUs: only a GPU row may name one).
pub fn check_memory_clock(
    (file, rows): (&Path, &[Measured]),
    machine: &Machine,
    profile: Option<&Profile>,
) -> InputResult<Option<f64>> {
    if !rows.iter().any(|r| r.config.gpus > 0) {
        return Ok(None);
    }
    let Some((mhz, line)) = crate::artefact::measured::memory_clock(file)? else {
        return Ok(None);
    };
    let law = profile.and_then(|p| Some((p.gpu_clock.as_ref()?.memory_clock_mhz?, p)));
    let (set, whose) = match (machine.gpu_memory_clock_mhz, law) {
        (Some(set), _) => (
            set,
            format!(
                "machine `{}`'s gpu_memory_clock_mhz ({})",
                machine.name,
                machine.file.display()
            ),
        ),
        (None, Some((set, p))) => (
            set,
            format!(
                "the memory clock {}'s GPU clock law was measured at",
                p.file.display()
            ),
        ),
        (None, None) => return Ok(Some(mhz)),
    };
    if set == mhz {
        return Ok(Some(mhz));
    }
    Err(InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}, column gpu_mem_clock_mhz"),
        expected: format!(
            "{whose}, {set} MHz: a GPU clock law holds at one memory clock (memory-bound \
             kernels stop gaining at a low one); use runs measured at {set} MHz, or a machine \
             file whose gpu_memory_clock_mhz is {mhz}"
        ),
        got: crate::limits::shown(mhz),
    })
}

/// A validation with what the model's checks said.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The validation.
    pub validation: Validation,
    /// What was derived or assumed while fitting the profile to the machine.
    pub notes: Vec<String>,
    /// What keeps the model from explaining the profile's own measurements (`plan` refuses
    /// on them; a validation scores all the same).
    pub problems: Vec<String>,
}

/// The model of `profile` on `machine` against `measured` (their runs read again from `runs`
/// where given, so every run counts in the statistics): the profile fitted to the machine and
/// the model scored whatever its checks say. `predicted` names what was measured.
pub fn validate(
    machine: &Machine,
    profile: &Profile,
    (measured, predicted, runs): (&[Measured], &str, Option<&dyn Replay>),
    checks: &Checks,
) -> InputResult<Scored> {
    let mut fitted = profile.clone();
    let mut notes = fit_to_machine(&mut fitted, machine);
    // A mean of runs that disagree is no firm measure of the model's error there.
    notes.extend(super::trust::noisy_configurations(measured));
    let mut trust = Trust::default();
    let mut checks = *checks;
    checks.accept.model_error = true;
    let mut model = bind(machine, &fitted, &checks, &mut trust, &mut notes)?;
    // Rows at any GPU clock are scored: beyond the law's measured range it is carried, and
    // such rows are marked.
    model.extrapolate_gpu_clocks();
    let cores: Vec<u64> = profile
        .core_counts()
        .iter()
        .map(|&c| u64::from(c))
        .collect();
    let title = format!(
        "fitted on {} (cores {}); predicted: {predicted}",
        profile.file.display(),
        crate::model::workload::compact_list(&cores)
    );
    let mut rows = compare(&model, measured)?;
    // Without [power] no scope is scored, whatever the runs measured.
    let energy_not_scored = unpowered_energy(machine, predicted, &mut rows)
        .or_else(|| unscored_energy(profile.energy_scope(), predicted, &mut rows));
    let energy_not_scored = energy_not_scored.or(unpriced_energy(profile, predicted, &mut rows));
    let validation = Validation {
        // A clock law's intervals at unmeasured clocks are intervals, node law or not.
        bounds: profile.node_law.is_none() && profile.gpu_clock.is_none(),
        fitted_on: Some(fitted_on(profile, measured)),
        not_fitted: not_fitted_stats(profile, &rows, runs)?,
        energy_not_scored,
        ..Validation::new(title, rows, model.coverage(), runs)?
    };
    Ok(Scored {
        validation,
        notes,
        problems: trust.problems,
    })
}
