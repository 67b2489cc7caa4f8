//! Property tests of the metric identities on random inputs, and robustness of the readers:
//! truncated, garbled and out-of-order inputs give errors or notes, never panics.

use jouleplan::metrics::paraver::{Options, analyse};
use jouleplan::metrics::run::Pop;
use jouleplan::metrics::talp;
use jouleplan::metrics::tree::{DeviceTimes, HostTimes, device_tree, host_tree};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #[test]
    fn host_identities_hold(
        t in 1.0f64..100.0, u in 0.01f64..50.0, m in 0.0f64..50.0, mw in 0.0f64..10.0,
        lb in 0.0f64..10.0, sc in 0.0f64..10.0, se in 0.0f64..10.0, r in 0.0f64..10.0,
        cpus in 1.0f64..64.0, a in 0.0f64..1.0, b in 0.0f64..1.0,
    ) {
        let proc_ = a * t * 0.5;
        let h = HostTimes {
            elapsed: t, useful: u, mpi: m, mpi_worker_idle: mw, omp_load_imbalance: lb,
            omp_scheduling: sc, omp_serialization: se, gpu_runtime: r, cpus,
            min_mpi_normd_proc: proc_, min_mpi_normd_node: proc_ * b,
        };
        let x = host_tree(&h);
        prop_assert!(close(x.mpi_parallel_efficiency, x.mpi_load_balance * x.mpi_communication_efficiency));
        prop_assert!(close(x.mpi_load_balance, x.mpi_load_balance_in * x.mpi_load_balance_out));
        prop_assert!(close(
            x.omp_parallel_efficiency,
            x.omp_serialization_efficiency * x.omp_load_balance * x.omp_scheduling_efficiency
        ));
    }

    #[test]
    fn device_identity_holds(t in 0.1f64..100.0, g in 1.0f64..8.0, useful in 0.0f64..1.0, imb in 0.1f64..1.0, comm in 0.1f64..1.0) {
        let max_useful = t * useful;
        let d = device_tree(&DeviceTimes {
            elapsed: t, gpus: g, gpu_useful: max_useful * g * imb, max_gpu_useful: max_useful,
            max_gpu_active: (max_useful / comm).min(t),
        });
        prop_assert!(close(d.parallel_efficiency, d.load_balance * d.communication_efficiency * d.orchestration_efficiency));
    }

    #[test]
    fn pop_identities_hold(useful in prop::collection::vec(0.01f64..10.0, 1..64), slack in 0.0f64..5.0, wait in 0.0f64..5.0) {
        let max = useful.iter().copied().fold(0.0, f64::max);
        let ideal = max + wait;
        let runtime = ideal + slack;
        let p = Pop::from_useful(&useful, runtime, Some(ideal));
        prop_assert!(close(p.parallel_efficiency, p.load_balance * p.communication));
        prop_assert!(close(p.communication, p.serialisation.unwrap() * p.transfer.unwrap()));
    }
}

/// A small two-rank trace in Extrae's layout (illustrative test data).
fn small_trace() -> String {
    let mut s =
        String::from("#Paraver (01/01/2026 at 10:00):1000_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\n");
    s.push_str("1:1:1:1:1:0:400:1\n1:2:1:2:1:0:300:1\n");
    s.push_str("2:2:1:2:1:300:50000002:10:50100004:1\n");
    s.push_str("1:2:1:2:1:300:500:10\n");
    s.push_str("2:1:1:1:1:400:50000002:10:50100004:1\n");
    s.push_str("1:1:1:1:1:400:500:10\n");
    s.push_str("2:1:1:1:1:500:50000002:0\n2:2:1:2:1:500:50000002:0\n");
    s.push_str("1:1:1:1:1:500:900:1\n1:2:1:2:1:500:1000:1\n");
    s.push_str("3:1:1:1:1:900:900:2:1:2:1:950:960:100:0\n");
    s
}

fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_small_trace_replays_by_hand() {
    // Rank 1 computes 400 + 400, rank 2 300 + 500; the allreduce syncs both at ideal 400.
    // Rank 2's ideal clock: max(300, 400) + 500 = 900; rank 1 sends at 800 (ideal), rank 2
    // receives at real 960 > its last burst: clock max(900, 800) = 900. T_ideal = 900.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "small.prv", small_trace().as_bytes());
    let run = analyse(&p, &Options::default()).unwrap();
    let pop = run.pop.unwrap();
    assert!(close(run.elapsed_s, 1000e-9));
    assert!(close(pop.load_balance, 800.0 / 800.0));
    assert!(close(pop.serialisation.unwrap(), 800.0 / 900.0), "{pop:?}");
    assert!(close(pop.transfer.unwrap(), 900.0 / 1000.0), "{pop:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn garbled_or_truncated_traces_never_panic(cut in 0usize..600, flips in prop::collection::vec((0usize..600, any::<u8>()), 0..6), swap in any::<bool>()) {
        let mut bytes = small_trace().into_bytes();
        for (at, b) in flips {
            if at < bytes.len() { bytes[at] = b; }
        }
        if swap {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut lines: Vec<&str> = text.lines().collect();
            let last = lines.len().saturating_sub(1);
            if last > 3 { lines.swap(2, last); }
            bytes = lines.join("\n").into_bytes();
        }
        bytes.truncate(cut.min(bytes.len()));
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "bad.prv", &bytes);
        // Either an error that names the file, or a run: never a panic.
        if let Err(e) = analyse(&p, &Options { window: Some(jouleplan::units::Seconds(1e-7)), ..Options::default() }) {
            prop_assert!(e.to_string().contains("bad.prv"), "{}", e);
        }
    }

    #[test]
    fn garbled_talp_json_never_panics(cut in 0usize..1600, flips in prop::collection::vec((0usize..1600, any::<u8>()), 0..6)) {
        let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixtures/talp/test_mpi_sendrecv_profile_1_0.json");
        let text = std::fs::read(&f).expect("tests/data/fixtures/talp is part of the repository");
        let mut bytes = text.clone();
        for (at, b) in flips {
            if at < bytes.len() { bytes[at] = b; }
        }
        bytes.truncate(cut.min(bytes.len()));
        let s = String::from_utf8_lossy(&bytes);
        if let Err(e) = talp::read(Path::new("t.json"), &s) {
            prop_assert!(e.to_string().contains("t.json"), "{}", e);
        }
    }
}

#[test]
fn a_garbled_record_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = small_trace().replace("1:2:1:2:1:0:300:1", "1:2:1:2:1:0:x00:1");
    let p = write(dir.path(), "g.prv", text.as_bytes());
    let e = analyse(&p, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("g.prv") && e.contains("line 4"), "{e}");
    let p = write(dir.path(), "h.prv", b"not a trace\n");
    let e = analyse(&p, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("Paraver header"), "{e}");
}

#[test]
fn messages_that_violate_causality_are_reported_and_treated_as_local() {
    let dir = tempfile::tempdir().unwrap();
    let text = small_trace().replace(
        "3:1:1:1:1:900:900:2:1:2:1:950:960:100:0",
        "3:1:1:1:1:900:900:2:1:2:1:950:850:100:0",
    );
    let p = write(dir.path(), "c.prv", text.as_bytes());
    let run = analyse(&p, &Options::default()).unwrap();
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("1 messages mismatched or violating causality")),
        "{:?}",
        run.notes
    );
}

#[test]
fn talp_csv_and_legacy_35_json_are_read() {
    // Built from the sendrecv fixture's Global numbers in TALP's CSV layout (DLB's
    // talp_output.c column names), and in DLB 3.5's JSON layout (normalised useful times).
    let dir = tempfile::tempdir().unwrap();
    let csv = "name,numCpus,numMpiRanks,numNodes,avgCpus,cycles,instructions,numMeasurements,numMpiCalls,numOmpParallels,numOmpTasks,numGpuCalls,elapsedTime,usefulTime,mpiTime,ompLoadImbalanceTime,ompSchedulingTime,ompSerializationTime,gpuRuntimeTime,minMpiNormdProc,minMpiNormdNode,parallelEfficiency,mpiParallelEfficiency,mpiCommunicationEfficiency,mpiLoadBalance,mpiLoadBalanceIn,mpiLoadBalanceOut,ompParallelEfficiency,ompLoadBalance,ompSchedulingEfficiency,ompSerializationEfficiency,deviceOffloadEfficiency,gpuParallelEfficiency,gpuLoadBalance,gpuCommunicationEfficiency,gpuOrchestrationEfficiency\n\
\"Global\",2,2,1,4.0,0,0,2,10,0,0,0,2000173852,2500133747,1497445618,0,0,0,0,497345142,748722809,0.63,0.63,0.75,0.83,0.83,1.00,1.00,1.00,1.00,1.00,1.00,0.00,0.00,0.00,0.00\n";
    let p = write(dir.path(), "t-pop.csv", csv.as_bytes());
    let f = talp::read(&p, csv).unwrap();
    let runs = jouleplan::metrics::run::from_talp(&f);
    assert_eq!(runs.len(), 1);
    assert!(
        runs[0].talp_disagreements.is_empty(),
        "{:?}",
        runs[0].talp_disagreements
    );
    let h = runs[0].host.unwrap();
    assert!((h.mpi_communication_efficiency - 0.7513).abs() < 1e-3);
    let proc_csv = "Region,Rank,PID,NodeId,Hostname,CpuSet,NumCpus,AvgCpus,Cycles,Instructions,NumMeasurements,NumResets,NumMpiCalls,NumOmpParallels,NumOmpTasks,NumGpuCalls,ElapsedTime,UsefulTime,MPITime,OMPLoadImbalance,OMPSchedulingTime,OMPSerializationTime,GPURuntimeTime\n\
Global,0,100,0,vm,\"[0,1]\",1,1.0,0,0,1,0,5,0,0,0,2000000000,1500000000,500000000,0,0,0,0\n\
Global,1,101,0,vm,\"[2,3]\",1,1.0,0,0,1,0,5,0,0,0,2000000000,1000000000,1000000000,0,0,0,0\n";
    let f = talp::read(
        &write(dir.path(), "t-process.csv", proc_csv.as_bytes()),
        proc_csv,
    )
    .unwrap();
    let runs = jouleplan::metrics::run::from_talp(&f);
    let pop = runs[0].pop.unwrap();
    assert!((pop.load_balance - 1250.0 / 1500.0).abs() < 1e-12);
    assert!((pop.communication - 0.75).abs() < 1e-12);
    let legacy = r#"{"dlbVersion": "3.5.0", "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2,
        "elapsedTime": 2000000000, "usefulTime": 2500000000, "usefulNomrdApp": 1250000000,
        "mpiNormdApp": 750000000, "maxUsefulNormdProc": 1500000000, "maxUsefulNormdNode": 1250000000,
        "mpiNormdOfMaxUseful": 500000000}}}"#;
    let f = talp::read(Path::new("legacy.json"), legacy).unwrap();
    let runs = jouleplan::metrics::run::from_talp(&f);
    let h = runs[0].host.unwrap();
    assert!((h.mpi_parallel_efficiency - 0.625).abs() < 1e-12);
    assert!((h.mpi_communication_efficiency - 0.75).abs() < 1e-12);
    assert!((h.mpi_load_balance - 1250.0 / 1500.0).abs() < 1e-12);
    assert!(runs[0].notes[0].contains("DLB 3.5"));
}
