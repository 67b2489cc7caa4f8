//! The artefacts: the files and records the stages hand each other, one type each, below every
//! stage. `measure` writes them, `calibrate` reads and writes them, `model` reads them; none of
//! them imports a stage (docs/ARCHITECTURE.md).

pub mod fit;
pub mod gpu_clock;
pub mod machine;
pub mod measured;
pub mod node_law;
pub mod pingpong;
pub mod plan;
pub mod profile;
pub mod readings;
pub mod sweep;
pub mod validation;

/// Writes `v` as pretty JSON with its keys sorted (through a JSON value), then a newline: how
/// every JSON artefact is printed, so its text does not depend on the order of a type's fields.
pub fn write_sorted<T: serde::Serialize>(
    v: &T,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let value = serde_json::to_value(v)?;
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}
