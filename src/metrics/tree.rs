//! The TALP host tree (hybrid-v2, METRICS.md section 1) and the device tree (section 2),
//! computed from raw state times.

use serde::Serialize;

/// Raw host state times of a region (seconds), summed over all threads of all ranks unless said.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HostTimes {
    /// Elapsed `T` (max over ranks).
    pub elapsed: f64,
    /// Useful `U`.
    pub useful: f64,
    /// MPI `M`.
    pub mpi: f64,
    /// MPI worker idle `Mw` (0 where the format lacks it).
    pub mpi_worker_idle: f64,
    /// OpenMP load imbalance `Lb`.
    pub omp_load_imbalance: f64,
    /// OpenMP scheduling `Sc`.
    pub omp_scheduling: f64,
    /// OpenMP serialisation `Se`.
    pub omp_serialization: f64,
    /// Host blocked in the GPU runtime `R`.
    pub gpu_runtime: f64,
    /// CPUs `N_cpu`.
    pub cpus: f64,
    /// Min over ranks of (MPI + worker idle) / CPUs of the rank.
    pub min_mpi_normd_proc: f64,
    /// The same per node.
    pub min_mpi_normd_node: f64,
}

/// The host efficiencies, with TALP's names in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct HostTree {
    /// `U / active`.
    pub parallel_efficiency: f64,
    /// `non_mpi_app / T`.
    pub mpi_parallel_efficiency: f64,
    /// `max_non_mpi_prc / T`.
    pub mpi_communication_efficiency: f64,
    /// `non_mpi_app / max_non_mpi_prc`.
    pub mpi_load_balance: f64,
    /// Across nodes.
    pub mpi_load_balance_in: f64,
    /// Within nodes.
    pub mpi_load_balance_out: f64,
    /// `active_non_omp / active`.
    pub omp_parallel_efficiency: f64,
    /// OpenMP load balance.
    pub omp_load_balance: f64,
    /// OpenMP scheduling efficiency.
    pub omp_scheduling_efficiency: f64,
    /// OpenMP serialisation efficiency.
    pub omp_serialization_efficiency: f64,
    /// Device offload efficiency.
    pub device_offload_efficiency: f64,
}

/// `a / b`, 0 when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { a / b }
}

/// The hybrid-v2 host tree. Every metric is 0 when `U = 0`.
pub fn host_tree(h: &HostTimes) -> HostTree {
    if h.useful == 0.0 {
        return HostTree::default();
    }
    let t = h.elapsed;
    let active = h.useful
        + h.mpi
        + h.omp_load_imbalance
        + h.omp_scheduling
        + h.omp_serialization
        + h.gpu_runtime;
    let active_non_omp = h.useful + h.mpi + h.gpu_runtime;
    let mpi_normd_app = ratio(h.mpi + h.mpi_worker_idle, h.cpus);
    let non_mpi_app = t - mpi_normd_app;
    let max_non_mpi_prc = t - h.min_mpi_normd_proc;
    let max_non_mpi_nod = t - h.min_mpi_normd_node;
    let se = active_non_omp + h.omp_serialization;
    let omp_host = h.useful + h.omp_load_imbalance + h.omp_scheduling + h.omp_serialization;
    HostTree {
        parallel_efficiency: ratio(h.useful, active),
        mpi_parallel_efficiency: ratio(non_mpi_app, t),
        mpi_communication_efficiency: ratio(max_non_mpi_prc, t),
        mpi_load_balance: ratio(non_mpi_app, max_non_mpi_prc),
        mpi_load_balance_in: ratio(max_non_mpi_nod, max_non_mpi_prc),
        mpi_load_balance_out: ratio(non_mpi_app, max_non_mpi_nod),
        omp_parallel_efficiency: ratio(active_non_omp, active),
        omp_load_balance: ratio(se, se + h.omp_load_imbalance),
        omp_scheduling_efficiency: ratio(
            se + h.omp_load_imbalance,
            se + h.omp_load_imbalance + h.omp_scheduling,
        ),
        omp_serialization_efficiency: ratio(active_non_omp, se),
        device_offload_efficiency: ratio(omp_host, omp_host + h.gpu_runtime),
    }
}

/// Host metrics of DLB 3.5 outputs, which carry useful time normalised per CPU instead of the
/// `minMpiNormd*` fields (seconds): the POP model of that version.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LegacyHostTimes {
    /// Elapsed `T`.
    pub elapsed: f64,
    /// Useful time normalised by CPUs, over the application.
    pub useful_normd_app: f64,
    /// Max over processes of normalised useful time.
    pub max_useful_normd_proc: f64,
    /// Max over nodes of normalised useful time.
    pub max_useful_normd_node: f64,
}

/// The MPI branch of DLB 3.5's tree: PE = useful/T, comm = max_proc/T, LB = useful/max_proc,
/// in = max_node/max_proc, out = useful/max_node.
pub fn legacy_host_tree(h: &LegacyHostTimes) -> HostTree {
    let t = h.elapsed;
    HostTree {
        parallel_efficiency: ratio(h.useful_normd_app, t),
        mpi_parallel_efficiency: ratio(h.useful_normd_app, t),
        mpi_communication_efficiency: ratio(h.max_useful_normd_proc, t),
        mpi_load_balance: ratio(h.useful_normd_app, h.max_useful_normd_proc),
        mpi_load_balance_in: ratio(h.max_useful_normd_node, h.max_useful_normd_proc),
        mpi_load_balance_out: ratio(h.useful_normd_app, h.max_useful_normd_node),
        omp_parallel_efficiency: 1.0,
        omp_load_balance: 1.0,
        omp_scheduling_efficiency: 1.0,
        omp_serialization_efficiency: 1.0,
        device_offload_efficiency: 1.0,
    }
}

/// Raw device times (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DeviceTimes {
    /// Elapsed `T`.
    pub elapsed: f64,
    /// GPUs `G`.
    pub gpus: f64,
    /// Sum over GPUs of useful (kernel) time.
    pub gpu_useful: f64,
    /// Max over processes of their GPUs' useful time.
    pub max_gpu_useful: f64,
    /// Max over processes of useful + communication time.
    pub max_gpu_active: f64,
}

/// The device tree.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct DeviceTree {
    /// `gpuUsefulTime / (T G)`.
    pub parallel_efficiency: f64,
    /// `gpuUsefulTime / (maxGpuUsefulTime G)`.
    pub load_balance: f64,
    /// `maxGpuUsefulTime / maxGpuActiveTime`.
    pub communication_efficiency: f64,
    /// `maxGpuActiveTime / T`.
    pub orchestration_efficiency: f64,
}

/// The device tree; each metric 0 when its denominator is 0.
pub fn device_tree(d: &DeviceTimes) -> DeviceTree {
    DeviceTree {
        parallel_efficiency: ratio(d.gpu_useful, d.elapsed * d.gpus),
        load_balance: ratio(d.gpu_useful, d.max_gpu_useful * d.gpus),
        communication_efficiency: ratio(d.max_gpu_useful, d.max_gpu_active),
        orchestration_efficiency: ratio(d.max_gpu_active, d.elapsed),
    }
}
