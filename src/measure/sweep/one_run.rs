//! One run: its command line and environment, the backends around it, its record; warm-up runs.

use super::budget::Limit;
use super::host::*;
use super::options::*;
use super::setup::*;
use crate::measure::cpufreq::Control;
use crate::measure::launch::{self, Spec};
use crate::measure::placement::{self};
use crate::measure::record::{RankLayout, RunRecord};
use crate::measure::{Backend, Readings, RunContext};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// The command line and environment of one run.
pub(super) fn spec_for(o: &Options, s: &Setup, (p, _): Todo) -> Spec {
    let (c, g) = (p.cores, p.gpus);
    let threads = c / o.ranks;
    let khz = (p.freq_hz / 1e3).round() as u64;
    let words = if p.nodes > 1 { &s.node_words } else { &s.words };
    let mut argv = placement::fill(
        words,
        placement::Fill {
            nodes: p.nodes,
            ranks_per_node: o.ranks,
            threads,
            khz,
            hostfile: s.hostfiles.get(&p.nodes).map(PathBuf::as_path),
        },
    );
    // srun sets the frequency on every node of a step (cpufreq here sets only this one).
    let srun_steps = p.nodes > 1 && o.launcher.is_none() && matches!(s.control, Control::Sysfs(_));
    if matches!(s.control, Control::Srun) || (srun_steps && argv[0] == "srun") {
        argv.insert(1, format!("--cpu-freq={khz}"));
    }
    s.clock.add_to(&mut argv, p.gpu_clock_mhz);
    argv.extend(o.command.iter().cloned());
    let mut env = vec![
        ("OMP_NUM_THREADS".to_string(), threads.to_string()),
        ("OMP_PLACES".into(), "cores".into()),
        ("OMP_PROC_BIND".into(), "close".into()),
    ];
    if o.gpus.iter().any(|&g| g > 0) {
        env.push(("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()));
        // The first g of the GPUs chosen and checked before the sweep.
        let list: Vec<String> = s
            .gpu_ids
            .iter()
            .take(g as usize)
            .map(u32::to_string)
            .collect();
        env.push(("CUDA_VISIBLE_DEVICES".into(), list.join(",")));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && argv.first().is_some_and(|a| a.ends_with("mpirun")) {
        env.push(("OMPI_ALLOW_RUN_AS_ROOT".into(), "1".into()));
        env.push(("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".into(), "1".into()));
    }
    Spec {
        argv,
        env,
        cpus: s.cpus[..c as usize].to_vec(),
        show_output: o.show_output,
    }
}

/// One measured run within `limit`: the backends attached before `exec`, read after the exit.
pub(super) fn measure_once(
    o: &Options,
    s: &mut Setup,
    (todo, limit): (Todo, Limit),
    run_dir: &Path,
) -> anyhow::Result<RunRecord> {
    let (p, k) = todo;
    let mut spec = spec_for(o, s, todo);
    // On several nodes, only what covers every node is read (see `one_node_only`); a Slurm
    // step's program is not jouleplan's child, so what follows the process does not see it.
    let steps = s.clock.steps();
    let mut backends: Vec<&mut Box<dyn Backend>> = s
        .working
        .iter_mut()
        .map(|(b, _)| b)
        .filter(|b| (p.nodes == 1 || b.every_node()) && !(steps && b.follows_the_process()))
        .collect();
    for b in backends.iter_mut() {
        b.prepare(&mut spec.env, run_dir);
    }
    let mut readings = Readings::default();
    let paused = launch::spawn_paused(&spec)
        .map_err(|e| anyhow::anyhow!("starting {:?}: {e}", spec.argv.join(" ")))?;
    for b in backends.iter_mut() {
        if let Err(e) = b.attach(paused.pid) {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    readings.drop_impossible_energies();
    for b in backends.iter_mut() {
        if let Err(e) = b.begin() {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    let exit = paused.release_and_wait(limit.time, o.grace)?;
    let ctx = RunContext {
        wall_s: exit.wall_s,
        run_dir,
        cores: p.cores,
        ranks: p.nodes * o.ranks,
    };
    for b in backends.iter_mut() {
        if let Err(e) = b.end(&ctx, &mut readings) {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    if readings.cpu_time_s.is_none() && p.nodes == 1 && !steps {
        readings.cpu_time_s = Some(exit.rusage_cpu_s);
        readings.cpu_time_source = Some("rusage (user + system) of the process tree".into());
    }
    let interrupted = super::options::interrupted();
    let ok = exit.ok() && !interrupted;
    Ok(RunRecord {
        nodes: p.nodes,
        cores: p.cores,
        freq_hz: p.freq_hz,
        gpus: p.gpus,
        repeat: k,
        ok,
        failure: (!ok).then(|| measured_failure(&exit, interrupted, limit)),
        wall_s: exit.wall_s,
        readings,
        stderr_tail: if ok { String::new() } else { exit.stderr_tail },
        finished_unix: now_unix(),
        layout: Some(RankLayout {
            ranks_per_node: o.ranks,
            threads_per_rank: p.cores / o.ranks,
        }),
        hosts: Vec::new(),
        host_list: if p.nodes > 1 {
            let n = s.hosts.len().min(p.nodes as usize);
            s.rec.intern_hosts(&s.hosts[..n])
        } else {
            None
        },
        gpu_clock_mhz: p.gpu_clock_mhz,
    })
}

/// Warm-up runs of a point: the same command, not measured and not recorded (caches, page
/// faults, JIT and runtime start-up settle, as hyperfine's `--warmup`).
pub(super) fn warm_up(
    o: &Options,
    s: &Setup,
    todo: Todo,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<()> {
    for w in 1..=o.warmup {
        let spec = spec_for(o, s, todo);
        let exit = launch::spawn_paused(&spec)
            .map_err(|e| anyhow::anyhow!("starting {:?}: {e}", spec.argv.join(" ")))?
            .release_and_wait(o.timeout, o.grace)?;
        // A stop signal during a warm-up ends the sweep there: no further run is started.
        let stopped = super::options::interrupted();
        if !o.quiet {
            let how = match stopped {
                true => failure(&exit, true),
                false => "not recorded".into(),
            };
            log(&format!(
                "warm-up {w}/{} at {}: {:.3} s ({how})",
                o.warmup,
                todo.0.describe(),
                exit.wall_s
            ));
        }
        if stopped {
            break;
        }
    }
    Ok(())
}

/// Why a measured run failed: stopped at its budget limit, or as [`failure`] says.
fn measured_failure(exit: &launch::Exit, interrupted: bool, limit: Limit) -> String {
    match limit.time {
        Some(t) if limit.budget && exit.timed_out && !interrupted => super::budget::failure(t),
        _ => failure(exit, interrupted),
    }
}

/// Why a run failed: the signal that stopped the sweep, or how the program ended.
fn failure(exit: &launch::Exit, interrupted: bool) -> String {
    if interrupted {
        let sig = launch::STOP_SIGNAL.load(Ordering::SeqCst);
        format!("interrupted ({})", launch::signal_name(sig))
    } else {
        exit.failure()
    }
}
