//! The machine: node, core, frequency and GPU limits, the network, and power per component
//! (MODEL.md section 2). Read from TOML files in `models/`.

use crate::error::InputResult;
use crate::input::{self, Bound, Fields};
use crate::limits;
use crate::units::{Hertz, Seconds, Watts};
use std::path::{Path, PathBuf};

/// Network parameters fitted from a ping-pong sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// Latency `L`.
    pub latency: Seconds,
    /// Point-to-point throughput `B`, bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Switch capacity `B_sw`, bytes per second (defaults to `B`).
    pub switch_bytes_per_s: f64,
    /// Squared coefficient of variation of the switch's service time (1 = the paper's eq. 5).
    pub cv2: f64,
}

/// Power parameters, per active core (at each frequency of the machine's set) and per node.
#[derive(Debug, Clone, PartialEq)]
pub struct Power {
    /// `P_act(f)` per active core, aligned with [`Machine::frequencies`].
    pub core_active: Vec<Watts>,
    /// `P_stall(f)` per stalled core, aligned with [`Machine::frequencies`].
    pub core_stall: Vec<Watts>,
    /// `P_mem` per node.
    pub memory: Watts,
    /// `P_net` per node.
    pub network: Watts,
    /// `P_idle` per node, aligned with [`Machine::frequencies`] (one value repeated when it does
    /// not depend on the frequency).
    pub idle: Vec<Watts>,
    /// `P_gpu_act` per GPU.
    pub gpu_active: Watts,
    /// `P_gpu_idle` per GPU: a CUDA context alive, no kernel running.
    pub gpu_idle: Watts,
    /// `P_gpu_off` per GPU: no CUDA context (a GPU of the node that the job does not use);
    /// `None` when the machine file does not give it (unused GPUs are then not counted).
    pub gpu_nocontext: Option<Watts>,
    /// The largest relative residual of the power fit against the node power it came from,
    /// when the file states it: energy cannot be reproduced more finely (MODEL.md 6b).
    pub fit_residual_rel: Option<f64>,
}

/// A homogeneous cluster as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Short name.
    pub name: String,
    /// One line on what this is and where its numbers come from.
    pub description: String,
    /// `n_max`.
    pub max_nodes: u32,
    /// `c_max`.
    pub cores_per_node: u32,
    /// The frequency set `F`, ascending.
    pub frequencies: Vec<Hertz>,
    /// `g_max`.
    pub gpus_per_node: u32,
    /// Memory per node in GiB, when known (for fit filters).
    pub memory_per_node_gib: Option<f64>,
    /// CPU model name, when the file gives it (checked against a profile's recorded CPU).
    pub cpu_model: Option<String>,
    /// GPU model name, when the file gives it (checked against a profile's recorded GPUs).
    pub gpu_model: Option<String>,
    /// The network.
    pub network: Network,
    /// Power parameters.
    pub power: Power,
    /// Provenance of the numbers: key -> how it was measured or which public source.
    pub sources: Vec<(String, String)>,
    /// The file it was read from.
    pub file: PathBuf,
    /// SHA-256 of the file's text.
    pub digest: String,
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

impl Machine {
    /// Reads and validates a machine TOML file.
    pub fn load(path: &Path) -> InputResult<Self> {
        let text = input::read_file(path)?;
        Self::from_toml(path, &text)
    }

    /// Validates a machine from TOML text; `path` names it in messages.
    pub fn from_toml(path: &Path, text: &str) -> InputResult<Self> {
        let doc = input::parse_toml(path, text)?;
        let mut root = Fields::root(path, &doc)?;

        let mut m = root.table("machine")?;
        let name = m.str("name")?.to_string();
        let description = m.opt_str("description")?.unwrap_or("").to_string();
        let max_nodes = m.u64("nodes", 1, 10_000_000)? as u32;
        let cores_per_node = m.u64("cores_per_node", 1, 100_000)? as u32;
        let ghz = m.f64_list("frequencies_ghz", Bound::Within(0.01, 20.0))?;
        let gpus_per_node = m.opt_u64("gpus_per_node", 0, 1024)?.unwrap_or(0) as u32;
        let memory_per_node_gib = m.opt_f64("memory_per_node_gib", limits::MEMORY_GIB)?;
        let cpu_model = m.opt_str("cpu_model")?.map(str::to_string);
        let gpu_model = m.opt_str("gpu_model")?.map(str::to_string);
        let mut sorted = ghz.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted != ghz || sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(m.error(
                "frequencies_ghz",
                "distinct frequencies in GHz in ascending order",
                format!("{ghz:?}"),
            ));
        }
        let frequencies: Vec<Hertz> = ghz.iter().map(|g| Hertz(g * 1e9)).collect();
        m.finish()?;

        if doc.get("network").is_none() {
            return Err(root.error("network", NETWORK_HINT, "no [network] section"));
        }
        let mut net = root.table("network")?;
        let latency = Seconds(net.f64("latency_s", limits::LATENCY_S)?);
        let bandwidth = net.f64("bandwidth_bytes_per_s", limits::BANDWIDTH)?;
        let switch = net
            .opt_f64("switch_bandwidth_bytes_per_s", limits::BANDWIDTH)?
            .unwrap_or(bandwidth);
        let cv2 = net.opt_f64("cv2", limits::CV2)?.unwrap_or(1.0);
        net.finish()?;

        let nf = frequencies.len();
        if doc.get("power").is_none() {
            return Err(root.error("power", POWER_HINT, "no [power] section"));
        }
        let mut p = root.table("power")?;
        let core_active = p.f64_per("core_active_w", nf, "frequency", limits::POWER_W)?;
        let core_stall = p.f64_per("core_stall_w", nf, "frequency", limits::POWER_W)?;
        let memory = Watts(p.f64("memory_w", limits::POWER_W)?);
        let network = Watts(p.f64("network_w", limits::POWER_W)?);
        let idle = p.f64_per("idle_w", nf, "frequency", limits::POWER_W)?;
        let (gpu_active, gpu_idle) = if gpus_per_node > 0 {
            (
                Watts(p.f64("gpu_active_w", limits::POWER_W)?),
                Watts(p.f64("gpu_idle_w", limits::POWER_W)?),
            )
        } else {
            (
                Watts(p.opt_f64("gpu_active_w", limits::POWER_W)?.unwrap_or(0.0)),
                Watts(p.opt_f64("gpu_idle_w", limits::POWER_W)?.unwrap_or(0.0)),
            )
        };
        let gpu_nocontext = p.opt_f64("gpu_nocontext_w", limits::POWER_W)?.map(Watts);
        let fit_residual_rel = p.opt_f64("fit_residual_rel", Bound::Within(0.0, 1.0))?;
        p.finish()?;

        let sources = root.notes("sources")?;
        root.finish()?;

        Ok(Machine {
            name,
            description,
            max_nodes,
            cores_per_node,
            frequencies,
            gpus_per_node,
            memory_per_node_gib,
            cpu_model,
            gpu_model,
            network: Network {
                latency,
                bandwidth_bytes_per_s: bandwidth,
                switch_bytes_per_s: switch,
                cv2,
            },
            power: Power {
                core_active: core_active.into_iter().map(Watts).collect(),
                core_stall: core_stall.into_iter().map(Watts).collect(),
                memory,
                network,
                idle: idle.into_iter().map(Watts).collect(),
                gpu_active,
                gpu_idle,
                gpu_nocontext,
                fit_residual_rel,
            },
            sources,
            file: path.to_path_buf(),
            digest: input::sha256_hex(text),
        })
    }

    /// As [`Machine::from_toml`] for a file that `fit` is about to write a `[power]` section
    /// into: a file without one is read with every power 0 (time does not depend on power),
    /// and the second value says so.
    pub fn from_toml_for_fit(path: &Path, text: &str) -> InputResult<(Self, bool)> {
        let doc = input::parse_toml(path, text)?;
        if doc.get("power").is_some() {
            return Ok((Self::from_toml(path, text)?, false));
        }
        let zero = "\n[power]\nidle_w = 0.0\ncore_active_w = 0.0\ncore_stall_w = 0.0\n\
                    memory_w = 0.0\nnetwork_w = 0.0\ngpu_active_w = 0.0\ngpu_idle_w = 0.0\n";
        Ok((Self::from_toml(path, &format!("{text}{zero}"))?, true))
    }

    /// Index of `f` in the frequency set, matching to within 1 kHz.
    pub fn frequency_index(&self, f: Hertz) -> Option<usize> {
        self.frequencies
            .iter()
            .position(|x| (x.0 - f.0).abs() < 1e3)
    }

    /// The frequency set in GHz, for messages.
    pub fn frequency_list_ghz(&self) -> String {
        self.frequencies
            .iter()
            .map(|f| format!("{}", f.ghz()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
