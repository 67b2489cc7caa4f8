//! `jouleplan calibrate network` and `jouleplan calibrate power`: measurements of this machine
//! -> fitted parameters -> the machine file's `[network]` or `[power]` section, rewritten with
//! its comments kept and a `[sources]` line saying how and when.

use super::outputs;
use crate::calibrate::machine_edit::{self, Number};
use crate::calibrate::network_fit::{self, NetworkFit};
use crate::error::InputError;
use crate::measure::pingpong::{self, Record};
use crate::model::machine::Machine;
use crate::values;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `jouleplan calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// What to calibrate.
    #[command(subcommand)]
    pub action: CalibrateAction,
}

/// `jouleplan calibrate` subcommands.
#[derive(Debug, Subcommand)]
pub enum CalibrateAction {
    /// MPI ping-pong between two ranks (run it under `mpirun -n 2` or `srun -N 2 -n 2`), fit
    /// latency and throughput, and write the machine file's `[network]` section.
    #[command(after_help = super::examples::CALIBRATE_NETWORK)]
    Network(NetworkArgs),
    /// Power per core state from the micro-benchmarks of `calibration/` (idle, compute-bound,
    /// memory-bound) measured through the profile's energy backends, or from recorded
    /// profiles (--from), and the machine file's `[power]` section.
    #[command(after_help = super::examples::CALIBRATE_POWER)]
    Power(super::calibrate_power::PowerArgs),
    /// One micro-benchmark run (what `calibrate power` measures).
    #[command(hide = true)]
    Kernel(super::calibrate_power::KernelArgs),
}

/// `jouleplan calibrate network`.
#[derive(Debug, Args)]
pub struct NetworkArgs {
    /// The machine file to update (its `[network]` section is replaced, everything else kept).
    #[arg(long, value_name = "FILE")]
    pub machine: PathBuf,
    /// Write the updated machine file here [default: update --machine in place].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Largest message of the sweep (from 1 byte, doubling).
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    pub max_bytes: String,
    /// Timings per message size.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Save each measured size here as it is measured [default: OUTPUT.pingpong.json].
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Keep the sizes already in --record and measure only the missing ones.
    #[arg(long)]
    pub resume: bool,
    /// Fit a recorded sweep instead of measuring (no MPI needed).
    #[arg(long, value_name = "RECORD", conflicts_with = "resume")]
    pub from: Option<PathBuf>,
}

/// Runs `calibrate`.
pub fn run_calibrate(a: &CalibrateArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    match &a.action {
        CalibrateAction::Network(n) => run_network(n, out),
        CalibrateAction::Power(p) => super::calibrate_power::run_power(p, out),
        CalibrateAction::Kernel(k) => super::calibrate_power::run_kernel(k, out),
    }
}

fn run_network(a: &NetworkArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let text = crate::input::read_file(&a.machine)?;
    // The file may lack [power] (and [network], which this writes).
    Machine::from_toml_for_fit(&a.machine, &text)?;
    let output = a.output.clone().unwrap_or_else(|| a.machine.clone());
    // No output lock here: under mpirun every rank runs this command (rank 0 writes).
    let max_bytes = values::parse_bytes("--max-bytes", &a.max_bytes)?;
    if a.repeats == 0 || a.repeats > 1000 {
        return Err(values::bad("--repeats", "1 to 1000", a.repeats.to_string()).into());
    }
    let record_path = a.record.clone().unwrap_or_else(|| {
        let mut p = output.clone().into_os_string();
        p.push(".pingpong.json");
        PathBuf::from(p)
    });
    let mut outputs = vec![("--output", output.as_path())];
    if a.from.is_none() {
        outputs.push(("--record", record_path.as_path()));
    }
    let from: Vec<(&str, &Path)> = a.from.iter().map(|p| ("--from", p.as_path())).collect();
    outputs::check_distinct(&from, &outputs)?;
    if a.from.is_none() {
        outputs::check_distinct(&[("--machine", &a.machine)], &[("--record", &record_path)])?;
    }
    let (record, source_file) = match &a.from {
        Some(p) => (Record::read(p)?, p.clone()),
        None => match measure(a, max_bytes, &record_path)? {
            Some(r) => (r, record_path.clone()),
            None => return Ok(0), // rank 1: rank 0 reports and writes
        },
    };
    let mut fit = network_fit::fit(&record.sizes).map_err(|e| InputError::Key {
        file: source_file.clone(),
        key: "sizes".into(),
        expected: "a sweep that determines latency and throughput".into(),
        got: e.to_string(),
    })?;
    write_fit(&fit, &record, out)?;
    if fit.latency_s <= 0.0 {
        // Small messages beat the line through the large ones: take the smallest measured.
        fit.latency_s = record.sizes.first().map_or(f64::NAN, |s| s.median());
    }
    let new = machine_edit::update(
        &output,
        &text,
        "network",
        &[
            ("latency_s", Number::One(fit.latency_s)),
            ("bandwidth_bytes_per_s", Number::One(fit.bandwidth)),
        ],
        &source_line(&fit, &record, &source_file),
        true,
    )?;
    Machine::from_toml_for_plan(&output, &new)?;
    outputs::write_machine(&a.machine, &output, new.as_bytes())?;
    super::say::progress(&format!("wrote [network] to {}", output.display()));
    Ok(0)
}

#[cfg(feature = "mpi")]
fn measure(a: &NetworkArgs, max_bytes: u64, record: &Path) -> anyhow::Result<Option<Record>> {
    let done = if a.resume && record.exists() {
        Some(Record::read(record)?)
    } else {
        None
    };
    let o = pingpong::Options {
        max_bytes,
        repeats: a.repeats,
        target_s: 0.02,
        record: record.to_path_buf(),
        done,
    };
    pingpong::run(&o, &mut |l| super::say::line(l))
}

#[cfg(not(feature = "mpi"))]
fn measure(_: &NetworkArgs, _: u64, _: &Path) -> anyhow::Result<Option<Record>> {
    let _ = pingpong::sizes;
    anyhow::bail!(
        "this jouleplan was built without MPI, so it cannot run the ping-pong: rebuild with \
         `cargo build --release --features mpi` (Debian: apt-get install libopenmpi-dev \
         openmpi-bin libclang-dev) and run `mpirun -n 2 jouleplan calibrate network ...`, or \
         fit a recorded sweep with --from RECORD"
    )
}

fn write_fit(f: &NetworkFit, r: &Record, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "ping-pong between {} ({} sizes, {} to {} bytes, {} repeats each, {})",
        r.hosts.join(" and "),
        r.sizes.len(),
        r.sizes.first().map_or(0, |s| s.bytes),
        r.sizes.last().map_or(0, |s| s.bytes),
        r.sizes.first().map_or(0, |s| s.one_way_s.len()),
        r.date
    )?;
    writeln!(out, "  {:>10} {:>14} {:>9}", "bytes", "one way", "fit")?;
    for (b, t, res) in &f.residuals {
        let res = crate::units::signed_percent(*res, 1);
        writeln!(out, "  {b:>10} {:>11.3} us {res:>9}", t * 1e6)?;
    }
    writeln!(
        out,
        "latency L = {:.3} us (95% CI ±{:.3} us), throughput B = {:.3} GB/s (±{:.3} GB/s); \
         saturated throughput (NetPIPE) {:.3} GB/s at {} bytes",
        f.latency_s * 1e6,
        f.latency_ci_s * 1e6,
        f.bandwidth / 1e9,
        f.bandwidth_ci / 1e9,
        f.saturated.0 / 1e9,
        f.saturated.1
    )?;
    if f.latency_s < 0.0 {
        super::say::note(
            "the fitted latency is negative (small messages are faster than the line through \
             the large ones): latency_s is the smallest message's measured time",
        );
    }
    Ok(())
}

fn source_line(f: &NetworkFit, r: &Record, file: &Path) -> String {
    format!(
        "measured: `jouleplan calibrate network`, MPI ping-pong between {} on {}, {} sizes up \
         to {} bytes (record {}); T(m) = L + m/B by weighted least squares: L = {:.4e} s \
         (±{:.2e}), B = {:.4e} B/s (±{:.2e}), 95% CI; saturated {:.4e} B/s; switch_bandwidth \
         and cv2 not measured",
        r.hosts.join(" and "),
        r.date,
        r.sizes.len(),
        r.sizes.last().map_or(0, |s| s.bytes),
        file.display(),
        f.latency_s,
        f.latency_ci_s,
        f.bandwidth,
        f.bandwidth_ci,
        f.saturated.0
    )
}
