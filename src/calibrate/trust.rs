//! Whether a profile may be planned against a machine (MODEL.md 6b and issue "refuse to
//! guess"): the profile was measured on the machine the file describes, the model reproduces
//! the profile's own measured points, and no point is mostly unexplained waiting. Beyond that,
//! an error that names what is wrong, unless the user accepts it with `--other-machine` or
//! `--accept-model-error`; then the recommendation carries a warning.

use crate::calibrate::reproduce::{self, Reproduction};
use crate::error::{InputError, InputResult};
use crate::model::Model;
use crate::model::machine::Machine;
use crate::model::workload::{Profile, freq_key};

/// How a model is bound and checked: what the user accepts, weak scaling, the intervals'
/// coverage (`plan`'s `--other-machine`, `--accept-model-error`, `--weak`, `--coverage`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks {
    /// What would otherwise be refused.
    pub accept: Accept,
    /// Weak scaling: each rank keeps the profile's work per core.
    pub weak: bool,
    /// Nominal coverage of the intervals at node counts not measured (default 0.8).
    pub coverage: Option<f64>,
}

/// Binds the model and checks it against the profile's own measurements (MODEL.md 6b);
/// appends what the user must be told to `notes`.
pub fn bind<'a>(
    machine: &'a Machine,
    profile: &'a Profile,
    checks: &Checks,
    trust: &mut Trust,
    notes: &mut Vec<String>,
) -> InputResult<Model<'a>> {
    let mut model = Model::new(machine, profile)?;
    if checks.weak {
        model.set_weak(true)?;
    }
    if let Some(c) = checks.coverage {
        model.set_coverage(c);
        let clock_interval = profile
            .gpu_clock
            .as_ref()
            .is_some_and(|l| l.interval.is_some());
        if profile.node_law.is_none() && !clock_interval {
            notes.push(coverage_unused(c));
        }
    }
    if let Some(law) = &profile.node_law {
        notes.push(format!(
            "node law fitted over nodes {}: {} (leave-one-out error {}); predictions at every \
             node count not measured carry an {} interval",
            law.measured_nodes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            law.law().describe(),
            if law.folds.is_empty() {
                "none: no count to leave out".to_string()
            } else {
                format!("{:.2}%", 100.0 * law.loo_rel())
            },
            crate::units::coverage_pct(model.coverage())
        ));
    }
    if model.is_weak() {
        notes.push(
            "weak scaling: each rank keeps the profile's work per core, so the problem grows \
             with the nodes"
                .into(),
        );
    }
    check_model(&model, checks.accept, trust)?;
    notes.append(&mut trust.notes);
    Ok(model)
}

/// What `--coverage` does to a profile without a node law: nothing, and why.
fn coverage_unused(coverage: f64) -> String {
    format!(
        "--coverage {} changes nothing here: the profile has no node law, so the predictions \
         at node counts not measured carry bounds (perfect division to no gain beyond the \
         measured node), which state no coverage; `fit` runs on two or more node counts to get \
         calibrated intervals",
        crate::units::coverage_pct(coverage)
    )
}

/// The warnings a recommendation at `nodes` nodes carries.
pub fn warnings_for(trust: &Trust, nodes: u32) -> Vec<String> {
    let mut w = trust.warnings.clone();
    if nodes > 1 {
        w.extend(trust.multi_node_warnings.iter().cloned());
    }
    w
}

/// What the user must be told, and what the recommendation must carry.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Lines for the notes.
    pub notes: Vec<String>,
    /// Lines every recommendation (and job script) carries.
    pub warnings: Vec<String>,
    /// Warnings only for multi-node recommendations.
    pub multi_node_warnings: Vec<String>,
    /// The baseline's reproduction.
    pub reproduction: Option<Reproduction>,
    /// What keeps the model from explaining the profile ([`model_problems`]), accepted or not.
    pub problems: Vec<String>,
}

/// The flags that accept what would otherwise be refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct Accept {
    /// `--other-machine`.
    pub other_machine: bool,
    /// `--accept-model-error`.
    pub model_error: bool,
}

/// Checks that the profile was measured on the machine the file describes, its GPU clock law
/// at the memory clock the machine file sets.
pub fn machine_matches(machine: &Machine, profile: &Profile, accept: Accept) -> InputResult<Trust> {
    let mut t = host_matches(machine, profile, accept)?;
    if let Some(what) = memory_clock_differs(machine, profile) {
        if !accept.other_machine {
            return Err(InputError::Mismatch(format!(
                "{what}. A kernel's time against the core clock changes with the memory clock \
                 (memory-bound kernels stop gaining at a low one): set gpu_memory_clock_mhz to \
                 the clock the law was measured at, fit runs measured at this one, or pass \
                 --other-machine to plan it here anyway"
            )));
        }
        t.warnings.push(format!(
            "planned at another GPU memory clock than the one measured (--other-machine): {what}"
        ));
    }
    if let Some(what) = clock_unlisted(machine, profile) {
        if !accept.other_machine {
            return Err(InputError::Mismatch(format!(
                "{what}: the profile was measured on a GPU that runs at other clocks; give the \
                 machine file of the GPU it was measured on, or pass --other-machine to plan it \
                 here anyway"
            )));
        }
        t.warnings.push(format!(
            "planned on a GPU that does not list a clock the profile was measured at \
             (--other-machine): {what}"
        ));
    }
    Ok(t)
}

/// Where the profile names a GPU clock it was measured at (its clock law's, or the one clock
/// of a profile without a law) that the machine's `gpu_clocks_mhz` does not list: the key and
/// the clocks either side. A job script would ask for it, and the law's range and intervals
/// would stand on it. Nothing where the machine lists no clocks.
fn clock_unlisted(machine: &Machine, profile: &Profile) -> Option<String> {
    use crate::model::machine::{clocks_either_side, listed_clock};
    let list = &machine.gpu_clocks_mhz;
    let law = profile.gpu_clock.iter().flat_map(|l| {
        let keyed = |(i, &m): (usize, &f64)| (format!("gpu_clock.measured_mhz[{i}]"), m);
        l.measured_mhz.iter().enumerate().map(keyed)
    });
    let one = (profile.measured_gpu_clock_mhz).map(|m| ("measured_gpu_clock_mhz".to_string(), m));
    let (key, mhz) =
        (law.chain(one)).find(|(_, m)| !list.is_empty() && listed_clock(list, *m).is_none())?;
    Some(format!(
        "{}: key `{key}` names {mhz} MHz, a clock machine `{}` ({}) does not list in \
         gpu_clocks_mhz (nearest: {})",
        profile.file.display(),
        machine.name,
        machine.file.display(),
        clocks_either_side(list, mhz)
    ))
}

/// Where the profile's GPU clock law was measured at another memory clock than the machine
/// file's `gpu_memory_clock_mhz` (the one a job script sets with `--gpu-freq`), what differs.
fn memory_clock_differs(machine: &Machine, profile: &Profile) -> Option<String> {
    let law = profile.gpu_clock.as_ref()?;
    let (measured, set) = (law.memory_clock_mhz?, machine.gpu_memory_clock_mhz?);
    (measured != set).then(|| {
        format!(
            "{}'s GPU clock law was measured at a {measured} MHz memory clock, and machine `{}` \
             ({}) sets {set} MHz (gpu_memory_clock_mhz, the memory clock of its job scripts' \
             --gpu-freq)",
            profile.file.display(),
            machine.name,
            machine.file.display()
        )
    })
}

/// Checks that the profile was measured on the node the machine file describes.
fn host_matches(machine: &Machine, profile: &Profile, accept: Accept) -> InputResult<Trust> {
    let mut t = Trust::default();
    let Some(on) = profile.facts.measured_on.as_ref() else {
        return unrecorded_machine(machine, profile, accept);
    };
    let mut differences = Vec::new();
    if let Some(pc) = on.physical_cores
        && pc != machine.cores_per_node
    {
        differences.push(format!(
            "{pc} physical cores where the machine file has {}",
            machine.cores_per_node
        ));
    }
    match (&on.cpu, &machine.cpu_model) {
        (Some(cpu), Some(want)) if !same_name(cpu, want) => {
            differences.push(format!("CPU `{cpu}` where the machine file has `{want}`"));
        }
        (Some(cpu), None) => t.notes.push(format!(
            "machine `{}` names no cpu_model: the profile's CPU `{cpu}` was not compared",
            machine.name
        )),
        _ => {}
    }
    if profile.uses_gpus() {
        match (&on.gpus, &machine.gpu_model) {
            _ if machine.gpus_per_node == 0 => {
                differences.push("GPUs where the machine file has none".to_string());
            }
            (Some(g), Some(want)) if !same_name(g, want) => {
                differences.push(format!("GPUs `{g}` where the machine file has `{want}`"));
            }
            _ => {}
        }
    }
    let measured_f: Vec<u64> = profile
        .baseline
        .iter()
        .filter(|p| p.measured)
        .map(|p| freq_key(p.freq))
        .collect();
    if !measured_f.is_empty()
        && !measured_f
            .iter()
            .any(|k| machine.frequencies.iter().any(|f| freq_key(*f) == *k))
    {
        differences.push("no measured frequency is one of the machine file's".to_string());
    }
    if differences.is_empty() {
        return Ok(t);
    }
    let what = format!(
        "{} was measured on {} ({}), not on machine `{}` ({}): {}",
        profile.file.display(),
        host_shown(on.hostname.as_deref()),
        on.cpu.as_deref().unwrap_or("CPU not recorded"),
        machine.name,
        machine.file.display(),
        differences.join("; ")
    );
    if !accept.other_machine {
        return Err(InputError::Mismatch(format!(
            "{what}. Plan it against a machine file of the node it was measured on (jouleplan \
             machine init there), or pass --other-machine to plan it here anyway"
        )));
    }
    t.warnings.push(format!(
        "planned on another machine than the one measured (--other-machine): {what}"
    ));
    Ok(t)
}

/// The host a profile was measured on, as a message names it: a host name in backticks; what
/// `fit` records for runs fitted to a machine file (the node of machine, its name in backticks)
/// as it reads, never a quote inside a quote.
fn host_shown(hostname: Option<&str>) -> String {
    match hostname {
        None => "an unnamed host".into(),
        Some(h) if h.contains('`') => h.into(),
        Some(h) => format!("`{h}`"),
    }
}

/// A profile that does not record its machine, checked against what it does hold: the core
/// counts and frequencies it measured must lie within the machine's (no silent
/// extrapolation to frequencies or core counts it never saw).
fn unrecorded_machine(machine: &Machine, profile: &Profile, accept: Accept) -> InputResult<Trust> {
    let mut t = Trust::default();
    t.notes.push(format!(
        "{} does not record the machine it was measured on: it was checked against machine `{}` \
         by its core counts and frequencies only",
        profile.file.display(),
        machine.name
    ));
    let measured: Vec<_> = profile.baseline.iter().filter(|p| p.measured).collect();
    let mut differences = Vec::new();
    if let Some(c) = measured.iter().map(|p| p.cores).max()
        && c > machine.cores_per_node
    {
        differences.push(format!(
            "measured on up to {c} cores where the machine file has {}",
            machine.cores_per_node
        ));
    }
    let (lo, hi) = measured
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), p| {
            (lo.min(p.freq.ghz()), hi.max(p.freq.ghz()))
        });
    let outside: Vec<String> = machine
        .frequencies
        .iter()
        .map(|f| f.ghz())
        .filter(|g| !measured.is_empty() && (*g < lo - 1e-6 || *g > hi + 1e-6))
        .map(|g| format!("{g:.2}"))
        .collect();
    if !outside.is_empty() {
        differences.push(format!(
            "the machine's frequencies {} GHz lie outside the measured {lo:.2}-{hi:.2} GHz",
            outside.join(", ")
        ));
    }
    if differences.is_empty() {
        return Ok(t);
    }
    let what = format!(
        "{} (no machine recorded) does not fit machine `{}` ({}): {}",
        profile.file.display(),
        machine.name,
        machine.file.display(),
        differences.join("; ")
    );
    if !accept.other_machine {
        return Err(InputError::Mismatch(format!(
            "{what}. Plan it against the machine file of the node it was measured on, or pass \
             --other-machine to extrapolate anyway"
        )));
    }
    t.warnings.push(format!(
        "extrapolated beyond what was measured (--other-machine): {what}"
    ));
    Ok(t)
}

/// How well the profile's GPU clock law holds (MODEL.md 6e): exact at its measured clocks,
/// and its interval halfway between them, where `fit` wrote one.
fn clock_law_note(profile: &Profile, coverage: f64) -> Option<String> {
    let law = profile.gpu_clock.as_ref()?;
    let scale = crate::model::evidence::clock_scale(coverage);
    let between = match law.interval {
        Some(i) => format!(
            "; between them +/- {:.1}% time and {:.1}% energy at most (the {} interval halfway \
             between two measured clocks, from the law's left-out error{})",
            100.0 * scale * i.time_rel,
            100.0 * scale * i.energy_rel,
            crate::units::coverage_pct(coverage),
            match scale == 1.0 {
                true => String::new(),
                false => format!(
                    ", its {} half-widths times {scale:.2}, the ratio of the normal quantiles",
                    crate::units::coverage_pct(crate::model::evidence::DEFAULT_COVERAGE)
                ),
            }
        ),
        None => "; the profile carries no interval for the clocks between them".into(),
    };
    let what = match &law.power {
        Some(p) if p.residuals_w.is_empty() => format!(
            "their times reproduced exactly (its residuals are kept), their GPU energy within \
             {:.1}% (the power law's largest residual: a profile written before its residuals \
             were kept; fit again to keep them)",
            100.0 * p.residual_max
        ),
        Some(_) => "their times and GPU energy reproduced exactly (its residuals are kept)".into(),
        None => "their times reproduced exactly (its residuals are kept)".into(),
    };
    Some(format!(
        "GPU clock law: its {} measured clocks ({} MHz), {what}{between}",
        law.measured_mhz.len(),
        crate::model::gpu_clock::mhz_list(&law.measured_mhz)
    ))
}

/// The model against the profile's own measured points, and the multi-node warning.
pub fn check_model(model: &Model<'_>, accept: Accept, t: &mut Trust) -> InputResult<()> {
    let r = reproduce::check(model);
    t.notes.push(r.summary());
    t.notes
        .extend(clock_law_note(model.profile, model.coverage()));
    if let Some(n) = model.gpu_power_note() {
        t.notes.push(n);
    }
    let problems = model_problems(model, &r);
    t.problems.clone_from(&problems);
    if !problems.is_empty() {
        if !accept.model_error {
            return Err(InputError::Mismatch(format!(
                "{}: the model cannot explain the profile's own measurements:\n  - {}\n\
                 Fix the profile or the machine file, or pass --accept-model-error to plan \
                 anyway (every recommendation then says so)",
                model.profile.file.display(),
                problems.join("\n  - ")
            )));
        }
        t.warnings.push(format!(
            "model error accepted (--accept-model-error): {}",
            problems.join("; ")
        ));
    }
    // A node law fitted on measured multi-node runs holds what the messages cost there.
    if !messages_measured(model.profile) && model.profile.node_law.is_none() {
        t.multi_node_warnings.push(
            if model.profile.communication.messages_per_iteration > 0.0 {
                "multi-node: the profile's MPI messages were not measured (its provenance says how \
             they were set), so the network time between nodes rests on an assumed pattern \
             (profile with --mpi-profiler to measure them)"
                    .into()
            } else {
                "multi-node: the profile measured no MPI messages and assumes none, so no network \
             time between nodes is predicted (profile with --mpi-profiler to measure them)"
                    .into()
            },
        );
    }
    t.reproduction = Some(r);
    Ok(())
}

/// What keeps the model from explaining the profile's own measurements: each point outside
/// its reproduction bound, and a power fit whose largest residual is beyond what describes a
/// machine. `plan` refuses on any (unless accepted); `validate` scores and prints them.
pub fn model_problems(model: &Model<'_>, r: &reproduce::Reproduction) -> Vec<String> {
    let mut problems = r.problems();
    let p = &model.machine.power;
    let quality = match (p.fit_residual_rms, p.fit_residual_rel) {
        (Some(rms), _) => Some((rms, "root-mean-square", "fit_residual_rms")),
        (None, Some(rel)) => Some((rel, "largest", "fit_residual_rel")),
        (None, None) => None,
    };
    if let Some((res, what, key)) = quality
        && res > reproduce::MAX_POWER_FIT_BOUND
    {
        problems.push(format!(
            "{}: the power fit's {what} residual is {:.1}% (power.{key}), more than the {:.0}% \
             a fit that describes the machine may leave: energy predictions from it are not \
             trustworthy; measure power again (`jouleplan calibrate power`)",
            model.machine.file.display(),
            100.0 * res,
            100.0 * reproduce::MAX_POWER_FIT_BOUND
        ));
    }
    problems
}

use crate::artefact::sweep::NOISY_SPREAD;
use crate::model::sweep_facts::RepeatSpread;

/// The measured points whose runs spread more than [`NOISY_SPREAD`] run to run, in one note:
/// predictions there are uncertain by about as much, and no interval carries it. The points
/// are the sweep record's, or those of the measured runs `fit` averaged.
pub fn noisy_points(profile: &Profile) -> Option<String> {
    let mut noisy: Vec<_> = profile
        .facts
        .spread
        .iter()
        .filter(|(_, s)| s.runs > 1 && s.wall_rel > NOISY_SPREAD)
        .collect();
    if noisy.is_empty() {
        let repeats = profile.facts.measured_on.as_ref().map(|m| &m.repeats[..]);
        return noisy_repeats("the measured runs the profile was fitted on", repeats?);
    }
    noisy.sort_by_key(|(k, _)| **k);
    let points: Vec<String> = noisy
        .iter()
        .map(|((c, khz, g), s)| {
            format!(
                "{} at {:.3} GHz{} {:.1}%",
                crate::units::count(*c, "core", "cores"),
                *khz as f64 / 1e6,
                match g {
                    0 => String::new(),
                    g => format!(", {}", crate::units::count(*g, "GPU", "GPUs")),
                },
                100.0 * s.wall_rel
            )
        })
        .collect();
    Some(spread_note("the profile's runs", &points))
}

/// The note on `points` (each named with its spread) whose `runs` spread more than
/// [`NOISY_SPREAD`] run to run.
fn spread_note(runs: &str, points: &[String]) -> String {
    format!(
        "{runs} spread run to run by more than {:.0}% ({}): its time there is \
         uncertain by about as much, and no interval carries that (intervals are drawn at node \
         counts not measured); measure again with --repeat 5 on a quieter node before trusting a \
         difference smaller than that",
        100.0 * NOISY_SPREAD,
        points.join("; ")
    )
}

/// The note on rows of the measured CSV `path` that repeat an earlier row in every value,
/// if any: each counts as one more run, and repeats that agree exactly make the run-to-run
/// spread read smaller than it is.
pub fn repeated_rows_note(path: &std::path::Path) -> InputResult<Option<String>> {
    let (n, first) = crate::artefact::measured::repeated_rows(path)?;
    if n == 0 {
        return Ok(None);
    }
    let shown: Vec<String> = first
        .iter()
        .map(|(line, earlier)| format!("line {line} as line {earlier}"))
        .collect();
    Ok(Some(format!(
        "{}: {} {} an earlier row in every value ({}{}): each is counted as one more run of its \
         configuration, and copies make its run-to-run spread read smaller than it is; remove \
         them unless they are runs of their own (a file joined to itself, a run saved twice)",
        path.display(),
        crate::units::count(n as u64, "row", "rows"),
        if n == 1 { "repeats" } else { "repeat" },
        shown.join(", "),
        if n > first.len() { ", ..." } else { "" }
    )))
}

/// The measured configurations (`nodes, cores, GHz, GPUs`) whose repeated runs spread more
/// than [`NOISY_SPREAD`] run to run, in one note: `fit` averages them, and predictions there
/// are uncertain by about as much.
pub fn noisy_configurations(rows: &[super::runs::Measured]) -> Option<String> {
    noisy_repeats("the measured runs", &repeat_spreads(rows))
}

/// The spread of each configuration of `rows` measured more than once, as the profile keeps it.
pub fn repeat_spreads(rows: &[super::runs::Measured]) -> Vec<RepeatSpread> {
    rows.iter()
        .filter(|r| r.runs.count > 1)
        .map(|r| RepeatSpread {
            config: r.config,
            runs: r.runs.count as u64,
            wall_rel: r.runs.time_rel_spread(),
        })
        .collect()
}

/// The note on the `repeats` of `runs` that spread more than [`NOISY_SPREAD`], if any.
fn noisy_repeats(runs: &str, repeats: &[RepeatSpread]) -> Option<String> {
    let points: Vec<String> = repeats
        .iter()
        .filter(|r| r.wall_rel > NOISY_SPREAD)
        .map(|r| {
            format!(
                "{} {:.1}% over {} runs",
                r.config.label(),
                100.0 * r.wall_rel,
                r.runs
            )
        })
        .collect();
    (!points.is_empty()).then(|| spread_note(runs, &points))
}

/// What the profile's derivation estimated rather than measured (MODEL.md 6b), for the notes.
pub fn estimates(profile: &Profile) -> Vec<String> {
    profile
        .splits
        .iter()
        .filter(|s| !s.host_runtime_estimated.is_empty())
        .map(|s| {
            let r: Vec<f64> = s.host_runtime_estimated.iter().map(|e| e.1).collect();
            let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.iter().copied().fold(0.0, f64::max);
            format!(
                "host time blocked in the GPU runtime was not measured at {} GHz, {}: \
                 estimated from the core-count series at {lo:.2}-{hi:.2} s per run \
                 (min(serial {:.2} s + idle {:.2} s, the device's active time)); attach TALP \
                 outputs of DLB's GPU plugin (profile --talp CORES=FILE) to measure it",
                s.freq.ghz(),
                crate::units::count(s.gpus, "GPU", "GPUs"),
                s.serial,
                s.wait
            )
        })
        .collect()
}

/// Whether the profile's message counts were measured, as far as it says.
pub fn messages_measured(profile: &Profile) -> bool {
    if profile.has_sweep {
        return profile.facts.messages_measured;
    }
    let said_not = profile
        .provenance
        .iter()
        .filter(|(k, _)| k.starts_with("communication"))
        .any(|(_, v)| v.contains("not measured") || v.contains("illustrative"));
    profile.communication.messages_per_iteration > 0.0 && !said_not
}

/// Case- and space-insensitive containment either way (`H100` in `NVIDIA H100 80GB HBM3`).
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
    };
    let (a, b) = (norm(a), norm(b));
    !a.is_empty() && !b.is_empty() && (a.contains(&b) || b.contains(&a))
}
