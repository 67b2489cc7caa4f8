//! State timelines of MPI ranks and their GPUs, as the traces of seed 000 draw them (host:
//! useful computation, offloading to or waiting on the GPU, MPI; device: kernels, memory
//! operations, idle), reduced to the times TALP accumulates, and so to the host and device
//! trees of [`super::tree`]. Used to rebuild the seed's use cases (figures 4-10) and check that
//! the trees show what the seed reports.

use super::tree::{DeviceTimes, DeviceTree, HostTimes, HostTree, device_tree, host_tree};

/// What a host thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Useful computation.
    Useful,
    /// In the GPU runtime: launching, copying, or waiting for the device.
    Offload,
    /// In MPI.
    Mpi,
}

/// What a GPU does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// A kernel runs.
    Kernel,
    /// A memory transfer runs.
    Memory,
    /// Nothing.
    Idle,
}

/// One MPI rank (one CPU) and its GPU, each a sequence of states with durations in seconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rank {
    /// The host's states in order.
    pub host: Vec<(Host, f64)>,
    /// Its GPU's states in order (empty: no GPU).
    pub gpu: Vec<(Device, f64)>,
}

impl Rank {
    fn host_time(&self, s: Host) -> f64 {
        self.host.iter().filter(|h| h.0 == s).map(|h| h.1).sum()
    }
    fn gpu_time(&self, s: Device) -> f64 {
        self.gpu.iter().filter(|g| g.0 == s).map(|g| g.1).sum()
    }
    fn length(&self) -> f64 {
        self.host.iter().map(|h| h.1).sum()
    }
}

/// The times TALP accumulates over ranks that all run to the end (a rank that finishes first
/// waits in MPI, as in the seed's traces); one CPU per rank, all on one node.
pub fn times(ranks: &[Rank]) -> (HostTimes, DeviceTimes) {
    let elapsed = ranks.iter().map(Rank::length).fold(0.0, f64::max);
    // A rank that ends early waits for the others in MPI (finalisation).
    let mpi: Vec<f64> = ranks
        .iter()
        .map(|r| r.host_time(Host::Mpi) + (elapsed - r.length()))
        .collect();
    let cpus = ranks.len() as f64;
    let host = HostTimes {
        elapsed,
        useful: ranks.iter().map(|r| r.host_time(Host::Useful)).sum(),
        mpi: mpi.iter().sum(),
        gpu_runtime: ranks.iter().map(|r| r.host_time(Host::Offload)).sum(),
        cpus,
        min_mpi_normd_proc: mpi.iter().copied().fold(f64::INFINITY, f64::min),
        min_mpi_normd_node: mpi.iter().sum::<f64>() / cpus,
        ..HostTimes::default()
    };
    let with_gpu: Vec<&Rank> = ranks.iter().filter(|r| !r.gpu.is_empty()).collect();
    let device = DeviceTimes {
        elapsed,
        gpus: with_gpu.len() as f64,
        gpu_useful: with_gpu.iter().map(|r| r.gpu_time(Device::Kernel)).sum(),
        max_gpu_useful: with_gpu
            .iter()
            .map(|r| r.gpu_time(Device::Kernel))
            .fold(0.0, f64::max),
        max_gpu_active: with_gpu
            .iter()
            .map(|r| r.gpu_time(Device::Kernel) + r.gpu_time(Device::Memory))
            .fold(0.0, f64::max),
    };
    (host, device)
}

/// The host and device trees of a timeline.
pub fn trees(ranks: &[Rank]) -> (HostTree, DeviceTree) {
    let (h, d) = times(ranks);
    (host_tree(&h), device_tree(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_that_ends_early_waits_in_mpi() {
        let r = [
            Rank {
                host: vec![(Host::Useful, 10.0)],
                gpu: vec![],
            },
            Rank {
                host: vec![(Host::Useful, 5.0)],
                gpu: vec![],
            },
        ];
        let (h, _) = times(&r);
        assert_eq!(
            (h.elapsed, h.useful, h.mpi, h.min_mpi_normd_proc),
            (10.0, 15.0, 5.0, 0.0)
        );
        let (t, _) = trees(&r);
        assert!((t.mpi_load_balance - 0.75).abs() < 1e-12);
    }
}
