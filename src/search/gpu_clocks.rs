//! `--gpu-clocks SPEC|all`: the GPU core clocks a plan searches (MODEL.md 6e), from the
//! machine's `gpu_clocks_mhz` and within the profile's measured range.

use crate::error::{InputError, InputResult};
use crate::model::Config;
use crate::model::gpu_clock::GpuClockLaw;
use crate::model::machine::Machine;
use crate::model::workload::Profile;

const FLAG: &str = "--gpu-clocks";

/// The clocks `spec` names: `all` (every supported clock within the profile's measured range),
/// or values and inclusive ranges in MHz (`870,1305`, `900-1400`: every supported clock in the
/// range). An error names what is missing: the machine's list, the profile's law, a clock
/// that is not supported or not measured.
pub fn parse(spec: &str, machine: &Machine, profile: &Profile) -> InputResult<Vec<f64>> {
    let err = |expected: String, got: &str| InputError::Argument {
        flag: FLAG.into(),
        expected,
        got: got.into(),
    };
    if machine.gpu_clocks_mhz.is_empty() {
        return Err(err(
            format!(
                "no GPU clocks: machine `{}` ({}) has no gpu_clocks_mhz in [machine]; add the \
                 GPU's supported clocks (`jouleplan machine init` reads them through NVML)",
                machine.name,
                machine.file.display()
            ),
            spec,
        ));
    }
    let Some(law) = &profile.gpu_clock else {
        if let Some(one) = one_clock(spec, profile) {
            return Ok(vec![one]);
        }
        return Err(err(
            format!(
                "{}: {} has no GPU clock law; measure 3 or more clocks (a measured CSV with \
                 gpu_clock_mhz and GPU energy, then `jouleplan fit`)",
                profile
                    .measured_gpu_clock_mhz
                    .map_or("no GPU clocks".into(), |m| format!(
                        "only {m} MHz (or `all`), the one GPU clock the profile was measured at"
                    )),
                profile.file.display()
            ),
            spec,
        ));
    };
    let mut out = select(spec, &machine.gpu_clocks_mhz).map_err(|e| err(e, spec))?;
    if spec.trim().eq_ignore_ascii_case("all") {
        out.retain(|&c| law.covers(c));
    }
    if let Some(c) = out.iter().find(|&&c| !law.covers(c)) {
        return Err(err(
            format!(
                "clocks within the profile's measured range {}: nothing is extrapolated; \
                 measure {c} MHz to plan it",
                law.range_text()
            ),
            spec,
        ));
    }
    if out.is_empty() {
        return Err(err(
            format!("at least one supported clock within {}", law.range_text()),
            spec,
        ));
    }
    if let Some(&c) = out.iter().find(|&&c| c != law.reference_mhz) {
        unpriced(machine, profile, law, c).map_err(|why| err(why, spec))?;
    }
    Ok(out)
}

/// The one clock a profile without a law was measured at, where `spec` names it alone (`all`,
/// or that clock).
fn one_clock(spec: &str, profile: &Profile) -> Option<f64> {
    let one = profile.measured_gpu_clock_mhz?;
    let s = spec.trim();
    let named = s.eq_ignore_ascii_case("all") || s.parse::<f64>().is_ok_and(|c| c == one);
    named.then_some(one)
}

/// Refuses `clock` MHz, not the law's reference, where the law carries no GPU power (its runs
/// measured no GPU energy) and the machine has `[power]`: its energy would be the machine's
/// `gpu_active_w` at every clock, a power no run measured (a slower clock only ever costing
/// more). Without `[power]` the clocks rank by time, which the law gives.
fn unpriced(
    machine: &Machine,
    profile: &Profile,
    law: &GpuClockLaw,
    clock: f64,
) -> Result<(), String> {
    if law.power.is_some() || machine.time_only() {
        return Ok(());
    }
    Err(format!(
        "clocks with a GPU power: {}'s GPU clock law has no GPU power (its runs measured no GPU \
         energy), so the energy at {clock} MHz would be machine `{}`'s gpu_active_w at every \
         clock, which no run measured; plan {} MHz only, add the GPU energy of each run \
         (gpu_energy_j, or energy_j with energy_scope gpu) and fit again, or plan against a \
         machine file without [power] to rank the clocks by time",
        profile.file.display(),
        machine.name,
        law.reference_mhz
    ))
}

/// The GPU clock a configuration names (`--config`, `--reference`), checked as `--gpu-clocks`
/// checks its clocks: on a configuration with GPUs, one the machine's `gpu_clocks_mhz` lists
/// (the GPU runs at no other), within the profile's measured clock range. The error names
/// `flag`; a configuration without a clock passes.
pub fn check_config(
    flag: &str,
    machine: &Machine,
    profile: &Profile,
    config: &Config,
) -> InputResult<()> {
    let Some(c) = config.gpu_clock_mhz else {
        return Ok(());
    };
    let said = |why: String| {
        InputError::Mismatch(format!(
            "{flag}: {} sets the GPU clock to {c} MHz (its fifth value): {why}",
            config.label()
        ))
    };
    if config.gpus == 0 {
        return Err(said(
            "a GPU clock comes only with 1 or more GPUs (the fourth value): a configuration \
             without GPUs runs at no GPU clock; leave the fifth value out"
                .into(),
        ));
    }
    let listed = &machine.gpu_clocks_mhz;
    if !listed.is_empty() && crate::model::machine::listed_clock(listed, c).is_none() {
        return Err(said(format!(
            "{c} MHz is not one the GPU runs at: machine `{}` lists {} in gpu_clocks_mhz; give \
             one of them",
            machine.name,
            clocks_allowed(listed, c)
        )));
    }
    match &profile.gpu_clock {
        // The one clock the profile was measured at: its own points.
        None if profile.measured_at_clock(c) => Ok(()),
        None => Err(said(format!(
            "{} has no GPU clock law, so its configurations take no clock{}; leave the fifth \
             value out, or measure 3 or more clocks (a measured CSV with gpu_clock_mhz, then \
             `jouleplan fit`)",
            profile.file.display(),
            (profile.measured_gpu_clock_mhz).map_or(String::new(), |m| format!(
                " but the one it was measured at, {m} MHz"
            ))
        ))),
        Some(law) if !law.covers(c) => Err(said(format!(
            "{c} MHz lies outside the profile's measured range {}: nothing is extrapolated; \
             give a clock within it, or measure {c} MHz to plan it",
            law.range_text()
        ))),
        Some(law) if c != law.reference_mhz => unpriced(machine, profile, law, c).map_err(said),
        Some(_) => Ok(()),
    }
}

/// The clocks a GPU runs at, in words, for an error on `asked` MHz: every one where they are
/// few (`1000, 1250 and 1500 MHz`), else their count and range, then the ones either side of
/// it (`81 clocks from 210 to 1980 MHz (nearest: 990, 1005 MHz)`).
fn clocks_allowed(listed: &[f64], asked: f64) -> String {
    let nearest = crate::model::machine::clocks_either_side(listed, asked);
    let all: Vec<String> = listed.iter().map(|c| format!("{c}")).collect();
    match all.split_last() {
        Some((last, rest)) if listed.len() <= 12 => {
            let listed = match rest.is_empty() {
                true => format!("only {last} MHz"),
                false => format!("{} and {last} MHz", rest.join(", ")),
            };
            format!("{listed} (nearest: {nearest})")
        }
        _ => format!(
            "{} clocks from {} to {} MHz (nearest: {nearest})",
            all.len(),
            all.first().map_or("", String::as_str),
            all.last().map_or("", String::as_str),
        ),
    }
}

/// The clocks `spec` names among `supported` (ascending, non-empty): `all`, or values and
/// inclusive ranges in MHz; sorted and distinct. An error says what was expected. Shared by
/// `plan --gpu-clocks` and `profile --gpu-clocks`.
pub fn select(spec: &str, supported: &[f64]) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    if spec.trim().eq_ignore_ascii_case("all") {
        out.extend_from_slice(supported);
    } else {
        for token in spec.split(',').map(str::trim) {
            out.extend(token_clocks(token, supported)?);
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    Ok(out)
}

/// The supported clocks one token names: one clock (which must be supported) or a range.
fn token_clocks(token: &str, supported: &[f64]) -> Result<Vec<f64>, String> {
    let num = |t: &str| match crate::values::parse_mhz(t) {
        Some(v) if v > 0 => Ok(f64::from(v)),
        _ => Err(crate::values::not_whole_mhz(t).unwrap_or_else(|| {
            format!(
                "clocks in MHz from the machine's gpu_clocks_mhz, or all; `{}` is not a clock",
                t.trim()
            )
        })),
    };
    let list = || {
        format!(
            "{} clocks from {} to {} MHz",
            supported.len(),
            supported[0],
            supported[supported.len() - 1]
        )
    };
    // A leading `-` is a negative number, not a range: named whole in the error.
    match token.split_once('-').filter(|(a, _)| !a.trim().is_empty()) {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(format!(
                    "ranges written low-high, like {}-{}: `{}` runs from {a} down to {b} MHz",
                    supported[0],
                    supported[supported.len() - 1],
                    token.trim()
                ));
            }
            let v: Vec<f64> = supported
                .iter()
                .copied()
                .filter(|&c| c >= a && c <= b)
                .collect();
            if v.is_empty() {
                return Err(format!("a range holding a supported clock ({})", list()));
            }
            Ok(v)
        }
        None => {
            let c = num(token)?;
            if let Some(listed) = crate::model::machine::listed_clock(supported, c) {
                Ok(vec![listed])
            } else {
                Err(format!(
                    "supported clocks of the machine's gpu_clocks_mhz ({}; nearest: {}); {c} MHz \
                     is not one",
                    list(),
                    crate::model::machine::clocks_either_side(supported, c)
                ))
            }
        }
    }
}
