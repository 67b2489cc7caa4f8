//! The host efficiency tree TALP and POP users read (seeds 001 and 002), predicted for every
//! configuration from the model's own terms (`docs/MODEL.md`, "The predicted host tree"):
//! parallel efficiency = MPI parallel efficiency x OpenMP parallel efficiency x device
//! offload efficiency. Each value says whether it is predicted or absent (the MPI load balance
//! needs per-rank measurements no profile holds yet).

use super::Prediction;

/// Where a value of the tree comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// From the model's terms at this configuration.
    Predicted,
    /// Measured beside the baseline (TALP) and kept.
    Carried,
    /// Nothing measured to say: left out of the products.
    Absent,
}

impl Source {
    /// The word used in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Source::Predicted => "predicted",
            Source::Carried => "carried",
            Source::Absent => "absent",
        }
    }
}

/// Efficiencies measured beside the baseline (a TALP output or a trace in the profile's
/// `measured_tree`), each with the core count of the point it was measured at.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Carried {
    /// OpenMP parallel efficiency.
    pub openmp: Option<(f64, u32)>,
    /// MPI load balance.
    pub load_balance: Option<(f64, u32)>,
}

/// The predicted host tree of one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostTree {
    /// MPI PE x OpenMP PE x device offload efficiency.
    pub parallel_efficiency: f64,
    /// MPI communication efficiency (x load balance when measured).
    pub mpi_parallel_efficiency: f64,
    /// `1 - (T_w,net + T_s,net + X(n)) / T` with messages between nodes (1 on one node).
    pub mpi_communication_efficiency: f64,
    /// MPI load balance, when the profile measured it (carried).
    pub mpi_load_balance: Option<f64>,
    /// The core count the load balance was measured at, when carried.
    pub load_balance_from: Option<u32>,
    /// Busy host time over the host time outside MPI and the device: `(T_CPU + T_mem -
    /// T_spin) / (T - T_mpi - T_gpu - T_spin)`; or TALP's, carried from the baseline.
    pub openmp_parallel_efficiency: f64,
    /// Where the OpenMP efficiency comes from, and the core count it was measured at when
    /// carried.
    pub openmp_source: (Source, Option<u32>),
    /// `(T - T_mpi - T_gpu - T_spin) / (T - T_mpi)`: host time not blocked on the device
    /// (`T_spin`: blocked time spent spinning, inside the busy terms).
    pub device_offload_efficiency: f64,
}

impl HostTree {
    /// The tree of a prediction.
    pub fn of(p: &Prediction) -> HostTree {
        HostTree::from_terms(p.config.nodes, p.time.0, &p.t, p.carried)
    }

    /// The tree from the time terms of an evaluation at `nodes` nodes (the search's hot path
    /// uses this without packaging a prediction); `carried`: what was measured beside the
    /// baseline.
    pub fn from_terms(nodes: u32, t: f64, terms: &super::TimeTerms, carried: Carried) -> HostTree {
        // The node law's waiting time is communication (MODEL.md 6c b); a negative one is a
        // gain over perfect scaling, not communication.
        let mpi =
            terms.wait_net + if nodes > 1 { terms.serv_net } else { 0.0 } + terms.nodes.max(0.0);
        let ratio = |a: f64, b: f64| {
            if b > 0.0 {
                (a / b).clamp(0.0, 1.0)
            } else {
                1.0
            }
        };
        let comm = ratio(t - mpi, t);
        let blocked = terms.gpu + terms.gpu_spin;
        let (omp, openmp_source) = match carried.openmp {
            Some((v, c)) => (v.clamp(0.0, 1.0), (Source::Carried, Some(c))),
            None => (
                ratio(
                    (terms.cpu + terms.mem - terms.gpu_spin).max(0.0),
                    t - mpi - blocked,
                ),
                (Source::Predicted, None),
            ),
        };
        let offload = ratio(t - mpi - blocked, t - mpi);
        let lb = carried.load_balance.map(|(v, _)| v.clamp(0.0, 1.0));
        let mpi = comm * lb.unwrap_or(1.0);
        HostTree {
            parallel_efficiency: mpi * omp * offload,
            mpi_parallel_efficiency: mpi,
            mpi_communication_efficiency: comm,
            mpi_load_balance: lb,
            load_balance_from: carried.load_balance.map(|(_, c)| c),
            openmp_parallel_efficiency: omp,
            openmp_source,
            device_offload_efficiency: offload,
        }
    }

    /// Where the MPI load balance comes from.
    pub fn load_balance_source(&self) -> Source {
        if self.mpi_load_balance.is_some() {
            Source::Carried
        } else {
            Source::Absent
        }
    }
}
