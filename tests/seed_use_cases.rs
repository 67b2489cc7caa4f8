//! Seed 000's use cases (section 5.1, figures 4-10: two MPI ranks, each on one CPU core with one
//! GPU) rebuilt as state timelines (`metrics::timeline`), and the host and device trees checked
//! against what the seed reports. The durations are ILLUSTRATIVE: chosen (T = 100 s) so that
//! the timelines follow the traces the seed describes and, where it prints numbers, give them;
//! they are not measurements. Solving for them is in the comments.

use jouleplan::metrics::timeline::{Device, Host, Rank, trees};
use jouleplan::metrics::tree::{DeviceTree, HostTree};

use Device::{Idle, Kernel, Memory};
use Host::{Mpi, Offload, Useful};

fn rank(host: &[(Host, f64)], gpu: &[(Device, f64)]) -> Rank {
    Rank {
        host: host.to_vec(),
        gpu: gpu.to_vec(),
    }
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.005
}

/// Every host metric the seed calls 100% in a use case.
fn host_ok(h: &HostTree) -> bool {
    [
        h.mpi_parallel_efficiency,
        h.mpi_communication_efficiency,
        h.mpi_load_balance,
        h.omp_parallel_efficiency,
    ]
    .iter()
    .all(|v| near(*v, 1.0))
}

fn device_balanced(d: &DeviceTree) -> bool {
    near(d.load_balance, 1.0) && near(d.communication_efficiency, 1.0)
}

#[test]
fn use_case_1_loaded_gpus_underused_cpus_balanced() {
    // GPU work about 10x the CPU work; the GPUs idle 18% waiting for the hosts: orchestration
    // 0.82 (the seed's figure); everything else 100% but the device offload efficiency.
    let r = rank(
        &[(Useful, 8.2), (Offload, 91.8)],
        &[(Idle, 18.0), (Kernel, 82.0)],
    );
    let (h, d) = trees(&[r.clone(), r]);
    assert!(host_ok(&h), "{h:?}");
    assert!(h.device_offload_efficiency < 0.1, "{h:?}");
    assert!(
        device_balanced(&d) && near(d.orchestration_efficiency, 0.82),
        "{d:?}"
    );
}

#[test]
fn use_case_2_loaded_cpus_underused_gpus_balanced() {
    // The seed: device offload efficiency 0.94, device parallel efficiency 0.05.
    let r = rank(
        &[(Useful, 94.0), (Offload, 6.0)],
        &[(Kernel, 5.0), (Idle, 95.0)],
    );
    let (h, d) = trees(&[r.clone(), r]);
    assert!(
        host_ok(&h) && near(h.device_offload_efficiency, 0.94),
        "{h:?}"
    );
    assert!(
        device_balanced(&d) && near(d.parallel_efficiency, 0.05),
        "{d:?}"
    );
}

#[test]
fn use_case_3_imbalanced_gpus_underused_cpus() {
    // GPU0 runs 10x GPU1's work; rank 1 waits in MPI for rank 0. The seed: device load balance
    // 0.55, a low device offload efficiency, a low MPI parallel efficiency although both
    // ranks compute the same (the offloaded work counts as the rank's load).
    let r0 = rank(
        &[(Useful, 10.0), (Offload, 90.0)],
        &[(Kernel, 88.0), (Idle, 12.0)],
    );
    let r1 = rank(
        &[(Useful, 10.0), (Offload, 9.0), (Mpi, 81.0)],
        &[(Kernel, 8.8), (Idle, 91.2)],
    );
    let (h, d) = trees(&[r0, r1]);
    assert!(near(d.load_balance, 0.55), "{d:?}");
    assert!(h.device_offload_efficiency < 0.3, "{h:?}");
    assert!(
        h.mpi_parallel_efficiency < 0.7 && h.mpi_load_balance < 0.7,
        "{h:?}"
    );
}

#[test]
fn use_case_4_reproduces_the_seeds_printed_trees() {
    // Figure 7 prints: host PE 0.36, MPI PE 0.55, communication 1.00, load balance 0.55, device
    // offload 0.65; device PE 0.18, load balance 0.55, communication 1.00, orchestration 0.33.
    // MPI PE = 1 - M1/(2T) = 0.55 -> M1 = 90; offload = U/(U+R) = 0.65 with U + R = 2T - M1 =
    // 110 -> U = 71.5, R = 38.5; orchestration K0/T = 0.33, device LB (K0+K1)/(2 K0) = 0.55 ->
    // K1 = 3.3; rank 0 waits K0 = 33 then computes 67; rank 1 offloads 5.5, computes 4.5.
    let r0 = rank(
        &[(Offload, 33.0), (Useful, 67.0)],
        &[(Kernel, 33.0), (Idle, 67.0)],
    );
    let r1 = rank(
        &[(Offload, 5.5), (Useful, 4.5), (Mpi, 90.0)],
        &[(Kernel, 3.3), (Idle, 96.7)],
    );
    let (h, d) = trees(&[r0, r1]);
    let host = [
        (h.parallel_efficiency, 0.36),
        (h.mpi_parallel_efficiency, 0.55),
        (h.mpi_communication_efficiency, 1.0),
        (h.mpi_load_balance, 0.55),
        (h.device_offload_efficiency, 0.65),
    ];
    let device = [
        (d.parallel_efficiency, 0.18),
        (d.load_balance, 0.55),
        (d.communication_efficiency, 1.0),
        (d.orchestration_efficiency, 0.33),
    ];
    for (ours, seed) in host.iter().chain(&device) {
        assert!(
            (ours - seed).abs() <= 0.005 + 1e-9,
            "{ours:.4} against {seed}: {h:?} {d:?}"
        );
    }
}

#[test]
fn use_case_5_imbalanced_cpu_load_same_global_cpu_and_gpu_load() {
    // Both ranks wait 33 s for their GPUs (orchestration 0.33, the seed's figure), then rank 0
    // computes 67 s and rank 1 7 s and waits in MPI: load balance 1 - 60/200 = 0.70 (the seed's).
    let r0 = rank(
        &[(Offload, 33.0), (Useful, 67.0)],
        &[(Kernel, 33.0), (Idle, 67.0)],
    );
    let r1 = rank(
        &[(Offload, 33.0), (Useful, 7.0), (Mpi, 60.0)],
        &[(Kernel, 33.0), (Idle, 67.0)],
    );
    let (h, d) = trees(&[r0, r1]);
    assert!(near(h.mpi_load_balance, 0.70), "{h:?}");
    assert!(h.device_offload_efficiency < 0.6, "{h:?}");
    assert!(
        device_balanced(&d) && near(d.orchestration_efficiency, 0.33),
        "{d:?}"
    );
}

#[test]
fn use_case_6_large_host_device_data_movement() {
    // The seed: device offload 0.09, host load balance 0.72, device communication 0.36,
    // orchestration 0.86. Orchestration and communication: K + M = 86, K / (K + M) = 0.36 ->
    // K = 30.96, M = 55.04 (rank 0's transfer at the end, rank 1 waiting 56 s in MPI: load
    // balance 1 - 56/200 = 0.72); offload 2u / (2u + 144 - 2u) = 0.09 -> u = 6.48.
    let r0 = rank(
        &[(Useful, 6.48), (Offload, 93.52)],
        &[(Kernel, 30.96), (Memory, 55.04), (Idle, 14.0)],
    );
    let r1 = rank(
        &[(Useful, 6.48), (Offload, 37.52), (Mpi, 56.0)],
        &[(Kernel, 30.96), (Idle, 69.04)],
    );
    let (h, d) = trees(&[r0, r1]);
    assert!(near(h.device_offload_efficiency, 0.09), "{h:?}");
    assert!(near(h.mpi_load_balance, 0.72), "{h:?}");
    assert!(near(d.communication_efficiency, 0.36), "{d:?}");
    assert!(near(d.orchestration_efficiency, 0.86), "{d:?}");
}

#[test]
fn use_case_7_overlap_changes_only_offload_and_orchestration() {
    // CPU work twice the GPU work (w = 30 s). Without overlap the host waits for each kernel;
    // with it the host launches asynchronously (0.3 s) and computes while the kernel runs. The
    // seed: offload efficiency up by 0.33 to near 1, orchestration near 0.5, the rest unchanged.
    let apart = rank(
        &[(Useful, 60.0), (Offload, 30.0)],
        &[(Idle, 60.0), (Kernel, 30.0)],
    );
    let overlap = rank(
        &[(Offload, 0.3), (Useful, 60.0)],
        &[(Kernel, 30.0), (Idle, 30.3)],
    );
    let (h0, d0) = trees(&[apart.clone(), apart]);
    let (h1, d1) = trees(&[overlap.clone(), overlap]);
    assert!(
        near(
            h1.device_offload_efficiency - h0.device_offload_efficiency,
            0.33
        ),
        "{h0:?} {h1:?}"
    );
    assert!(h1.device_offload_efficiency > 0.99);
    assert!((d1.orchestration_efficiency - 0.5).abs() < 0.01, "{d1:?}");
    assert!(host_ok(&h0) && host_ok(&h1));
    assert!(device_balanced(&d0) && device_balanced(&d1));
}
