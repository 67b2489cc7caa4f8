//! The energy scope: what a measured or predicted energy covers (the CPU's RAPL packages and
//! DRAM, the whole node, or the GPUs), one vocabulary for every output (text, JSON, charts,
//! job script, report).

use super::terms::Eval;

/// What energy a measured `energy_j` covers, and so which model terms it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergyScope {
    /// GPU domains only (NVML): compared with `E_gpu`.
    Gpu,
    /// CPU package and DRAM domains (RAPL): compared with `E_CPU + E_mem + E_idle`.
    Cpu,
    /// The whole node (Slurm, or a profile that does not say): compared with `E`.
    Node,
}

impl EnergyScope {
    /// From the domain names of a sweep record.
    pub fn of(domains: &[String]) -> EnergyScope {
        if !domains.is_empty() && domains.iter().all(|d| d.starts_with("gpu-")) {
            EnergyScope::Gpu
        } else if !domains.is_empty()
            && domains
                .iter()
                .all(|d| d.starts_with("package") || d.starts_with("dram") || d.starts_with("core"))
        {
            EnergyScope::Cpu
        } else {
            EnergyScope::Node
        }
    }

    /// The scope a measured CSV's `energy_scope` cell (or `validate --energy-scope`) names:
    /// `node`, `cpu` or `gpu`.
    pub fn from_name(name: &str) -> Option<EnergyScope> {
        [EnergyScope::Node, EnergyScope::Cpu, EnergyScope::Gpu]
            .into_iter()
            .find(|s| s.csv_name().eq_ignore_ascii_case(name.trim()))
    }

    /// The name [`EnergyScope::from_name`] reads: `node`, `cpu` or `gpu`.
    pub fn csv_name(self) -> &'static str {
        match self {
            EnergyScope::Node => "node",
            EnergyScope::Cpu => "cpu",
            EnergyScope::Gpu => "gpu",
        }
    }

    /// The model's energy for this scope.
    pub fn model_energy(self, ev: &Eval) -> f64 {
        match self {
            EnergyScope::Gpu => ev.e.gpu,
            EnergyScope::Cpu => ev.e.cpu + ev.e.mem + ev.e.idle,
            EnergyScope::Node => ev.energy,
        }
    }

    /// Whether a model whose energy is in this scope predicts energy of scope `measured`: its
    /// own scope, or a share of a node model (its CPU or GPU terms). A CPU or GPU model has no
    /// power for the rest of the node, nor one for the other device.
    pub fn predicts(self, measured: EnergyScope) -> bool {
        self == measured || self == EnergyScope::Node
    }

    /// The measured-CSV column that holds this scope's energy.
    pub fn column(self) -> &'static str {
        match self {
            EnergyScope::Gpu => "gpu_energy_j",
            EnergyScope::Cpu | EnergyScope::Node => "energy_j",
        }
    }

    /// A name for messages and labels: `CPU energy`, `node energy`, `GPU energy`.
    pub fn name(self) -> &'static str {
        match self {
            EnergyScope::Gpu => "GPU energy",
            EnergyScope::Cpu => "CPU energy",
            EnergyScope::Node => "node energy",
        }
    }

    /// What the scope covers, for a sentence: `CPU energy (RAPL packages and DRAM)`. GPU
    /// energy is `the GPUs' own counters` without naming how they were read (a measured CSV's
    /// `gpu_energy_j` need not have come through NVML): [`EnergyScope::describe_read`] names
    /// NVML where it is known.
    pub fn describe(self) -> &'static str {
        match self {
            EnergyScope::Gpu => "GPU energy (the GPUs' own counters)",
            EnergyScope::Cpu => "CPU energy (RAPL packages and DRAM)",
            EnergyScope::Node => "node energy (the whole node)",
        }
    }

    /// [`EnergyScope::describe`] as a plan's energy was come by ([`EnergyRead`]): naming NVML
    /// for GPU energy its own sweep read through NVML, and the two sources of node energy built
    /// on GPU energy alone.
    pub fn describe_read(self, read: EnergyRead) -> &'static str {
        match (self, read) {
            (EnergyScope::Gpu, EnergyRead::Nvml) => "GPU energy (the GPUs' own counters, NVML)",
            (EnergyScope::Node, EnergyRead::HostAdded) => {
                "node energy (the host's from the machine file's [power], the GPUs' from the \
                 profile's GPU energy)"
            }
            _ => self.describe(),
        }
    }
}

/// How a plan's energy was come by, for the words that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergyRead {
    /// In the scope the profile records (a measured CSV's, or its sweep's energy domains).
    Recorded,
    /// GPU energy the profile's own sweep read through NVML.
    Nvml,
    /// Node energy built on a profile of GPU energy alone: the host's from the machine file's
    /// `[power]`, the GPUs' from the profile (docs/GPU_CLOCK.md, "Node energy").
    HostAdded,
    /// The profile measured no energy: every energy is the machine file's `[power]` over the
    /// predicted times.
    Unmeasured,
}

impl EnergyRead {
    /// The scope a plan predicts and how it was come by: the profile's scope (`nvml`: read
    /// through NVML), except GPU energy on a machine whose `[power]` gives the host's
    /// (`host_power`), which every configuration adds: node energy.
    pub fn of(profile: EnergyScope, nvml: bool, host_power: bool) -> (EnergyScope, EnergyRead) {
        match (profile, host_power, nvml) {
            (EnergyScope::Gpu, true, _) => (EnergyScope::Node, EnergyRead::HostAdded),
            (s, _, true) => (s, EnergyRead::Nvml),
            (s, _, false) => (s, EnergyRead::Recorded),
        }
    }

    /// What follows the scope's description in a plan's energy line.
    pub fn clause(self) -> &'static str {
        match self {
            EnergyRead::HostAdded => "the profile having measured the GPUs' energy alone",
            EnergyRead::Unmeasured => {
                "from the machine file's [power] alone: the profile measured no energy"
            }
            _ => "the scope the profile's energy was measured in",
        }
    }
}
