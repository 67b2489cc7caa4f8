//! `jouleplan fit` on GPU runs (MODEL.md section 6e): configurations `(1, c, f, g)` measured at
//! one or more GPU core clocks give a profile of one point per configuration at the reference
//! clock `f_ref` and, from 3 or more clocks of one configuration (the law's), the GPU clock law
//! ([`super::gpu_clock`]), checked on the other configurations' other clocks
//! ([`super::gpu_carry`]). The rows' clocks must be the machine's (`gpu_clocks_mhz`), their
//! energy GPU energy.

use super::gpu_carry::{self, Carried, Clocks, label};
use super::gpu_clock::{ClockPoint, fit_law};
use super::reproduce::EnergyScope;
use super::runs::Measured;
use crate::artefact::profile::{DeviceFile, PointFile};
use crate::error::{InputError, InputResult};
use crate::model::baseline::BaselinePoint;
use crate::model::gpu_clock::GpuClockLaw;
use crate::model::machine::Machine;
use crate::model::workload::{Communication, Profile};
use std::collections::BTreeMap;
use std::path::Path;

/// What a GPU fit says to the user besides the profile: where the law was fitted and how it
/// carries to the other configurations.
pub type Notes = Vec<String>;

/// The profile of GPU rows: every row must have GPUs, one node, a clock of the machine's list
/// (absent: its top), and GPU energy where it has energy. Rows of several `(c, f, g)` are
/// accepted: the law is fitted on the one measured at the most clocks ([`law_config`]), every
/// configuration needs a row at its top clock, and the law must reproduce the others' rows.
pub fn gpu_profile(
    file: &Path,
    rows: &[Measured],
    machine: &Machine,
    program: &str,
) -> InputResult<(Profile, Notes)> {
    let bad = |r: &Measured, col: &str, expected: String, got: String| InputError::Key {
        file: file.to_path_buf(),
        key: format!("{}, column {col}", super::from_measured::line_of(&r.source)),
        expected,
        got,
    };
    let mut configs = group(rows, machine, &bad)?;
    let law_rows = law_config(&mut configs)
        .ok_or_else(|| InputError::Mismatch(format!("{}: no GPU runs to fit", file.display())))?;
    let (top_mhz, top) = law_rows[law_rows.len() - 1];
    let law = match law_rows.len() {
        1 => None,
        _ => Some(clock_law(file, &law_rows, machine, top.config)?),
    };
    let mut baseline = vec![point(top)];
    for clocks in configs.values() {
        let Some(&(_, at_ref)) = clocks.iter().find(|(m, _)| (m - top_mhz).abs() < 0.5) else {
            return Err(no_reference_row(clocks, top, top_mhz, &bad));
        };
        baseline.push(point(at_ref));
    }
    let one_law = !configs.is_empty() && law.is_some();
    let mut profile = Profile::from_parts(
        program,
        &format!(
            "fitted by `jouleplan fit` from GPU runs' time and GPU energy ({})",
            file.display()
        ),
        (1.0, 1.0),
        Communication::none(),
        baseline,
        provenance(
            file,
            (top_mhz, top.config.gpu_clock_mhz.is_some()),
            law.is_some(),
            machine,
        ),
    )?;
    // One clock named by the runs: the predictions hold there, and a job asks for it.
    profile.measured_gpu_clock_mhz =
        (law.is_none() && top.config.gpu_clock_mhz.is_some()).then_some(top_mhz);
    profile.gpu_clock = law;
    // As a fit on CPU runs records it: the machine fitted against, and the spread of each
    // configuration measured more than once (every clock its own), which `plan` says where
    // it passes 10%.
    profile.facts.measured_on = Some(crate::model::sweep_facts::MeasuredOn {
        hostname: Some(format!("the node of machine `{}`", machine.name)),
        cpu: machine.cpu_model.clone(),
        physical_cores: Some(machine.cores_per_node),
        gpus: None,
        repeats: super::trust::repeat_spreads(rows),
    });
    profile.recorded_scope = top.energy.map(|e| e.1);
    profile.assumptions = assumptions(one_law);
    let others: Vec<&Clocks<'_>> = configs.values().collect();
    let carried = match one_law {
        true => Some(gpu_carry::check(
            file,
            &profile,
            machine,
            (&others, &label(top.config)),
        )?),
        false => None,
    };
    let notes = notes(&mut profile, top, carried.as_ref());
    Ok((profile, notes))
}

/// The rows by configuration `(c, f kHz, g)`, each at its clock, ascending; a row that is not a
/// GPU run on one node with GPU energy at one of the machine's clocks refused.
fn group<'a>(
    rows: &'a [Measured],
    machine: &Machine,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputResult<BTreeMap<(u32, u64, u32), Clocks<'a>>> {
    let mut configs: BTreeMap<(u32, u64, u32), Clocks<'a>> = BTreeMap::new();
    no_clock_among_clocks(rows, machine, bad)?;
    for r in rows {
        check_row(r, machine, bad)?;
        let mhz = clock_of(r, machine, bad)?;
        let c = r.config;
        let key = (c.cores, crate::units::freq_key(c.freq), c.gpus);
        configs.entry(key).or_default().push((mhz, r));
    }
    for clocks in configs.values_mut() {
        clocks.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(configs)
}

/// Takes the configuration the law is fitted on out of `configs`: the one measured at the most
/// clocks; ties go to the most GPUs, then the most cores, then the highest CPU frequency.
/// `None` without rows.
fn law_config<'a>(configs: &mut BTreeMap<(u32, u64, u32), Clocks<'a>>) -> Option<Clocks<'a>> {
    let key = *configs
        .iter()
        .max_by_key(|((c, f, g), rows)| (rows.len(), *g, *c, *f))?
        .0;
    configs.remove(&key)
}

/// A configuration without a row at the reference clock: named by its first row, with the
/// clock to measure.
fn no_reference_row(
    clocks: &Clocks<'_>,
    top: &Measured,
    top_mhz: f64,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputError {
    let first = clocks[0].1;
    let have: Vec<String> = clocks.iter().map(|(m, _)| format!("{m}")).collect();
    bad(
        first,
        "gpu_clock_mhz",
        format!(
            "a run of ({}) at {top_mhz} MHz as well: every configuration's baseline point is its \
             run at the top clock of ({}), the configuration measured at the most clocks (the \
             GPU clock law's), {top_mhz} MHz; measure ({}) at {top_mhz} MHz, or fit it in a \
             separate file",
            label(first.config),
            label(top.config),
            label(first.config)
        ),
        format!("{} MHz", have.join(", ")),
    )
}

/// The law's configuration and the carried law's figures, in the law's source, the profile's
/// provenance, and the lines `fit` prints.
fn notes(profile: &mut Profile, top: &Measured, carried: Option<&Carried>) -> Notes {
    let Some(law) = profile.gpu_clock.as_mut() else {
        return Vec::new();
    };
    let at = label(top.config);
    law.source = format!("{} at ({at})", law.source);
    let mut lines = vec![format!("the GPU clock law was fitted at ({at})")];
    if let Some(c) = carried {
        lines.push(c.describe());
    }
    profile
        .provenance
        .push(("gpu_clock.configurations".into(), lines.join("; ")));
    lines
}

/// The clock law of the rows at their clocks (`points`, ascending) of configuration `c`, at
/// the machine's exponent where it sets one (`[power] gpu_clock_exponent`).
fn clock_law(
    file: &Path,
    points: &[(f64, &Measured)],
    machine: &Machine,
    c: crate::model::Config,
) -> InputResult<GpuClockLaw> {
    let law_points: Vec<ClockPoint> = points
        .iter()
        .map(|(mhz, r)| ClockPoint {
            mhz: *mhz,
            time_s: r.time_s,
            gpu_energy_j: r.energy.map(|e| e.0),
        })
        .collect();
    let at = label(c);
    let alpha = machine.power.gpu_clock_exponent;
    let mut law = fit_law(&law_points, c.gpus, &at, alpha).map_err(|why| {
        let set = alpha.map_or(String::new(), |a| {
            format!(" (alpha = {a} set by {})", exponent_source(machine))
        });
        InputError::Mismatch(format!("{}: {why}{set}", file.display()))
    })?;
    law.memory_clock_mhz = machine.gpu_memory_clock_mhz;
    law.source = format!("fit ({}, {} clocks)", file.display(), points.len());
    if let (Some(p), Some(_)) = (law.power.as_mut(), alpha) {
        p.alpha_from = Some(exponent_source(machine));
    }
    Ok(law)
}

/// Refuses a row that is not a GPU run on one node with GPU energy.
fn check_row(
    r: &Measured,
    machine: &Machine,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputResult<()> {
    let c = r.config;
    if c.gpus == 0 {
        return Err(bad(
            r,
            "gpus",
            "1 or more: fit reads CPU runs or GPU runs, not both in one file".into(),
            "0".into(),
        ));
    }
    if c.nodes != 1 {
        return Err(bad(
            r,
            "nodes",
            "1: GPU runs are fitted on one node".into(),
            c.nodes.to_string(),
        ));
    }
    if c.gpus > machine.gpus_per_node {
        return Err(bad(
            r,
            "gpus",
            format!(
                "at most {} (machine `{}`)",
                machine.gpus_per_node, machine.name
            ),
            c.gpus.to_string(),
        ));
    }
    match r.energy {
        Some((_, EnergyScope::Gpu)) | None => Ok(()),
        Some((_, scope)) => Err(bad(
            r,
            "energy_scope",
            "gpu (energy_j with energy_scope gpu, or gpu_energy_j): the GPU's share of node or \
             CPU energy cannot be told from the host's; measure GPU energy (NVML)"
                .into(),
            match scope {
                // Also what a file without the column reads as: say so, since the user may
                // have written neither the column nor the value.
                EnergyScope::Node => {
                    "node (energy_j is the node's where no energy_scope says otherwise)".into()
                }
                _ => scope.csv_name().into(),
            },
        )),
    }
}

/// Refuses a GPU row with an empty `gpu_clock_mhz` where another GPU row names its clock: the
/// empty cell would be read as the machine's top clock, a clock that run may not have run at
/// (a row of another sweep appended, a cell lost). Without the column, or with every GPU row's
/// cell empty, every run is at the top clock, as documented.
pub(super) fn no_clock_among_clocks(
    rows: &[Measured],
    machine: &Machine,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputResult<()> {
    let gpu = || rows.iter().filter(|r| r.config.gpus > 0);
    let (Some(named), Some(empty)) = (
        gpu().find(|r| r.config.gpu_clock_mhz.is_some()),
        gpu().find(|r| r.config.gpu_clock_mhz.is_none()),
    ) else {
        return Ok(());
    };
    let top = machine
        .top_gpu_clock()
        .map_or("the machine's top clock".into(), |t| {
            format!("the machine's top clock, {t} MHz")
        });
    Err(bad(
        empty,
        "gpu_clock_mhz",
        format!(
            "the GPU clock this run ran at: another GPU run of the file names its clock ({}), \
             and an empty cell would be read as {top}; write the clock it ran at",
            super::from_measured::line_of(&named.source)
        ),
        "an empty cell".into(),
    ))
}

/// The note on `file`'s rows whose clock is a fraction of a MHz from one the machine lists,
/// which [`clock_of`] takes as that clock (a sampled 1999.6 is the application clock 2000):
/// the first few lines, and how many. None where every clock is whole or none is listed.
pub fn snapped_note(
    file: &std::path::Path,
    rows: &[Measured],
    machine: &Machine,
) -> Option<String> {
    let snapped: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let mhz = r.config.gpu_clock_mhz.filter(|m| m.fract() != 0.0)?;
            let listed = machine.listed_gpu_clock(mhz)?;
            let line = super::from_measured::line_of(&r.source);
            Some(format!("{line}: {mhz} as {listed}"))
        })
        .collect();
    let shown: Vec<&str> = snapped.iter().take(3).map(String::as_str).collect();
    (!snapped.is_empty()).then(|| {
        format!(
            "{}: gpu_clock_mhz read as the clock machine `{}` lists within half a MHz ({}{}): a \
             GPU runs at whole MHz; write the clock it was set to",
            file.display(),
            machine.name,
            shown.join("; "),
            match snapped.len() - shown.len() {
                0 => String::new(),
                more => format!("; {more} more rows"),
            }
        )
    })
}

/// The row's GPU clock: its `gpu_clock_mhz`, one of the machine's, else the machine's top.
pub(super) fn clock_of(
    r: &Measured,
    machine: &Machine,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputResult<f64> {
    let top = machine.top_gpu_clock();
    match (r.config.gpu_clock_mhz, top) {
        (None, Some(top)) => Ok(top),
        (None, None) => Ok(0.0),
        (Some(mhz), None) => Err(bad(
            r,
            "gpu_clock_mhz",
            format!(
                "no clock: machine `{}` ({}) has no gpu_clocks_mhz; add the GPU's supported \
                 clocks to its [machine] (`jouleplan machine init` reads them through NVML)",
                machine.name,
                machine.file.display()
            ),
            format!("{mhz}"),
        )),
        // Whole MHz as the machine lists it: the law's range and the job script's --gpu-freq.
        (Some(mhz), Some(_)) => machine.listed_gpu_clock(mhz).ok_or_else(|| {
            bad(
                r,
                "gpu_clock_mhz",
                format!(
                    "one of machine `{}`'s gpu_clocks_mhz (nearest: {})",
                    machine.name,
                    crate::model::machine::clocks_either_side(&machine.gpu_clocks_mhz, mhz)
                ),
                format!("{mhz}"),
            )
        }),
    }
}

/// The baseline point of the reference row: the host taken busy for the whole run (cycles =
/// cores x f x T, as CPU fits take it) and every GPU busy for the whole run (kernel time T).
fn point(r: &Measured) -> BaselinePoint {
    let c = r.config;
    let g = c.gpus as usize;
    BaselinePoint::from_file(&PointFile {
        cores: c.cores,
        freq_hz: c.freq.0,
        gpus: c.gpus,
        cycles: f64::from(c.cores) * c.freq.0 * r.time_s,
        stall_cycles: 0.0,
        mem_stall_cycles: 0.0,
        instructions: None,
        utilisation: 1.0,
        wall_time_s: r.time_s,
        energy_j: r.energy.map(|e| e.0),
        measured: true,
        measured_tree: None,
        device: Some(DeviceFile {
            kernel_s: vec![r.time_s; g],
            transfer_s: vec![0.0; g],
            host_runtime_s: 0.0,
            source: Some(crate::model::baseline::WHOLE_RUN.into()),
        }),
    })
}

/// Where a set exponent comes from: the machine file's key.
fn exponent_source(machine: &Machine) -> String {
    format!(
        "machine `{}` ({}), [power] gpu_clock_exponent",
        machine.name,
        machine.file.display()
    )
}

/// Where the profile's parts come from: `top` is the reference clock and whether the rows
/// named it (else it is the machine's top clock, taken for rows without one); the clock law's
/// entry only where one was fitted.
fn provenance(
    file: &Path,
    (top, named): (f64, bool),
    law: bool,
    machine: &Machine,
) -> Vec<(String, String)> {
    let f = file.display();
    let alpha = match machine.power.gpu_clock_exponent {
        Some(a) => format!("alpha = {a} set by {}", exponent_source(machine)),
        None => "alpha chosen by least residual".into(),
    };
    let at = match (law, named) {
        (true, _) => format!("at the law's top measured GPU clock, {top} MHz"),
        (false, true) => format!("at the one GPU clock the rows name, {top} MHz"),
        (false, false) => format!(
            "the rows name no GPU clock: taken as the top of machine `{}`'s gpu_clocks_mhz, \
             {top} MHz",
            machine.name
        ),
    };
    let mut out = vec![
        (
            "baseline.wall_time_s".into(),
            format!("measured ({f}, each configuration's runs {at}, repeats averaged)"),
        ),
        (
            "baseline.energy_j".into(),
            format!("measured GPU energy ({f}, {top} MHz)"),
        ),
        (
            "baseline.device".into(),
            "derived: no device times in a measured CSV; every GPU taken busy for the whole run"
                .into(),
        ),
    ];
    if law {
        out.push((
            "gpu_clock".into(),
            format!(
                "fitted on {f}: T(fg) = a/fg + m with its residuals, P_act(fg) = P0 + k fg^alpha, \
                 {alpha} (MODEL.md 6e)"
            ),
        ));
    }
    out
}

fn assumptions(one_law: bool) -> Vec<String> {
    let mut out = vec![
        "fitted from GPU runs' time and GPU energy alone (`jouleplan fit`): no device times, so \
         every GPU is taken busy for the whole run (K_max,s = T_s) and the host for the whole \
         run too (cycles = cores x f x T), so a prediction's breakdown shows the run's whole \
         time at the top measured clock as T_run (host and GPUs together) and what a slower \
         clock adds as T_gpu; predictions at other core counts or frequencies are not \
         supported by these runs"
            .into(),
    ];
    if one_law {
        out.push(
            "one GPU clock law for every configuration (MODEL.md 6e): each configuration's \
             kernel times scale by the law's kappa(fg) from its own time at f_ref, and every GPU \
             draws the law's P_act(fg); `fit` checked both on the other configurations' \
             measured clocks"
                .into(),
        );
    }
    out
}
