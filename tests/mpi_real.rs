//! `jouleplan calibrate network` for real: the binary built with the `mpi` feature (into `mpi/`
//! of the target folder this test was built in, `CARGO_TARGET_DIR` honoured), run under `mpirun
//! -n 2` (OpenMPI from Debian, installed by `scripts/ensure-packages.sh` when missing). When
//! the packages cannot be had, the test is reported as ignored with the reason in its name (a
//! libtest-mimic harness), never as `ok`.

mod common;

use common::repo;

use std::path::{Path, PathBuf};
use std::process::Command;

const NAME: &str = "calibrate_network_measures_under_mpirun_resumes_and_refuses_one_rank";

/// Installs OpenMPI and libclang when missing and builds the MPI binary; `Err` says why not.
fn mpi_binary() -> Result<PathBuf, String> {
    let out = Command::new(repo("scripts/ensure-packages.sh"))
        .args([
            "mpirun=openmpi-bin",
            "mpicc=libopenmpi-dev",
            "/usr/lib/llvm-*/lib/libclang.so=libclang-dev",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "OpenMPI is not installable here: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let target = target_dir().join("mpi");
    let built = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--features",
            "mpi",
            "--bin",
            "jouleplan",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(repo(""))
        .output()
        .map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&built.stderr);
    let offline = [
        "failed to download",
        "failed to get",
        "network",
        "offline",
        "registry",
    ];
    if !built.status.success() && offline.iter().any(|w| err.contains(w)) {
        // The crates of the `mpi` feature cannot be fetched here: an environment limit, said
        // as such, not a failure of the code.
        return Err(format!(
            "the mpi feature's crates cannot be fetched: {}",
            err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("")
        ));
    }
    assert!(built.status.success(), "the mpi build failed: {err}");
    Ok(target.join("release/jouleplan"))
}

/// The target folder this test was built into (`CARGO_TARGET_DIR`, `build.target-dir` or
/// `<repo>/target`): the test binary is `<target>/<profile>/deps/<name>`.
fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| repo("target"))
}

fn main() {
    common::real_trial(NAME, mpi_binary, |bin| {
        measures_resumes_and_refuses_one_rank(&bin)
    });
}

fn mpirun(bin: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("mpirun")
        .args(["-n", "2", "--oversubscribe"])
        .arg(bin)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    common::outcome(out)
}

fn measures_resumes_and_refuses_one_rank(bin: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m.toml");
    std::fs::copy(repo("models/xeon-e5-2603-cluster.toml"), &m).unwrap();
    let ms = m.to_str().unwrap();
    let rec = tmp.path().join("r.json");
    let rs = rec.to_str().unwrap();
    let args = [
        "calibrate",
        "network",
        "--machine",
        ms,
        "--record",
        rs,
        "--repeats",
        "3",
    ];
    let (ok, out) = mpirun(bin, &[&args[..], &["--max-bytes", "1MiB"]].concat());
    assert!(ok, "{out}");
    let text = std::fs::read_to_string(&m).unwrap();
    let value = |key: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(key)).unwrap();
        line.split('=').nth(1).unwrap().trim().parse().unwrap()
    };
    // Two ranks on one host: shared memory, sub-10-us latency, GB/s throughput.
    let (l, b) = (value("latency_s"), value("bandwidth_bytes_per_s"));
    assert!(l > 1e-9 && l < 1e-4, "latency {l}");
    assert!(b > 1e8 && b < 1e12, "bandwidth {b}");
    assert!(
        text.contains("network = \"measured: `jouleplan calibrate network`"),
        "{text}"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let sizes = record["sizes"].as_array().unwrap().clone();
    assert_eq!(sizes.len(), 21, "1 B to 1 MiB");
    assert_eq!(sizes[0]["one_way_s"].as_array().unwrap().len(), 3);
    // --resume measures only what is missing: 2 MiB.
    let (ok, out) = mpirun(
        bin,
        &[&args[..], &["--max-bytes", "2MiB", "--resume"]].concat(),
    );
    assert!(ok, "{out}");
    assert_eq!(out.matches(" bytes: ").count(), 1, "{out}");
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(again["sizes"].as_array().unwrap().len(), 22);
    assert_eq!(
        again["sizes"][0], sizes[0],
        "earlier sizes kept as measured"
    );
    // Resumed between other hosts than the record's: refused on both ranks, naming the
    // record and both pairs, the record as it was.
    let elsewhere = serde_json::to_string(&serde_json::json!({
        "hosts": ["elsewhere-a", "elsewhere-b"],
        "format": again["format"],
        "date": again["date"],
        "target_s": again["target_s"],
        "sizes": again["sizes"],
    }))
    .unwrap();
    std::fs::write(&rec, &elsewhere).unwrap();
    let (ok, out) = mpirun(
        bin,
        &[&args[..], &["--max-bytes", "4MiB", "--resume"]].concat(),
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains("r.json")
            && out.contains("between elsewhere-a and elsewhere-b")
            && out.contains("--resume would mix two networks"),
        "{out}"
    );
    assert_eq!(out.matches(" bytes: ").count(), 0, "{out}");
    assert_eq!(std::fs::read_to_string(&rec).unwrap(), elsewhere);
    // One rank: refused, naming how to start it.
    let one = Command::new(bin)
        .args(args)
        .args(["--max-bytes", "1KiB"])
        .output()
        .unwrap();
    assert!(!one.status.success());
    let err = String::from_utf8_lossy(&one.stderr);
    assert!(
        err.contains("exactly 2 MPI ranks") && err.contains("mpirun -n 2"),
        "{err}"
    );
}
