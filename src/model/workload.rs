//! The workload profile: single-node baseline points `(c, f[, g])` of a smaller input `P_s`, the
//! iteration counts and the communication pattern (MODEL.md section 2). Read from JSON (what
//! `jouleplan profile` writes).

use super::overhead::{self, Extra, IdleSplit};
use super::sweep_facts::{self, SweepFacts};
use crate::error::{InputError, InputResult};
use crate::input::{self, Bound, Fields};
use crate::limits;
use crate::units::{Hertz, Joules, Seconds};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub use crate::artefact::profile::{Growth, PROFILE_FORMAT, freq_key};

/// Messages per process and iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Communication {
    /// `eta`: messages per process and iteration (per neighbour for [`Growth::Neighbours`]).
    pub messages_per_iteration: f64,
    /// `nu`: bytes per message.
    pub bytes_per_message: f64,
    /// How `eta` grows with `n`.
    pub growth: Growth,
}

impl Communication {
    /// A program that sends nothing between nodes.
    pub fn none() -> Self {
        Communication {
            messages_per_iteration: 0.0,
            bytes_per_message: 0.0,
            growth: Growth::Constant,
        }
    }
}

pub use super::baseline::{BaselinePoint, DeviceBaseline};

/// A workload profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Program name.
    pub program: String,
    /// What was run, where, and how.
    pub description: String,
    /// `S_s`: iterations of the baseline run.
    pub baseline_iterations: f64,
    /// `S`: iterations of the target run.
    pub target_iterations: f64,
    /// Memory the target run needs over all nodes, in GiB, when known: node counts whose
    /// memory cannot hold it are left out of the search.
    pub memory_footprint_gib: Option<f64>,
    /// Communication per process and iteration.
    pub communication: Communication,
    /// The baseline points.
    pub baseline: Vec<BaselinePoint>,
    /// Provenance: key -> how it was obtained.
    pub provenance: Vec<(String, String)>,
    /// What the profile could not measure and what is assumed instead; `plan` shows each.
    pub assumptions: Vec<String>,
    /// The file it was read from.
    pub file: PathBuf,
    /// SHA-256 of the file's text.
    pub digest: String,
    /// The idle-time split of each measured `(f, g)` group (MODEL.md 6b).
    pub splits: Vec<IdleSplit>,
    /// What the sweep record says: spread, energy domains, the machine measured on.
    pub facts: SweepFacts,
    /// Whether the file has a sweep record at all (written by `jouleplan profile`).
    pub has_sweep: bool,
    /// The node law fitted on measured multi-node runs (MODEL.md 6c b), when there were any.
    pub node_law: Option<super::node_law::NodeFit>,
    index: rustc_hash::FxHashMap<(u32, u64, u32), usize>,
}

impl Profile {
    /// Reads and validates a profile JSON file.
    pub fn load(path: &Path) -> InputResult<Self> {
        let text = input::read_file(path)?;
        Self::from_json(path, &text)
    }

    /// Validates a profile from JSON text; `path` names it in messages.
    pub fn from_json(path: &Path, text: &str) -> InputResult<Self> {
        let doc = input::parse_json(path, text)?;
        let mut root = Fields::root(path, &doc)?;
        let format = root.str("format")?;
        if format != PROFILE_FORMAT {
            return Err(root.error(
                "format",
                format!("\"{PROFILE_FORMAT}\""),
                format!("{format:?}"),
            ));
        }
        let program = root.str("program")?.to_string();
        let description = root.opt_str("description")?.unwrap_or("").to_string();

        let mut it = root.table("iterations")?;
        let baseline_iterations = it.f64("baseline", limits::ITERATIONS)?;
        let target_iterations = it.f64("target", limits::ITERATIONS)?;
        it.finish()?;
        let memory_footprint_gib = root.opt_f64("memory_footprint_gib", limits::MEMORY_GIB)?;

        let communication = match root.opt_table("communication")? {
            None => Communication::none(),
            Some(mut c) => {
                let eta = c.f64("messages_per_iteration", limits::MESSAGES)?;
                let nu = c.f64("bytes_per_message", limits::BYTES)?;
                let growth_name = c.opt_str("growth")?.unwrap_or("constant");
                let growth = match growth_name {
                    "constant" => Growth::Constant,
                    "log2" => Growth::Log2,
                    "all_to_all" => Growth::AllToAll,
                    "neighbours" => Growth::Neighbours(c.u64("neighbours", 1, 1 << 20)? as u32),
                    other => {
                        return Err(c.error(
                            "growth",
                            "one of \"constant\", \"neighbours\", \"log2\", \"all_to_all\"",
                            format!("{other:?}"),
                        ));
                    }
                };
                c.finish()?;
                Communication {
                    messages_per_iteration: eta,
                    bytes_per_message: nu,
                    growth,
                }
            }
        };

        let mut baseline = Vec::new();
        let mut index = rustc_hash::FxHashMap::default();
        if doc
            .get("baseline")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
            && doc.get("sweep").is_some()
        {
            return Err(InputError::Mismatch(format!(
                "{}: no run of the sweep succeeded, so the profile has no baseline point; each \
                 failed run's reason and stderr are in sweep.record.runs (fix the command and \
                 run `jouleplan profile ... --resume`)",
                path.display()
            )));
        }
        for (i, mut p) in root.tables("baseline")?.into_iter().enumerate() {
            let point = read_point(&mut p)?;
            let key = (point.cores, freq_key(point.freq), point.gpus);
            if index.insert(key, i).is_some() {
                return Err(p.error(
                    "cores",
                    "each (cores, freq_hz, gpus) point once",
                    format!(
                        "a second point ({}, {} GHz, {})",
                        point.cores,
                        point.freq.ghz(),
                        point.gpus
                    ),
                ));
            }
            p.finish()?;
            baseline.push(point);
        }
        let provenance = root.notes("provenance")?;
        let assumptions = root.opt_str_list("assumptions")?;
        // The raw runs of `jouleplan profile`: kept for `--resume`; the model reads their spread,
        // energy domains and host from it.
        let sweep = root.opt_any("sweep");
        let has_sweep = sweep.is_some();
        let mut facts = sweep_facts::read(sweep).unwrap_or_default();
        if let Some(on) = read_measured_on(&mut root)?
            && facts.measured_on.is_none()
        {
            facts.measured_on = Some(on);
        }
        let node_law = match root.opt_any("node_law") {
            None => None,
            Some(v) => {
                Some(
                    super::node_law::NodeFit::from_json(v).map_err(|why| InputError::Key {
                        file: path.to_path_buf(),
                        key: "node_law".into(),
                        expected: "the node law `jouleplan fit` writes".into(),
                        got: why,
                    })?,
                )
            }
        };
        root.finish()?;
        let splits = explain(&mut baseline);
        Ok(Profile {
            program,
            description,
            baseline_iterations,
            target_iterations,
            memory_footprint_gib,
            communication,
            baseline,
            provenance,
            assumptions,
            file: path.to_path_buf(),
            digest: input::sha256_hex(text),
            splits,
            facts,
            has_sweep,
            node_law,
            index,
        })
    }

    /// The baseline point for `c` cores at `f` with `g` GPUs.
    ///
    /// With `g = 0` the point must have been taken without GPUs. With `g > 0` the point with
    /// exactly `g` GPUs is used when present, else the one with the nearest GPU count (fewer on a
    /// tie): its device work is then divided over the configuration's GPUs (MODEL.md section 6).
    pub fn point(&self, cores: u32, freq: Hertz, gpus: u32) -> InputResult<&BaselinePoint> {
        let fk = freq_key(freq);
        if let Some(&i) = self.index.get(&(cores, fk, gpus)) {
            return Ok(&self.baseline[i]);
        }
        if gpus > 0 {
            let nearest = self
                .baseline
                .iter()
                .filter(|p| p.cores == cores && freq_key(p.freq) == fk && p.gpus > 0)
                .min_by_key(|p| (p.gpus.abs_diff(gpus), p.gpus));
            if let Some(p) = nearest {
                return Ok(p);
            }
        }
        let gpu_text = if gpus == 0 {
            "without GPUs".to_string()
        } else {
            "with GPUs".to_string()
        };
        Err(InputError::Mismatch(format!(
            "{}: no baseline point for {cores} cores at {} GHz {gpu_text}; the profile has {}. \
             Measure it (jouleplan profile --cores {cores} --freqs {}) or leave it out of the search \
             (--cores/--freqs/--gpus)",
            self.file.display(),
            freq.ghz(),
            self.describe_points(),
            freq.ghz(),
        )))
    }

    /// Fits the profile to a machine's frequency set (MODEL.md section 5, frequency fill): for
    /// each core and GPU count with a measured point, every machine frequency without a point
    /// gets one derived from the measured point of nearest frequency (work and non-memory stall
    /// cycles unchanged; memory-stall time unchanged, so `m_s(f') = m_s(f) f' / f`; no energy).
    /// Points at frequencies the machine lacks are then dropped. Returns what was done, for
    /// the user to see.
    pub fn fill_frequencies(&mut self, machine_freqs: &[Hertz]) -> Vec<String> {
        let keys: Vec<u64> = machine_freqs.iter().map(|&f| freq_key(f)).collect();
        let mut derived = Vec::new();
        let mut groups: Vec<(u32, u32)> = self.baseline.iter().map(|p| (p.cores, p.gpus)).collect();
        groups.sort_unstable();
        groups.dedup();
        for &(c, g) in &groups {
            let measured: Vec<&BaselinePoint> = self
                .baseline
                .iter()
                .filter(|p| p.cores == c && p.gpus == g)
                .collect();
            for (&f, &k) in machine_freqs.iter().zip(&keys) {
                if measured.iter().any(|p| freq_key(p.freq) == k) {
                    continue;
                }
                let Some(src) = measured
                    .iter()
                    .min_by(|a, b| (a.freq.0 - f.0).abs().total_cmp(&(b.freq.0 - f.0).abs()))
                else {
                    continue;
                };
                derived.push(at_frequency(src, f));
            }
        }
        let mut notes = Vec::new();
        let before = self.baseline.len();
        let dropped: Vec<f64> = {
            let mut v: Vec<f64> = self
                .baseline
                .iter()
                .filter(|p| !keys.contains(&freq_key(p.freq)))
                .map(|p| p.freq.ghz())
                .collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v
        };
        let n_derived = derived.len();
        let n_dropped = before
            - self
                .baseline
                .iter()
                .filter(|p| keys.contains(&freq_key(p.freq)))
                .count();
        self.baseline.extend(derived);
        self.baseline.retain(|p| keys.contains(&freq_key(p.freq)));
        if n_derived > 0 {
            notes.push(format!(
                "{n_derived} baseline points derived for frequencies the profile did not measure \
                 (MODEL.md section 5: work and non-memory stall cycles fixed, memory-stall time fixed)"
            ));
        }
        if !dropped.is_empty() {
            notes.push(format!(
                "measured at {} GHz, which the machine model does not list: those points only \
                 seeded the derived ones ({n_dropped} of {before} points)",
                dropped
                    .iter()
                    .map(|f| format!("{f}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        self.reindex();
        notes
    }

    /// Keeps only the measured points at the core counts of `keep` (and every point with
    /// other core counts removed), re-deriving the 6b terms from what is left, so that the
    /// removed points can serve as held-out measurements. Returns the removed measured points.
    pub fn restrict_cores(&mut self, keep: &[u32]) -> Vec<BaselinePoint> {
        self.restrict(|p| keep.contains(&p.cores))
    }

    /// Keeps only the points `keep` accepts, re-deriving the 6b terms from what is left;
    /// returns the removed measured points (held-out measurements).
    pub fn restrict(&mut self, keep: impl Fn(&BaselinePoint) -> bool) -> Vec<BaselinePoint> {
        let (kept, removed): (Vec<BaselinePoint>, Vec<BaselinePoint>) =
            std::mem::take(&mut self.baseline)
                .into_iter()
                .partition(|p| keep(p));
        self.baseline = kept;
        self.splits = explain(&mut self.baseline);
        self.reindex();
        removed.into_iter().filter(|p| p.measured).collect()
    }

    /// Rebuilds the point index after points were added or removed.
    pub fn reindex(&mut self) {
        self.index = self
            .baseline
            .iter()
            .enumerate()
            .map(|(i, p)| ((p.cores, freq_key(p.freq), p.gpus), i))
            .collect();
    }

    /// The core counts with at least one baseline point, ascending.
    pub fn core_counts(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.baseline.iter().map(|p| p.cores).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Whether any baseline point used GPUs.
    pub fn uses_gpus(&self) -> bool {
        self.baseline.iter().any(|p| p.gpus > 0)
    }

    /// Whether any baseline point ran without GPUs.
    pub fn has_cpu_points(&self) -> bool {
        self.baseline.iter().any(|p| p.gpus == 0)
    }

    /// A short list of the points held, for messages.
    pub fn describe_points(&self) -> String {
        let mut cores: Vec<u32> = self.baseline.iter().map(|p| p.cores).collect();
        cores.sort_unstable();
        cores.dedup();
        let mut freqs: Vec<u64> = self.baseline.iter().map(|p| freq_key(p.freq)).collect();
        freqs.sort_unstable();
        freqs.dedup();
        format!(
            "{} points over cores {{{}}} and {{{}}} GHz",
            self.baseline.len(),
            compact_list(&cores.iter().map(|&c| u64::from(c)).collect::<Vec<_>>()),
            freqs
                .iter()
                .map(|k| format!("{}", *k as f64 / 1e6))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The profile as the JSON document that [`Profile::from_json`] reads (without a sweep
    /// record: what `fit` and importers write); a machine it was fitted for is kept under
    /// `measured_on`.
    pub fn to_json(&self) -> Value {
        let comm = &self.communication;
        let mut c = json!({
            "messages_per_iteration": comm.messages_per_iteration,
            "bytes_per_message": comm.bytes_per_message,
            "growth": comm.growth.name(),
        });
        if let Growth::Neighbours(k) = comm.growth {
            c["neighbours"] = json!(k);
        }
        let points: Vec<Value> = self.baseline.iter().map(point_json).collect();
        let prov: serde_json::Map<String, Value> = self
            .provenance
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut doc = json!({
            "format": PROFILE_FORMAT,
            "program": self.program,
            "description": self.description,
            "iterations": { "baseline": self.baseline_iterations, "target": self.target_iterations },
            "communication": c,
            "baseline": points,
            "provenance": prov,
        });
        if !self.assumptions.is_empty() {
            doc["assumptions"] = json!(self.assumptions);
        }
        if let Some(law) = &self.node_law {
            doc["node_law"] = law.to_json();
        }
        if let Some(m) = self.memory_footprint_gib {
            doc["memory_footprint_gib"] = json!(m);
        }
        if let (Some(on), false) = (&self.facts.measured_on, self.has_sweep) {
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("machine", on.hostname.as_ref().map(|h| json!(h))),
                ("cpu", on.cpu.as_ref().map(|c| json!(c))),
                ("physical_cores", on.physical_cores.map(|c| json!(c))),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            doc["measured_on"] = Value::Object(m);
        }
        doc
    }

    /// Builds a profile from parts (used by importers and `profile`); validates like a file.
    pub fn from_parts(
        program: &str,
        description: &str,
        iterations: (f64, f64),
        communication: Communication,
        baseline: Vec<BaselinePoint>,
        provenance: Vec<(String, String)>,
    ) -> InputResult<Self> {
        let mut p = Profile {
            program: program.into(),
            description: description.into(),
            baseline_iterations: iterations.0,
            target_iterations: iterations.1,
            memory_footprint_gib: None,
            communication,
            baseline,
            provenance,
            assumptions: Vec::new(),
            file: PathBuf::from("(built in memory)"),
            digest: String::new(),
            splits: Vec::new(),
            facts: SweepFacts::default(),
            has_sweep: false,
            node_law: None,
            index: rustc_hash::FxHashMap::default(),
        };
        let text = p.to_json().to_string();
        p = Profile::from_json(Path::new("(built in memory)"), &text)?;
        Ok(p)
    }
}

/// `1-8,16` style rendering of a sorted list.
/// The point `src` derived at frequency `f` (MODEL.md section 5): work and non-memory stall
/// cycles fixed, memory-stall time fixed (its cycles scale with `f`).
fn at_frequency(src: &BaselinePoint, f: Hertz) -> BaselinePoint {
    let ratio = f.0 / src.freq.0;
    let mem = src.mem_stall_cycles * ratio;
    let wb = src.cycles - src.mem_stall_cycles;
    let mut p = BaselinePoint {
        freq: f,
        cycles: wb + mem,
        stall_cycles: src.stall_cycles - src.mem_stall_cycles + mem,
        mem_stall_cycles: mem,
        energy: None,
        measured: false,
        extra: src.extra.at_frequency(src.freq, f),
        measured_tree: None,
        ..src.clone()
    };
    p.wall_time = Seconds(overhead::paper_time(&p) + p.extra.total());
    p
}

pub fn compact_list(v: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}-{}", v[i], v[j])
        } else if j == i + 1 {
            format!("{},{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn point_json(p: &BaselinePoint) -> Value {
    let mut v = json!({
        "cores": p.cores,
        "freq_hz": p.freq.0,
        "gpus": p.gpus,
        "cycles": p.cycles,
        "stall_cycles": p.stall_cycles,
        "mem_stall_cycles": p.mem_stall_cycles,
        "utilisation": p.utilisation,
        "wall_time_s": p.wall_time.0,
        "measured": p.measured,
    });
    if let Some(i) = p.instructions {
        v["instructions"] = json!(i);
    }
    if let Some(e) = p.energy {
        v["energy_j"] = json!(e.0);
    }
    if let Some((source, values)) = &p.measured_tree {
        let m: serde_json::Map<String, Value> =
            values.iter().map(|(k, x)| (k.clone(), json!(x))).collect();
        v["measured_tree"] = json!({"source": source, "efficiencies": m});
    }
    if let Some(d) = &p.device {
        v["device"] = json!({
            "kernel_s": d.kernel.iter().map(|s| s.0).collect::<Vec<_>>(),
            "transfer_s": d.transfer.iter().map(|s| s.0).collect::<Vec<_>>(),
            "host_runtime_s": if d.host_runtime_estimated { 0.0 } else { d.host_runtime_raw.0 },
        });
        if let Some(s) = &d.source {
            v["device"]["source"] = json!(s);
        }
    }
    v
}

fn read_point(p: &mut Fields<'_>) -> InputResult<BaselinePoint> {
    let cores = p.u64("cores", 1, 100_000)? as u32;
    let freq = Hertz(p.f64("freq_hz", Bound::Within(1e7, 2e10))?);
    let gpus = p.opt_u64("gpus", 0, 1024)?.unwrap_or(0) as u32;
    let cycles = p.f64("cycles", limits::CYCLES)?;
    if cycles <= 0.0 {
        return Err(p.error("cycles", "a positive count", "0"));
    }
    let stall_cycles = p.f64("stall_cycles", limits::CYCLES)?;
    let mem_stall_cycles = p.f64("mem_stall_cycles", limits::CYCLES)?;
    if stall_cycles > cycles {
        return Err(p.error(
            "stall_cycles",
            format!("at most cycles ({cycles})"),
            format!("{stall_cycles}"),
        ));
    }
    if mem_stall_cycles > stall_cycles {
        return Err(p.error(
            "mem_stall_cycles",
            format!("at most stall_cycles ({stall_cycles})"),
            format!("{mem_stall_cycles}"),
        ));
    }
    if mem_stall_cycles >= cycles {
        return Err(p.error(
            "mem_stall_cycles",
            format!("fewer than cycles ({cycles}): some cycles must be work or non-memory stalls"),
            format!("{mem_stall_cycles}"),
        ));
    }
    let instructions = p.opt_f64("instructions", limits::CYCLES)?;
    let utilisation = p.f64("utilisation", Bound::Within(f64::MIN_POSITIVE, 1.0))?;
    let wall_time = Seconds(p.f64("wall_time_s", limits::TIME_S)?);
    if wall_time.0 <= 0.0 {
        return Err(p.error("wall_time_s", "a positive time", "0"));
    }
    let energy = p.opt_f64("energy_j", limits::ENERGY_J)?.map(Joules);
    let measured = p.opt_bool("measured")?.unwrap_or(true);
    let device = match p.opt_table("device")? {
        None => None,
        Some(mut d) => {
            let kernel = d.f64_list("kernel_s", limits::TIME_S)?;
            let transfer = d.f64_list("transfer_s", limits::TIME_S)?;
            if kernel.len() != gpus as usize || transfer.len() != gpus as usize {
                return Err(d.error(
                    "kernel_s",
                    format!("kernel_s and transfer_s with one entry per GPU ({gpus})"),
                    format!("{} and {} entries", kernel.len(), transfer.len()),
                ));
            }
            let host_runtime = Seconds(d.f64("host_runtime_s", limits::TIME_S)?);
            let source = d.opt_str("source")?.map(str::to_string);
            d.finish()?;
            Some(DeviceBaseline {
                kernel: kernel.into_iter().map(Seconds).collect(),
                transfer: transfer.into_iter().map(Seconds).collect(),
                host_runtime,
                host_runtime_raw: host_runtime,
                source,
                host_runtime_estimated: false,
            })
        }
    };
    let measured_tree = match p.opt_table("measured_tree")? {
        None => None,
        Some(mut t) => {
            let source = t.str("source")?.to_string();
            let values = t.notes_f64("efficiencies")?;
            t.finish()?;
            Some((source, values))
        }
    };
    if gpus > 0 && device.is_none() {
        return Err(p.error(
            "device",
            "a device table for a point with gpus > 0",
            "nothing",
        ));
    }
    Ok(BaselinePoint {
        cores,
        freq,
        gpus,
        cycles,
        stall_cycles,
        mem_stall_cycles,
        instructions,
        utilisation,
        wall_time,
        energy,
        device,
        measured,
        extra: Extra::default(),
        measured_tree,
    })
}

/// The `(kHz, GPUs)` groups of the measured points, sorted.
pub fn measured_groups(points: &[BaselinePoint]) -> Vec<(u64, u32)> {
    let mut g: Vec<(u64, u32)> = points
        .iter()
        .filter(|p| p.measured)
        .map(|p| (freq_key(p.freq), p.gpus))
        .collect();
    g.sort_unstable();
    g.dedup();
    g
}

/// Derives every measured point's extra terms (MODEL.md 6b) from its wall time and its
/// `(f, g)` group's idle-time split; returns the splits.
fn explain(points: &mut [BaselinePoint]) -> Vec<IdleSplit> {
    let mut splits = Vec::new();
    for (fk, g) in measured_groups(points) {
        let in_group = |p: &BaselinePoint| p.measured && freq_key(p.freq) == fk && p.gpus == g;
        let members: Vec<&BaselinePoint> = points.iter().filter(|p| in_group(p)).collect();
        let mut split = overhead::split_idle(&members);
        for p in points.iter_mut().filter(|p| in_group(p)) {
            if let Some(r) = overhead::settle_host_runtime(p, &split) {
                split.host_runtime_estimated.push((p.cores, r));
            }
            p.extra = overhead::extra_of(p, &split);
        }
        splits.push(split);
    }
    splits
}

/// The optional `measured_on` table of a profile without a sweep record (written by `fit`):
/// which machine the runs were measured on.
fn read_measured_on(root: &mut Fields<'_>) -> InputResult<Option<sweep_facts::MeasuredOn>> {
    let Some(mut t) = root.opt_table("measured_on")? else {
        return Ok(None);
    };
    let on = sweep_facts::MeasuredOn {
        hostname: t.opt_str("machine")?.map(String::from),
        cpu: t.opt_str("cpu")?.map(String::from),
        physical_cores: t.opt_u64("physical_cores", 1, 1 << 20)?.map(|c| c as u32),
        gpus: None,
    };
    t.finish()?;
    Ok(Some(on))
}
