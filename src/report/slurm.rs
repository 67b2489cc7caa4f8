//! Slurm job scripts for one predicted configuration (FORMATS.md, Slurm).
//!
//! The user's command is given as words; each is written in single quotes where it is not
//! plain, so spaces, quotes, `$`, backticks and newlines reach the program literally (nothing
//! is expanded by the batch shell). A NUL byte cannot be passed to a program and is rejected.

use crate::error::{InputError, InputResult};
use crate::model::Prediction;
use crate::units::{Seconds, fmt_duration, fmt_energy};
use std::fmt::Write as _;

/// Where the prediction came from, for the script's header.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// Machine name, file and SHA-256.
    pub machine: (String, String, String),
    /// Program name, profile file and SHA-256.
    pub profile: (String, String, String),
    /// The recommendation's reason, or how the configuration was chosen.
    pub reason: String,
    /// What the recommendation must warn of (another machine, model error, no message data).
    pub warnings: Vec<String>,
    /// Memory one node needs, GiB, when the profile states the footprint (`--mem`).
    pub mem_per_node_gib: Option<f64>,
}

/// Options of the job, validated.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// The program and its arguments, as words.
    pub app: Vec<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--partition`.
    pub partition: Option<String>,
    /// The time limit is the predicted time times `1 + time_margin`, rounded up to a minute.
    pub time_margin: f64,
    /// Job name.
    pub job_name: String,
    /// `--constraint`: node features the job needs (`h100&ib`).
    pub constraint: Option<String>,
}

fn plain_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c))
}

/// One word for a POSIX shell, literal whatever it holds.
pub fn shell_quote(w: &str) -> String {
    if plain_word(w) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Splits `--app 'COMMAND ...'` into words with POSIX shell rules (quotes group words; nothing
/// is expanded).
pub fn split_app(flag: &str, s: &str) -> InputResult<Vec<String>> {
    let words = shlex::split(s).ok_or_else(|| InputError::Argument {
        flag: flag.into(),
        expected: "a command line with balanced quotes".into(),
        got: s.into(),
    })?;
    if words.is_empty() {
        return Err(InputError::Argument {
            flag: flag.into(),
            expected: "the program to run and its arguments".into(),
            got: s.into(),
        });
    }
    Ok(words)
}

impl JobOptions {
    /// Checks the options that go into `#SBATCH` lines unquoted.
    pub fn validate(&self) -> InputResult<()> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        };
        for (flag, v) in [
            ("--account", &self.account),
            ("--partition", &self.partition),
        ] {
            if let Some(v) = v
                && !name_ok(v)
            {
                return Err(InputError::Argument {
                    flag: flag.into(),
                    expected: "a Slurm name: letters, digits, '_', '-', '.'".into(),
                    got: v.clone(),
                });
            }
        }
        if let Some(c) = &self.constraint
            && (c.is_empty()
                || !c
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "_-.&|[]*:,".contains(ch)))
        {
            return Err(InputError::Argument {
                flag: "--constraint".into(),
                expected: "Slurm node features: letters, digits and & | [ ] * : , _ - .".into(),
                got: c.clone(),
            });
        }
        if !name_ok(&self.job_name) {
            return Err(InputError::Argument {
                flag: "--job-name".into(),
                expected: "letters, digits, '_', '-', '.'".into(),
                got: self.job_name.clone(),
            });
        }
        if !(self.time_margin.is_finite() && self.time_margin >= 0.0) {
            return Err(InputError::Argument {
                flag: "--time-margin".into(),
                expected: "a fraction >= 0".into(),
                got: self.time_margin.to_string(),
            });
        }
        if self.app.is_empty() {
            return Err(InputError::Argument {
                flag: "--app".into(),
                expected: "the program to run and its arguments".into(),
                got: "nothing".into(),
            });
        }
        if let Some(w) = self.app.iter().find(|w| w.contains('\0')) {
            return Err(InputError::Argument {
                flag: "--app".into(),
                expected: "words without NUL bytes (a program cannot receive them)".into(),
                got: w.escape_debug().to_string(),
            });
        }
        Ok(())
    }
}

/// Slurm's `[D-]HH:MM:SS` for a whole number of minutes.
pub fn slurm_time(minutes: u64) -> String {
    let (d, h, m) = (minutes / 1440, (minutes % 1440) / 60, minutes % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:00")
    } else {
        format!("{h:02}:{m:02}:00")
    }
}

/// The time limit for a predicted time: `T (1 + margin)`, rounded up to a whole minute, at
/// least one minute.
pub fn time_limit_minutes(t: Seconds, margin: f64) -> u64 {
    ((t.0 * (1.0 + margin)) / 60.0).ceil().max(1.0) as u64
}

/// Writes the job script for `p`.
pub fn job_script(p: &Prediction, prov: &Provenance, opts: &JobOptions) -> InputResult<String> {
    opts.validate()?;
    let c = &p.config;
    let khz = (c.freq.0 / 1e3).round() as u64;
    // Beyond the measured node counts the limit also covers the interval's high end.
    let high = p.interval.map_or(0.0, |i| i.time_s.1);
    let minutes =
        time_limit_minutes(p.time, opts.time_margin).max(time_limit_minutes(Seconds(high), 0.0));
    let command: Vec<String> = opts.app.iter().map(|w| shell_quote(w)).collect();
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "#!/bin/bash");
    let _ = writeln!(w, "# Generated by jouleplan {}.", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        w,
        "# Configuration ({}, {}, {} GHz, {}): {} nodes x {} cores at {} kHz, {} GPUs per node.",
        c.nodes,
        c.cores,
        c.freq.ghz(),
        c.gpus,
        c.nodes,
        c.cores,
        khz,
        c.gpus
    );
    let _ = writeln!(w, "# Why: {}", prov.reason.escape_debug());
    for warning in &prov.warnings {
        let _ = writeln!(w, "# WARNING: {}", warning.escape_debug());
    }
    let _ = writeln!(
        w,
        "# Predicted: time {} ({:.6} s), energy {} ({:.3} J), UCR {:.3}, network headroom 1-rho {:.3}",
        fmt_duration(p.time),
        p.time.0,
        fmt_energy(p.energy),
        p.energy.0,
        p.ucr,
        1.0 - p.rho
    );
    let node_law = if p.t.nodes != 0.0 {
        format!(" + X(n) {:.6}", p.t.nodes)
    } else {
        String::new()
    };
    let _ = writeln!(
        w,
        "#   time = T_CPU {:.6} + T_mem {:.6} + T_w,net {:.6} + {} {:.6} + T_gpu {:.6} + T_ser {:.6} + T_idle {:.6}{node_law} s",
        p.t.cpu,
        p.t.mem,
        p.t.wait_net,
        crate::model::TimeTerms::serv_net_name(c.nodes),
        p.t.serv_net,
        p.t.gpu,
        p.t.serial,
        p.t.wait
    );
    if let Some(i) = &p.interval {
        let _ = writeln!(
            w,
            "# Beyond the measured node counts (up to {}): time {:.3} to {:.3} s, energy {:.0} to {:.0} J.",
            i.largest_measured, i.time_s.0, i.time_s.1, i.energy_j.0, i.energy_j.1
        );
    }
    let _ = writeln!(
        w,
        "#   energy = CPU {:.3} + memory {:.3} + {} {:.3} + idle {:.3} + GPU {:.3} J",
        p.e.cpu,
        p.e.mem,
        crate::model::TimeTerms::net_energy_name(c.nodes),
        p.e.net,
        p.e.idle,
        p.e.gpu
    );
    let h = crate::model::host_tree::HostTree::of(p);
    let _ = writeln!(
        w,
        "#   host parallel efficiency {:.3} = MPI {:.3} (communication {:.3}; load balance {}) x OpenMP {:.3} ({}) x device offload {:.3}",
        h.parallel_efficiency,
        h.mpi_parallel_efficiency,
        h.mpi_communication_efficiency,
        h.mpi_load_balance
            .map_or("not measured".to_string(), |v| format!(
                "{v:.3}, {}",
                crate::report::json::load_balance_source(&h)
            )),
        h.openmp_parallel_efficiency,
        crate::report::json::openmp_source(&h),
        h.device_offload_efficiency
    );
    if let Some(d) = &p.device {
        let _ = writeln!(
            w,
            "#   device parallel efficiency {:.3} = load balance {:.3} x communication {:.3} x orchestration {:.3}; offload {:.3}",
            d.parallel_efficiency,
            d.load_balance,
            d.communication_efficiency,
            d.orchestration_efficiency,
            d.offload_efficiency
        );
    }
    let _ = writeln!(w, "# Model inputs:");
    let _ = writeln!(
        w,
        "#   machine {} ({}), sha256 {}",
        prov.machine.0.escape_debug(),
        prov.machine.1.escape_debug(),
        prov.machine.2
    );
    let _ = writeln!(
        w,
        "#   profile {} ({}), sha256 {}",
        prov.profile.0.escape_debug(),
        prov.profile.1.escape_debug(),
        prov.profile.2
    );
    let _ = writeln!(
        w,
        "# Time limit: predicted time x {:.2}{}, rounded up to a minute.",
        1.0 + opts.time_margin,
        if high > 0.0 {
            ", or the interval's high end where longer"
        } else {
            ""
        }
    );
    let _ = writeln!(w, "#SBATCH --job-name={}", opts.job_name);
    let _ = writeln!(w, "#SBATCH --nodes={}", c.nodes);
    let _ = writeln!(w, "#SBATCH --ntasks-per-node=1");
    let _ = writeln!(w, "#SBATCH --cpus-per-task={}", c.cores);
    if c.gpus > 0 {
        let _ = writeln!(w, "#SBATCH --gpus-per-node={}", c.gpus);
    }
    let _ = writeln!(w, "#SBATCH --exclusive");
    if let Some(g) = prov.mem_per_node_gib {
        // Whole MiB, rounded up: the profile's footprint over the nodes.
        let _ = writeln!(w, "#SBATCH --mem={}M", (g * 1024.0).ceil() as u64);
    }
    if let Some(c) = &opts.constraint {
        let _ = writeln!(w, "#SBATCH --constraint={c}");
    }
    let _ = writeln!(w, "#SBATCH --time={}", slurm_time(minutes));
    if let Some(a) = &opts.account {
        let _ = writeln!(w, "#SBATCH --account={a}");
    }
    if let Some(pt) = &opts.partition {
        let _ = writeln!(w, "#SBATCH --partition={pt}");
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "export OMP_NUM_THREADS={}", c.cores);
    let _ = writeln!(w, "export OMP_PLACES=cores");
    let _ = writeln!(w, "export OMP_PROC_BIND=close");
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "srun --cpu-bind=cores --cpu-freq={khz} -- {}",
        command.join(" ")
    );
    let _ = writeln!(w, "status=$?");
    let _ = writeln!(w);
    let _ = writeln!(w, "# Prediction next to measurement:");
    let _ = writeln!(
        w,
        "echo \"jouleplan predicted: Elapsed {} ({:.3} s), ConsumedEnergy {:.0} J\"",
        slurm_elapsed(p.time),
        p.time.0,
        p.energy.0
    );
    let _ = writeln!(
        w,
        "sacct -j \"$SLURM_JOB_ID\" -o JobID,Elapsed,ConsumedEnergyRaw || echo \"sacct: job accounting is not available here\""
    );
    let _ = writeln!(w, "exit $status");
    Ok(s)
}

fn slurm_elapsed(t: Seconds) -> String {
    let s = t.0.round() as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_every_character_literal() {
        assert_eq!(shell_quote("./a.out"), "./a.out");
        assert_eq!(shell_quote("my file"), "'my file'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_quote("`id`"), "'`id`'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn time_limits_round_up_to_minutes() {
        assert_eq!(time_limit_minutes(Seconds(10.0), 0.25), 1);
        assert_eq!(time_limit_minutes(Seconds(600.0), 0.25), 13);
        assert_eq!(slurm_time(13), "00:13:00");
        assert_eq!(slurm_time(1441), "1-00:01:00");
    }

    #[test]
    fn app_strings_split_like_a_shell_and_unbalanced_quotes_are_rejected() {
        assert_eq!(
            split_app("--app", "./a.out 'x y' \"z\"").unwrap(),
            vec!["./a.out", "x y", "z"]
        );
        assert!(split_app("--app", "./a.out 'x").is_err());
        assert!(split_app("--app", "   ").is_err());
    }
}
