//! Calibration: fits that turn measurements into model inputs, and the checks of the model
//! against them. Power per core state from measured node power ([`power`]), the wall-time law
//! over core counts that fills unmeasured core counts ([`core_fill`]), the model against its
//! own baseline ([`reproduce`]), on a weighted least-squares core ([`lsq`]).
//! (Network ping-pong and memory-contention fits belong here too; see the README's status.)

pub mod core_fill;
pub mod lsq;
pub mod power;
pub mod reproduce;
pub mod validate;
