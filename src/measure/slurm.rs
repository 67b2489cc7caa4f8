//! Node energy from Slurm's accounting (`ConsumedEnergyRaw`, joules) when `profile` runs inside a
//! job and each run is a job step (`--launcher srun`, chosen by default inside a job).
//!
//! The energy is what the site's `AcctGatherEnergyType` plugin (RAPL, IPMI, ...) recorded for
//! the step, read with `sacct -n -P -j JOB -o JobID,ConsumedEnergyRaw` after the step ends.

use super::{Backend, Readings, RunContext, Unsupported};
use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

/// Domain name of Slurm's node-level energy in [`Readings::energy_j`].
pub const DOMAIN: &str = crate::artefact::readings::SLURM_DOMAIN;

/// `(step id, ConsumedEnergyRaw)` rows of `sacct -n -P -o JobID,ConsumedEnergyRaw`; an empty or
/// non-numeric energy, Slurm's no-value marker or one outside the physical range is `None`.
pub fn parse_sacct(text: &str) -> Vec<(String, Option<f64>)> {
    text.lines()
        .filter_map(|l| {
            let (id, e) = l.trim().split_once('|')?;
            let e = e.split('|').next().unwrap_or("").trim();
            Some((
                id.trim().to_string(),
                crate::limits::slurm_energy(e).ok().flatten(),
            ))
        })
        .collect()
}

fn sacct(job: &str) -> Result<String, String> {
    let out = Command::new("sacct")
        .args(["-n", "-P", "-j", job, "-o", "JobID,ConsumedEnergyRaw"])
        .output()
        .map_err(|e| format!("sacct could not be run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sacct failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The Slurm energy backend.
#[derive(Default)]
pub struct SlurmEnergy {
    job: Option<String>,
    before: BTreeSet<String>,
}

impl Backend for SlurmEnergy {
    fn name(&self) -> &'static str {
        "slurm-energy"
    }

    fn every_node(&self) -> bool {
        true
    }

    fn discover(&mut self) -> Result<String, Unsupported> {
        let what = "node energy (Slurm ConsumedEnergyRaw)";
        let job = std::env::var("SLURM_JOB_ID").map_err(|_| {
            Unsupported::new(
                what,
                "not inside a Slurm job (SLURM_JOB_ID is unset)",
                "run `jouleplan profile` inside an allocation (salloc/sbatch) on a cluster whose \
                 AcctGatherEnergyType is set",
            )
        })?;
        if let Ok(out) = Command::new("scontrol").args(["show", "config"]).output() {
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(line) = text.lines().find(|l| l.starts_with("AcctGatherEnergyType"))
                && line.contains("none")
            {
                {
                    return Err(Unsupported::new(
                        what,
                        format!("this cluster gathers no energy ({})", line.trim()),
                        "ask the admins for an AcctGatherEnergyType plugin (rapl, ipmi, ...)",
                    ));
                }
            }
        }
        sacct(&job).map_err(|e| {
            Unsupported::new(
                what,
                e,
                "Slurm's accounting storage must be on (slurmdbd) for sacct",
            )
        })?;
        self.job = Some(job.clone());
        Ok(format!("job {job}, one step per run"))
    }

    fn begin(&mut self) -> Result<(), String> {
        if let Some(job) = &self.job {
            self.before = parse_sacct(&sacct(job)?)
                .into_iter()
                .map(|(id, _)| id)
                .collect();
        }
        Ok(())
    }

    fn end(&mut self, _ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String> {
        let Some(job) = &self.job else {
            return Ok(());
        };
        // Accounting lags the step's end by a moment.
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let rows = parse_sacct(&sacct(job)?);
            let new: Vec<&(String, Option<f64>)> = rows
                .iter()
                .filter(|(id, _)| id.contains('.') && !self.before.contains(id))
                .collect();
            if let Some((_, Some(e))) = new.iter().find(|(_, e)| e.is_some_and(|e| e > 0.0)) {
                out.energy_j.insert(DOMAIN.to_string(), *e);
                return Ok(());
            }
            if Instant::now() > deadline {
                out.warnings.push(if new.is_empty() {
                    "Slurm: no new job step appeared; launch the runs with --launcher srun".into()
                } else {
                    "Slurm: the step recorded no ConsumedEnergyRaw".into()
                });
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacct_rows_with_and_without_energy() {
        let rows = parse_sacct("123|\n123.batch|0\n123.0|45231\n123.1|\n");
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2], ("123.0".to_string(), Some(45231.0)));
        assert_eq!(rows[3].1, None);
    }
}
