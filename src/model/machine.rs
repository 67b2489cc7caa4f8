//! The machine: node, core, frequency and GPU limits, the network, and power per component
//! (MODEL.md section 2). Read from TOML files in `models/`.

use crate::artefact::machine::{MachineFile, PowerSection};
use crate::error::InputResult;
use crate::input;
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
    /// The exponent `alpha` of the GPU clock laws `fit` makes (`[power] gpu_clock_exponent`,
    /// MODEL.md 6e); `None`: `fit` chooses it per workload.
    pub gpu_clock_exponent: Option<f64>,
    /// The largest relative residual of the power fit against the node power it came from,
    /// when the file states it: energy cannot be reproduced more finely (MODEL.md 6b).
    pub fit_residual_rel: Option<f64>,
    /// The root-mean-square residual of a fit over many runs, when the file states it: the
    /// fit's quality (`fit_residual_rel` is then its largest single residual).
    pub fit_residual_rms: Option<f64>,
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
    /// The GPU's supported application clocks, MHz, ascending (empty: no GPU clock axis).
    pub gpu_clocks_mhz: Vec<f64>,
    /// The memory clock, MHz, the GPU clocks belong to, when the file names it.
    pub gpu_memory_clock_mhz: Option<f64>,
    /// The network.
    pub network: Network,
    /// Power parameters.
    pub power: Power,
    /// Provenance of the numbers: key -> how it was measured or which public source.
    pub sources: Vec<(String, String)>,
    /// The sections the file lacks, when read for `plan` or `fit`. Without `[power]`
    /// ([`Machine::time_only`]) the power above is one watt per node and nothing else, so
    /// every predicted "energy" is node-seconds and is never shown as energy.
    pub lacks: Lacks,
    /// The file it was read from.
    pub file: PathBuf,
    /// SHA-256 of the file's text.
    pub digest: String,
}

pub use crate::artefact::machine::{NETWORK_HINT, POWER_HINT};

/// The sections a machine file read for `fit` lacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lacks {
    /// No `[power]` (read as zero power: time does not depend on it).
    pub power: bool,
    /// No `[network]` (only one-node runs can be fitted).
    pub network: bool,
    /// No `[power]`, read as 0 for a workload whose energy is the GPU's alone
    /// ([`Machine::read_power_as_zero`]): the GPU's power comes from the workload.
    pub power_from_workload: bool,
}

impl Machine {
    /// Reads and validates a machine TOML file.
    pub fn load(path: &Path) -> InputResult<Self> {
        let text = input::read_file(path)?;
        Self::from_toml(path, &text)
    }

    /// Validates a machine from TOML text; `path` names it in messages.
    pub fn from_toml(path: &Path, text: &str) -> InputResult<Self> {
        let file = MachineFile::read(path, text)?;
        Self::from_file(&file, path, input::sha256_hex(text))
    }

    /// The machine a validated file describes; `digest` names the exact input.
    pub fn from_file(f: &MachineFile, path: &Path, digest: String) -> InputResult<Self> {
        let (n, p) = f.sections(path)?;
        let m = &f.machine;
        let nf = m.frequencies_ghz.len();
        let watts = |v: Vec<f64>| v.into_iter().map(Watts).collect();
        let network = Network {
            latency: Seconds(n.latency_s),
            bandwidth_bytes_per_s: n.bandwidth_bytes_per_s,
            switch_bytes_per_s: n
                .switch_bandwidth_bytes_per_s
                .unwrap_or(n.bandwidth_bytes_per_s),
            cv2: n.cv2.unwrap_or(1.0),
        };
        let power = Power {
            core_active: watts(p.core_active_w.values(nf)),
            core_stall: watts(p.core_stall_w.values(nf)),
            memory: Watts(p.memory_w),
            network: Watts(p.network_w),
            idle: watts(p.idle_w.values(nf)),
            gpu_active: Watts(p.gpu_active_w.unwrap_or(0.0)),
            gpu_idle: Watts(p.gpu_idle_w.unwrap_or(0.0)),
            gpu_nocontext: p.gpu_nocontext_w.map(Watts),
            gpu_clock_exponent: p.gpu_clock_exponent,
            fit_residual_rel: p.fit_residual_rel,
            fit_residual_rms: p.fit_residual_rms,
        };
        Ok(Machine {
            name: m.name.clone(),
            description: m.description.clone(),
            max_nodes: m.nodes,
            cores_per_node: m.cores_per_node,
            frequencies: m.frequencies_ghz.iter().map(|g| Hertz(g * 1e9)).collect(),
            gpus_per_node: m.gpus_per_node,
            memory_per_node_gib: m.memory_per_node_gib,
            cpu_model: m.cpu_model.clone(),
            gpu_model: m.gpu_model.clone(),
            gpu_clocks_mhz: ascending(m.gpu_clocks_mhz.as_deref().unwrap_or_default()),
            gpu_memory_clock_mhz: m.gpu_memory_clock_mhz,
            network,
            power,
            sources: f
                .sources
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            lacks: Lacks::default(),
            file: path.to_path_buf(),
            digest,
        })
    }

    /// As [`Machine::from_toml`] for a file that `fit` is about to write a `[power]` section
    /// into: a file without one is read with every power 0 (time does not depend on power),
    /// and the second value says so.
    pub fn from_toml_for_fit(path: &Path, text: &str) -> InputResult<(Self, Lacks)> {
        Self::read_lacking(path, text, PowerSection::zero())
    }

    /// As [`Machine::from_toml`] for `plan` and `predict`: a file without `[power]` (as
    /// `machine init` writes it) plans by time and node-hours ([`Machine::time_only`]), and a
    /// file without `[network]` plans one node; the second value says which was missing.
    pub fn from_toml_for_plan(path: &Path, text: &str) -> InputResult<(Self, Lacks)> {
        let (mut m, lacks) = Self::read_lacking(path, text, PowerSection::unit_node())?;
        m.lacks = lacks;
        Ok((m, lacks))
    }

    /// Reads a file that may lack `[power]` (read as `power`) or `[network]` (one that no
    /// one-node run reaches).
    fn read_lacking(path: &Path, text: &str, power: PowerSection) -> InputResult<(Self, Lacks)> {
        let mut file = MachineFile::parse(path, text)?;
        let lacks = Lacks {
            power: file.power.is_none(),
            network: file.network.is_none(),
            power_from_workload: false,
        };
        if lacks.power {
            file.power = Some(power);
        }
        if lacks.network {
            // One-node runs of a profile without messages never reach the network terms:
            // `fit` and `plan` refuse runs over several nodes against such a file.
            file.network = Some(crate::artefact::machine::NetworkSection::unused());
        }
        file.validate(path)?;
        Ok((
            Self::from_file(&file, path, input::sha256_hex(text))?,
            lacks,
        ))
    }

    /// A file without `[power]` read for a workload whose energy is the GPU's alone and whose
    /// GPU clock law, or runs at one clock, carry the GPU's power: every power of the machine 0, as `fit` read the
    /// file when it fitted that law (the host's power lies outside the GPU's scope; the time
    /// the GPU spent outside kernels is folded into the law's power, which reproduces the
    /// measured clocks). Energy is then the GPU's, no longer unavailable.
    pub fn read_power_as_zero(&mut self) {
        let zeros = vec![Watts(0.0); self.frequencies.len()];
        self.power = Power {
            core_active: zeros.clone(),
            core_stall: zeros.clone(),
            memory: Watts(0.0),
            network: Watts(0.0),
            idle: zeros,
            gpu_active: Watts(0.0),
            gpu_idle: Watts(0.0),
            gpu_nocontext: None,
            gpu_clock_exponent: self.power.gpu_clock_exponent,
            fit_residual_rel: None,
            fit_residual_rms: None,
        };
        self.lacks.power = false;
        self.lacks.power_from_workload = true;
    }

    /// Whether `[power]` gives the host any power (cores, memory, network or idle): not
    /// without `[power]`, nor where it was read as 0 for a GPU's energy alone.
    pub fn host_power(&self) -> bool {
        let p = &self.power;
        let any = |v: &[crate::units::Watts]| v.iter().any(|w| w.0 > 0.0);
        !self.time_only()
            && (any(&p.core_active)
                || any(&p.core_stall)
                || any(&p.idle)
                || p.memory.0 > 0.0
                || p.network.0 > 0.0)
    }

    /// No power was measured: plans rank by time and node-hours.
    pub fn time_only(&self) -> bool {
        self.lacks.power
    }

    /// Index of `f` in the frequency set, matching to within 1 kHz.
    pub fn frequency_index(&self, f: Hertz) -> Option<usize> {
        self.frequencies
            .iter()
            .position(|x| (x.0 - f.0).abs() < 1e3)
    }

    /// Index of a frequency typed as the tables show it (`2.60` for 2.596 GHz): the exact one
    /// where it is in the set ([`Machine::frequency_index`]), else the one frequency within
    /// [`SHOWN_FREQUENCY_HZ`] of it; `None` where none, or more than one, is that near.
    pub fn frequency_as_shown(&self, f: Hertz) -> Option<usize> {
        if let Some(i) = self.frequency_index(f) {
            return Some(i);
        }
        match self.frequencies_near(f)[..] {
            [i] => Some(i),
            _ => None,
        }
    }

    /// Indices of the frequencies within [`SHOWN_FREQUENCY_HZ`] of `f`.
    fn frequencies_near(&self, f: Hertz) -> Vec<usize> {
        self.frequencies
            .iter()
            .enumerate()
            .filter(|(_, x)| (x.0 - f.0).abs() <= SHOWN_FREQUENCY_HZ)
            .map(|(i, _)| i)
            .collect()
    }

    /// Why `f` names none of the machine's frequencies where it lies within
    /// [`SHOWN_FREQUENCY_HZ`] of two or more (`within 5 MHz of both 2.596 and 2.6 GHz: type
    /// one of them`); `None` where it is one of them or near at most one.
    pub fn ambiguous_frequency(&self, f: Hertz) -> Option<String> {
        if self.frequency_index(f).is_some() {
            return None;
        }
        let near: Vec<String> = self
            .frequencies_near(f)
            .iter()
            .map(|&i| format!("{}", self.frequencies[i].ghz()))
            .collect();
        match &near[..] {
            [] | [_] => None,
            [a, b] => Some(format!(
                "{} GHz is within 5 MHz of both {a} and {b} GHz: type one of them",
                f.ghz()
            )),
            _ => Some(format!(
                "{} GHz is within 5 MHz of each of {} GHz: type one of them",
                f.ghz(),
                near.join(", ")
            )),
        }
    }

    /// The fewest decimals (2 to 4) that print the machine's frequencies apart in GHz
    /// ([`crate::units::ghz_decimals`]): 2 where they differ at 2 decimals.
    pub fn ghz_decimals(&self) -> usize {
        crate::units::ghz_decimals(&self.frequencies)
    }

    /// The top GPU clock of the machine's list, MHz (`None`: no clock axis).
    pub fn top_gpu_clock(&self) -> Option<f64> {
        self.gpu_clocks_mhz.last().copied()
    }

    /// The machine's listed GPU clock that `mhz` rounds to ([`listed_clock`]), if any.
    pub fn listed_gpu_clock(&self, mhz: f64) -> Option<f64> {
        listed_clock(&self.gpu_clocks_mhz, mhz)
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

/// How far a frequency typed as shown may lie from the machine's: half the last digit of the
/// tables' GHz column (two decimals), 5 MHz (and 1 kHz for rounding).
pub const SHOWN_FREQUENCY_HZ: f64 = 5e6 + 1e3;

/// The machine file's GPU clocks from the lowest up (the file may list them in any order, as
/// `nvidia-smi` does from the top down).
fn ascending(mhz: &[f64]) -> Vec<f64> {
    let mut v = mhz.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// The clock of `list` that `mhz` rounds to, within half a MHz (GPU clocks are whole MHz, so a
/// recorded 1164.4 is the listed 1164), if any.
pub fn listed_clock(list: &[f64], mhz: f64) -> Option<f64> {
    list.iter().copied().find(|c| (c - mhz).abs() < 0.5)
}

/// The supported clocks of `list` (ascending, MHz) either side of `mhz`, for a message:
/// `1088, 1126 MHz`; one of them at either end of the list.
pub fn clocks_either_side(list: &[f64], mhz: f64) -> String {
    let below = list.iter().rev().find(|&&c| c < mhz);
    let above = list.iter().find(|&&c| c > mhz);
    let shown: Vec<String> = [below, above]
        .into_iter()
        .flatten()
        .map(|c| format!("{c}"))
        .collect();
    format!("{} MHz", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(freqs: &str) -> Machine {
        let text = format!(
            "[machine]\nname = \"vm\"\nnodes = 1\ncores_per_node = 8\nfrequencies_ghz = [{freqs}]\n"
        );
        Machine::from_toml_for_plan(Path::new("vm.toml"), &text)
            .unwrap()
            .0
    }

    #[test]
    fn a_frequency_typed_as_shown_names_the_one_machine_frequency_it_rounds_to() {
        let m = machine("1.2, 2.596");
        assert_eq!(m.frequency_as_shown(Hertz(2.6e9)), Some(1));
        assert_eq!(m.frequency_as_shown(Hertz(2.596e9)), Some(1));
        assert_eq!(m.frequency_as_shown(Hertz(2.59e9)), None, "10 MHz off");
        assert_eq!(m.frequency_as_shown(Hertz(2.7e9)), None);
        // Two frequencies that both show as 2.60: neither is taken.
        let two = machine("2.596, 2.604");
        assert_eq!(two.frequency_as_shown(Hertz(2.6e9)), None);
        assert_eq!(two.frequency_as_shown(Hertz(2.604e9)), Some(1));
        let why = two.ambiguous_frequency(Hertz(2.6e9)).unwrap();
        assert!(why.contains("both 2.596 and 2.604 GHz"), "{why}");
        assert_eq!(two.ambiguous_frequency(Hertz(2.604e9)), None);
        assert_eq!(m.ambiguous_frequency(Hertz(2.6e9)), None);
    }

    #[test]
    fn the_clocks_either_side_of_an_unlisted_one_are_named() {
        let list = [1050.0, 1088.0, 1126.0, 1500.0];
        assert_eq!(clocks_either_side(&list, 1100.0), "1088, 1126 MHz");
        assert_eq!(clocks_either_side(&list, 900.0), "1050 MHz");
        assert_eq!(clocks_either_side(&list, 1600.0), "1500 MHz");
    }
}
