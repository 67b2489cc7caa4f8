//! The profile file (`jouleplan-profile/1`): the type `profile`, `fit` and the importers write
//! and `plan` reads ([`ProfileFile`]), its `validate()` pass, its format tag and the
//! communication growth laws.

use super::node_law::NodeLawFile;
use super::sweep::SweepRecord;
use crate::error::{InputError, InputResult};
use crate::input::{self, Check};
use crate::limits::Bound;
use crate::limits::{self, Reading};
use crate::units::Hertz;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Format tag written in and expected from profile files.
pub const PROFILE_FORMAT: &str = "jouleplan-profile/1";

/// How the messages a process sends per iteration grow with the node count `n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Growth {
    /// `eta` messages whatever `n` (> 1).
    Constant,
    /// `eta` messages to each of `min(n - 1, k)` neighbours.
    Neighbours(u32),
    /// `eta * ceil(log2 n)`: tree collectives.
    Log2,
    /// `eta * (n - 1)`: all-to-all.
    AllToAll,
}

impl Growth {
    /// The factor on `eta` at `n` nodes; 0 when `n = 1` (no inter-node messages).
    pub fn factor(self, n: u32) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        match self {
            Growth::Constant => 1.0,
            Growth::Neighbours(k) => f64::from((n - 1).min(k)),
            Growth::Log2 => f64::from(32 - (n - 1).leading_zeros()),
            Growth::AllToAll => f64::from(n - 1),
        }
    }

    /// The name used in profile files.
    pub fn name(self) -> &'static str {
        match self {
            Growth::Constant => "constant",
            Growth::Neighbours(_) => "neighbours",
            Growth::Log2 => "log2",
            Growth::AllToAll => "all_to_all",
        }
    }
}

pub use crate::units::freq_key;

/// The profile file (`jouleplan-profile/1`): the one type that `profile`, `fit` and the
/// importers write and that `plan` reads. Keys are written sorted (through a JSON value), so a
/// file written before this type existed is written again byte for byte.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    /// [`PROFILE_FORMAT`].
    pub format: String,
    /// Program name.
    pub program: String,
    /// What was run, where and how.
    #[serde(default)]
    pub description: String,
    /// `S_s` and `S`.
    pub iterations: Iterations,
    /// Memory the target run needs over all nodes, GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_footprint_gib: Option<f64>,
    /// Messages per process and iteration; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub communication: Option<CommunicationFile>,
    /// The single-node baseline points.
    pub baseline: Vec<PointFile>,
    /// What was not measured and is assumed instead (`profile` writes the list even empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumptions: Option<Vec<String>>,
    /// Where each value came from.
    #[serde(default)]
    pub provenance: BTreeMap<String, String>,
    /// The raw runs of `jouleplan profile` and their spread (kept for `--resume`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSection>,
    /// The node law fitted on multi-node runs (MODEL.md 6c b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_law: Option<NodeLawFile>,
    /// The GPU clock law (MODEL.md 6e), where the workload was measured at 3 or more clocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clock: Option<super::gpu_clock::GpuClockLaw>,
    /// The one GPU core clock, MHz, every GPU point was measured at, where the runs named a
    /// clock and there is no clock law (`fit`): predictions hold at that clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_gpu_clock_mhz: Option<f64>,
    /// The machine a profile without a sweep record was measured on (written by `fit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_on: Option<MeasuredOnFile>,
    /// How the measured runs laid ranks and threads on a node (job scripts follow it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutFile>,
    /// What the baseline's `energy_j` covers: `cpu` (RAPL packages and DRAM), `node` or `gpu`
    /// (written by `fit` from the rows' `energy_scope`; absent in older files and in profiles
    /// with a sweep record, whose energy domains say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_scope: Option<String>,
    /// The fit that wrote this profile together with a machine file (`fit --machine-out`):
    /// the same id is that machine file's `[sources] fit_id`, so that `plan` refuses a pair
    /// from two different fits. Absent in older files and in profiles fitted alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_id: Option<String>,
}

/// The profile's `layout` key: how the measured runs laid ranks and threads on a node,
/// exactly one of the two set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutFile {
    /// A fixed number of MPI ranks on each node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_per_node: Option<u32>,
    /// A fixed number of OpenMP threads per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_per_rank: Option<u32>,
}

impl LayoutFile {
    /// What is wrong with the key (both or neither set, a zero), if anything.
    pub fn check(self) -> Result<(), &'static str> {
        match (self.ranks_per_node, self.threads_per_rank) {
            (Some(r), None) if r > 0 => Ok(()),
            (None, Some(t)) if t > 0 => Ok(()),
            (Some(_), Some(_)) => Err("one of ranks_per_node or threads_per_rank, not both"),
            (None, None) => Err("ranks_per_node or threads_per_rank"),
            _ => Err("a whole number of at least 1"),
        }
    }
}

/// What a fit id is, in words.
pub const FIT_ID: &str = "a fit id: 16 to 64 hexadecimal digits, as `fit --machine-out` writes";

/// Whether `id` is a fit id ([`FIT_ID`]).
pub fn is_fit_id(id: &str) -> bool {
    (16..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The names a profile's `energy_scope` may hold.
pub const ENERGY_SCOPES: [&str; 3] = ["node", "cpu", "gpu"];

/// Iteration counts of the baseline and the target run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Iterations {
    /// `S_s`: iterations of each baseline run.
    pub baseline: f64,
    /// `S`: iterations of the target run.
    pub target: f64,
}

/// The communication section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommunicationFile {
    /// `eta`: messages per process and iteration.
    pub messages_per_iteration: f64,
    /// `nu`: bytes per message.
    pub bytes_per_message: f64,
    /// [`Growth::name`]; `constant` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<String>,
    /// Neighbours `k` of [`Growth::Neighbours`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<u32>,
}

/// One baseline point `(c, f, g)` (MODEL.md section 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointFile {
    /// Cores `c`.
    pub cores: u32,
    /// Frequency `f`, Hz.
    pub freq_hz: f64,
    /// GPUs `g`.
    #[serde(default)]
    pub gpus: u32,
    /// `C_s`: cycles over all cores.
    pub cycles: f64,
    /// `st_s`: stall cycles.
    pub stall_cycles: f64,
    /// `m_s`: memory stall cycles.
    pub mem_stall_cycles: f64,
    /// Instructions, when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<f64>,
    /// `U`: busy fraction of the cores.
    pub utilisation: f64,
    /// Measured wall time, s.
    pub wall_time_s: f64,
    /// Measured energy, J.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Whether the point was measured (else derived).
    #[serde(default = "yes")]
    pub measured: bool,
    /// The efficiency tree a tool measured at this point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_tree: Option<TreeFile>,
    /// The device times of a point with GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceFile>,
}

fn yes() -> bool {
    true
}

/// A measured efficiency tree: its source and its values by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeFile {
    /// The tool and file it came from.
    pub source: String,
    /// Efficiencies by the tool's names.
    #[serde(default)]
    pub efficiencies: BTreeMap<String, f64>,
}

/// A point's device times, one entry per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    /// Kernel time per GPU, s.
    pub kernel_s: Vec<f64>,
    /// Transfer time per GPU, s.
    pub transfer_s: Vec<f64>,
    /// Host time blocked in the GPU runtime, s (0: estimated from the core-count series).
    pub host_runtime_s: f64,
    /// Where the times came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The sweep section: every run as measured, and each point's spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// The record `--resume` continues.
    pub record: SweepRecord,
    /// Run-to-run spread of each baseline point's wall time.
    #[serde(default)]
    pub spread: Vec<SpreadFile>,
}

/// The run-to-run spread of one point's wall time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpreadFile {
    /// Cores.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// GPUs.
    pub gpus: u32,
    /// Successful runs.
    pub runs: usize,
    /// Shortest wall time, s.
    pub wall_s_min: f64,
    /// Longest wall time, s.
    pub wall_s_max: f64,
    /// Relative sample standard deviation of the wall time.
    pub wall_rel_std: f64,
}

/// The machine a profile was measured on, for profiles without a sweep record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredOnFile {
    /// Host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// CPU model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Physical cores available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_cores: Option<u32>,
    /// The run-to-run spread of each configuration measured more than once (written by
    /// `fit`, which averages such runs into one point).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatSpreadFile>,
}

/// The run-to-run spread of one configuration's repeated runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpreadFile {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// CPU frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// The GPU core clock, MHz, where the runs set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clock_mhz: Option<f64>,
    /// Runs averaged.
    pub runs: u64,
    /// Relative sample standard deviation of their wall time.
    pub wall_rel_std: f64,
}

impl RepeatSpreadFile {
    /// Checks ranges, naming the key path under `at` (`measured_on.repeats[i]`): the bounds of
    /// a baseline point's and of a machine's GPU clock.
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        let k = |key: &str| format!("{at}.{key}");
        c.whole(&k("nodes"), self.nodes.into(), limits::NODES)?;
        c.whole(&k("cores"), self.cores.into(), limits::CORES)?;
        c.whole(&k("gpus"), self.gpus.into(), limits::GPUS)?;
        c.num(&k("freq_hz"), self.freq_hz, FREQ_HZ)?;
        let clock = super::machine::GPU_CLOCK_MHZ;
        c.opt(&k("gpu_clock_mhz"), self.gpu_clock_mhz, clock)?;
        c.whole(&k("runs"), self.runs, limits::Whole(2, limits::MANY.1))?;
        c.num(
            &k("wall_rel_std"),
            self.wall_rel_std,
            Bound::Within(0.0, 1e3),
        )
    }
}

/// The provenance key under which `profile --nodes auto` records the node count each of its
/// steps measured, in order (the node-law chart numbers them).
pub const CAMPAIGN_KEY: &str = "campaign";

/// The provenance value of a campaign whose steps measured the node counts `order`, first to
/// last (a count measured again appears again; files written before steps were recorded name
/// each count once, in the order first measured).
pub fn campaign_note(order: &[u32]) -> String {
    let list: Vec<String> = order.iter().map(u32::to_string).collect();
    format!(
        "profile --nodes auto measured these node counts, a step each, in this order: {}",
        list.join(", ")
    )
}

/// The node counts a campaign's provenance value ([`campaign_note`]) names, in order; empty
/// where it names none.
pub fn campaign_order(note: &str) -> Vec<u32> {
    note.rsplit_once(": ")
        .map(|(_, list)| {
            list.split(", ")
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl ProfileFile {
    /// Reads and validates a profile from its JSON text; `path` names it in messages.
    pub fn read(path: &Path, text: &str) -> InputResult<Self> {
        let file = Self::parse(path, text)?;
        file.validate(path)?;
        Ok(file)
    }

    /// Reads a profile's keys and types without the [`Self::validate`] pass (for a sweep
    /// that `--resume` continues, whose baseline may still be empty).
    pub fn parse(path: &Path, text: &str) -> InputResult<Self> {
        let doc = input::parse_json(path, text)?;
        check_format(path, &doc)?;
        input::typed(path, doc, expects)
    }

    /// The file's text: keys sorted, two-space indents.
    pub fn to_text(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&serde_json::to_value(self)?)
    }

    /// The GPU clock law's kernel time against the points ([`super::gpu_clock::GpuClockLaw::validate_kernel`]),
    /// and `measured_gpu_clock_mhz`: whole MHz, and only on a profile without a clock law
    /// (which names its measured clocks itself: both at once left it unsaid which one held).
    fn validate_clocks(&self, c: &Check) -> InputResult<()> {
        if let Some(law) = &self.gpu_clock {
            let kernels = self.baseline.iter().filter_map(|p| p.device.as_ref());
            law.validate_kernel(c, kernels.map(|d| d.kernel_s.as_slice()))?;
        }
        let Some(mhz) = self.measured_gpu_clock_mhz else {
            return Ok(());
        };
        super::machine::whole_gpu_clock(c, "measured_gpu_clock_mhz", mhz)?;
        match &self.gpu_clock {
            Some(law) => Err(c.fail(
                "measured_gpu_clock_mhz",
                format!(
                    "no such key beside a gpu_clock block (its measured_mhz, {:?}, are the \
                     clocks measured): remove one of them",
                    law.measured_mhz
                ),
                format!("{mhz}"),
            )),
            None => Ok(()),
        }
    }

    /// Checks every value's range and how the values fit together (today's limits).
    pub fn validate(&self, path: &Path) -> InputResult<()> {
        let c = Check::new(path);
        c.num(
            "iterations.baseline",
            self.iterations.baseline,
            limits::ITERATIONS,
        )?;
        c.num(
            "iterations.target",
            self.iterations.target,
            limits::ITERATIONS,
        )?;
        c.opt(
            "memory_footprint_gib",
            self.memory_footprint_gib,
            limits::MEMORY_GIB,
        )?;
        if let Some(comm) = &self.communication {
            comm.validate(&c)?;
        }
        if self.baseline.is_empty() {
            return Err(self.no_baseline(path, &c));
        }
        let mut seen = BTreeSet::new();
        for (i, p) in self.baseline.iter().enumerate() {
            let at = format!("baseline[{i}]");
            p.validate(&c, &at)?;
            if !seen.insert((p.cores, freq_key(Hertz(p.freq_hz)), p.gpus)) {
                return Err(c.fail(
                    &format!("{at}.cores"),
                    "each (cores, freq_hz, gpus) point once",
                    format!(
                        "a second point ({}, {} GHz, {})",
                        p.cores,
                        Hertz(p.freq_hz).ghz(),
                        p.gpus
                    ),
                ));
            }
        }
        if let Some(cores) = self.measured_on.as_ref().and_then(|m| m.physical_cores) {
            c.whole("measured_on.physical_cores", cores.into(), limits::MANY)?;
        }
        let repeats = self.measured_on.iter().flat_map(|m| &m.repeats);
        for (i, r) in repeats.enumerate() {
            r.validate(&c, &format!("measured_on.repeats[{i}]"))?;
        }
        if let Some(scope) = self.energy_scope.as_deref()
            && !ENERGY_SCOPES.contains(&scope)
        {
            return Err(c.fail(
                "energy_scope",
                "one of \"node\", \"cpu\", \"gpu\"",
                format!("{scope:?}"),
            ));
        }
        if let Some(law) = &self.node_law {
            law.validate(&c, "node_law")?;
        }
        if let Some(law) = &self.gpu_clock {
            law.validate(&c)?;
        }
        self.validate_clocks(&c)?;
        if let Some(id) = self.fit_id.as_deref()
            && !is_fit_id(id)
        {
            return Err(c.fail("fit_id", FIT_ID, format!("{id:?}")));
        }
        if let Some(l) = self.layout {
            let got = serde_json::to_string(&l).unwrap_or_default();
            l.check().map_err(|e| c.fail("layout", e, got))?;
        }
        if let Some(s) = &self.sweep {
            s.record
                .validate()
                .map_err(|e| InputError::Mismatch(format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }

    fn no_baseline(&self, path: &Path, c: &Check) -> InputError {
        if self.sweep.is_some() {
            return InputError::Mismatch(format!(
                "{}: no run of the sweep succeeded, so the profile has no baseline point; each \
                 failed run's reason and stderr are in sweep.record.runs (fix the command and \
                 run `jouleplan profile ... --resume`)",
                path.display()
            ));
        }
        c.fail("baseline", "a non-empty list of tables", "an empty list")
    }
}

/// A profile names its format first: any other JSON file (a TALP output, a plan) is refused
/// for that, before its keys are read.
fn check_format(path: &Path, doc: &serde_json::Value) -> InputResult<()> {
    let c = Check::new(path);
    let Some(obj) = doc.as_object() else {
        return Err(c.fail("(top level)", "a table of keys", "something else"));
    };
    match obj.get("format") {
        Some(serde_json::Value::String(f)) if f == PROFILE_FORMAT => Ok(()),
        Some(serde_json::Value::String(f)) => {
            Err(c.fail("format", format!("\"{PROFILE_FORMAT}\""), format!("{f:?}")))
        }
        Some(other) => Err(c.fail("format", "a string", other.to_string())),
        None => Err(c.missing("format", "a string")),
    }
}

/// What a missing key of a profile should hold.
fn expects(key: &str) -> Option<String> {
    let b = |b: Bound| Some(b.describe());
    match key {
        "program" | "baseline[].measured_tree.source" => Some("a string".into()),
        "iterations" => Some("a table".into()),
        "iterations.baseline" | "iterations.target" => b(limits::ITERATIONS),
        "baseline" => Some("a non-empty list of tables".into()),
        "communication.messages_per_iteration" => b(limits::MESSAGES),
        "communication.bytes_per_message" => b(limits::BYTES),
        "baseline[].cores" => Some(limits::CORES.describe()),
        "baseline[].gpus" => Some(limits::GPUS.describe()),
        "baseline[].measured" => Some("true or false".into()),
        "baseline[].instructions" => b(limits::CYCLES),
        "baseline[].energy_j" => Some(Reading::RunEnergy.expected(1.0, "J")),
        "baseline[].measured_tree.efficiencies" => Some("a table of numbers".into()),
        "memory_footprint_gib" => b(limits::MEMORY_GIB),
        "communication.neighbours" => Some(limits::MANY.describe()),
        "description" | "format" | "communication.growth" => Some("a string".into()),
        "energy_scope" => Some("one of \"node\", \"cpu\", \"gpu\"".into()),
        "fit_id" => Some(FIT_ID.into()),
        "assumptions" => Some("a list of strings".into()),
        "provenance" => Some("a table of strings".into()),
        "baseline[].freq_hz" => b(FREQ_HZ),
        "baseline[].cycles" | "baseline[].stall_cycles" | "baseline[].mem_stall_cycles" => {
            b(limits::CYCLES)
        }
        "baseline[].utilisation" => b(UTILISATION),
        "baseline[].wall_time_s" => Some(Reading::RunTime.expected(1.0, "s")),
        "baseline[].device.host_runtime_s" => Some(Reading::PartTime.expected(1.0, "s")),
        "baseline[].device.kernel_s" | "baseline[].device.transfer_s" => Some(format!(
            "a non-empty list of numbers, each {}",
            Reading::PartTime.expected(1.0, "s")
        )),
        _ => None,
    }
}

/// A baseline point's frequency, Hz.
const FREQ_HZ: Bound = Bound::Within(1e7, 2e10);
/// A busy fraction.
const UTILISATION: Bound = Bound::Within(f64::MIN_POSITIVE, 1.0);
/// A measured efficiency, with room for a tool's rounding.
const EFFICIENCY: Bound = Bound::Within(-1.0, 2.0);

impl CommunicationFile {
    /// The growth law; [`Growth::Constant`] when absent (call after [`Self::validate`]).
    pub fn growth(&self) -> Growth {
        match (self.growth.as_deref(), self.neighbours) {
            (Some("log2"), _) => Growth::Log2,
            (Some("all_to_all"), _) => Growth::AllToAll,
            (Some("neighbours"), Some(k)) => Growth::Neighbours(k),
            _ => Growth::Constant,
        }
    }

    fn validate(&self, c: &Check) -> InputResult<()> {
        c.num(
            "communication.messages_per_iteration",
            self.messages_per_iteration,
            limits::MESSAGES,
        )?;
        c.num(
            "communication.bytes_per_message",
            self.bytes_per_message,
            limits::BYTES,
        )?;
        match (self.growth.as_deref(), self.neighbours) {
            (Some("neighbours"), Some(k)) => {
                c.whole("communication.neighbours", k.into(), limits::MANY)
            }
            (Some("neighbours"), None) => {
                Err(c.missing("communication.neighbours", limits::MANY.describe()))
            }
            (_, Some(_)) => Err(c.fail(
                "communication.neighbours",
                "no neighbours unless growth is \"neighbours\"",
                "a neighbour count",
            )),
            (None | Some("constant" | "log2" | "all_to_all"), None) => Ok(()),
            (Some(other), None) => Err(c.fail(
                "communication.growth",
                "one of \"constant\", \"neighbours\", \"log2\", \"all_to_all\"",
                format!("{other:?}"),
            )),
        }
    }
}

impl PointFile {
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        let k = |key: &str| format!("{at}.{key}");
        c.whole(&k("cores"), self.cores.into(), limits::CORES)?;
        c.num(&k("freq_hz"), self.freq_hz, FREQ_HZ)?;
        c.whole(&k("gpus"), self.gpus.into(), limits::GPUS)?;
        self.validate_cycles(c, at)?;
        c.opt(&k("instructions"), self.instructions, limits::CYCLES)?;
        c.num(&k("utilisation"), self.utilisation, UTILISATION)?;
        c.reading(&k("wall_time_s"), self.wall_time_s, Reading::RunTime)?;
        if let Some(e) = self.energy_j {
            c.reading(&k("energy_j"), e, Reading::RunEnergy)?;
        }
        if let Some(t) = &self.measured_tree {
            for (name, &v) in &t.efficiencies {
                let key = k(&format!("measured_tree.efficiencies.{name}"));
                if !EFFICIENCY.check(v) {
                    return Err(c.fail(
                        &key,
                        "an efficiency (a number from -1 to 2)",
                        input::number(v),
                    ));
                }
            }
        }
        match &self.device {
            Some(d) => d.validate(c, &k("device"), self.gpus),
            None if self.gpus > 0 => Err(c.fail(
                &k("device"),
                "a device table for a point with gpus > 0",
                "nothing",
            )),
            None => Ok(()),
        }
    }

    /// `0 < cycles`, `mem_stall_cycles <= stall_cycles <= cycles`, `mem_stall_cycles < cycles`.
    fn validate_cycles(&self, c: &Check, at: &str) -> InputResult<()> {
        let k = |key: &str| format!("{at}.{key}");
        let (cy, st, mem) = (self.cycles, self.stall_cycles, self.mem_stall_cycles);
        c.num(&k("cycles"), cy, limits::CYCLES)?;
        if cy <= 0.0 {
            return Err(c.fail(&k("cycles"), "a positive count", "0"));
        }
        c.num(&k("stall_cycles"), st, limits::CYCLES)?;
        c.num(&k("mem_stall_cycles"), mem, limits::CYCLES)?;
        if st > cy {
            return Err(c.fail(
                &k("stall_cycles"),
                format!("at most cycles ({cy})"),
                format!("{st}"),
            ));
        }
        if mem > st {
            let expected = format!("at most stall_cycles ({st})");
            return Err(c.fail(&k("mem_stall_cycles"), expected, format!("{mem}")));
        }
        if mem >= cy {
            return Err(c.fail(
                &k("mem_stall_cycles"),
                format!("fewer than cycles ({cy}): some cycles must be work or non-memory stalls"),
                format!("{mem}"),
            ));
        }
        Ok(())
    }
}

impl DeviceFile {
    fn validate(&self, c: &Check, at: &str, gpus: u32) -> InputResult<()> {
        for (name, list) in [
            ("kernel_s", &self.kernel_s),
            ("transfer_s", &self.transfer_s),
        ] {
            if list.is_empty() {
                let expected = format!(
                    "a non-empty list of numbers, each {}",
                    Reading::PartTime.expected(1.0, "s")
                );
                return Err(c.fail(&format!("{at}.{name}"), expected, "an empty list"));
            }
            for (i, &v) in list.iter().enumerate() {
                c.reading(&format!("{at}.{name}[{i}]"), v, Reading::PartTime)?;
            }
        }
        if self.kernel_s.len() != gpus as usize || self.transfer_s.len() != gpus as usize {
            return Err(c.fail(
                &format!("{at}.kernel_s"),
                format!("kernel_s and transfer_s with one entry per GPU ({gpus})"),
                format!(
                    "{} and {} entries",
                    self.kernel_s.len(),
                    self.transfer_s.len()
                ),
            ));
        }
        c.reading(
            &format!("{at}.host_runtime_s"),
            self.host_runtime_s,
            Reading::PartTime,
        )
    }
}
