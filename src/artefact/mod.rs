//! The artefacts: the files and records the stages hand each other, one type each, below every
//! stage. `measure` writes them, `calibrate` reads and writes them, `model` reads them; none of
//! them imports a stage (docs/ARCHITECTURE.md).

pub mod machine;
pub mod node_law;
pub mod pingpong;
pub mod profile;
pub mod readings;
pub mod sweep;
