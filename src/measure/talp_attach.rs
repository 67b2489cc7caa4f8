//! `jouleplan profile --talp CORES=FILE --output PROFILE`: attaches TALP outputs of DLB's GPU
//! plugin (run beside the sweep: `DLB_ARGS=--talp LD_PRELOAD=libdlb.so ./app`) to the points of
//! an existing profile. The device times TALP measured (kernel, memory transfer, host time
//! blocked in the GPU runtime) then replace NVML's sampled ones, marked as coming from TALP.
//! They are kept in the sweep record, so a later `--resume` keeps them.

use super::record::{self, Header, TalpAttachment};
use crate::error::InputError;
use crate::metrics::talp;
use crate::model::workload::freq_key;
use crate::units::Hertz;
use std::path::{Path, PathBuf};

/// One `--talp` value: the core count it belongs to and the file.
#[derive(Debug, Clone, PartialEq)]
pub struct TalpSpec {
    /// Core count of the point.
    pub cores: u32,
    /// The TALP JSON or CSV file.
    pub file: PathBuf,
}

/// Parses `CORES=FILE`.
pub fn parse_spec(s: &str) -> Result<TalpSpec, InputError> {
    let bad = || {
        InputError::Argument {
        flag: "--talp".into(),
        expected: "CORES=FILE: the core count of the point the TALP output belongs to, and the file (16=talp_c16.json)".into(),
        got: s.into(),
    }
    };
    let (c, f) = s.split_once('=').ok_or_else(bad)?;
    let cores = c
        .trim()
        .parse()
        .ok()
        .filter(|&c: &u32| c > 0)
        .ok_or_else(bad)?;
    Ok(TalpSpec {
        cores,
        file: PathBuf::from(f),
    })
}

/// Whether a file is a Paraver trace (`.prv`, `.prv.gz`).
pub fn is_trace(file: &Path) -> bool {
    let name = file.to_string_lossy();
    name.ends_with(".prv") || name.ends_with(".prv.gz")
}

/// The measured tree of a Paraver trace of the baseline (`profile --trace`): POP's MPI branch
/// (load balance, communication, serialisation and transfer from the critical-path replay)
/// under TALP's names, for a point without GPUs.
pub fn trace_attachment(spec: &TalpSpec) -> anyhow::Result<TalpAttachment> {
    let run =
        crate::metrics::paraver::analyse(&spec.file, &crate::metrics::paraver::Options::default())?;
    let pop = run.pop.as_ref().ok_or_else(|| {
        InputError::Mismatch(format!(
            "{}: the trace gives no POP metrics (no useful time per rank)",
            spec.file.display()
        ))
    })?;
    let mut printed: std::collections::BTreeMap<String, f64> = [
        ("parallelEfficiency", pop.parallel_efficiency),
        ("mpiParallelEfficiency", pop.parallel_efficiency),
        ("mpiCommunicationEfficiency", pop.communication),
        ("mpiLoadBalance", pop.load_balance),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let (Some(se), Some(tr)) = (pop.serialisation, pop.transfer) {
        printed.insert("popSerializationEfficiency".into(), se);
        printed.insert("popTransferEfficiency".into(), tr);
    }
    Ok(TalpAttachment {
        cores: spec.cores,
        freq_hz: 0.0,
        gpus: 0,
        file: format!("Paraver {}", spec.file.display()),
        gpu_useful_s: 0.0,
        max_gpu_useful_s: 0.0,
        max_gpu_active_s: 0.0,
        gpu_runtime_s: 0.0,
        elapsed_s: run.elapsed_s,
        printed,
    })
}

/// Reads the `Global` region of a TALP file into an attachment for a point with `cores` (a
/// Paraver trace: its measured tree, [`trace_attachment`]).
pub fn read_attachment(spec: &TalpSpec) -> anyhow::Result<(TalpAttachment, u32)> {
    if is_trace(&spec.file) {
        return Ok((trace_attachment(spec)?, 0));
    }
    let text = crate::input::read_file(&spec.file)?;
    let a = attachment_of(&spec.file, &text, spec.cores)?;
    if a.gpus == 0 {
        return Err(InputError::Mismatch(format!(
            "{}: the Global region has no device times (numGpus 0, no gpuUsefulTime): run DLB \
             with its GPU plugin (CUPTI) to measure them",
            spec.file.display()
        ))
        .into());
    }
    let gpus = a.gpus;
    Ok((a, gpus))
}

/// The `Global` region (or the first) of a TALP output as an attachment: device times when the
/// GPU plugin measured them (`gpus` 0 otherwise) and the printed trees.
pub fn attachment_of(file: &Path, text: &str, cores: u32) -> anyhow::Result<TalpAttachment> {
    let parsed = talp::read(file, text)?;
    let region = parsed
        .regions
        .iter()
        .find(|r| r.name == "Global")
        .or(parsed.regions.first())
        .ok_or_else(|| InputError::Mismatch(format!("{}: no TALP region", file.display())))?;
    let runtime = match &region.host {
        talp::HostSource::Modern(h) => h.gpu_runtime,
        talp::HostSource::Legacy(_) => 0.0,
    };
    let d = region.device.as_ref();
    Ok(TalpAttachment {
        cores,
        freq_hz: 0.0,
        gpus: d.map_or(0, |d| d.gpus.round().max(1.0) as u32),
        file: file.display().to_string(),
        gpu_useful_s: d.map_or(0.0, |d| d.gpu_useful),
        max_gpu_useful_s: d.map_or(0.0, |d| d.max_gpu_useful),
        max_gpu_active_s: d.map_or(0.0, |d| d.max_gpu_active),
        gpu_runtime_s: runtime,
        elapsed_s: region.elapsed,
        printed: region.printed.iter().cloned().collect(),
    })
}

/// Largest efficiency accepted from a measuring tool (its printed two decimals round up).
const MAX_EFFICIENCY: f64 = 1.005;

/// Refuses an attachment whose efficiencies are not efficiencies (outside 0 to 1, or not
/// finite), naming the key, or whose times are negative or beyond a physical range.
fn check_printed(file: &Path, a: &TalpAttachment) -> Result<(), InputError> {
    let bad = |key: &str, v: f64, expected: &str| InputError::Key {
        file: file.to_path_buf(),
        key: key.into(),
        expected: expected.into(),
        got: crate::limits::shown(v),
    };
    for (k, &v) in &a.printed {
        if !(v.is_finite() && (0.0..=MAX_EFFICIENCY).contains(&v)) {
            return Err(bad(
                k,
                v,
                "an efficiency from 0 to 1 (above 1 the tool's times disagree with each other: \
                 re-measure, or leave this file out)",
            ));
        }
    }
    use crate::limits::Reading;
    for (k, v, r) in [
        ("elapsedTime", a.elapsed_s, Reading::RegionTime),
        ("gpuUsefulTime", a.gpu_useful_s, Reading::PartTime),
        ("maxGpuActiveTime", a.max_gpu_active_s, Reading::PartTime),
        ("gpuRuntimeTime", a.gpu_runtime_s, Reading::PartTime),
    ] {
        if let Err(expected) = r.check(v) {
            return Err(bad(k, v, &expected));
        }
    }
    Ok(())
}

/// Attaches every spec to the profile at `output` and rewrites it atomically. Returns one line
/// per attachment for the user.
pub fn attach(output: &Path, specs: &[TalpSpec]) -> anyhow::Result<Vec<String>> {
    let text = crate::input::read_file(output)?;
    let (doc, mut rec) = record::read_written(output, &text)?;
    let header = Header::of(&doc);
    let mut lines = Vec::new();
    for spec in specs {
        let (mut a, gpus) = read_attachment(spec)?;
        check_printed(&spec.file, &a)?;
        let points: Vec<(u32, f64, u32)> = rec
            .runs
            .iter()
            .filter(|r| r.ok && r.cores == spec.cores && r.gpus == gpus)
            .map(|r| (r.cores, r.freq_hz, r.gpus))
            .collect();
        let mut freqs: Vec<u64> = points.iter().map(|p| freq_key(Hertz(p.1))).collect();
        freqs.sort_unstable();
        freqs.dedup();
        let [fk] = freqs[..] else {
            return Err(InputError::Mismatch(format!(
                "{}: {} (TALP saw {gpus} GPUs) matches {} measured points of {}: it needs \
                 exactly one point with {} cores and {gpus} GPUs",
                spec.file.display(),
                spec.cores,
                freqs.len(),
                output.display(),
                spec.cores
            ))
            .into());
        };
        a.freq_hz = fk as f64 * 1e3;
        rec.talp.retain(|t| {
            !(t.cores == a.cores && t.gpus == a.gpus && freq_key(Hertz(t.freq_hz)) == fk)
        });
        if is_trace(&spec.file) {
            lines.push(format!(
                "attached the trace {} to ({} cores, {:.3} GHz): load balance {:.3}, communication {:.3}",
                spec.file.display(),
                a.cores,
                a.freq_hz / 1e9,
                a.printed.get("mpiLoadBalance").copied().unwrap_or(f64::NAN),
                a.printed.get("mpiCommunicationEfficiency").copied().unwrap_or(f64::NAN),
            ));
            rec.talp.push(a);
            continue;
        }
        lines.push(format!(
            "attached {} to ({} cores, {:.3} GHz, {gpus} GPUs): kernels {:.3} s, transfers {:.3} s, host blocked in the GPU runtime {:.3} s",
            spec.file.display(),
            a.cores,
            a.freq_hz / 1e9,
            a.gpu_useful_s,
            a.max_gpu_active_s - a.max_gpu_useful_s,
            a.gpu_runtime_s
        ));
        rec.talp.push(a);
    }
    let file = record::profile_file(&header, &rec);
    // The profile must stay plannable: check it as plan checks it before replacing it.
    file.validate(output).map_err(|e| {
        InputError::Mismatch(format!(
            "{} was left unchanged: with the attachments it would not read back ({e})",
            output.display()
        ))
    })?;
    let text = file.to_text()?;
    crate::atomic_write::rewrite_atomic(output, text.as_bytes())?;
    Ok(lines)
}
