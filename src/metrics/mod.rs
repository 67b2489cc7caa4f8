//! Efficiency metrics (METRICS.md): the TALP host and device trees, POP metrics from traces and
//! across runs, read from TALP, Paraver and mpiP outputs.

pub mod counter_sanity;
pub mod mpip;
pub mod paraver;
pub mod record_fields;
pub mod run;
pub mod scaling;
pub mod talp;
pub mod timeline;
pub mod tree;
pub mod windows;
