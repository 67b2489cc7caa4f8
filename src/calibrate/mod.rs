//! Calibration: fits that turn measurements into model inputs, and the checks of the model
//! against them. Power per core state from measured node power ([`power`]), the wall-time law
//! over core counts that fills unmeasured core counts ([`core_fill`]), the model against its
//! own baseline ([`reproduce`]), on a weighted least-squares core (`crate::numeric::lsq`).
//! The ping-pong fit ([`network_fit`]) and the memory-contention curve ([`contention`]) are
//! here too; docs/ARCHITECTURE.md ("Where each file lives") lists the rest.

pub mod contention;
pub mod core_fill;
pub mod energy_law;
pub mod fit;
pub mod from_measured;
pub mod gpu_carry;
pub mod gpu_clock;
pub mod gpu_fit;
#[path = "../../calibration/kernels.rs"]
pub mod kernels;

mod energy_method;
pub mod machine_edit;
pub mod multi_node;
pub mod network_fit;
pub mod node_fit;
mod node_forms;
mod node_method;
pub mod node_rule;
mod node_stack;
pub mod nonlinear;
pub mod power;
pub mod power_fit;
pub mod repeats;
pub mod reproduce;
pub mod runs;
pub mod sacct_runs;
pub mod sweep_law;
pub mod time_split;
pub mod trust;
pub mod validate;
