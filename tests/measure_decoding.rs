//! Decoding of recorded measurements: `perf stat -x,` captures, the powercap layout with a
//! counter wrap, mpiP and TALP outputs for eta and nu, and the messages of backends that cannot
//! measure here.

use jouleplan::measure::energy::{RaplEnergy, find_zones, wrapped_delta};
use jouleplan::measure::nvml::NvmlGpus;
use jouleplan::measure::slurm::SlurmEnergy;
use jouleplan::measure::{Backend, Readings, RunContext, mpi, perfstat};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    data("fixtures").join(rel)
}

#[test]
fn a_real_zen3_perf_stat_capture_decodes_to_counters_and_the_zen3_stall_pair() {
    let f = data("perfstat/zen3-kvm-random-reads.csv");
    let lines = perfstat::parse(&f, &std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[2].event, "cpu/event=0xae,umask=0xff/");
    let imp = perfstat::readings(&lines, None);
    let r = &imp.readings;
    assert_eq!(r.cycles, Some(7404605182.0));
    assert_eq!(r.instructions, Some(10303725432.0));
    assert_eq!(r.stall_cycles, Some(418262067.0));
    assert_eq!(r.mem_stall_cycles, Some(352397497.0));
    assert!((r.cpu_time_s.unwrap() - 3.46254).abs() < 1e-9);
    assert!((imp.wall_s.unwrap() - 3.48050178).abs() < 1e-12);
    assert_eq!(imp.stall.unwrap().table, "amdzen3");
}

#[test]
fn not_supported_events_are_reported_not_invented() {
    let f = data("perfstat/zen3-kvm-not-supported.csv");
    let lines = perfstat::parse(&f, &std::fs::read_to_string(&f).unwrap()).unwrap();
    let imp = perfstat::readings(&lines, None);
    assert_eq!(imp.readings.stall_cycles, None);
    assert!(imp.stall.is_none());
    assert!(
        imp.readings
            .warnings
            .iter()
            .any(|w| w.contains("stalled-cycles-backend was not counted")),
        "{:?}",
        imp.readings.warnings
    );
    assert_eq!(imp.readings.cycles, Some(3216998.0));
}

#[test]
fn a_malformed_perf_stat_line_is_named() {
    let err = perfstat::parse(
        Path::new("x.csv"),
        "# c\n12,,cycles,1,100.00\nabc,,instructions,1,100\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("x.csv") && err.contains("line 3"), "{err}");
}

#[test]
fn powercap_layout_gives_package_and_dram_and_a_wrap_is_counted_right() {
    let tmp = tempfile::tempdir().unwrap();
    // Copy the fixture tree (with its top-level links) so the test can move the counters.
    let status = std::process::Command::new("cp")
        .args([
            "-a",
            data("powercap").to_str().unwrap(),
            tmp.path().to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let root = tmp.path().join("powercap");
    let zones = find_zones(&root).unwrap();
    let names: Vec<&str> = zones.iter().map(|z| z.domain.as_str()).collect();
    assert_eq!(names, ["package-0", "dram-0"], "core and psys are left out");

    let mut b = RaplEnergy::new(&root, Path::new("/nonexistent"));
    let what = b.discover().unwrap();
    assert!(what.contains("package-0"), "{what}");
    b.begin().unwrap();
    // The package counter wraps: 262000000000 -> max 262143328850 -> 1000000 (1.000000 J)
    std::fs::write(root.join("intel-rapl:0/energy_uj"), "1000000\n").unwrap();
    std::fs::write(
        root.join("intel-rapl:0/intel-rapl:0:2/energy_uj"),
        "7500000\n",
    )
    .unwrap();
    let mut r = Readings::default();
    let ctx = RunContext {
        wall_s: 1.0,
        run_dir: tmp.path(),
        cores: 1,
        ranks: 1,
    };
    b.end(&ctx, &mut r).unwrap();
    let pkg = r.energy_j["package-0"];
    assert!((pkg - (143.32885 + 1.0)).abs() < 1e-6, "{pkg}");
    assert!((r.energy_j["dram-0"] - 2.5).abs() < 1e-9);
    assert_eq!(wrapped_delta(10, 4, 12), 6);
}

#[test]
fn rapl_nvml_and_slurm_say_what_is_missing_and_what_to_do() {
    let mut rapl = RaplEnergy::new(
        Path::new("/nonexistent/powercap"),
        Path::new("/nonexistent"),
    );
    let u = rapl.discover().unwrap_err();
    assert!(u.why.contains("cannot be read"), "{u}");
    assert!(u.hint.contains("Slurm"), "{u}");

    if !Path::new("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").exists() {
        let u = NvmlGpus::new().discover().unwrap_err();
        assert!(u.why.contains("libnvidia-ml.so.1"), "{u}");
        assert!(u.hint.contains("driver"), "{u}");
    }
    if std::env::var_os("SLURM_JOB_ID").is_none() {
        let u = SlurmEnergy::default().discover().unwrap_err();
        assert!(u.why.contains("SLURM_JOB_ID"), "{u}");
    }
}

#[test]
fn mpip_gives_messages_and_bytes_per_rank_and_talp_gives_calls() {
    let f = fixture("mpip/mpi_imbalance_2ranks.mpiP");
    let (m, b) = mpi::from_mpip(&f, &std::fs::read_to_string(&f).unwrap()).unwrap();
    // Per rank and iteration: one Allreduce and one Sendrecv of 8192 bytes; 4 iterations.
    assert_eq!(m, 8.0);
    // mpiP prints sums with %g (3.277e+04), so bytes agree to its 4 digits.
    assert!((b / (8.0 * 8192.0) - 1.0).abs() < 1e-3, "{b}");
    let t = fixture("talp/test_hybrid_profile_1_0.json");
    let calls = mpi::from_talp(&t, &std::fs::read_to_string(&t).unwrap()).unwrap();
    assert_eq!(calls, 5.0);
}

/// A profile's sweep runs and the workload's own reference line per run, in the same order.
fn runs_and_references(
    profile: &Path,
    jsonl: &Path,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let prof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(profile).unwrap()).unwrap();
    let refs = std::fs::read_to_string(jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let runs = prof["sweep"]["record"]["runs"].as_array().unwrap().clone();
    (runs, refs)
}

#[test]
fn nvml_sampled_busy_time_of_the_h100_runs_is_within_its_stated_error() {
    // The profile's per-run NVML busy time (100 ms sampling) against the same runs' CUDA-event
    // kernel time that the workload logged itself (sync_runs.jsonl, same order): the figures
    // the NVML backend's documentation states.
    let (runs, refs) = runs_and_references(
        &fixture("gpu-h100/sync.json"),
        &fixture("gpu-h100/sync_runs.jsonl"),
    );
    assert_eq!(runs.len(), refs.len());
    let mut per_point: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for (r, q) in runs.iter().zip(&refs) {
        assert_eq!(r["cores"], q["threads"]);
        let nvml = r["readings"]["gpu_busy_s"][0].as_f64().unwrap();
        let cuda = q["kernel_s"].as_f64().unwrap();
        assert!((nvml / cuda - 1.0).abs() < 0.115, "{nvml} vs {cuda}");
        let e = per_point.entry(r["cores"].as_u64().unwrap()).or_default();
        e.0 += nvml;
        e.1 += cuda;
    }
    for (c, (n, k)) in per_point {
        assert!((n / k - 1.0).abs() < 0.022, "{c} cores: {n} vs {k}");
    }
}

#[test]
fn nvml_busy_time_on_a_real_h200_is_within_each_runs_stated_error_and_the_profile_plans() {
    // tests/data/h200-gpu-smoke: `profile --gpus 1` of examples/gpu/gpu_mix.py on a real H200
    // (its README), with the workload's own CUDA-event kernel time per run (runs.jsonl).
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-gpu-smoke");
    let (runs, refs) = runs_and_references(&d.join("p.json"), &d.join("runs.jsonl"));
    assert_eq!(runs.len(), refs.len());
    for (r, q) in runs.iter().zip(&refs) {
        assert_eq!(r["cores"], q["threads"]);
        let nvml = r["readings"]["gpu_busy_s"][0].as_f64().unwrap();
        let err = r["readings"]["gpu_busy_err_s"][0].as_f64().unwrap();
        let cuda = q["kernel_s"].as_f64().unwrap();
        assert!(err > 0.0 && err < 0.2, "stated error {err}");
        assert!(
            (nvml - cuda).abs() < 2.0 * err,
            "{nvml} vs {cuda} (+-{err})"
        );
        let sm = r["readings"]["gpu_sm_mhz"][0].as_f64().unwrap();
        assert!((1000.0..=1980.0).contains(&sm), "SM clock while busy {sm}");
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(&d)
        .args(["plan", "--machine", "node.toml", "--profile", "p.json"])
        .output()
        .unwrap();
    let (code, out, err) = (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 GPU per node"), "{out}");
    // No [power] in the file machine init wrote there: the GPU energy NVML measured is planned
    // from the power the runs drew.
    assert!(out.contains("energy: GPU energy"), "{out}");
    assert!(err.contains("GPU power drawn by the runs"), "{err}");
    // Measured with the GPU only, at 2 and 8 cores: the GPU count is judged on those cores.
    assert!(
        out.contains("7 core counts x 1 frequency x 1 GPU count"),
        "{out}"
    );
}
