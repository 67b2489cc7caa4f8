//! A baseline point of a profile: one measured (or derived) single-node run `(c, f[, g])`
//! with its cycles, time, energy and device activity, and the time its wall time holds beyond
//! the paper's terms (MODEL.md 6b). The profile (`workload.rs`) holds them; `overhead.rs`
//! derives their extra terms.

use crate::units::{Hertz, Joules, Seconds};

/// The two terms beyond the paper at one baseline point, at `n = 1` and `S = S_s`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extra {
    /// `X_ser`: one thread busy; scales as `1/f`, is not divided over cores or nodes.
    pub serial: f64,
    /// `X_wait`: no thread busy; does not change with `f`, `c` or `n`.
    pub wait: f64,
    /// How much the paper's terms alone exceed the measured wall time (>= 0): time the model
    /// over-explains, which no extra term can take back.
    pub excess: f64,
}

/// Device activity of a baseline point with GPUs (MODEL.md section 6), over the whole baseline run.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceBaseline {
    /// Kernel (useful) time of each GPU: the union of its kernel intervals.
    pub kernel: Vec<Seconds>,
    /// Memory-transfer time of each GPU not overlapped by a kernel.
    pub transfer: Vec<Seconds>,
    /// Time the host process was blocked in the GPU runtime as the model holds it (`T_gpu` at
    /// the baseline): the part of the blocked time the busy time does not already hold
    /// (MODEL.md 6b).
    pub host_runtime: Seconds,
    /// Time the host process was blocked in the GPU runtime, as measured (or estimated).
    pub host_runtime_raw: Seconds,
    /// Where the device times came from (`TALP (file)`, `NVML utilisation sampling`).
    pub source: Option<String>,
    /// Whether `host_runtime` was estimated from the core-count series (MODEL.md 6b) rather
    /// than measured.
    pub host_runtime_estimated: bool,
}

/// One measured (or derived) single-node point. Cycle counts are summed over the `c` cores.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselinePoint {
    /// Cores `c` in use.
    pub cores: u32,
    /// Core clock frequency `f`.
    pub freq: Hertz,
    /// GPUs `g_0` in use.
    pub gpus: u32,
    /// `C_s`: total cycles.
    pub cycles: f64,
    /// `st_s`: total stall cycles.
    pub stall_cycles: f64,
    /// `m_s`: memory-related stall cycles.
    pub mem_stall_cycles: f64,
    /// `I_s`: instructions, when counted.
    pub instructions: Option<f64>,
    /// `U_s`: busy core-time / (c x wall time).
    pub utilisation: f64,
    /// `T_s`: wall time.
    pub wall_time: Seconds,
    /// `E_s`: measured energy, when the machine can measure it.
    pub energy: Option<Joules>,
    /// Device activity, when GPUs were used.
    pub device: Option<DeviceBaseline>,
    /// Whether this point was measured (`true`) or derived from others.
    pub measured: bool,
    /// The time its wall time holds beyond the paper's terms (MODEL.md 6b), derived when the
    /// profile is read; never stored in the file.
    pub extra: Extra,
    /// The efficiency trees measured beside this point (TALP), when attached: where from, and
    /// the efficiencies by TALP's JSON names.
    pub measured_tree: Option<(String, Vec<(String, f64)>)>,
}

impl BaselinePoint {
    /// Work cycles `w_s = C_s - st_s`.
    pub fn work_cycles(&self) -> f64 {
        self.cycles - self.stall_cycles
    }

    /// Non-memory stall cycles `b_s = st_s - m_s`.
    pub fn other_stall_cycles(&self) -> f64 {
        self.stall_cycles - self.mem_stall_cycles
    }
}
