//! `jouleplan fit`: a single-node profile and the machine's power from measured time and
//! energy alone (no counters): averaging repeats, the time split ([`super::time_split`]), the
//! power laws ([`super::power_fit`]), and the profile and `[power]` values they give.

use super::multi_node::NodePowerFit;
use super::power_fit::{self, Kind, PROGRAM_LAWS, PowerLaws, PowerSample};
use super::repeats::Replay;
use super::reproduce::EnergyScope;
pub use super::runs::line_of;
use super::runs::{Measured, merge_by};
use super::time_split::{self, CoreSplit, Sample};
use crate::error::{InputError, InputResult};
use crate::model::machine::{Machine, Power};
use crate::model::workload::{Communication, Profile};
use crate::units::Watts;
use std::path::Path;

/// What `fit` produced.
#[derive(Debug, Clone)]
pub struct FitOutcome {
    /// The averaged samples.
    pub samples: Vec<Sample>,
    /// The split of each core count.
    pub splits: Vec<CoreSplit>,
    /// The profile.
    pub profile: Profile,
    /// Which power the measured energy gave.
    pub power: FittedPower,
    /// What the fit derived and says to the user: the per-node core counts of the multi-node
    /// layouts, or, for GPU runs, where the clock law was fitted and how it carries to the
    /// other configurations.
    pub derived: Vec<String>,
}

/// Which power `fit` fitted from the measured energy.
#[derive(Debug, Clone)]
pub enum FittedPower {
    /// Power laws `P_idle(f) + c P_core(f)` on runs on one node, and the machine's power at
    /// its frequencies.
    Laws(PowerLaws, Power),
    /// Node power at each measured frequency, on runs over several nodes, or on one node where
    /// the laws would go negative (`laws_refused` says why the laws were not kept).
    Nodes {
        /// The fit.
        fit: NodePowerFit,
        /// Why the power laws were not fitted, where they were tried first.
        laws_refused: Option<String>,
    },
    /// Energy was measured but cannot identify the power: why.
    Unidentified(String),
    /// Energy was measured on this many runs, too few to fit node power.
    TooFew(usize),
    /// No energy was measured.
    NoEnergy,
}

impl FittedPower {
    /// Why no power was fitted, in a few words (`None` where it was).
    pub fn not_fitted(&self) -> Option<String> {
        match self {
            FittedPower::Laws(..) | FittedPower::Nodes { .. } => None,
            FittedPower::Unidentified(why) => Some(why.clone()),
            FittedPower::TooFew(n) => Some(format!(
                "{} with energy, too few to fit power, which needs two or more core counts on \
                 one node or two or more runs over several nodes",
                crate::units::count(*n as u64, "run", "runs")
            )),
            FittedPower::NoEnergy => Some("no energy_j column".into()),
        }
    }

    /// The machine's `[power]` fitted, where there is one.
    pub fn machine_power(&self) -> Option<&Power> {
        match self {
            FittedPower::Laws(_, power) => Some(power),
            FittedPower::Nodes { fit, .. } => Some(&fit.power),
            _ => None,
        }
    }
}

/// Averages repeats of each `(cores, freq)` of single-node rows; refuses rows with GPUs or
/// whose energy is GPU energy.
pub fn samples(file: &Path, rows: &[Measured]) -> InputResult<Vec<Sample>> {
    for r in rows {
        let bad = |col: &str, expected: &str, got: String| InputError::Key {
            file: file.to_path_buf(),
            key: format!("{}, column {col}", line_of(&r.source)),
            expected: expected.into(),
            got,
        };
        if r.config.gpus != 0 {
            return Err(bad(
                "gpus",
                "0 (fit reads CPU-only runs; profile GPU programs with `jouleplan profile`)",
                r.config.gpus.to_string(),
            ));
        }
        if let Some((_, EnergyScope::Gpu)) = r.energy {
            // The scope comes from `energy_scope` = gpu on `energy_j` or from `gpu_energy_j`;
            // the row keeps which neither, so the key names both.
            return Err(bad(
                "energy_j or gpu_energy_j",
                "energy_j with energy_scope node (the whole node's energy)",
                "GPU energy only (energy_scope gpu, or the gpu_energy_j column)".into(),
            ));
        }
    }
    Ok(merge_by(rows, |k| (k.cores, k.freq_khz))
        .into_iter()
        .map(|m| Sample {
            cores: m.config.cores,
            freq: m.config.freq.0,
            time: m.time_s,
            energy: m.energy.map(|e| e.0),
            repeats: m.runs.count,
        })
        .collect())
}

/// Fits the profile and, when every sample has energy, the power laws at `machine`'s
/// frequencies (its other power values kept). `rows` are one per configuration (repeats in
/// their [`Repeats`](super::repeats::Repeats)); `runs` reads every run again, where a fit needs
/// each (node power's largest residual).
pub fn fit(
    file: &Path,
    (rows, runs): (&[Measured], &dyn Replay),
    machine: &Machine,
    program: &str,
) -> InputResult<FitOutcome> {
    fit_with_rule(
        file,
        (rows, runs),
        machine,
        program,
        (false, &super::node_fit::Rule::default()),
    )
}

/// As [`fit`], the multi-node runs taken as weak scaling when `weak` (each rank keeps the
/// work per core of the one-node runs at its core count; MODEL.md 6c e), the node law weighed
/// by `rule` (the design study sets others).
pub fn fit_with_rule(
    file: &Path,
    (rows, runs): (&[Measured], &dyn Replay),
    machine: &Machine,
    program: &str,
    (weak, rule): (bool, &super::node_fit::Rule),
) -> InputResult<FitOutcome> {
    check_cores(file, rows, machine)?;
    check_nodes(file, rows, machine)?;
    let (mut single, multi): (Vec<Measured>, Vec<Measured>) =
        rows.iter().cloned().partition(|r| r.config.nodes == 1);
    let from_smallest = single.is_empty();
    if from_smallest {
        single = super::multi_node::one_node_from_smallest(&multi, weak);
    }
    let samples = samples(file, &single)?;
    let splits = time_split::split(&samples);
    let mut points = time_split::points(&samples, &splits);
    let derived = super::multi_node::derive_points(&mut points, &multi, weak);
    let mut profile = fitted_profile(file, program, points, machine)?;
    if let Some(on) = profile.facts.measured_on.as_mut() {
        on.repeats = super::trust::repeat_spreads(rows);
    }
    profile.recorded_scope = scope_of(rows);
    profile.node_law = super::multi_node::fit_law(
        file,
        &profile,
        machine,
        &multi,
        (!from_smallest, weak),
        rule,
    )?;
    note_nodes(&mut profile, &derived, file);
    if from_smallest {
        profile
            .assumptions
            .push(super::multi_node::FROM_SMALLEST.into());
    }
    let power = if multi.iter().any(|m| m.energy.is_some()) {
        let fit = super::multi_node::fit_power(file, &profile, machine, rows, runs)?;
        if let Some(f) = &fit {
            let powered = Machine {
                power: f.power.clone(),
                ..machine.clone()
            };
            let energy = super::multi_node::fit_energy_law(file, &profile, &powered, &multi, rule)?;
            if let Some(law) = profile.node_law.as_mut() {
                law.energy = energy;
            }
        }
        nodes_or_too_few(fit, None, rows)
    } else {
        single_node_power(file, &samples, &profile, machine, (rows, runs))?
    };
    Ok(FitOutcome {
        samples,
        splits,
        profile,
        power,
        derived,
    })
}

/// Node power where it was fitted, else the runs with energy that were too few (or none).
fn nodes_or_too_few(
    fit: Option<NodePowerFit>,
    laws_refused: Option<String>,
    rows: &[Measured],
) -> FittedPower {
    match fit {
        Some(fit) => FittedPower::Nodes { fit, laws_refused },
        None => match rows.iter().map(|r| r.runs.with_energy()).sum::<usize>() {
            0 => FittedPower::NoEnergy,
            n => FittedPower::TooFew(n),
        },
    }
}

/// The energy scope every row with energy measured, when they agree (`fit` refuses GPU energy
/// and, over several nodes, rows of different scopes).
fn scope_of(rows: &[Measured]) -> Option<EnergyScope> {
    let mut scopes = rows.iter().filter_map(|r| r.energy.map(|e| e.1));
    let first = scopes.next()?;
    scopes.all(|s| s == first).then_some(first)
}

/// The profile of fitted points, with the machine it was fitted for recorded so that plan
/// checks a later machine against it.
fn fitted_profile(
    file: &Path,
    program: &str,
    points: Vec<crate::model::workload::BaselinePoint>,
    machine: &Machine,
) -> InputResult<Profile> {
    let mut profile = Profile::from_parts(
        program,
        &format!(
            "fitted by `jouleplan fit` from measured time and energy ({})",
            file.display()
        ),
        (1.0, 1.0),
        Communication::none(),
        points,
        provenance(file),
    )?;
    profile.assumptions = assumptions();
    profile.facts.measured_on = Some(crate::model::sweep_facts::MeasuredOn {
        hostname: Some(format!("the node of machine `{}`", machine.name)),
        cpu: machine.cpu_model.clone(),
        physical_cores: Some(machine.cores_per_node),
        gpus: None,
        repeats: Vec::new(),
    });
    Ok(profile)
}

/// The power laws fitted on one-node runs with energy; where energy cannot identify them,
/// why (the time is still fitted), and node power within bounds at each measured frequency
/// where the laws would go negative and every machine frequency was measured (as runs over
/// several nodes are fitted).
fn single_node_power(
    file: &Path,
    samples: &[Sample],
    profile: &Profile,
    machine: &Machine,
    (rows, runs): (&[Measured], &dyn Replay),
) -> InputResult<FittedPower> {
    let with_energy: Vec<PowerSample> = samples
        .iter()
        .filter_map(|s| {
            s.energy.map(|e| PowerSample {
                kind: Kind::Program,
                cores: f64::from(s.cores),
                ghz: s.freq / 1e9,
                watts: e / s.time,
            })
        })
        .collect();
    if with_energy.is_empty() {
        return Ok(nodes_or_too_few(None, None, rows));
    }
    let gap = match power_laws(file, &with_energy, machine) {
        Ok((laws, power)) => return Ok(FittedPower::Laws(laws, power)),
        Err(g) => g,
    };
    let why = gap.why.to_string();
    if gap.out_of_bounds && covers(&with_energy, machine) {
        let fit = super::multi_node::fit_power(file, profile, machine, rows, runs)?;
        if let Some(fit) = fit {
            return Ok(FittedPower::Nodes {
                fit,
                laws_refused: Some(why),
            });
        }
    }
    Ok(FittedPower::Unidentified(why))
}

/// Refuses a row with more cores than the machine has (the core law would be fitted over
/// cores that do not exist), naming the line and the machine's count.
fn check_cores(file: &Path, rows: &[Measured], machine: &Machine) -> InputResult<()> {
    match rows
        .iter()
        .find(|r| r.config.cores > machine.cores_per_node || r.config.cores == 0)
    {
        None => Ok(()),
        Some(r) => Err(InputError::Key {
            file: file.to_path_buf(),
            key: format!("{}, column cores", line_of(&r.source)),
            expected: format!(
                "1 to {} cores: the machine {} ({}) has {} cores per node; fit with the machine \
                 file of the node these runs were measured on (--machine)",
                machine.cores_per_node,
                machine.name,
                machine.file.display(),
                machine.cores_per_node
            ),
            got: r.config.cores.to_string(),
        }),
    }
}

/// Refuses a row on more nodes than the machine has, or on several nodes at a frequency the
/// machine does not list, naming the line: both were refused as a `--config` the user never
/// gave.
fn check_nodes(file: &Path, rows: &[Measured], machine: &Machine) -> InputResult<()> {
    // A run on several nodes is predicted at its own frequency: one the machine lists.
    let unlisted = rows
        .iter()
        .find(|r| r.config.nodes > 1 && machine.frequency_index(r.config.freq).is_none());
    if let Some(r) = unlisted {
        return Err(InputError::Key {
            file: file.to_path_buf(),
            key: format!("{}, column freq_hz", line_of(&r.source)),
            expected: format!(
                "a frequency of machine {} ({}) for a run on several nodes: {} GHz",
                machine.name,
                machine.file.display(),
                machine.frequency_list_ghz()
            ),
            got: format!("{} GHz", r.config.freq.ghz()),
        });
    }
    match rows.iter().find(|r| r.config.nodes > machine.max_nodes) {
        None => Ok(()),
        Some(r) => Err(InputError::Key {
            file: file.to_path_buf(),
            key: format!("{}, column nodes", line_of(&r.source)),
            expected: format!(
                "1 to {} nodes: the machine {} ({}) has {} nodes; fit with the machine file of \
                 the cluster these runs were measured on (--machine), or raise its nodes",
                machine.max_nodes,
                machine.name,
                machine.file.display(),
                machine.max_nodes
            ),
            got: r.config.nodes.to_string(),
        }),
    }
}

/// Why measured energy gave no power laws.
struct PowerGap {
    /// What it cannot give, and what would.
    why: InputError,
    /// Whether the best laws leave a power below 0 (rather than leaving powers undetermined).
    out_of_bounds: bool,
}

/// The single-node power laws at the machine's frequencies, or why the energy cannot give them.
fn power_laws(
    file: &Path,
    with_energy: &[PowerSample],
    machine: &Machine,
) -> Result<(PowerLaws, Power), PowerGap> {
    identifiable(file, with_energy, machine).map_err(|why| PowerGap {
        why,
        out_of_bounds: false,
    })?;
    let ghz: Vec<f64> = machine.frequencies.iter().map(|f| f.ghz()).collect();
    let laws = power_fit::fit(with_energy, PROGRAM_LAWS, &ghz).map_err(|e| PowerGap {
        out_of_bounds: matches!(e, crate::calibrate::nonlinear::FitError::OutOfBounds(_)),
        why: InputError::Key {
            file: file.to_path_buf(),
            key: "energy_j".into(),
            expected: "points from which P_idle(f) and P_core(f) can be fitted: two or more \
                       core counts at two or more frequencies (three for the exponent), at \
                       least 5 points"
                .into(),
            got: e.to_string(),
        },
    })?;
    let power = power_at(&laws, machine);
    Ok((laws, power))
}

/// Whether energy was measured at every machine frequency, at two or more core counts each.
fn covers(pts: &[PowerSample], machine: &Machine) -> bool {
    machine.frequencies.iter().all(|f| {
        let mut cores: Vec<u64> = pts
            .iter()
            .filter(|p| (p.ghz - f.ghz()).abs() < 1e-6)
            .map(|p| p.cores.to_bits())
            .collect();
        cores.sort_unstable();
        cores.dedup();
        cores.len() >= 2
    })
}

/// Refuses a power fit the energy points cannot identify: powers at the machine's other
/// frequencies from one frequency alone, or as many points as parameters (no residual left to
/// judge the fit, and standard errors that cannot be computed).
fn identifiable(file: &Path, pts: &[PowerSample], machine: &Machine) -> InputResult<()> {
    let distinct = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
        v
    };
    let freqs = distinct(pts.iter().map(|p| p.ghz).collect());
    let cores = distinct(pts.iter().map(|p| p.cores).collect());
    let machine_ghz: Vec<f64> = machine.frequencies.iter().map(|f| f.ghz()).collect();
    let params = 2 * freqs.len().min(2) + usize::from(freqs.len() >= 3);
    let why = if freqs.len() == 1 && machine_ghz.len() > 1 {
        Some(format!(
            "energy at {:.2} GHz only: P_idle(f) and P_core(f) at the machine's other \
             frequencies ({}) cannot be read from one frequency. Measure at two or more \
             frequencies, or fit against a machine file that lists only {:.2} GHz",
            freqs[0],
            machine_ghz
                .iter()
                .map(|g| format!("{g:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            freqs[0]
        ))
    } else if cores.len() < 2 {
        Some(
            "energy at one core count only: it cannot separate P_idle from P_core; measure \
              two or more core counts"
                .into(),
        )
    } else if pts.len() <= params {
        Some(format!(
            "{} configurations with energy for {params} power parameters: no residual is left \
             to judge the fit; measure at least {} configurations",
            pts.len(),
            params + 1
        ))
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(got) => Err(InputError::Key {
            file: file.to_path_buf(),
            key: "energy_j".into(),
            expected: "energy that identifies the power laws (two or more core counts, more \
                       configurations than parameters, each machine frequency covered)"
                .into(),
            got,
        }),
    }
}

/// The machine's `[power]` with the fitted laws at its frequencies.
fn power_at(laws: &PowerLaws, machine: &Machine) -> Power {
    let at = |law: &str| -> Vec<Watts> {
        machine
            .frequencies
            .iter()
            .map(|x| Watts(laws.at(law, x.ghz()).unwrap_or(f64::NAN)))
            .collect()
    };
    Power {
        core_active: at("P_core"),
        core_stall: at("P_core"),
        memory: Watts(0.0),
        idle: at("P_idle"),
        fit_residual_rel: Some(laws.max_residual()),
        ..machine.power.clone()
    }
}

fn provenance(file: &Path) -> Vec<(String, String)> {
    let f = file.display();
    vec![
        ("baseline.wall_time_s".into(), format!("measured ({f}, repeats averaged)")),
        ("baseline.energy_j".into(), format!("measured ({f}, repeats averaged)")),
        ("baseline.cycles".into(), "derived: cores x frequency x wall time (no counters; every core taken busy, utilisation 1)".into()),
        ("baseline.mem_stall_cycles".into(), "derived: cores x frequency x m, with m from a least-squares fit of T(f) = a/f + m over the frequencies of each core count; stall_cycles = mem_stall_cycles".into()),
        ("iterations".into(), "1 and 1: the measured runs are the target problem".into()),
        ("communication".into(), "not measured: the CSV holds single-node runs".into()),
    ]
}

/// What the profile says of its multi-node part: the derived core counts and the law.
fn note_nodes(profile: &mut Profile, derived: &[String], file: &Path) {
    for d in derived {
        profile.assumptions.push(format!("multi-node layout {d}"));
    }
    if let Some(law) = &profile.node_law {
        profile.provenance.push((
            "node_law".into(),
            format!(
                "fitted by `jouleplan fit` on the runs over {} nodes in {} ({}), chosen by \
                 leave-one-node-count-out cross-validation among {} laws",
                crate::units::count_ranges(law.measured_nodes.iter().copied()),
                file.display(),
                law.law().describe(),
                law.compared
            ),
        ));
    }
}

fn assumptions() -> Vec<String> {
    vec![
        "fitted from time and energy alone (`jouleplan fit`): cycles = cores x f x wall time, \
         every core busy (U = 1); the memory time comes from each core count's T(f) = a/f + m"
            .into(),
        "MPI messages were not measured: the profile assumes no inter-node messages (eta = 0); \
         measure them with `jouleplan profile --mpi-profiler` before trusting multi-node plans"
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_runs_with_energy_are_not_said_to_be_a_missing_column() {
        let why = FittedPower::TooFew(1).not_fitted().unwrap();
        assert!(why.starts_with("1 run with energy, too few"), "{why}");
        assert!(!why.contains("energy_j column"), "{why}");
        assert_eq!(
            FittedPower::NoEnergy.not_fitted().as_deref(),
            Some("no energy_j column")
        );
    }
}
