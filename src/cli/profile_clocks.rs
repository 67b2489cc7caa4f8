//! `profile --gpu-clocks SPEC`: the GPU core clocks a sweep measures each point with GPUs at,
//! checked against `--machine`'s `gpu_clocks_mhz` (the parser `plan --gpu-clocks` uses), or,
//! without `--machine`, plain MHz values that NVML checks as the sweep starts.

use crate::error::InputError;
use crate::values;

const FLAG: &str = "--gpu-clocks";

/// `--gpu-clocks` with `--nodes auto`: a campaign, launched or replayed, measures at the clock
/// the GPU chooses.
pub(super) fn in_campaign(spec: &str) -> InputError {
    values::bad(
        FLAG,
        "a sweep of given --nodes: the campaign of --nodes auto measures at the clock the GPU \
         chooses",
        spec,
    )
}

/// `profile`'s flags the clocks depend on.
pub(super) struct ClockFlags<'a> {
    /// `--gpu-clocks`.
    pub(super) spec: Option<&'a str>,
    /// `--nodes`.
    pub(super) nodes: &'a str,
    /// `--machine`.
    pub(super) machine: Option<&'a str>,
}

/// The clocks in MHz (ascending) and the memory clock they go with (the machine's); empty
/// without `--gpu-clocks`. Refused without GPUs, with `--nodes auto`, with a machine that
/// names no clocks, or naming a clock the machine does not support.
pub(super) fn gpu_clocks(
    a: &ClockFlags<'_>,
    gpus: &[u32],
) -> Result<(Vec<u32>, Option<u32>), InputError> {
    let Some(spec) = a.spec else {
        return Ok((Vec::new(), None));
    };
    let bad = |expected: String| values::bad(FLAG, expected, spec);
    if !gpus.iter().any(|&g| g > 0) {
        return Err(bad(
            "--gpus with 1 or more GPUs as well (--gpus 1): the clock is the GPUs', and \
             without --gpus the runs use none"
                .into(),
        ));
    }
    if a.nodes.trim() == "auto" {
        return Err(in_campaign(spec));
    }
    let (clocks, memory) = match a.machine {
        Some(m) => from_machine(spec, m)?,
        None => (plain(spec).map_err(bad)?, None),
    };
    Ok((clocks, memory))
}

/// The clocks `spec` names among machine `m`'s `gpu_clocks_mhz`, and its memory clock.
fn from_machine(spec: &str, m: &str) -> Result<(Vec<u32>, Option<u32>), InputError> {
    // Only the clocks are read: a file as `machine init` writes it (no [network], no [power])
    // serves, since a clock sweep on one node needs neither.
    let (file, text) = crate::search::inputs::machine_text(Some(m))?;
    let (machine, _) = crate::model::machine::Machine::from_toml_for_fit(&file, &text)?;
    if machine.gpu_clocks_mhz.is_empty() {
        return Err(values::bad(
            FLAG,
            format!(
                "clocks of the machine's gpu_clocks_mhz, but machine `{}` ({}) has none; add \
                 the GPU's supported clocks to its [machine] (`jouleplan machine init` reads \
                 them through NVML), or give --gpu-clocks without --machine",
                machine.name,
                machine.file.display()
            ),
            spec,
        ));
    }
    let clocks = crate::search::gpu_clocks::select(spec, &machine.gpu_clocks_mhz)
        .map_err(|e| values::bad(FLAG, e, spec))?;
    let mhz = |v: f64| v.round() as u32;
    Ok((
        clocks.into_iter().map(mhz).collect(),
        machine.gpu_memory_clock_mhz.map(mhz),
    ))
}

/// Plain clocks in whole MHz (`870,1305,1710`), ascending and distinct; `all` and ranges need
/// the machine's list.
fn plain(spec: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for t in spec.split(',').map(str::trim) {
        match values::parse_mhz(t) {
            Some(v) if (50..=5000).contains(&v) => out.push(v),
            _ => {
                return Err(values::not_whole_mhz(t).unwrap_or_else(|| {
                    format!(
                        "GPU clocks in whole MHz, 50 to 5000 (870,1305,1710); `all` and ranges \
                         need --machine with gpu_clocks_mhz; `{t}` is neither"
                    )
                }));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
