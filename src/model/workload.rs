//! The workload profile: single-node baseline points `(c, f[, g])` of a smaller input `P_s`, the
//! iteration counts and the communication pattern (MODEL.md section 2). Read from JSON (what
//! `jouleplan profile` writes).

use super::energy_scope::{EnergyRead, EnergyScope};
use super::overhead::{self, IdleSplit};
use super::sweep_facts::{self, SweepFacts};
use crate::artefact::profile::{CommunicationFile, Iterations, MeasuredOnFile, ProfileFile};
use crate::error::{InputError, InputResult};
use crate::input;
use crate::units::{Hertz, Seconds};
use std::path::{Path, PathBuf};

pub use crate::artefact::profile::{Growth, PROFILE_FORMAT, freq_key};

/// The assumption a sweep records where no energy was measured on the baseline.
pub const NO_ENERGY: &str =
    "no energy was measured on the baseline: predictions use the machine model's power only";

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
    /// The GPU clock law (MODEL.md 6e), where the workload was measured at 3 or more clocks.
    pub gpu_clock: Option<super::gpu_clock::GpuClockLaw>,
    /// The one GPU clock, MHz, the GPU points were measured at without a clock law.
    pub measured_gpu_clock_mhz: Option<f64>,
    /// How the measured runs laid ranks and threads on a node, when they say.
    pub layout: Option<super::layout::Layout>,
    /// The energy scope the profile records (its file's `energy_scope`), when it records one;
    /// [`Profile::energy_scope`] says what its energy covers in every case.
    pub recorded_scope: Option<EnergyScope>,
    /// The fit that wrote the profile with a machine file (`fit --machine-out`), when one did.
    pub fit_id: Option<String>,
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
        let file = ProfileFile::read(path, text)?;
        Ok(Self::from_file(file, path, input::sha256_hex(text)))
    }

    /// The profile a validated file holds, with every measured point's extra terms derived
    /// (MODEL.md 6b); `digest` names the exact input.
    pub fn from_file(f: ProfileFile, path: &Path, digest: String) -> Self {
        let mut baseline: Vec<BaselinePoint> =
            f.baseline.iter().map(BaselinePoint::from_file).collect();
        let communication = f
            .communication
            .as_ref()
            .map_or_else(Communication::none, |c| Communication {
                messages_per_iteration: c.messages_per_iteration,
                bytes_per_message: c.bytes_per_message,
                growth: c.growth(),
            });
        // The raw runs of `jouleplan profile`: kept for `--resume`; the model reads their
        // spread, energy domains and host from it.
        let record = f.sweep.as_ref().map(|s| &s.record);
        let mut facts = record.map(sweep_facts::read).unwrap_or_default();
        if let Some(on) = &f.measured_on
            && facts.measured_on.is_none()
        {
            facts.measured_on = Some(sweep_facts::MeasuredOn {
                hostname: on.machine.clone(),
                cpu: on.cpu.clone(),
                physical_cores: on.physical_cores,
                gpus: None,
                repeats: on
                    .repeats
                    .iter()
                    .map(sweep_facts::RepeatSpread::from_file)
                    .collect(),
            });
        }
        let splits = explain(&mut baseline);
        let mut p = Profile {
            program: f.program,
            description: f.description,
            baseline_iterations: f.iterations.baseline,
            target_iterations: f.iterations.target,
            memory_footprint_gib: f.memory_footprint_gib,
            communication,
            baseline,
            provenance: f.provenance.into_iter().collect(),
            assumptions: f.assumptions.unwrap_or_default(),
            file: path.to_path_buf(),
            digest,
            splits,
            facts,
            has_sweep: f.sweep.is_some(),
            node_law: f.node_law.as_ref().map(super::node_law::NodeFit::from_file),
            gpu_clock: f.gpu_clock.clone(),
            measured_gpu_clock_mhz: f.measured_gpu_clock_mhz,
            layout: f.layout.and_then(super::layout::Layout::from_file),
            recorded_scope: f.energy_scope.as_deref().and_then(EnergyScope::from_name),
            fit_id: f.fit_id.clone(),
            index: rustc_hash::FxHashMap::default(),
        };
        p.reindex();
        p
    }

    /// What the profile's energy covers, and so what every energy predicted from it is: the
    /// scope it records (`fit` writes the measured rows'), else the one its sweep record's
    /// energy domains say, else the whole node.
    pub fn energy_scope(&self) -> EnergyScope {
        self.recorded_scope
            .or_else(|| {
                let mut spreads: Vec<_> = self.facts.spread.iter().collect();
                spreads.sort_by_key(|(k, _)| **k);
                spreads
                    .into_iter()
                    .map(|(_, s)| &s.energy_domains)
                    .find(|d| !d.is_empty())
                    .map(|d| EnergyScope::of(d))
            })
            .unwrap_or(EnergyScope::Node)
    }

    /// Whether the profile's GPU energy was read through NVML: its own sweep's energy domains
    /// (`gpu-0`, ... are NVML's), not a scope a measured CSV recorded (whose source is not
    /// known).
    pub fn energy_through_nvml(&self) -> bool {
        self.recorded_scope.is_none() && self.energy_scope() == EnergyScope::Gpu
    }

    /// The scope of the energy a plan of this profile on `machine` predicts, and how it was
    /// come by ([`EnergyRead::of`]).
    pub fn planned_energy(&self, machine: &super::machine::Machine) -> (EnergyScope, EnergyRead) {
        if !self
            .baseline
            .iter()
            .any(|p| p.measured && p.energy.is_some())
        {
            return (self.energy_scope(), EnergyRead::Unmeasured);
        }
        EnergyRead::of(
            self.energy_scope(),
            self.energy_through_nvml(),
            machine.host_power(),
        )
    }

    /// The profile's assumptions as a plan on a machine says them: on a machine file without
    /// `[power]` (`time_only`) there is no power to use, so [`NO_ENERGY`] says that the
    /// predictions are of time and node-hours only.
    pub fn assumptions_said(&self, time_only: bool) -> Vec<String> {
        self.assumptions
            .iter()
            .map(|a| match time_only && a == NO_ENERGY {
                true => "no energy was measured on the baseline, and the machine file has no \
                         [power] section: predictions are of time and node-hours only"
                    .to_string(),
                false => a.clone(),
            })
            .collect()
    }

    /// What the measured energy of baseline point `p` covers: the domains its sweep runs
    /// summed, else [`Profile::energy_scope`].
    pub fn point_scope(&self, p: &BaselinePoint) -> EnergyScope {
        self.facts
            .spread
            .get(&(p.cores, freq_key(p.freq), p.gpus))
            .map(|s| &s.energy_domains)
            .filter(|d| !d.is_empty())
            .map_or_else(|| self.energy_scope(), |d| EnergyScope::of(d))
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
        Err(InputError::Mismatch(self.missing_point(cores, freq, gpus)))
    }

    /// Why no baseline point serves `cores` at `freq` with `gpus` GPUs, and what to do: where
    /// the profile has points at those cores and that frequency with another GPU count, the GPU
    /// count is named as the cause.
    fn missing_point(&self, cores: u32, freq: Hertz, gpus: u32) -> String {
        use crate::units::count;
        let fk = freq_key(freq);
        let mut there: Vec<u32> = self
            .baseline
            .iter()
            .filter(|p| p.cores == cores && freq_key(p.freq) == fk)
            .map(|p| p.gpus)
            .collect();
        there.sort_unstable();
        there.dedup();
        let ghz = freq.ghz();
        let at = format!("{} at {ghz} GHz", count(cores, "core", "cores"));
        let gpu_flag = if gpus == 0 {
            String::new()
        } else {
            format!(" --gpus {gpus}")
        };
        let measure = format!("jouleplan profile --cores {cores} --freqs {ghz}{gpu_flag}");
        let with = if gpus == 0 {
            "without GPUs".to_string()
        } else {
            format!("with {}", count(gpus, "GPU", "GPUs"))
        };
        if there.is_empty() {
            return format!(
                "{}: no baseline point for {at} {with}; the profile has {}. Measure it \
                 ({measure}) or leave it out of the search (--cores/--freqs/--gpus)",
                self.file.display(),
                self.describe_points(),
            );
        }
        let measured = if there == [0] {
            "without GPUs".to_string()
        } else {
            let noun = if there == [1] { "GPU" } else { "GPUs" };
            format!("with {} {noun} per node", crate::units::count_ranges(there))
        };
        format!(
            "{}: no baseline point for {at} {with}: the GPU count does not match (the \
             profile's points for {at} were measured {measured}, and a run {with} is not \
             predicted from them); measure it {with} ({measure}) or leave it out of the search \
             (--gpus)",
            self.file.display(),
        )
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
            "{} over cores {{{}}} and {{{}}} GHz",
            crate::units::count(self.baseline.len() as u64, "point", "points"),
            compact_list(&cores.iter().map(|&c| u64::from(c)).collect::<Vec<_>>()),
            freqs
                .iter()
                .map(|k| format!("{}", *k as f64 / 1e6))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The profile as the file that [`Profile::from_json`] reads (without a sweep record:
    /// what `fit` and importers write); a machine it was fitted for is kept under
    /// `measured_on`.
    pub fn to_file(&self) -> ProfileFile {
        let comm = &self.communication;
        let measured_on = match (&self.facts.measured_on, self.has_sweep) {
            (Some(on), false) => Some(MeasuredOnFile {
                machine: on.hostname.clone(),
                cpu: on.cpu.clone(),
                physical_cores: on.physical_cores,
                repeats: on.repeats.iter().map(|r| r.to_file()).collect(),
            }),
            _ => None,
        };
        ProfileFile {
            format: PROFILE_FORMAT.into(),
            program: self.program.clone(),
            description: self.description.clone(),
            iterations: Iterations {
                baseline: self.baseline_iterations,
                target: self.target_iterations,
            },
            memory_footprint_gib: self.memory_footprint_gib,
            communication: Some(CommunicationFile {
                messages_per_iteration: comm.messages_per_iteration,
                bytes_per_message: comm.bytes_per_message,
                growth: Some(comm.growth.name().into()),
                neighbours: match comm.growth {
                    Growth::Neighbours(k) => Some(k),
                    _ => None,
                },
            }),
            baseline: self.baseline.iter().map(BaselinePoint::to_file).collect(),
            assumptions: (!self.assumptions.is_empty()).then(|| self.assumptions.clone()),
            provenance: self.provenance.iter().cloned().collect(),
            sweep: None,
            node_law: self
                .node_law
                .as_ref()
                .map(super::node_law::NodeFit::to_file),
            gpu_clock: self.gpu_clock.clone(),
            measured_gpu_clock_mhz: self.measured_gpu_clock_mhz,
            measured_on,
            layout: self.layout.map(super::layout::Layout::to_file),
            energy_scope: self.recorded_scope.map(|s| s.csv_name().to_string()),
            fit_id: self.fit_id.clone(),
        }
    }

    /// Whether `mhz` is the one GPU clock the profile was measured at without a clock law
    /// (within half a MHz, as a listed clock is read).
    pub fn measured_at_clock(&self, mhz: f64) -> bool {
        self.gpu_clock.is_none()
            && self
                .measured_gpu_clock_mhz
                .is_some_and(|m| (m - mhz).abs() < 0.5)
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
        let p = Profile {
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
            gpu_clock: None,
            measured_gpu_clock_mhz: None,
            layout: None,
            recorded_scope: None,
            fit_id: None,
            index: rustc_hash::FxHashMap::default(),
        };
        let path = Path::new("(built in memory)");
        let file = p.to_file();
        file.validate(path)?;
        let text = serde_json::to_value(&file).map_or_else(|_| String::new(), |v| v.to_string());
        Ok(Profile::from_file(file, path, input::sha256_hex(&text)))
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

/// A sorted list of counts as ranges, `1-4,8,16` ([`crate::units::count_ranges_with`]).
pub fn compact_list(v: &[u64]) -> String {
    crate::units::count_ranges_with(v.iter().copied(), ",")
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
