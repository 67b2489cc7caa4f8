//! `profile --gpu-clocks`: the GPU clock as a key of the sweep's points, set through NVML
//! application clocks or as Slurm steps with `srun --gpu-freq`, refused before anything runs
//! where neither can set it. There is no GPU here: the refusal, the flag checks and the
//! Slurm step's command line (run by a real Slurm started by `scripts/slurm-local.sh`) are
//! tested for real; the NVML side is tested with a recording double in the library
//! (`measure::gpu_clock_set`). Trials that need what may be missing (a machine where no clock
//! can be set, Slurm) are reported as ignored with the reason in their name.

mod common;

use common::{jouleplan_in, write};
use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};

/// The bundled H100 machine with a clock list (illustrative clocks, as `tests/gpu_clock.rs`
/// uses) in `d`.
fn machine_with_clocks(d: &Path) -> PathBuf {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/h100-gpu.toml"))
            .unwrap();
    let text = text.replacen(
        "[machine]\n",
        "[machine]\ngpu_clocks_mhz = [345, 990, 1980]\ngpu_memory_clock_mhz = 2619\n",
        1,
    );
    write(d, "m.toml", &text)
}

/// A command that leaves a mark when it runs.
fn marking(d: &Path) -> Vec<String> {
    let mark = d.join("ran");
    vec![
        "sh".into(),
        "-c".into(),
        format!("touch '{}'", mark.display()),
    ]
}

/// `profile` in `d` with `args`, then `--` and the marking command: (code, stderr).
fn profile(d: &Path, args: &[&str]) -> (i32, String) {
    let mut all = vec![
        "profile",
        "--cores",
        "1",
        "-o",
        "p.json",
        "--measured-out",
        "m.csv",
    ];
    all.extend_from_slice(args);
    all.push("--");
    let cmd = marking(d);
    all.extend(cmd.iter().map(String::as_str));
    let (code, _, err) = jouleplan_in(d, &all);
    (code, err)
}

fn nothing_written(d: &Path) {
    for f in ["p.json", "m.csv", "ran", "p.json.journal"] {
        assert!(!d.join(f).exists(), "{f} was written or run");
    }
}

/// Where a GPU driver is present a clock might be settable: the refusal is not this machine's.
fn no_gpu_driver() -> Result<(), String> {
    match Path::new("/dev/nvidiactl").exists() {
        true => {
            Err("a GPU driver is present here (/dev/nvidiactl), so a clock may be settable".into())
        }
        false => Ok(()),
    }
}

fn clocks_that_cannot_be_set_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let (code, err) = profile(d.path(), &["--gpus", "1", "--gpu-clocks", "870,1305,1710"]);
    assert_eq!(code, 2, "{err}");
    for says in [
        "--gpu-clocks",
        "NVML application clocks cannot be set",
        "no SLURM_JOB_ID",
        "nothing was run",
        "nvidia-smi -acp UNRESTRICTED",
        "salloc",
        "870,1305,1710",
    ] {
        assert!(err.contains(says), "no `{says}` in: {err}");
    }
    nothing_written(d.path());
    // The same with `machine init`'s own file from a real H200 (no [network], no [power]):
    // its clocks are read, and the refusal is NVML's, not the file's.
    let m = h200_data().join("node.toml");
    let m = m.to_str().unwrap();
    let (code, err) = profile(
        d.path(),
        &["--gpus", "1", "--machine", m, "--gpu-clocks", "all"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("NVML application clocks cannot be set"),
        "{err}"
    );
    assert!(!err.contains("network"), "{err}");
    nothing_written(d.path());
}

/// `tests/data/h200-gpu-clocks`: `machine init` and `nvidia-smi` on a real H200 (its README).
fn h200_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-gpu-clocks")
}

/// The graphics clocks `nvidia-smi -q -d SUPPORTED_CLOCKS` lists at memory clock `memory`.
fn smi_clocks(text: &str, memory: u32) -> Vec<f64> {
    let (mut here, mut out) = (false, Vec::new());
    for line in text.lines() {
        let value = || {
            line.split(':')
                .nth(1)
                .unwrap()
                .trim()
                .trim_end_matches(" MHz")
        };
        if line.trim_start().starts_with("Memory") {
            here = value() == memory.to_string();
        } else if here && line.trim_start().starts_with("Graphics") {
            out.push(value().parse::<f64>().unwrap());
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

fn machine_init_on_a_real_h200_wrote_the_clocks_nvidia_smi_lists() {
    use jouleplan::model::machine::Machine;
    let d = h200_data();
    let text = std::fs::read_to_string(d.join("node.toml")).unwrap();
    let (m, lacks) = Machine::from_toml_for_fit(&d.join("node.toml"), &text).unwrap();
    assert!(lacks.network && lacks.power, "as machine init writes it");
    assert_eq!(m.gpu_memory_clock_mhz, Some(3201.0));
    let smi = std::fs::read_to_string(d.join("supported.txt")).unwrap();
    let listed = smi_clocks(&smi, 3201);
    assert_eq!(listed.len(), 110);
    assert_eq!(m.gpu_clocks_mhz, listed);
    assert_eq!(
        smi_clocks(&smi, 2201).len(),
        110,
        "the other memory clock's list"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("before.txt")).unwrap(),
        std::fs::read_to_string(d.join("after.txt")).unwrap(),
        "the recording set no clock"
    );
}

fn a_clock_the_machine_does_not_list_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let m = machine_with_clocks(d.path());
    let m = m.to_str().unwrap();
    let (code, err) = profile(
        d.path(),
        &["--gpus", "1", "--machine", m, "--gpu-clocks", "990,1400"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1400 MHz is not one"), "{err}");
    assert!(err.contains("3 clocks from 345 to 1980 MHz"), "{err}");
    nothing_written(d.path());
    // A machine without a list cannot check any.
    let (code, err) = profile(
        d.path(),
        &[
            "--gpus",
            "1",
            "--machine",
            "h100-gpu",
            "--gpu-clocks",
            "all",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("has none") && err.contains("gpu_clocks_mhz"),
        "{err}"
    );
    nothing_written(d.path()); // The campaign chooses its own runs, at the clock the GPU chooses.
    let auto = [
        "--nodes",
        "auto",
        "--machine",
        m,
        "--gpus",
        "1",
        "--gpu-clocks",
        "990",
    ];
    let (code, err) = profile(d.path(), &auto);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--gpu-clocks") && err.contains("--nodes auto"),
        "{err}"
    );
    nothing_written(d.path());
}

fn gpu_clocks_without_gpus_or_a_list_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--gpu-clocks", "870"], "--gpus with 1 or more GPUs"),
        (
            vec!["--gpus", "0", "--gpu-clocks", "870"],
            "--gpus with 1 or more GPUs",
        ),
        (vec!["--gpus", "1", "--gpu-clocks", "all"], "need --machine"),
        (
            vec!["--gpus", "1", "--gpu-clocks", "900-1400"],
            "need --machine",
        ),
        (vec!["--gpus", "1", "--gpu-clocks", "1.3"], "whole MHz"),
    ] {
        let (code, err) = profile(d.path(), &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("--gpu-clocks") && err.contains(says),
            "{args:?}: {err}"
        );
        nothing_written(d.path());
    }
}

/// A sweep at three GPU clocks stopped before its first run finished, as the sweep saves it
/// (its points with their clocks, no runs yet), written as `p.json` in `d` by the library's own
/// writer; the command is [`marking`]'s, so a resume names the same one.
fn clocked_sweep_record(d: &Path) -> PathBuf {
    use jouleplan::artefact::profile::Growth;
    use jouleplan::measure::record::{Header, SweepRecord, profile_file};
    let rec: SweepRecord = serde_json::from_value(serde_json::json!({
        "id": "sweep-at-three-clocks", "command": marking(d), "ranks": 1, "launcher": [],
        "repeat": 1, "host": {}, "backends": {}, "unsupported": [],
        "frequency": "not set: the frequency the machine runs at",
        "planned": [[1, 1, 2.1e9, 1, 1710], [1, 1, 2.1e9, 1, 1305], [1, 1, 2.1e9, 1, 870]],
        "runs": [], "complete": false
    }))
    .unwrap();
    let header = Header {
        program: "clocked".into(),
        description: "a sweep at three GPU clocks, stopped before its first run".into(),
        baseline_iterations: 1.0,
        target_iterations: 1.0,
        growth: Growth::Constant,
        notes: Vec::new(),
    };
    let text = serde_json::to_string_pretty(&profile_file(&header, &rec)).unwrap();
    write(d, "p.json", &text)
}

fn resuming_a_clocked_sweep_without_gpu_clocks_is_refused_and_the_record_kept() {
    let d = tempfile::tempdir().unwrap();
    let p = clocked_sweep_record(d.path());
    let before = std::fs::read(&p).unwrap();
    // Its runs with GPUs would go at the clock the GPU chooses, beside runs at set clocks.
    let (code, err) = profile(d.path(), &["--gpus", "1", "--resume"]);
    assert_eq!(code, 2, "{err}");
    for says in [
        "p.json: its sweep set the GPU clock (870, 1305, 1710 MHz)",
        "--resume it with --gpu-clocks 870,1305,1710",
        "choose another --output",
    ] {
        assert!(err.contains(says), "no `{says}` in: {err}");
    }
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "the record is untouched"
    );
    for f in ["m.csv", "ran", "p.json.journal"] {
        assert!(!d.path().join(f).exists(), "{f} was written or run");
    }
}

/// The command line of a run at 1305 MHz as the sweep builds it inside an allocation (one
/// step on this node, `--gpu-freq` after srun), run by a real Slurm: the step is accepted and
/// Slurm hands it the clock (`SLURMD_TRES_FREQ`). Slurm accepts `--gpu-freq` without GPU gres,
/// so this runs on a machine without GPUs; setting the clock on a GPU is Slurm's part.
fn slurm_steps_carry_the_gpu_clock(cluster: common::SlurmCluster) {
    use jouleplan::measure::{gpu_clock_set, placement};
    let run = |cmd: &str, args: &[String]| {
        let out = std::process::Command::new(cmd)
            .args(args)
            .env("SLURM_CONF", &cluster.conf)
            .output()
            .unwrap();
        common::outcome(out)
    };
    let (ok, node) = run("sinfo", &["-h".into(), "-o".into(), "%N".into()]);
    assert!(ok, "{node}");
    let place = placement::Placement::Slurm {
        nodes: Some(1),
        on_node: Some(node.trim().to_string()),
    };
    let words = placement::step_here_words(&place).unwrap();
    let fill = placement::Fill {
        nodes: 1,
        ranks_per_node: 1,
        threads: 1,
        khz: 0,
        hostfile: None,
    };
    let mut argv = placement::fill(&words, fill);
    let flag = gpu_clock_set::srun_gpu_freq(1305, Some(2619));
    gpu_clock_set::add_gpu_freq(&mut argv, flag).unwrap();
    assert_eq!(argv[1], "--gpu-freq=1305,memory=2619");
    argv.extend(["sh", "-c", "echo clock=$SLURMD_TRES_FREQ"].map(String::from));
    let mut salloc = vec!["-N".to_string(), "1".into()];
    salloc.extend(argv);
    let (ok, text) = run("salloc", &salloc);
    assert!(ok && text.contains("clock=gpu:1305,memory=2619"), "{text}");
}

/// The public Titan X sweep of one real benchmark at 3505 MHz memory: `(core MHz, time s, GPU
/// energy J)` per run, and every core clock it was run at.
fn titan_x_runs(kernel: &str) -> (Vec<(u32, f64, f64)>, Vec<u32>) {
    let by = &common::titan_x_real_runs()[&(kernel.to_string(), 3505)];
    let runs = by
        .iter()
        .flat_map(|(&c, r)| r.iter().map(move |&(t, e)| (c, t, e)))
        .collect();
    (runs, by.keys().copied().collect())
}

/// Real runs at three GPU clocks, recorded as the sweep records them (each run's clock, its
/// NVML GPU energy), written as `--measured-out` writes them, and fitted by `fit` into the
/// clock law: the writer and the fit agree end to end.
fn a_sweep_at_three_clocks_is_what_fit_fits_the_clock_law_from() {
    use jouleplan::artefact::measured;
    use jouleplan::calibrate::sweep_law::measured_row;
    use jouleplan::measure::record::RunRecord;
    let d = tempfile::tempdir().unwrap();
    let (runs, clocks) = titan_x_runs("2dconvolution");
    let fitted = [595, 975, 1164];
    let rows: Vec<_> = runs
        .iter()
        .filter(|r| fitted.contains(&r.0))
        .enumerate()
        .map(|(i, &(mhz, t, e))| {
            let run: RunRecord = serde_json::from_value(serde_json::json!({
                "cores": 1, "freq_hz": 2e9, "gpus": 1, "repeat": i + 1, "ok": true,
                "wall_s": t, "readings": {"energy_j": {"gpu-0": e}}, "finished_unix": 1,
                "gpu_clock_mhz": mhz}))
            .unwrap();
            measured_row(&run)
        })
        .collect();
    let csv = measured::to_csv(&rows).unwrap();
    assert!(
        csv.starts_with(&format!("{},gpu_clock_mhz\n", measured::MEASURED_HEADER)),
        "{csv}"
    );
    assert!(csv.lines().nth(1).unwrap().ends_with(",gpu,595"), "{csv}");
    let list: Vec<String> = clocks.iter().map(u32::to_string).collect();
    let m = write(
        d.path(),
        "m.toml",
        &format!(
            "[machine]\nname = \"titan-x\"\nnodes = 1\ncores_per_node = 1\nfrequencies_ghz = [2.0]\n\
             gpus_per_node = 1\ngpu_clocks_mhz = [{}]\ngpu_memory_clock_mhz = 3505\n\n[network]\n\
             latency_s = 0.0\nbandwidth_bytes_per_s = 1e10\n\n[power]\nidle_w = 0.0\n\
             core_active_w = 0.0\ncore_stall_w = 0.0\nmemory_w = 0.0\nnetwork_w = 0.0\n\
             gpu_active_w = 0.0\ngpu_idle_w = 0.0\n",
            list.join(", ")
        ),
    );
    let runs_csv = write(d.path(), "runs.csv", &csv);
    let (code, _, err) = jouleplan_in(
        d.path(),
        &[
            "fit",
            "--measured",
            runs_csv.to_str().unwrap(),
            "--machine",
            m.to_str().unwrap(),
            "--profile-out",
            "p.json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("p.json")).unwrap()).unwrap();
    assert_eq!(
        p["gpu_clock"]["measured_mhz"],
        serde_json::json!([595.0, 975.0, 1164.0])
    );
    assert!(p["gpu_clock"]["power"].is_object(), "{}", p["gpu_clock"]);
}

/// The public fixtures, where the build found them.
fn public_fixtures() -> Result<(), String> {
    match option_env!("JOULEPLAN_PUBLIC_FIXTURES") {
        Some(_) => Ok(()),
        None => Err(common::PUBLIC_IGNORE.into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test(
            "a_clock_the_machine_does_not_list_is_refused_naming_it",
            || {
                a_clock_the_machine_does_not_list_is_refused_naming_it();
                Ok(())
            },
        ),
        Trial::test(
            "machine_init_on_a_real_h200_wrote_the_clocks_nvidia_smi_lists",
            || {
                machine_init_on_a_real_h200_wrote_the_clocks_nvidia_smi_lists();
                Ok(())
            },
        ),
        Trial::test("gpu_clocks_without_gpus_or_a_list_are_refused", || {
            gpu_clocks_without_gpus_or_a_list_are_refused();
            Ok(())
        }),
        Trial::test(
            "resuming_a_clocked_sweep_without_gpu_clocks_is_refused_and_the_record_kept",
            || {
                resuming_a_clocked_sweep_without_gpu_clocks_is_refused_and_the_record_kept();
                Ok(())
            },
        ),
    ];
    trials.push(common::real_trial_in(
        &args,
        "clocks_that_cannot_be_set_are_refused_before_anything_runs",
        no_gpu_driver,
        |()| clocks_that_cannot_be_set_are_refused_before_anything_runs(),
    ));
    trials.push(common::real_trial_in(
        &args,
        "a_sweep_at_three_clocks_is_what_fit_fits_the_clock_law_from",
        public_fixtures,
        |()| a_sweep_at_three_clocks_is_what_fit_fits_the_clock_law_from(),
    ));
    trials.push(common::real_trial_in(
        &args,
        "slurm_steps_carry_the_gpu_clock",
        || common::start_slurm(1),
        slurm_steps_carry_the_gpu_clock,
    ));
    libtest_mimic::run(&args, trials).exit();
}
