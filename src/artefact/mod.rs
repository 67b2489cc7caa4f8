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

/// Serialises a GPU clock in MHz as the whole number a clock is (`1164`, not `1164.0`), as
/// `--gpu-freq` and the machine file write it; anything else as it is.
pub fn whole_mhz<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(m) if m.fract() == 0.0 && m.abs() < 1e15 => s.serialize_i64(*m as i64),
        Some(m) => s.serialize_f64(*m),
        None => s.serialize_none(),
    }
}

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
