//! The power micro-benchmarks of `jouleplan calibrate power`, run by the sweep as
//! `jouleplan calibrate kernel KIND --seconds S` with `OMP_NUM_THREADS` threads on the cores
//! the sweep binds:
//! - `compute`: eight independent fused multiply-add chains per thread, in registers (no memory
//!   traffic): every busy core active, the model's `P_act(f)`;
//! - `memory`: a dependent pointer chase per thread through its own 64 MiB random cycle
//!   (Sattolo's algorithm), far beyond any last-level cache share: every busy core stalled on
//!   memory, the model's `P_stall(f)` and `P_mem`;
//! - `idle`: a sleep: no busy core, the model's `P_idle(f)`.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Bytes of each thread's pointer-chase cycle.
pub const CHASE_BYTES: usize = 64 << 20;

/// The kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Floating-point work in registers.
    Compute,
    /// Dependent loads from DRAM.
    Memory,
    /// Nothing.
    Idle,
}

impl Kernel {
    /// By name (`compute`, `memory`, `idle`).
    pub fn from_name(s: &str) -> Option<Kernel> {
        match s {
            "compute" => Some(Kernel::Compute),
            "memory" => Some(Kernel::Memory),
            "idle" => Some(Kernel::Idle),
            _ => None,
        }
    }
}

/// Runs `kernel` on `threads` threads for `seconds`; returns the work done (a checksum that
/// keeps the compiler from removing it).
pub fn run(kernel: Kernel, threads: usize, seconds: f64) -> f64 {
    let limit = Duration::from_secs_f64(seconds);
    if kernel == Kernel::Idle {
        std::thread::sleep(limit);
        return 0.0;
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|t| {
                s.spawn(move || match kernel {
                    Kernel::Compute => compute(limit),
                    _ => chase(limit, t as u64 + 1),
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    })
}

fn compute(limit: Duration) -> f64 {
    let start = Instant::now();
    let mut acc = [1.0f64, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7];
    let (a, b) = (black_box(0.999_999_9), black_box(1e-7));
    while start.elapsed() < limit {
        for _ in 0..1_000_000 {
            for x in &mut acc {
                *x = x.mul_add(a, b);
            }
        }
    }
    acc.iter().sum()
}

fn chase(limit: Duration, seed: u64) -> f64 {
    let n = CHASE_BYTES / std::mem::size_of::<usize>();
    let mut next: Vec<usize> = (0..n).collect();
    // Sattolo: one cycle through every slot, in random order (xorshift64*).
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..n).rev() {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let j = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % i as u64) as usize;
        next.swap(i, j);
    }
    let start = Instant::now();
    let mut p = 0usize;
    let mut steps = 0u64;
    while start.elapsed() < limit {
        for _ in 0..100_000 {
            p = next[p];
        }
        steps += 100_000;
    }
    black_box(p) as f64 + steps as f64
}
