//! Calibration of the machine: fits of power per core state from measured node power.
//! (Network ping-pong and memory-contention fits belong here too; see the README's status.)

pub mod power;
