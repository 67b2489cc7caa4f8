//! MPI messages per rank (`eta`) and bytes per message (`nu`) from a profiler the user preloads
//! into the same run: mpiP (messages and bytes per rank) or TALP (MPI calls only).
//!
//! One-line recipes (the launcher passes the environment on to the ranks):
//! - mpiP: `jouleplan profile --mpi-profiler mpip --ranks 4 -- env LD_PRELOAD=/path/libmpiP.so ./app`
//! - TALP: `jouleplan profile --mpi-profiler talp --ranks 4 -- env LD_PRELOAD=/path/libdlb_mpi.so ./app`
//!
//! jouleplan points each run's output into a folder of its own (`MPIP=-f DIR`,
//! `DLB_ARGS=--talp --talp-output-file=DIR/talp.json`) and reads it after the run.

use super::{Backend, Readings, RunContext, Unsupported};
use crate::error::InputResult;
use crate::metrics::mpip;
use std::path::{Path, PathBuf};

/// Which profiler the run is preloaded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profiler {
    /// mpiP: `*.mpiP` reports.
    Mpip,
    /// TALP (DLB): a JSON file.
    Talp,
}

/// Messages and bytes sent per rank over a run, from an mpiP report.
pub fn from_mpip(file: &Path, text: &str) -> InputResult<(f64, f64)> {
    let rep = mpip::parse(file, text)?;
    let per = rep.per_rank();
    let ranks = per.len().max(rep.ranks.len()).max(1) as f64;
    let (m, b) = per
        .values()
        .fold((0.0, 0.0), |a, &(m, b)| (a.0 + m, a.1 + b));
    Ok((m / ranks, b / ranks))
}

/// MPI calls per rank over a run, from a TALP JSON (`Application.Global.numMpiCalls` over
/// `numMpiRanks`). TALP counts calls, not messages or bytes.
pub fn from_talp(file: &Path, text: &str) -> InputResult<f64> {
    let doc = crate::input::parse_json(file, text)?;
    let g = &doc["Application"]["Global"];
    let calls = g["numMpiCalls"].as_f64();
    let ranks = g["numMpiRanks"].as_f64().filter(|&r| r > 0.0);
    match (calls, ranks) {
        (Some(c), Some(r)) => Ok(c / r),
        _ => Err(crate::error::InputError::Key {
            file: file.to_path_buf(),
            key: "Application.Global.numMpiCalls".into(),
            expected: "numMpiCalls and numMpiRanks (> 0) in the Global region".into(),
            got: "nothing".into(),
        }),
    }
}

/// The MPI-profiler backend.
pub struct MpiProfiler {
    profiler: Profiler,
    dir: PathBuf,
}

impl MpiProfiler {
    /// A backend reading `profiler`'s output.
    pub fn new(profiler: Profiler) -> Self {
        MpiProfiler {
            profiler,
            dir: PathBuf::new(),
        }
    }
}

fn append(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    let old = std::env::var(key).unwrap_or_default();
    let v = if old.is_empty() {
        value.to_string()
    } else {
        format!("{old} {value}")
    };
    env.retain(|(k, _)| k != key);
    env.push((key.to_string(), v));
}

impl Backend for MpiProfiler {
    fn name(&self) -> &'static str {
        match self.profiler {
            Profiler::Mpip => "mpip",
            Profiler::Talp => "talp",
        }
    }

    fn every_node(&self) -> bool {
        true
    }

    fn discover(&mut self) -> Result<String, Unsupported> {
        Ok(match self.profiler {
            Profiler::Mpip => "MPI messages and bytes per rank from mpiP reports".into(),
            Profiler::Talp => {
                "MPI calls per rank from TALP (no message sizes: bytes per message stay unmeasured)"
                    .into()
            }
        })
    }

    fn prepare(&mut self, env: &mut Vec<(String, String)>, run_dir: &Path) {
        self.dir = run_dir.to_path_buf();
        match self.profiler {
            Profiler::Mpip => append(env, "MPIP", &format!("-f {}", run_dir.display())),
            Profiler::Talp => append(
                env,
                "DLB_ARGS",
                &format!(
                    "--talp --talp-output-file={}",
                    run_dir.join("talp.json").display()
                ),
            ),
        }
    }

    fn end(&mut self, ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String> {
        let want = match self.profiler {
            Profiler::Mpip => "mpiP",
            Profiler::Talp => "json",
        };
        let file = std::fs::read_dir(&self.dir)
            .map_err(|e| format!("{}: {e}", self.dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == want));
        let Some(file) = file else {
            out.warnings.push(format!(
                "no {want} output in {}: was the profiler preloaded (LD_PRELOAD) into the ranks?",
                self.dir.display()
            ));
            return Ok(());
        };
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        match self.profiler {
            Profiler::Mpip => {
                let (m, b) = from_mpip(&file, &text).map_err(|e| e.to_string())?;
                out.mpi_messages_per_rank = Some(m);
                out.mpi_bytes_per_rank = Some(b);
            }
            Profiler::Talp => {
                // The trees (and device times with DLB's GPU plugin) of the run itself.
                let tree = super::talp_attach::attachment_of(&file, &text, ctx.cores);
                match from_talp(&file, &text) {
                    Ok(m) => out.mpi_messages_per_rank = Some(m),
                    Err(e) if tree.is_err() => return Err(e.to_string()),
                    Err(_) => out.warnings.push(format!(
                        "{}: TALP saw no MPI rank: messages not measured",
                        file.display()
                    )),
                }
                out.talp = tree.ok();
            }
        }
        Ok(())
    }
}
