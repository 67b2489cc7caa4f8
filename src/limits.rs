//! The physical range of every number that enters jouleplan, stated in one place. A value
//! outside its range is an input error naming the file and key (or flag), the value and the
//! range; the bounds are generous (real machines and runs are far inside them) but finite, so
//! nothing subnormal, huge or infinite reaches the model.

use crate::input::{Bound, Whole};

/// Network latency, s: up to 1 s.
pub const LATENCY_S: Bound = Bound::Within(0.0, 1.0);
/// Link or switch bandwidth, bytes/s: 1 kB/s to 100 TB/s.
pub const BANDWIDTH: Bound = Bound::Within(1e3, 1e14);
/// Service-time variability `cv2`.
pub const CV2: Bound = Bound::Within(0.0, 1e3);
/// Any power of a core, a node's parts or a GPU, W: up to 100 kW.
pub const POWER_W: Bound = Bound::Within(0.0, 1e5);
/// Memory per node or a footprint, GiB: up to 1 PiB.
pub const MEMORY_GIB: Bound = Bound::Within(1e-6, 1.048_576e6);
/// Iteration counts: 1e-6 (a fraction of one) to 1e15.
pub const ITERATIONS: Bound = Bound::Within(1e-6, 1e15);
/// Messages per process and iteration: up to 1e12.
pub const MESSAGES: Bound = Bound::Within(0.0, 1e12);
/// Bytes per message: up to 1 PB.
pub const BYTES: Bound = Bound::Within(0.0, 1e15);
/// Cycle and instruction counts of one run summed over its cores: up to 1e21 (5e11 core-seconds
/// at 2 GHz).
pub const CYCLES: Bound = Bound::Within(0.0, 1e21);
/// Times of one run, s: up to 1e8 s (three years).
pub const TIME_S: Bound = Bound::Within(0.0, 1e8);
/// Energy of one run, J: up to 1e15 J.
pub const ENERGY_J: Bound = Bound::Within(0.0, 1e15);
/// The time-limit margin of a job script: up to 10 (11 times the predicted time).
pub const TIME_MARGIN_MAX: f64 = 10.0;
/// Nodes of a machine or a run: 1 to 10^7.
pub const NODES: Whole = Whole(1, 10_000_000);
/// Cores of a node or a baseline point: 1 to 100,000.
pub const CORES: Whole = Whole(1, 100_000);
/// GPUs of a node or a baseline point: 0 to 1024.
pub const GPUS: Whole = Whole(0, 1024);
/// Neighbours a process sends to, or physical cores a sweep saw: 1 to 2^20.
pub const MANY: Whole = Whole(1, 1 << 20);
