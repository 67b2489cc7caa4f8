//! Writes a large SYNTHETIC Paraver trace for measuring `jouleplan metrics`:
//! `cargo run --release --example gen_trace -- OUT.prv [RANKS] [ITERATIONS] [IMBALANCE]
//! [MESSAGE_BYTES] [ALLREDUCE_EVERY]` (defaults 256 ranks, 10,000 iterations, imbalance 0.4,
//! 40,960-byte messages, an Allreduce every 10 iterations: 676 MB; 16,000 iterations give the
//! 1.08 GB trace of `cargo bench --bench trace`).

#[path = "../benches/support/trace_gen.rs"]
mod trace_gen;

use std::io::Write;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!(
            "usage: gen_trace OUT.prv [RANKS] [ITERATIONS] [IMBALANCE] [MESSAGE_BYTES] [ALLREDUCE_EVERY]"
        );
        return std::process::ExitCode::from(2);
    };
    let num = |k: usize, d: f64| -> Result<f64, String> {
        args.get(k).map_or(Ok(d), |a| {
            a.parse()
                .map_err(|_| format!("argument {k}: {a:?} is not a number"))
        })
    };
    let shape = (|| -> Result<trace_gen::Shape, String> {
        Ok(trace_gen::Shape {
            ranks: num(1, 256.0)?.max(1.0) as u64,
            iterations: num(2, 10_000.0)? as u64,
            imbalance: num(3, 0.4)?,
            message_bytes: num(4, 40_960.0)? as u64,
            allreduce_every: num(5, 10.0)? as u64,
        })
    })();
    let shape = match shape {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let written = std::fs::File::create(out).and_then(|f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
        shape.write(&mut w)?;
        w.flush()
    });
    match written {
        Ok(()) => {
            eprintln!("{out}: {shape:?}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: {out}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
