//! The machine file (TOML, `models/*.toml`): node, core, frequency and GPU limits, the network
//! and the power per component (MODEL.md section 2). `calibrate` and `fit` rewrite its sections
//! in place with `toml_edit`, keeping the user's comments; this type reads it.

use crate::error::InputResult;
use crate::input::{self, Check};
use crate::limits;
use crate::limits::Bound;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Format tag a machine file may carry at its top (`format = "jouleplan-machine/1"`).
pub const MACHINE_FORMAT: &str = "jouleplan-machine/1";

/// A machine file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineFile {
    /// [`MACHINE_FORMAT`]; files without it are read as that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `[machine]`: the node and its limits.
    pub machine: NodeSection,
    /// `[network]`: from an MPI ping-pong (`calibrate network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSection>,
    /// `[power]`: from RAPL or Slurm energy (`calibrate power`, `fit --machine-out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSection>,
    /// `[sources]`: where each number comes from.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}

/// The `[machine]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSection {
    /// Short name.
    pub name: String,
    /// What this is and where its numbers come from.
    #[serde(default)]
    pub description: String,
    /// `n_max`.
    pub nodes: u32,
    /// `c_max`.
    pub cores_per_node: u32,
    /// The frequency set, GHz, ascending.
    pub frequencies_ghz: Vec<f64>,
    /// `g_max`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gpus_per_node: u32,
    /// Memory per node, GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_per_node_gib: Option<f64>,
    /// CPU model name (checked against a profile's recorded CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// GPU model name (checked against a profile's recorded GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// The GPU's supported application (graphics) clocks, MHz, in any order (the model sorts
    /// them): the GPU clock axis (MODEL.md section 6e). Absent: no clock axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clocks_mhz: Option<Vec<f64>>,
    /// The memory clock, MHz, that `gpu_clocks_mhz` belongs to (NVML lists graphics clocks per
    /// memory clock); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_clock_mhz: Option<f64>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The `[network]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// Latency `L`, s.
    pub latency_s: f64,
    /// Point-to-point throughput `B`, bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// Switch capacity `B_sw`, bytes/s (`B` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_bandwidth_bytes_per_s: Option<f64>,
    /// Squared coefficient of variation of the switch's service time (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv2: Option<f64>,
}

impl NetworkSection {
    /// The network of a file without `[network]` as `fit` reads it for one-node runs: no
    /// latency, the widest bandwidth the reader allows. No prediction beyond one node is made
    /// from it (`fit` refuses runs over several nodes against such a file).
    pub fn unused() -> Self {
        NetworkSection {
            latency_s: 0.0,
            bandwidth_bytes_per_s: 1e14,
            switch_bandwidth_bytes_per_s: None,
            cv2: None,
        }
    }
}

/// The `[power]` section, W.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSection {
    /// `P_act(f)` per active core.
    pub core_active_w: PerFrequency,
    /// `P_stall(f)` per stalled core.
    pub core_stall_w: PerFrequency,
    /// `P_mem` per node.
    pub memory_w: f64,
    /// `P_net` per node.
    pub network_w: f64,
    /// `P_idle` per node.
    pub idle_w: PerFrequency,
    /// `P_gpu_act` per GPU (required with GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_active_w: Option<f64>,
    /// `P_gpu_idle` per GPU (required with GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_idle_w: Option<f64>,
    /// `P_gpu_off` per GPU without a CUDA context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_nocontext_w: Option<f64>,
    /// The exponent `alpha` of every GPU clock law `fit` makes against this machine
    /// (`P_act(fg) = P0 + k (fg / 1 GHz)^alpha`, MODEL.md 6e); `None`: fitted per workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clock_exponent: Option<f64>,
    /// The power fit's residual against the node power it came from, relative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_residual_rel: Option<f64>,
    /// The root-mean-square residual of a fit over many runs (node power over several node
    /// counts): what says whether the fit describes the machine, while `fit_residual_rel`
    /// bounds how finely any one run is reproduced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_residual_rms: Option<f64>,
}

impl PowerSection {
    /// Every power 0, GPUs' included: what `fit` reads a machine without `[power]` with
    /// (time does not depend on power).
    /// One watt of idle power per node and nothing else: the model's energy is then the
    /// node-seconds of a run, which a plan ranks by when no power was measured.
    pub fn unit_node() -> Self {
        PowerSection {
            idle_w: PerFrequency::One(1.0),
            ..PowerSection::zero()
        }
    }

    /// Every power 0.
    pub fn zero() -> Self {
        PowerSection {
            core_active_w: PerFrequency::One(0.0),
            core_stall_w: PerFrequency::One(0.0),
            memory_w: 0.0,
            network_w: 0.0,
            idle_w: PerFrequency::One(0.0),
            gpu_active_w: Some(0.0),
            gpu_idle_w: Some(0.0),
            gpu_nocontext_w: None,
            gpu_clock_exponent: None,
            fit_residual_rel: None,
            fit_residual_rms: None,
        }
    }
}

/// A power that is one value at every frequency, or one per frequency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PerFrequency {
    /// The same at every frequency.
    One(f64),
    /// One per frequency of the machine's set, in its order.
    List(Vec<f64>),
}

impl PerFrequency {
    /// The values at the `n` frequencies (call after validation).
    pub fn values(&self, n: usize) -> Vec<f64> {
        match self {
            PerFrequency::One(v) => vec![*v; n],
            PerFrequency::List(l) => l.clone(),
        }
    }

    fn validate(&self, c: &Check, key: &str, n: usize) -> InputResult<()> {
        match self {
            PerFrequency::One(v) => c.num(key, *v, limits::POWER_W),
            PerFrequency::List(l) => {
                if l.len() != n {
                    return Err(c.fail(
                        key,
                        format!("one number, or a list of {n} (one per frequency)"),
                        format!("a list of {}", l.len()),
                    ));
                }
                for (i, &v) in l.iter().enumerate() {
                    c.num(&format!("{key}[{i}]"), v, limits::POWER_W)?;
                }
                Ok(())
            }
        }
    }
}

/// What a missing `[network]` section should hold and where it comes from.
pub const NETWORK_HINT: &str = "a [network] section: latency_s and bandwidth_bytes_per_s from \
     an MPI ping-pong between two nodes: `jouleplan calibrate network` (built with --features \
     mpi, run under mpirun -n 2 on two nodes) writes it; NetPIPE or OSU's osu_latency and \
     osu_bw give the same figures";
/// What a missing `[power]` section should hold and where it comes from.
pub const POWER_HINT: &str = "a [power] section: idle_w, core_active_w, core_stall_w, memory_w, \
     network_w (and gpu_active_w, gpu_idle_w with GPUs) from RAPL or Slurm energy measured at \
     several core counts: `jouleplan calibrate power` measures and writes it on a node with \
     RAPL, `jouleplan fit --machine-out` fits it from measured runs; or the vendor's figures \
     labelled as such in [sources]";

/// A frequency of the set, GHz.
const FREQ_GHZ: Bound = Bound::Within(0.01, 20.0);
/// A GPU clock (core or memory), MHz.
pub const GPU_CLOCK_MHZ: Bound = Bound::Within(50.0, 5000.0);
/// The most GPU clocks a machine file lists.
pub const GPU_CLOCKS_MAX: usize = 512;
/// `[power] gpu_clock_exponent`: the grid `fit` chooses from spans 1 to 8 (MODEL.md 6e).
pub const GPU_CLOCK_EXPONENT: Bound = Bound::Within(1.0, 8.0);

impl MachineFile {
    /// Reads and validates a machine from its TOML text; `path` names it in messages.
    pub fn read(path: &Path, text: &str) -> InputResult<Self> {
        let file = Self::parse(path, text)?;
        file.validate(path)?;
        Ok(file)
    }

    /// Reads a machine file's keys and types without the [`Self::validate`] pass (for a file
    /// that `fit` is about to give a `[power]` section).
    pub fn parse(path: &Path, text: &str) -> InputResult<Self> {
        let doc = input::parse_toml(path, text)?;
        input::typed(path, doc, expects)
    }

    /// Checks every value's range and how the values fit together.
    pub fn validate(&self, path: &Path) -> InputResult<()> {
        let c = Check::new(path);
        if let Some(f) = self.format.as_deref().filter(|f| *f != MACHINE_FORMAT) {
            return Err(c.fail("format", format!("\"{MACHINE_FORMAT}\""), format!("{f:?}")));
        }
        let nf = self.machine.validate(&c)?;
        let (net, p) = self.sections(path)?;
        c.num("network.latency_s", net.latency_s, limits::LATENCY_S)?;
        c.num(
            "network.bandwidth_bytes_per_s",
            net.bandwidth_bytes_per_s,
            limits::BANDWIDTH,
        )?;
        let switch = net.switch_bandwidth_bytes_per_s;
        c.opt(
            "network.switch_bandwidth_bytes_per_s",
            switch,
            limits::BANDWIDTH,
        )?;
        c.opt("network.cv2", net.cv2, limits::CV2)?;
        p.validate(&c, nf, self.machine.gpus_per_node > 0)
    }

    /// The `[network]` and `[power]` sections, which the model needs; a file without one is
    /// refused with where its numbers come from.
    pub fn sections(&self, path: &Path) -> InputResult<(&NetworkSection, &PowerSection)> {
        let c = Check::new(path);
        let Some(net) = &self.network else {
            return Err(c.fail("network", NETWORK_HINT, "no [network] section"));
        };
        let Some(p) = &self.power else {
            return Err(c.fail("power", POWER_HINT, "no [power] section"));
        };
        Ok((net, p))
    }
}

impl NodeSection {
    /// Checks the limits and the frequency set; returns the number of frequencies.
    fn validate(&self, c: &Check) -> InputResult<usize> {
        c.whole("machine.nodes", self.nodes.into(), limits::NODES)?;
        c.whole(
            "machine.cores_per_node",
            self.cores_per_node.into(),
            limits::CORES,
        )?;
        c.whole(
            "machine.gpus_per_node",
            self.gpus_per_node.into(),
            limits::GPUS,
        )?;
        c.opt(
            "machine.memory_per_node_gib",
            self.memory_per_node_gib,
            limits::MEMORY_GIB,
        )?;
        let ghz = &self.frequencies_ghz;
        if ghz.is_empty() {
            let expected = format!("a non-empty list of numbers, each {}", FREQ_GHZ.describe());
            return Err(c.fail("machine.frequencies_ghz", expected, "an empty list"));
        }
        for (i, &f) in ghz.iter().enumerate() {
            let key = format!("machine.frequencies_ghz[{i}]");
            if (100.0..=20_000.0).contains(&f) {
                let expected = format!(
                    "{} (GHz: {f} looks like MHz, which is {} GHz)",
                    FREQ_GHZ.describe(),
                    f / 1e3
                );
                return Err(c.fail(&key, expected, f.to_string()));
            }
            c.num(&key, f, FREQ_GHZ)?;
        }
        if ghz.windows(2).any(|w| w[0] >= w[1]) {
            return Err(c.fail(
                "machine.frequencies_ghz",
                "distinct frequencies in GHz in ascending order",
                format!("{ghz:?}"),
            ));
        }
        self.validate_gpu_clocks(c)?;
        Ok(ghz.len())
    }

    /// Checks `gpu_clocks_mhz` (whole MHz, distinct, in any order, 1 to [`GPU_CLOCKS_MAX`], on a
    /// machine with GPUs) and `gpu_memory_clock_mhz`.
    fn validate_gpu_clocks(&self, c: &Check) -> InputResult<()> {
        const KEY: &str = "machine.gpu_clocks_mhz";
        c.opt(
            "machine.gpu_memory_clock_mhz",
            self.gpu_memory_clock_mhz,
            GPU_CLOCK_MHZ,
        )?;
        // Whole, as the GPU lists it: `--gpu-freq=...,memory=3505.5` is no clock Slurm sets,
        // and `profile --gpu-clocks` would round it to one the GPU does not list.
        if let Some(m) = self.gpu_memory_clock_mhz.filter(|m| m.fract() != 0.0) {
            return Err(c.fail(
                "machine.gpu_memory_clock_mhz",
                "a whole number of MHz",
                m.to_string(),
            ));
        }
        let Some(mhz) = &self.gpu_clocks_mhz else {
            return Ok(());
        };
        if self.gpus_per_node == 0 {
            return Err(c.fail(
                KEY,
                "no list on a machine without GPUs (gpus_per_node = 0): set gpus_per_node",
                format!("{} clocks", mhz.len()),
            ));
        }
        if mhz.is_empty() || mhz.len() > GPU_CLOCKS_MAX {
            return Err(c.fail(
                KEY,
                gpu_clocks_expected(),
                format!("a list of {}", mhz.len()),
            ));
        }
        for (i, &f) in mhz.iter().enumerate() {
            let key = format!("{KEY}[{i}]");
            if (0.05..=5.0).contains(&f) {
                let expected = format!("{} (MHz: {f} looks like GHz)", GPU_CLOCK_MHZ.describe());
                return Err(c.fail(&key, expected, f.to_string()));
            }
            c.num(&key, f, GPU_CLOCK_MHZ)?;
            if f.fract() != 0.0 {
                return Err(c.fail(&key, "a whole number of MHz", f.to_string()));
            }
        }
        // Any order (nvidia-smi lists them from the top down); the model sorts them.
        if let Some((i, j)) =
            (1..mhz.len()).find_map(|j| mhz[..j].iter().position(|&m| m == mhz[j]).map(|i| (i, j)))
        {
            return Err(c.fail(
                &format!("{KEY}[{j}]"),
                "distinct clocks in MHz, in any order",
                format!("{} again (a duplicate of [{i}])", mhz[j]),
            ));
        }
        Ok(())
    }
}

/// Checks `v` (at `key`) a GPU clock in whole MHz, as a GPU lists its clocks and Slurm's
/// `--gpu-freq` takes them (`--gpu-freq=1500.5` is no clock it sets).
pub fn whole_gpu_clock(c: &Check, key: &str, v: f64) -> InputResult<()> {
    c.num(key, v, GPU_CLOCK_MHZ)?;
    if v.fract() != 0.0 {
        return Err(c.fail(key, "a whole number of MHz", v.to_string()));
    }
    Ok(())
}

/// What `gpu_clocks_mhz` should hold.
fn gpu_clocks_expected() -> String {
    format!(
        "a list of 1 to {GPU_CLOCKS_MAX} supported GPU application clocks in whole MHz, \
         distinct, in any order, each {}",
        GPU_CLOCK_MHZ.describe()
    )
}

impl PowerSection {
    fn validate(&self, c: &Check, nf: usize, gpus: bool) -> InputResult<()> {
        self.core_active_w.validate(c, "power.core_active_w", nf)?;
        self.core_stall_w.validate(c, "power.core_stall_w", nf)?;
        c.num("power.memory_w", self.memory_w, limits::POWER_W)?;
        c.num("power.network_w", self.network_w, limits::POWER_W)?;
        self.idle_w.validate(c, "power.idle_w", nf)?;
        for (key, v) in [
            ("power.gpu_active_w", self.gpu_active_w),
            ("power.gpu_idle_w", self.gpu_idle_w),
        ] {
            if gpus && v.is_none() {
                let expected = limits::POWER_W.describe();
                return Err(c.missing(key, expected));
            }
            c.opt(key, v, limits::POWER_W)?;
        }
        c.opt(
            "power.gpu_nocontext_w",
            self.gpu_nocontext_w,
            limits::POWER_W,
        )?;
        self.validate_clock_exponent(c, gpus)?;
        c.opt(
            "power.fit_residual_rel",
            self.fit_residual_rel,
            Bound::Within(0.0, 1.0),
        )?;
        c.opt(
            "power.fit_residual_rms",
            self.fit_residual_rms,
            Bound::Within(0.0, 1.0),
        )
    }
}

impl PowerSection {
    /// Checks `gpu_clock_exponent`: within [`GPU_CLOCK_EXPONENT`], on a machine with GPUs.
    fn validate_clock_exponent(&self, c: &Check, gpus: bool) -> InputResult<()> {
        const KEY: &str = "power.gpu_clock_exponent";
        let Some(alpha) = self.gpu_clock_exponent else {
            return Ok(());
        };
        if !gpus {
            return Err(c.fail(
                KEY,
                "no exponent on a machine without GPUs (gpus_per_node = 0): set gpus_per_node",
                limits::shown(alpha),
            ));
        }
        if !GPU_CLOCK_EXPONENT.check(alpha) {
            return Err(c.fail(KEY, clock_exponent_expected(), limits::shown(alpha)));
        }
        Ok(())
    }
}

/// What `gpu_clock_exponent` should hold.
fn clock_exponent_expected() -> String {
    format!(
        "{}: the exponent alpha of the GPU's power in kernels over its core clock, P0 + k (fg / \
         1 GHz)^alpha (leave it out and `fit` chooses it per workload from 1, 2, 3, 4, 5, 6, 8)",
        GPU_CLOCK_EXPONENT.describe()
    )
}

/// What a missing or mistyped key of a machine file should hold.
fn expects(key: &str) -> Option<String> {
    let power = limits::POWER_W.describe();
    let per = format!("one number, or a list of one per frequency, each {power}");
    Some(match key {
        "machine" | "network" | "power" | "sources" => "a table".into(),
        "format" => format!("\"{MACHINE_FORMAT}\""),
        "machine.name" | "machine.description" | "machine.cpu_model" | "machine.gpu_model" => {
            "a string".into()
        }
        "machine.nodes" => limits::NODES.describe(),
        "machine.cores_per_node" => limits::CORES.describe(),
        "machine.gpus_per_node" => limits::GPUS.describe(),
        "machine.frequencies_ghz" => {
            format!("a non-empty list of numbers, each {}", FREQ_GHZ.describe())
        }
        "machine.frequencies_ghz[]" => FREQ_GHZ.describe(),
        "machine.memory_per_node_gib" => limits::MEMORY_GIB.describe(),
        "machine.gpu_clocks_mhz" => gpu_clocks_expected(),
        "machine.gpu_clocks_mhz[]" | "machine.gpu_memory_clock_mhz" => GPU_CLOCK_MHZ.describe(),
        "network.latency_s" => limits::LATENCY_S.describe(),
        "network.bandwidth_bytes_per_s" | "network.switch_bandwidth_bytes_per_s" => {
            limits::BANDWIDTH.describe()
        }
        "network.cv2" => limits::CV2.describe(),
        "power.core_active_w" | "power.core_stall_w" | "power.idle_w" => per,
        "power.fit_residual_rel" | "power.fit_residual_rms" => Bound::Within(0.0, 1.0).describe(),
        "power.gpu_clock_exponent" => clock_exponent_expected(),
        "sources[]" => "a string".into(),
        k if k.starts_with("power.") => power,
        _ => return None,
    })
}
