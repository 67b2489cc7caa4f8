//! The GPU clock of the sweep's runs (`--gpu-clocks`): how it is set, chosen before anything
//! runs ([`method`]), taken after the checks ([`take`]), set before each clock's runs and
//! restored when the sweep's set-up is dropped (the guard's `Drop`, on every path out of
//! [`super::run`]).

use super::options::*;
use crate::error::InputError;
use crate::measure::gpu_clock_nvml::{self, NvmlClocks};
use crate::measure::gpu_clock_set::{self, ClockGuard, ClockSetter, Method};
use crate::measure::nvml;
use std::io::Write;

/// How the sweep's GPU clock is set.
pub(super) enum ClockControl {
    /// No clock asked for: the GPU chooses.
    Unset,
    /// NVML application clocks; the guard restores them on drop.
    Nvml(ClockGuard),
    /// Each run a Slurm step with `--gpu-freq`, with this memory clock.
    Slurm(Option<u32>),
}

fn refuse(o: &Options, expected: String) -> anyhow::Error {
    let got: Vec<String> = o.gpu_clocks.iter().map(u32::to_string).collect();
    InputError::Argument {
        flag: "--gpu-clocks".into(),
        expected,
        got: got.join(","),
    }
    .into()
}

/// The GPUs the sweep's runs use, as far as NVML can tell before the checks (0, 1, ... where
/// it cannot): those whose permission is asked.
fn probed_gpus(o: &Options) -> Vec<u32> {
    let g = o.gpus.iter().copied().max().unwrap_or(0);
    nvml::visible_gpus()
        .and_then(|n| nvml::sweep_gpus(nvml::user_visible_devices().as_deref(), n, g))
        .unwrap_or_else(|_| (0..g).collect())
}

/// How the clock will be set, chosen before anything runs: NVML where this process may set
/// application clocks, else Slurm steps inside an allocation, else refused (exit 2) saying
/// why and what to do. `None` when no clock is asked for.
pub(super) fn method(o: &Options) -> anyhow::Result<Option<Method>> {
    if o.gpu_clocks.is_empty() {
        return Ok(None);
    }
    let job = std::env::var("SLURM_JOB_ID").ok();
    let nvml = gpu_clock_nvml::may_set(&probed_gpus(o));
    gpu_clock_set::choose(nvml, job.as_deref())
        .map(Some)
        .map_err(|e| refuse(o, e))
}

/// Takes the clock over for the sweep: NVML's clocks of `gpu_ids` read and every asked clock
/// checked against those they support; the launchers checked to be srun steps for Slurm.
/// Logs how the clock is set once those checks passed (a refused clock is never said set)
/// and, for NVML, warns on standard error (even with `--quiet`) of the command that restores
/// it after a SIGKILL.
pub(super) fn take(
    o: &Options,
    method: Option<Method>,
    (gpu_ids, words): (&[u32], [&[String]; 2]),
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<ClockControl> {
    let Some(method) = method else {
        return Ok(ClockControl::Unset);
    };
    let clocks: Vec<String> = o.gpu_clocks.iter().map(|m| format!("{m} MHz")).collect();
    let said = format!("GPU clocks {}: {}", clocks.join(", "), method.describe());
    let g = o.gpus.iter().copied().max().unwrap_or(0) as usize;
    let ids = &gpu_ids[..g.min(gpu_ids.len())];
    if method == Method::Slurm {
        return slurm(o, ids, (words, &said), log);
    }
    let load = || NvmlClocks::load().map(|n| Box::new(n) as Box<dyn ClockSetter>);
    let clocks = (o.gpu_clocks.as_slice(), o.gpu_memory_mhz);
    let warn = &mut std::io::stderr();
    let guard = take_nvml(&load, ids, clocks, (&said, log), warn).map_err(|e| refuse(o, e))?;
    Ok(ClockControl::Nvml(guard))
}

/// NVML's part of [`take`]: the setter loaded, the clocks of `ids` taken over
/// ([`nvml_guard`]: read, checked against those supported, tried), and only then `said`
/// logged, so that a clock any check refuses is never said set.
fn take_nvml(
    load: &dyn Fn() -> Result<Box<dyn ClockSetter>, String>,
    ids: &[u32],
    clocks: (&[u32], Option<u32>),
    (said, log): (&str, &mut dyn FnMut(&str)),
    warn: &mut dyn Write,
) -> Result<ClockGuard, String> {
    let guard = nvml_guard(load()?, ids, clocks, warn)?;
    log(said);
    Ok(guard)
}

/// Takes the clocks of `ids` over through `setter` for `clocks` (MHz, and the memory clock)
/// and writes to `warn` the command that puts them back after a SIGKILL. `take` gives it
/// standard error, not the log `--quiet` silences: a quiet sweep killed with `kill -9` leaves
/// the GPUs at a set clock, and this line is the only way the user learns how to undo it.
fn nvml_guard(
    setter: Box<dyn ClockSetter>,
    ids: &[u32],
    (clocks, memory): (&[u32], Option<u32>),
    warn: &mut dyn Write,
) -> Result<ClockGuard, String> {
    let mut guard = ClockGuard::take(setter, ids, clocks, memory)?;
    guard.try_setting()?;
    // A closed or full standard error is ignored: the sweep's records matter more.
    let _ = writeln!(warn, "{}", guard.sigkill_warning());
    Ok(guard)
}

/// Slurm steps: every launcher must be srun; the clocks are checked against those the GPUs
/// support where NVML can read them (reading needs no permission; nothing is set). Logs
/// `said` (how the clock is set) once the checks passed, before what was not checked.
fn slurm(
    o: &Options,
    ids: &[u32],
    (words, said): ([&[String]; 2], &str),
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<ClockControl> {
    for w in words.iter().filter(|w| !w.is_empty()) {
        let mut argv = w.to_vec();
        gpu_clock_set::add_gpu_freq(&mut argv, "--gpu-freq".into()).map_err(|e| refuse(o, e))?;
    }
    match NvmlClocks::load() {
        Ok(n) => {
            drop(
                ClockGuard::take(Box::new(n), ids, &o.gpu_clocks, o.gpu_memory_mhz)
                    .map_err(|e| refuse(o, e))?,
            );
            log(said);
        }
        Err(why) => {
            log(said);
            log(&format!(
                "GPU clocks not checked against the GPUs ({why}): Slurm sets the supported clock \
                 nearest each one; --machine with gpu_clocks_mhz checks them before the sweep"
            ));
        }
    }
    Ok(ClockControl::Slurm(o.gpu_memory_mhz))
}

impl ClockControl {
    /// The profile's note on how the GPU clock was set (`measured.gpu-clock`).
    pub(super) fn note(&self, o: &Options) -> Option<String> {
        let method = match self {
            ClockControl::Unset => return None,
            ClockControl::Nvml(_) => Method::Nvml,
            ClockControl::Slurm(_) => Method::Slurm,
        };
        let clocks: Vec<String> = o.gpu_clocks.iter().map(u32::to_string).collect();
        Some(format!(
            "{} MHz, {}; the baseline points are the runs at the highest",
            clocks.join(", "),
            method.describe()
        ))
    }

    /// Sets the clock of a point's runs (NVML; Slurm sets it per step).
    pub(super) fn set(&mut self, clock: Option<u32>) -> anyhow::Result<()> {
        match (self, clock) {
            (ClockControl::Nvml(guard), Some(mhz)) => guard.set(mhz).map_err(anyhow::Error::msg),
            _ => Ok(()),
        }
    }

    /// Adds `--gpu-freq` to a run's command line where Slurm sets the clock ([`take`] refused
    /// launchers that are not srun before anything ran).
    pub(super) fn add_to(&self, argv: &mut Vec<String>, clock: Option<u32>) {
        if let (ClockControl::Slurm(memory), Some(mhz)) = (self, clock) {
            let _ = gpu_clock_set::add_gpu_freq(argv, gpu_clock_set::srun_gpu_freq(mhz, *memory));
        }
    }

    /// Whether the runs on one node are Slurm steps (the program is then not jouleplan's
    /// child: what follows the process does not see it).
    pub(super) fn steps(&self) -> bool {
        matches!(self, ClockControl::Slurm(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::gpu_clock_set::recording::recorder;

    #[test]
    fn a_clock_is_said_set_only_once_every_check_passed() {
        let said = "GPU clocks 990 MHz: set as NVML application clocks";
        let log = std::cell::RefCell::new(Vec::<String>::new());
        let take = |load: &dyn Fn() -> Result<Box<dyn ClockSetter>, String>, clock: u32| {
            let mut said_to = |l: &str| log.borrow_mut().push(l.to_string());
            take_nvml(
                load,
                &[0, 1],
                (&[clock], None),
                (said, &mut said_to),
                &mut Vec::new(),
            )
            .map(drop)
        };
        // NVML not loaded; a clock the GPUs do not support; the GPU refusing the clocks in
        // force: each refused, none said set.
        assert!(take(&|| Err("NVML could not be loaded".into()), 990).is_err());
        assert!(take(&|| Ok(recorder(None).0), 1500).is_err());
        assert!(take(&|| Ok(recorder(Some(1980)).0), 990).is_err());
        assert!(log.borrow().is_empty(), "{log:?}");
        // Every check passed: said once.
        assert!(take(&|| Ok(recorder(None).0), 990).is_ok());
        assert_eq!(*log.borrow(), [said]);
    }

    #[test]
    fn the_sigkill_restore_command_is_written_to_the_warning_stream_not_the_log() {
        let (setter, calls) = recorder(None);
        let mut warn = Vec::new();
        let guard = nvml_guard(setter, &[0, 1], (&[1980, 990], None), &mut warn).unwrap();
        let said = String::from_utf8(warn).unwrap();
        assert!(
            said.contains("warning:")
                && said.contains("SIGKILL")
                && said.contains("`nvidia-smi -i 0,1 -ac 2619,1980`")
                && said.contains("nvidia-smi -rac"),
            "{said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
        drop(guard);
        assert_eq!(
            *calls.borrow(),
            ["read 0", "read 1", "set 0 2619,1980", "set 1 2619,1980"],
            "the clocks in force tried, nothing changed"
        );
        // A clock the GPUs do not support is refused before any warning: nothing to restore.
        let (setter, _) = recorder(None);
        let mut warn = Vec::new();
        let e = nvml_guard(setter, &[0], (&[1400], None), &mut warn)
            .err()
            .unwrap();
        assert!(e.contains("1400 MHz is not one"), "{e}");
        assert!(warn.is_empty());
    }
}
