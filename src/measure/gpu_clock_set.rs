//! Setting the GPU core clock for `profile --gpu-clocks` (MODEL.md section 6e). Two ways,
//! chosen before anything runs ([`choose`]): NVML application clocks where this process may
//! set them (root, or the API not restricted), or, inside a Slurm allocation, each run a step
//! `srun --gpu-freq=MHZ` ([`srun_gpu_freq`]; Slurm sets the clock for the step and resets it
//! after). Where neither works the sweep is refused, saying why and what to do: a sweep never
//! runs silently at the clock the GPU chooses.
//!
//! What NVML changed is put back by [`ClockGuard`]'s `Drop`, on every exit the process sees
//! (the end of the sweep, an error, a stop signal: the sweep winds down and drops it). A
//! SIGKILL cannot be caught: the command that restores the clocks by hand is printed as the
//! sweep starts ([`ClockGuard::restore_command`]).

/// How the sweep sets the GPU clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// NVML application clocks, set by jouleplan before each clock's runs and restored after.
    Nvml,
    /// Each run a step of the Slurm allocation with `srun --gpu-freq`.
    Slurm,
}

impl Method {
    /// How the record names it.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Nvml => "set as NVML application clocks, restored after",
            Method::Slurm => "set by Slurm for each run, a step with srun --gpu-freq",
        }
    }
}

/// Chooses how to set the clock: NVML where `nvml` says it may (the runs then stay on this
/// node, where every backend sees them), else Slurm steps where `slurm_job` (`SLURM_JOB_ID`)
/// is set, else an error saying why neither works and what the user can do.
pub fn choose(nvml: Result<(), String>, slurm_job: Option<&str>) -> Result<Method, String> {
    match (nvml, slurm_job.filter(|j| !j.trim().is_empty())) {
        (Ok(()), _) => Ok(Method::Nvml),
        (Err(_), Some(_)) => Ok(Method::Slurm),
        (Err(why), None) => Err(format!(
            "GPU clocks this process can set, but it can set none: NVML application clocks \
             cannot be set ({why}) and jouleplan runs outside a Slurm allocation (no \
             SLURM_JOB_ID); nothing was run. Where NVML works, run it as root, or ask the administrator to \
             allow users to set application clocks (`nvidia-smi -acp UNRESTRICTED`), or run \
             it inside `salloc`/`sbatch`, where each run becomes a step with `srun \
             --gpu-freq`; or drop --gpu-clocks to measure at the clock the GPU chooses"
        )),
    }
}

/// `--gpu-freq=MHZ` (with `,memory=MHZ` where the machine names its memory clock), in
/// Slurm's syntax `--gpu-freq=[[type=]value][,type=value]`.
pub fn srun_gpu_freq(mhz: u32, memory_mhz: Option<u32>) -> String {
    match memory_mhz {
        Some(m) => format!("--gpu-freq={mhz},memory={m}"),
        None => format!("--gpu-freq={mhz}"),
    }
}

/// Inserts the step's `--gpu-freq` after `srun` in a run's command line; refuses a command
/// line that is not an srun step (a launcher of the user's that is not srun).
pub fn add_gpu_freq(argv: &mut Vec<String>, flag: String) -> Result<(), String> {
    match argv.first() {
        Some(w) if w.ends_with("srun") => {
            argv.insert(1, flag);
            Ok(())
        }
        other => Err(format!(
            "an srun step to set the GPU clock with {flag}, but the run starts with `{}`: give \
             no --launcher (jouleplan then runs each point as an srun step) or one that is srun",
            other.map_or("", String::as_str)
        )),
    }
}

/// The order of the runs: those without a clock first (they run before any change), then by
/// clock from the highest (the reference clock, the profile's baseline) down, each clock's
/// runs together, so the clock changes once per clock. The sort is stable: within a clock the
/// runs keep their order.
pub fn order_by_clock<T>(runs: &mut [T], clock: impl Fn(&T) -> Option<u32>) {
    runs.sort_by_key(|r| clock(r).map_or(0, |m| u64::from(u32::MAX - m) + 1));
}

/// The clocks a GPU can be set to: what NVML reads and sets on one GPU (MHz). The real one
/// is [`super::gpu_clock_nvml::NvmlClocks`]; tests use a recording double.
pub trait ClockSetter {
    /// The application clocks in force on GPU `gpu`: `(memory, graphics)` MHz.
    fn applications_clocks(&mut self, gpu: u32) -> Result<(u32, u32), String>;
    /// The graphics clocks GPU `gpu` supports at memory clock `memory`, MHz.
    fn supported_graphics(&mut self, gpu: u32, memory: u32) -> Result<Vec<u32>, String>;
    /// Sets GPU `gpu`'s application clocks.
    fn set(&mut self, gpu: u32, memory: u32, graphics: u32) -> Result<(), String>;
}

/// The GPUs' clocks as they were before the sweep, put back on drop once a clock was set.
pub struct ClockGuard {
    setter: Box<dyn ClockSetter>,
    /// `(gpu, memory, graphics)` before the sweep.
    saved: Vec<(u32, u32, u32)>,
    /// The memory clock the sweep's clocks are set with.
    memory: u32,
    /// The graphics clock set now (`None`: the saved ones are in force).
    current: Option<u32>,
}

impl ClockGuard {
    /// Reads the clocks of `gpus` and checks that each clock of `wanted` is one they support
    /// at memory clock `memory` (`None`: the memory clock in force on the first GPU); nothing
    /// is changed yet. An error names the clock and lists the supported ones.
    pub fn take(
        mut setter: Box<dyn ClockSetter>,
        gpus: &[u32],
        wanted: &[u32],
        memory: Option<u32>,
    ) -> Result<ClockGuard, String> {
        let mut saved = Vec::new();
        for &g in gpus {
            let (m, c) = setter.applications_clocks(g)?;
            saved.push((g, m, c));
        }
        let memory = memory
            .or(saved.first().map(|s| s.1))
            .ok_or("no GPU to set the clock of")?;
        for &g in gpus {
            let supported = setter.supported_graphics(g, memory)?;
            if let Some(bad) = wanted.iter().find(|w| !supported.contains(w)) {
                return Err(unsupported(g, *bad, memory, &supported));
            }
        }
        Ok(ClockGuard {
            setter,
            saved,
            memory,
            current: None,
        })
    }

    /// Sets every GPU to the clocks in force, which changes nothing, to learn before anything
    /// runs whether these GPUs let this process set application clocks at all: a GPU that
    /// does not support them refuses root too, and NVML cannot tell that without trying.
    pub fn try_setting(&mut self) -> Result<(), String> {
        for &(g, m, c) in &self.saved {
            self.setter.set(g, m, c).map_err(|e| {
                format!(
                    "GPU {g} refused to have its application clocks set ({e}; tried with those \
                     in force, {m} MHz memory and {c} MHz graphics, which changes nothing)"
                )
            })?;
        }
        Ok(())
    }

    /// Sets every GPU to `mhz` (nothing when it is set already).
    pub fn set(&mut self, mhz: u32) -> Result<(), String> {
        if self.current == Some(mhz) {
            return Ok(());
        }
        // Marked before the calls: a GPU set before a later one failed is restored too.
        self.current = Some(mhz);
        for &(g, _, _) in &self.saved {
            self.setter
                .set(g, self.memory, mhz)
                .map_err(|e| format!("setting GPU {g} to {mhz} MHz: {e}"))?;
        }
        Ok(())
    }

    /// Puts back every GPU's clocks as they were before the sweep (nothing when no clock was
    /// set); every GPU is tried, the first failure returned.
    pub fn restore(&mut self) -> Result<(), String> {
        if self.current.take().is_none() {
            return Ok(());
        }
        let mut first = Ok(());
        for &(g, m, c) in &self.saved {
            if let Err(e) = self.setter.set(g, m, c) {
                first = first.and(Err(format!("GPU {g}: {e}")));
            }
        }
        first
    }

    /// The warning, printed as the sweep takes the clocks over, on how to put them back after
    /// a SIGKILL (which no process can catch): shown whatever `--quiet` says, since a user
    /// who kills a quiet sweep has no other way to learn it.
    pub fn sigkill_warning(&self) -> String {
        format!(
            "jouleplan: warning: if jouleplan is killed with SIGKILL (which it cannot catch), put \
             the GPU clocks back with `{}` (or `nvidia-smi -rac` for the defaults)",
            self.restore_command()
        )
    }

    /// The command that puts the clocks back by hand (after a SIGKILL):
    /// `nvidia-smi -i 0,1 -ac 2619,1980`, one per distinct pair of clocks.
    pub fn restore_command(&self) -> String {
        let mut pairs: Vec<((u32, u32), Vec<String>)> = Vec::new();
        for &(g, m, c) in &self.saved {
            match pairs.iter_mut().find(|(p, _)| *p == (m, c)) {
                Some((_, ids)) => ids.push(g.to_string()),
                None => pairs.push(((m, c), vec![g.to_string()])),
            }
        }
        pairs
            .iter()
            .map(|((m, c), ids)| format!("nvidia-smi -i {} -ac {m},{c}", ids.join(",")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Drop for ClockGuard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!(
                "jouleplan: warning: the GPU clocks could not be restored ({e}); restore them \
                 with `{}` (or `nvidia-smi -rac` for the defaults)",
                self.restore_command()
            );
        }
    }
}

/// The error for a clock GPU `gpu` does not support at `memory` MHz.
fn unsupported(gpu: u32, mhz: u32, memory: u32, supported: &[u32]) -> String {
    let mut list = supported.to_vec();
    list.sort_unstable();
    let shown: Vec<String> = list.iter().map(u32::to_string).collect();
    format!(
        "clocks GPU {gpu} supports at its {memory} MHz memory clock ({} clocks: {} MHz); {mhz} \
         MHz is not one (`nvidia-smi -q -d SUPPORTED_CLOCKS` lists them)",
        list.len(),
        shown.join(", ")
    )
}

/// A recording double of NVML for the tests of the sweep's clock handling.
#[cfg(test)]
pub(crate) mod recording {
    use super::ClockSetter;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A recording double of NVML: it answers with the clocks it is given (illustrative
    /// values, as the machine-file tests use: memory 2619 MHz, graphics 1980 MHz) and records
    /// every call; it measures nothing.
    pub(crate) struct Recorder {
        calls: Rc<RefCell<Vec<String>>>,
        now: (u32, u32),
        supported: Vec<u32>,
        fail_on: Option<u32>,
    }

    /// The double, failing to set `fail_on` MHz where given, and its record of calls.
    pub(crate) fn recorder(
        fail_on: Option<u32>,
    ) -> (Box<dyn ClockSetter>, Rc<RefCell<Vec<String>>>) {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let r = Recorder {
            calls: calls.clone(),
            now: (2619, 1980),
            supported: vec![1980, 1305, 990, 345],
            fail_on,
        };
        (Box::new(r), calls)
    }

    impl ClockSetter for Recorder {
        fn applications_clocks(&mut self, gpu: u32) -> Result<(u32, u32), String> {
            self.calls.borrow_mut().push(format!("read {gpu}"));
            Ok(self.now)
        }
        fn supported_graphics(&mut self, _gpu: u32, memory: u32) -> Result<Vec<u32>, String> {
            Ok(if memory == self.now.0 {
                self.supported.clone()
            } else {
                Vec::new()
            })
        }
        fn set(&mut self, gpu: u32, memory: u32, graphics: u32) -> Result<(), String> {
            self.calls
                .borrow_mut()
                .push(format!("set {gpu} {memory},{graphics}"));
            match self.fail_on {
                Some(g) if g == graphics => Err("Insufficient Permissions".into()),
                _ => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::recording::recorder;
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn sets(calls: &Rc<RefCell<Vec<String>>>) -> Vec<String> {
        let c = calls.borrow();
        c.iter().filter(|c| c.starts_with("set")).cloned().collect()
    }

    #[test]
    fn nvml_is_chosen_where_permitted_slurm_inside_an_allocation_else_refused() {
        assert_eq!(choose(Ok(()), None), Ok(Method::Nvml));
        assert_eq!(choose(Ok(()), Some("42")), Ok(Method::Nvml));
        assert_eq!(
            choose(Err("restricted".into()), Some("42")),
            Ok(Method::Slurm)
        );
        let e = choose(Err("NVML could not be loaded".into()), None).unwrap_err();
        assert!(e.contains("NVML could not be loaded"), "{e}");
        assert!(
            e.contains("nvidia-smi -acp UNRESTRICTED") && e.contains("salloc"),
            "{e}"
        );
        assert!(
            choose(Err("x".into()), Some(" ")).is_err(),
            "an empty job id is none"
        );
    }

    #[test]
    fn runs_are_ordered_so_each_clock_is_set_once_from_the_highest() {
        let mut runs = vec![
            (1, Some(870)),
            (2, Some(1710)),
            (3, None),
            (4, Some(870)),
            (5, Some(1305)),
            (6, Some(1710)),
        ];
        order_by_clock(&mut runs, |r| r.1);
        let order: Vec<u32> = runs.iter().map(|r| r.0).collect();
        assert_eq!(order, [3, 2, 6, 5, 1, 4]);
    }

    #[test]
    fn a_clock_is_set_once_for_its_runs_and_the_saved_clocks_restored_on_drop() {
        let (setter, calls) = recorder(None);
        {
            let mut g = ClockGuard::take(setter, &[0, 1], &[1980, 990], None).unwrap();
            assert!(
                sets(&calls).is_empty(),
                "nothing is set before the first run"
            );
            for mhz in [1980, 1980, 990, 990] {
                g.set(mhz).unwrap();
            }
            assert_eq!(g.restore_command(), "nvidia-smi -i 0,1 -ac 2619,1980");
        }
        assert_eq!(
            sets(&calls),
            [
                "set 0 2619,1980",
                "set 1 2619,1980",
                "set 0 2619,990",
                "set 1 2619,990",
                "set 0 2619,1980",
                "set 1 2619,1980"
            ]
        );
    }

    #[test]
    fn an_unsupported_clock_is_refused_naming_it_and_listing_the_supported_ones() {
        let (setter, calls) = recorder(None);
        let e = ClockGuard::take(setter, &[0], &[1305, 1400], None)
            .err()
            .unwrap();
        assert!(e.contains("1400 MHz is not one"), "{e}");
        assert!(e.contains("4 clocks: 345, 990, 1305, 1980 MHz"), "{e}");
        assert!(sets(&calls).is_empty(), "nothing set, nothing to restore");
        let (setter, _) = recorder(None);
        let e = ClockGuard::take(setter, &[0], &[1305], Some(810))
            .err()
            .unwrap();
        assert!(e.contains("810 MHz memory clock (0 clocks"), "{e}");
    }

    #[test]
    fn setting_is_tried_with_the_clocks_in_force_and_a_refusal_named_before_any_run() {
        let (setter, calls) = recorder(None);
        let mut g = ClockGuard::take(setter, &[0, 1], &[990], None).unwrap();
        g.try_setting().unwrap();
        assert_eq!(sets(&calls), ["set 0 2619,1980", "set 1 2619,1980"]);
        drop(g);
        assert_eq!(
            sets(&calls).len(),
            2,
            "a try changes nothing: nothing to restore"
        );
        // A GPU that refuses (the double refuses 1980 MHz, the clock in force).
        let (setter, calls) = recorder(Some(1980));
        let mut g = ClockGuard::take(setter, &[0], &[990], None).unwrap();
        let e = g.try_setting().unwrap_err();
        assert!(
            e.contains("GPU 0 refused") && e.contains("Insufficient Permissions"),
            "{e}"
        );
        assert!(e.contains("2619 MHz memory and 1980 MHz graphics"), "{e}");
        drop(g);
        assert_eq!(sets(&calls), ["set 0 2619,1980"]);
    }

    #[test]
    fn nothing_set_is_nothing_restored() {
        let (setter, calls) = recorder(None);
        drop(ClockGuard::take(setter, &[0], &[990], None).unwrap());
        assert_eq!(*calls.borrow(), ["read 0"]);
    }

    /// The sweep's loop in miniature: a clock per point, stopped by the stop flag between
    /// runs, or by an error, returning through `?`; the guard it holds is dropped either way.
    fn sweep_like(
        g: &mut ClockGuard,
        clocks: &[u32],
        stop_after: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<usize, String> {
        let mut made = 0;
        for &mhz in clocks {
            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            g.set(mhz)?;
            made += 1;
            if made == stop_after {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        Ok(made)
    }

    #[test]
    fn the_clocks_are_restored_after_a_stop_an_error_and_a_panic() {
        use std::sync::atomic::AtomicBool;
        // A stop signal between runs: the loop winds down, the guard is dropped.
        let (setter, calls) = recorder(None);
        let mut g = ClockGuard::take(setter, &[0], &[1980, 990, 345], None).unwrap();
        let made = sweep_like(&mut g, &[990, 345, 1980], 1, &AtomicBool::new(false));
        drop(g);
        assert_eq!(made, Ok(1));
        assert_eq!(sets(&calls), ["set 0 2619,990", "set 0 2619,1980"]);
        // An error setting a clock: what was set is restored.
        let (setter, calls) = recorder(Some(345));
        let mut g = ClockGuard::take(setter, &[0], &[990, 345], None).unwrap();
        let e = sweep_like(&mut g, &[990, 345], 9, &AtomicBool::new(false)).unwrap_err();
        drop(g);
        assert!(
            e.contains("setting GPU 0 to 345 MHz: Insufficient Permissions"),
            "{e}"
        );
        assert_eq!(sets(&calls).last().unwrap(), "set 0 2619,1980");
        // A panic unwinds through the guard's drop.
        let (setter, calls) = recorder(None);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut g = ClockGuard::take(setter, &[0], &[990], None).unwrap();
            g.set(990).unwrap();
            panic!("a bug while measuring");
        }));
        assert!(r.is_err());
        assert_eq!(sets(&calls), ["set 0 2619,990", "set 0 2619,1980"]);
    }

    #[test]
    fn slurm_steps_carry_gpu_freq_after_srun_and_other_launchers_are_refused() {
        let mut argv: Vec<String> = ["srun", "--overlap", "--nodes=1", "./app"]
            .map(String::from)
            .to_vec();
        add_gpu_freq(&mut argv, srun_gpu_freq(1305, Some(3505))).unwrap();
        assert_eq!(argv[..2], ["srun", "--gpu-freq=1305,memory=3505"]);
        assert_eq!(srun_gpu_freq(870, None), "--gpu-freq=870");
        let mut argv = vec!["mpirun".to_string(), "./app".into()];
        let e = add_gpu_freq(&mut argv, srun_gpu_freq(870, None)).unwrap_err();
        assert!(e.contains("`mpirun`") && e.contains("--launcher"), "{e}");
    }
}
