//! The terms of one configuration: its time terms (MODEL.md section 3), its energy terms
//! (section 4), and both with `T`, `E` and `rho` as the search evaluates them.

/// The time terms of MODEL.md section 3 (and the host time blocked on GPUs, section 6).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeTerms {
    /// `T_CPU`.
    pub cpu: f64,
    /// `T_mem = T_w,mem + T_s,mem`.
    pub mem: f64,
    /// `T_w,net`.
    pub wait_net: f64,
    /// `T_s,net`.
    pub serv_net: f64,
    /// `T_gpu`: host time blocked on the device (0 without GPUs).
    pub gpu: f64,
    /// `T_ser`: one thread busy (MODEL.md 6b); not divided over cores or nodes.
    pub serial: f64,
    /// `T_wait`: no thread busy (MODEL.md 6b); not divided over cores or nodes.
    pub wait: f64,
    /// `X(n)`: the node law's time (MODEL.md 6c b), waiting with no core busy; 0 at one node
    /// and without a node law.
    pub nodes: f64,
    /// The part of `T_CPU + T_ser` the host spent spin-waiting in the GPU runtime (blocked
    /// time that the busy cycles already hold): inside those terms, not added to `T`; used by
    /// the efficiency trees (MODEL.md, "The predicted host tree").
    pub gpu_spin: f64,
}

impl TimeTerms {
    /// What `T_s,net` (and `E_net`) is at `nodes` nodes where it is not the network's service
    /// time: on one node (no traffic between nodes) the time the cores are not busy,
    /// `(1 - U) T_CPU`, and `E_net` that time at `P_net`. The terms keep their names at every
    /// node count; this note goes beside them.
    pub fn serv_net_at(nodes: u32) -> Option<&'static str> {
        (nodes == 1).then_some(
            "at one node T_s,net is the time the cores are not busy, (1 - U) T_CPU, and network \
             energy that time at P_net (no traffic between nodes)",
        )
    }
}

/// The energy terms of MODEL.md section 4, each already multiplied by the node count, so that
/// they add up to the total.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EnergyTerms {
    /// `n E_CPU`.
    pub cpu: f64,
    /// `n E_mem`.
    pub mem: f64,
    /// `n E_net`.
    pub net: f64,
    /// `n E_idle`.
    pub idle: f64,
    /// `n E_gpu`.
    pub gpu: f64,
}

/// The terms of one configuration before they are packaged (the hot path of the search).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eval {
    /// `T`.
    pub time: f64,
    /// `E`.
    pub energy: f64,
    /// `E_d`: the energy derived from time and node power, before the energy law (MODEL.md 6c;
    /// `energy` without one).
    pub derived_energy: f64,
    /// `rho`.
    pub rho: f64,
    /// Time terms.
    pub t: TimeTerms,
    /// Energy terms.
    pub e: EnergyTerms,
}
