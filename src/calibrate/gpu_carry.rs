//! The GPU clock law carried to the configurations it was not fitted on (MODEL.md 6e): one law
//! per workload, so each other configuration measured at several clocks is a check of it. The
//! model (`K_i(fg) = kappa(fg) K_i` from the configuration's own point at `f_ref`, every GPU at
//! the law's `P_act(fg)`) must reproduce each of their rows within the law's own bounds: 10%
//! in time, 5% in GPU energy. `fit` refuses the file otherwise, and reports the largest errors.

use super::from_measured::line_of;
use super::gpu_clock::{POWER_RESIDUAL_MAX, TIME_RESIDUAL_MAX};
use super::reproduce;
use super::runs::Measured;
use crate::error::{InputError, InputResult};
use crate::model::Model;
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use std::path::Path;

/// One configuration's rows at their clocks, ascending.
pub(super) type Clocks<'a> = Vec<(f64, &'a Measured)>;

/// `(1 node, c cores, f GHz, g GPUs)`, for messages.
pub(super) fn label(c: crate::model::Config) -> String {
    use crate::units::count;
    format!(
        "1 node, {}, {} GHz, {}",
        count(c.cores, "core", "cores"),
        c.freq.ghz(),
        count(c.gpus, "GPU", "GPUs")
    )
}

/// How well the law serves the configurations it was not fitted on.
#[derive(Debug, Clone, PartialEq)]
pub struct Carried {
    /// The other configurations.
    pub configurations: usize,
    /// Their rows (every clock, `f_ref` included).
    pub rows: usize,
    /// The largest relative time error, and where: `(error, configuration, MHz)`.
    pub time: (f64, String, f64),
    /// The largest relative GPU energy error, where GPU energy and a power law are given.
    pub energy: Option<(f64, String, f64)>,
}

impl Carried {
    /// One line for the user and the profile's provenance.
    pub fn describe(&self) -> String {
        let worst =
            |(e, at, mhz): &(f64, String, f64)| format!("{:.2}% ({at}, {mhz} MHz)", 100.0 * e);
        format!(
            "carried to {} ({}): largest time error {}{}",
            crate::units::count(
                self.configurations as u64,
                "other configuration",
                "other configurations"
            ),
            crate::units::count(self.rows as u64, "row", "rows"),
            worst(&self.time),
            self.energy.as_ref().map_or(String::new(), |e| format!(
                ", largest GPU energy error {}",
                worst(e)
            ))
        )
    }
}

/// The model of the `profile` fitted at `law_at` against every row of the `others`
/// configurations; refused, naming the line, the configuration and the clock, beyond the law's
/// bounds.
pub fn check(
    file: &Path,
    profile: &Profile,
    machine: &Machine,
    (others, law_at): (&[&Clocks<'_>], &str),
) -> InputResult<Carried> {
    let model = Model::new(machine, profile)?;
    let mut carried = Carried {
        configurations: others.len(),
        rows: 0,
        time: (-1.0, String::new(), 0.0),
        energy: None,
    };
    for &(mhz, r) in others.iter().flat_map(|c| c.iter()) {
        let (time, energy) = errors(&model, file, mhz, r)?;
        let at = label(r.config);
        let refuse = |what: &str, err: f64, why: String| {
            InputError::Mismatch(format!(
                "{}: {}: the GPU clock law fitted at ({law_at}) predicts ({at}) at {mhz} MHz {:+.1}% off \
                 its measured {what}, more than {why}: one clock law does not serve these \
                 configurations; fit them in separate files",
                file.display(),
                line_of(&r.source),
                100.0 * err,
            ))
        };
        if time.abs() > TIME_RESIDUAL_MAX {
            let why = format!(
                "the {:.0}% the law's own check allows",
                100.0 * TIME_RESIDUAL_MAX
            );
            return Err(refuse("time", time, why));
        }
        if let Some(e) = energy {
            let bound = energy_bound(profile, machine, mhz, r)?;
            if e.abs() > bound.0 {
                return Err(refuse("GPU energy", e, bound.1));
            }
            if carried.energy.as_ref().is_none_or(|w| e.abs() > w.0) {
                carried.energy = Some((e.abs(), at.clone(), mhz));
            }
        }
        if time.abs() > carried.time.0 {
            carried.time = (time.abs(), at, mhz);
        }
        carried.rows += 1;
    }
    Ok(carried)
}

/// The GPU energy bound of row `r` at `mhz`, and what it is in words: at the law's reference
/// clock the row is the configuration's baseline point, which `plan` reproduces within its
/// reproduction bound (MODEL.md 6b a); at the other clocks the power check's 5%.
fn energy_bound(
    profile: &Profile,
    machine: &Machine,
    mhz: f64,
    r: &Measured,
) -> InputResult<(f64, String)> {
    let reference = profile.gpu_clock.as_ref().map(|l| l.reference_mhz);
    if reference.is_none_or(|f| (f - mhz).abs() >= 0.5) {
        let why = format!(
            "the {:.0}% the law's own power check allows",
            100.0 * POWER_RESIDUAL_MAX
        );
        return Ok((POWER_RESIDUAL_MAX, why));
    }
    let c = r.config;
    let p = profile.point(c.cores, c.freq, c.gpus)?;
    let bound = reproduce::bound_of(profile, p).max(reproduce::energy_bound(&machine.power));
    let why = format!(
        "the {:.1}% within which `plan` must reproduce a profile's own measured points (its GPUs \
         draw another power than the law's configuration's)",
        100.0 * bound
    );
    Ok((bound, why))
}

/// The model's relative errors `(time, GPU energy)` at row `r`, clock `mhz`; a clock outside
/// the law's measured range is refused (nothing is extrapolated).
fn errors(
    model: &Model<'_>,
    file: &Path,
    mhz: f64,
    r: &Measured,
) -> InputResult<(f64, Option<f64>)> {
    let c = r.config;
    let law = model.profile.gpu_clock.as_ref();
    let outside = |why: String| {
        InputError::Mismatch(format!(
            "{}: {}: ({}) at {mhz} MHz {why}; measure that clock at the law's configuration \
             too, or fit it in a separate file",
            file.display(),
            line_of(&r.source),
            label(c)
        ))
    };
    if let Some(l) = law.filter(|l| !l.covers(mhz)) {
        return Err(outside(format!(
            "lies outside the GPU clock law's measured range {}: nothing is extrapolated",
            l.range_text()
        )));
    }
    let fi = model.machine.frequency_index(c.freq).ok_or_else(|| {
        outside(format!(
            "runs at {} GHz, not one of the machine's frequencies",
            c.freq.ghz()
        ))
    })?;
    let ev = model
        .group_at(c.cores, fi, c.gpus, Some(mhz))?
        .eval(1, 0.0)
        .ok_or_else(|| outside("is not evaluated by the model (network saturated)".into()))?;
    let power = law.and_then(|l| l.power.as_ref());
    let energy = r
        .energy
        .filter(|_| power.is_some())
        .map(|(e, _)| ev.e.gpu / e - 1.0);
    Ok((ev.time / r.time_s - 1.0, energy))
}
