//! jouleplan: an energy-aware configuration planner for HPC jobs.
//!
//! The pipeline, one module per stage: measure -> metrics -> calibrate -> **model** ->
//! **search** -> **report**. This crate holds the planner core: the analytical time/energy model
//! ([`model`]), the exact Pareto search and recommendation queries ([`search`]) and the outputs
//! ([`report`]); [`cli`] turns command-line flags into validated inputs for them.

pub mod artefact;
pub mod atomic_write;
pub mod calibrate;
pub mod campaign;
pub mod error;
pub mod input;
pub mod limits;
pub mod measure;
pub mod metrics;
pub mod model;
pub mod numeric;
pub mod report;
pub mod search;
pub mod units;
pub mod values;
