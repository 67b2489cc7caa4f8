//! `jouleplan fit` on GPU runs (MODEL.md section 6e): one configuration `(1, c, f, g)` measured
//! at one or more GPU core clocks gives a profile of one point at the top measured clock and,
//! from 3 or more clocks, the GPU clock law ([`super::gpu_clock`]). The rows' clocks must be
//! the machine's (`gpu_clocks_mhz`), their energy GPU energy.

use super::gpu_clock::{ClockPoint, fit_law};
use super::reproduce::EnergyScope;
use super::runs::Measured;
use crate::artefact::profile::{DeviceFile, PointFile};
use crate::error::{InputError, InputResult};
use crate::model::baseline::BaselinePoint;
use crate::model::gpu_clock::GpuClockLaw;
use crate::model::machine::Machine;
use crate::model::workload::{Communication, Profile};
use std::path::Path;

/// The profile of GPU rows: every row must have GPUs, one node, one `(c, f, g)`, a clock of
/// the machine's list (absent: its top), and GPU energy where it has energy.
pub fn gpu_profile(
    file: &Path,
    rows: &[Measured],
    machine: &Machine,
    program: &str,
) -> InputResult<Profile> {
    let bad = |r: &Measured, col: &str, expected: String, got: String| InputError::Key {
        file: file.to_path_buf(),
        key: format!("{}, column {col}", super::from_measured::line_of(&r.source)),
        expected,
        got,
    };
    let first = &rows[0];
    let mut points = Vec::new();
    for r in rows {
        check_row(r, first, machine, &bad)?;
        let mhz = clock_of(r, machine, &bad)?;
        points.push((mhz, r));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let c = first.config;
    let (top_mhz, top) = points[points.len() - 1];
    let law = match points.len() {
        1 => None,
        _ => Some(clock_law(file, &points, machine, c)?),
    };
    let mut profile = Profile::from_parts(
        program,
        &format!(
            "fitted by `jouleplan fit` from GPU runs' time and GPU energy ({})",
            file.display()
        ),
        (1.0, 1.0),
        Communication::none(),
        vec![point(top)],
        provenance(file, top_mhz, machine),
    )?;
    profile.gpu_clock = law;
    profile.recorded_scope = top.energy.map(|e| e.1);
    profile.assumptions = assumptions();
    Ok(profile)
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
    let at = format!(
        "1 node, {} cores, {} GHz, {} GPUs",
        c.cores,
        c.freq.ghz(),
        c.gpus
    );
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

/// Refuses a row that is not one of the GPU configuration `first`'s runs.
fn check_row(
    r: &Measured,
    first: &Measured,
    machine: &Machine,
    bad: &dyn Fn(&Measured, &str, String, String) -> InputError,
) -> InputResult<()> {
    let c = r.config;
    let f = first.config;
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
    if (c.cores, c.gpus) != (f.cores, f.gpus) || (c.freq.0 - f.freq.0).abs() > 1e3 {
        return Err(bad(
            r,
            "cores",
            format!(
                "the configuration of the file's first GPU row ({} cores, {} GHz, {} GPUs): the \
                 GPU clock law is fitted on one configuration measured at several clocks",
                f.cores,
                f.freq.ghz(),
                f.gpus
            ),
            format!("{} cores, {} GHz, {} GPUs", c.cores, c.freq.ghz(), c.gpus),
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
            scope.csv_name().into(),
        )),
    }
}

/// The row's GPU clock: its `gpu_clock_mhz`, one of the machine's, else the machine's top.
fn clock_of(
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
        (Some(mhz), Some(_)) if machine.has_gpu_clock(mhz) => Ok(mhz),
        (Some(mhz), Some(_)) => Err(bad(
            r,
            "gpu_clock_mhz",
            format!(
                "one of machine `{}`'s gpu_clocks_mhz (nearest: {})",
                machine.name,
                crate::model::machine::clocks_either_side(&machine.gpu_clocks_mhz, mhz)
            ),
            format!("{mhz}"),
        )),
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
            source: Some("no device times measured: every GPU taken busy for the whole run".into()),
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

fn provenance(file: &Path, top: f64, machine: &Machine) -> Vec<(String, String)> {
    let f = file.display();
    let alpha = match machine.power.gpu_clock_exponent {
        Some(a) => format!("alpha = {a} set by {}", exponent_source(machine)),
        None => "alpha chosen by least residual".into(),
    };
    vec![
        (
            "baseline.wall_time_s".into(),
            format!("measured ({f}, at the top measured GPU clock, {top} MHz, repeats averaged)"),
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
        (
            "gpu_clock".into(),
            format!(
                "fitted on {f}: T(fg) = a/fg + m with its residuals, P_act(fg) = P0 + k fg^alpha, \
                 {alpha} (MODEL.md 6e)"
            ),
        ),
    ]
}

fn assumptions() -> Vec<String> {
    vec![
        "fitted from GPU runs' time and GPU energy alone (`jouleplan fit`): no device times, so \
         every GPU is taken busy for the whole run (K_max,s = T_s) and the host for the whole \
         run too (cycles = cores x f x T), so a prediction's breakdown shows the run's whole \
         time at the top measured clock as T_CPU (host and GPUs overlapped) and what a slower \
         clock adds as T_gpu; predictions at other core counts or frequencies are not \
         supported by these runs"
            .into(),
    ]
}
