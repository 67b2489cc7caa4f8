//! Public data the tests read but the repository never holds: the folder `build.rs` found
//! (`JOULEPLAN_FIXTURES`, else `../shared/fixtures`). A test that needs it carries
//! `#[cfg_attr(not(public_fixtures), ignore = "needs the public fixtures: ...")]` (the text of
//! [`PUBLIC_IGNORE`]), so a clone without the data reports it as ignored with the reason.
//! Files derived from it (the per-code measured CSVs) are made at test time, once a process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The reason every test that needs the public data gives when it is missing (the attribute's
/// text must be a literal, so tests repeat it; keep them equal).
pub const PUBLIC_IGNORE: &str = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release";

/// The public fixtures folder; panics with the fetch command where the build found none (a
/// test that calls this must carry the ignore attribute above).
pub fn public_root() -> PathBuf {
    match option_env!("JOULEPLAN_PUBLIC_FIXTURES") {
        Some(p) => PathBuf::from(p),
        None => panic!("{PUBLIC_IGNORE}"),
    }
}

/// A file of the public fixtures, e.g. `multinode/pmbs23-icelake.csv`.
pub fn public_fixture(rel: &str) -> PathBuf {
    let p = public_root().join(rel);
    assert!(
        p.exists(),
        "{} is missing from the public fixtures",
        p.display()
    );
    p
}

/// The folder of measured-run CSVs made from the Ice Lake fixture, one a code
/// (`hpgmgfv.csv`, ..., `lulesh-60.csv`, ...), as `scripts/multinode_csv.sh` makes them.
pub fn multinode_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_multinode_csvs(&public_root().join("multinode"), dir.path());
        dir
    })
    .path()
}

/// One code's measured-run CSV made from the Ice Lake fixture (see [`multinode_dir`]).
pub fn multinode(file: &str) -> PathBuf {
    let p = multinode_dir().join(file);
    assert!(p.exists(), "no {file} among the Ice Lake codes");
    p
}

const HEADER: &str = "nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope\n";

/// The Rust twin of `scripts/multinode_csv.sh`: SPEChpc `small` runs per code (cores = most
/// ranks on one node, energy = package + DRAM) and LULESH's cluster runs per size.
pub fn write_multinode_csvs(src: &Path, out: &Path) {
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    for f in rows(&src.join("pmbs23-icelake.csv")) {
        if f[1] == "small" {
            let energy = sig7(num(&f[7]) + num(&f[8]));
            let line = format!(
                "{},{},{},0,{},{energy},{},cpu\n",
                f[2], f[4], f[5], f[6], f[3]
            );
            files
                .entry(format!("{}.csv", f[0]))
                .or_insert_with(|| HEADER.into())
                .push_str(&line);
        }
    }
    for f in rows(&src.join("lulesh-icelake.csv")) {
        if f[0] == "5-MPI-ICL-cluster" {
            let (nodes, tasks) = (num(&f[2]), num(&f[3]));
            let cores = ((tasks + nodes - 1.0) / nodes).floor();
            let energy = sig7(num(&f[10]) + num(&f[11]));
            let freq = num(&f[1]) * 1000.0;
            let line = format!("{},{cores},{freq},0,{},{energy},{},cpu\n", f[2], f[9], f[3]);
            files
                .entry(format!("lulesh-{}.csv", f[5]))
                .or_insert_with(|| HEADER.into())
                .push_str(&line);
        }
    }
    assert!(!files.is_empty(), "no runs read from {}", src.display());
    for (name, text) in files {
        std::fs::write(out.join(name), text).unwrap();
    }
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// `printf %.7g`'s value: 7 significant digits.
fn sig7(x: f64) -> String {
    let v: f64 = format!("{x:.6e}").parse().unwrap();
    format!("{v}")
}

/// The Xeon Phi SpMV data set (public fixture `energy/xeon-phi-spmv`) as measured-run CSVs:
/// `all.csv` (1-57 threads, one per core, at the 7 frequencies: 399 runs), `sparse.csv` (1, 8,
/// 29 and 57 cores at 0.6, 0.8 and 1.1 GHz: 12 runs) and `machine.toml`, the card as a node
/// (57 cores, the data set's frequencies, no `[power]`: `fit` writes it).
pub fn xeon_phi_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_xeon_phi(&public_root().join("energy/xeon-phi-spmv"), dir.path());
        dir
    })
    .path()
}

/// A file of [`xeon_phi_dir`]: `all.csv`, `sparse.csv` or `machine.toml`.
pub fn xeon_phi(file: &str) -> PathBuf {
    xeon_phi_dir().join(file)
}

fn write_xeon_phi(src: &Path, out: &Path) {
    let mut khz: Vec<u64> = std::fs::read_dir(src)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("spmv.")?
                .strip_suffix(".csv")?
                .parse()
                .ok()
        })
        .collect();
    khz.sort_unstable();
    assert_eq!(khz.len(), 7, "seven frequencies in {}", src.display());
    let (mut all, mut sparse) = (String::from(PHI_HEADER), String::from(PHI_HEADER));
    for k in &khz {
        for f in rows(&src.join(format!("spmv.{k}.csv"))) {
            let threads: u32 = f[0].parse().unwrap();
            if threads > 57 {
                continue;
            }
            let line = format!("1,{threads},{},0,{},{}\n", k * 1000, f[2], f[1]);
            all.push_str(&line);
            if [1, 8, 29, 57].contains(&threads) && [600_000, 800_000, 1_100_000].contains(k) {
                sparse.push_str(&line);
            }
        }
    }
    let ghz: Vec<String> = khz.iter().map(|k| format!("{}", *k as f64 / 1e6)).collect();
    let machine = format!(
        "# An Intel Xeon Phi (Knights Corner) coprocessor with 57 cores as a node: a test input made\n# at test time from the public data set's file names (the frequencies).\n[machine]\nname = \"xeon-phi-57c\"\ndescription = \"Intel Xeon Phi 3120 series, 57 cores, as one node (test input)\"\nnodes = 64\ncores_per_node = 57\nfrequencies_ghz = [{}]\ngpus_per_node = 0\n\n[network]\nlatency_s = 1.0e-6\nbandwidth_bytes_per_s = 6.8175e9\n",
        ghz.join(", ")
    );
    std::fs::write(out.join("all.csv"), all).unwrap();
    std::fs::write(out.join("sparse.csv"), sparse).unwrap();
    std::fs::write(out.join("machine.toml"), machine).unwrap();
}

const PHI_HEADER: &str = "nodes,cores,freq_hz,gpus,time_s,energy_j\n";

/// The Xeon Phi data set fitted by `jouleplan fit` on all 399 runs: (`profile.json`,
/// `machine.toml` with the fitted `[power]`), made once a process in [`xeon_phi_dir`].
pub fn xeon_phi_fitted() -> (PathBuf, PathBuf) {
    static DONE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DONE.get_or_init(|| {
        let d = xeon_phi_dir();
        let (p, m) = (d.join("fitted-profile.json"), d.join("fitted-machine.toml"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
            .args(["fit", "--measured"])
            .arg(d.join("all.csv"))
            .arg("--machine")
            .arg(d.join("machine.toml"))
            .arg("--program")
            .arg("spmv")
            .arg("--profile-out")
            .arg(&p)
            .arg("--machine-out")
            .arg(&m)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (p, m)
    })
    .clone()
}

/// [`xeon_phi`] as a `&'static str`, for argument lists.
pub fn xeon_phi_arg(file: &str) -> &'static str {
    let p = xeon_phi(file).to_str().unwrap().to_string();
    Box::leak(p.into_boxed_str())
}

/// Every run of the public Titan X sweeps of the real benchmarks (gpuPTXModel, fixture
/// `gpu-clocks/gtxtitanx-real.csv`): `(kernel, memory MHz) -> core MHz -> [(time s, GPU energy
/// J)]` (times in ms and power in W there). A name given to a second block (the set holds two
/// different stencil2d kernels) is that name with `#2`, never merged as repeats.
pub fn titan_x_real_runs() -> TitanXRuns {
    let text = std::fs::read_to_string(public_fixture("gpu-clocks/gtxtitanx-real.csv")).unwrap();
    let mut runs = TitanXRuns::default();
    let mut seen: std::collections::BTreeMap<String, u32> = Default::default();
    let mut kernel = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let v: Vec<&str> = line.split(',').collect();
        if v.len() == 1 {
            let n = seen.entry(v[0].to_string()).or_default();
            *n += 1;
            kernel = match *n {
                1 => v[0].to_string(),
                n => format!("{}#{n}", v[0]),
            };
            continue;
        }
        let n: Vec<f64> = v.iter().map(|x| num(x)).collect();
        runs.entry((kernel.clone(), n[0] as u32))
            .or_default()
            .entry(n[1] as u32)
            .or_default()
            .push((n[2] / 1e3, n[2] * n[3] / 1e3));
    }
    runs
}

/// [`titan_x_real_runs`]' type.
pub type TitanXRuns =
    std::collections::BTreeMap<(String, u32), std::collections::BTreeMap<u32, Vec<(f64, f64)>>>;
