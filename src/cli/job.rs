//! `jouleplan slurm` and the job options every job script takes.

use super::sources::{InputArgs, provenance, save, with_model};
use crate::calibrate::trust::warnings_for;
use crate::error::{InputError, InputResult};
use crate::model::Outcome;
use crate::report::slurm::{self, JobOptions};
use crate::search::inputs::one_node_without_network;
use crate::values;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// What a job script needs beyond the configuration.
#[derive(Debug, Args, Default)]
pub struct JobArgs {
    /// The program and its arguments as one shell-quoted string ('./app --in "my file"');
    /// or give them after `--`.
    #[arg(long, value_name = "COMMAND")]
    pub app: Option<String>,
    /// Slurm account.
    #[arg(long, value_name = "A")]
    pub account: Option<String>,
    /// Slurm partition.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Time limit = predicted time x (1 + FRACTION), or the high end of the prediction's
    /// interval where that is longer, rounded up to a minute.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value = "0.25",
        allow_hyphen_values = true
    )]
    pub time_margin: String,
    /// Job name [default: jouleplan-<program>].
    #[arg(long, value_name = "NAME")]
    pub job_name: Option<String>,
    /// Slurm node features the job needs (`--constraint` in the script: h100, 'skylake&ib').
    #[arg(long, value_name = "FEATURES")]
    pub constraint: Option<String>,
    /// MPI ranks per node in the job [default: the layout the profile recorded; without one,
    /// 1, or the node's cores / --cpus-per-task].
    #[arg(long, value_name = "N")]
    pub ntasks_per_node: Option<u32>,
    /// Cores (OpenMP threads) per rank [default: the layout the profile recorded; without one,
    /// the node's cores / --ntasks-per-node].
    #[arg(long, value_name = "N")]
    pub cpus_per_task: Option<u32>,
    /// GPUs per rank (`--gpus-per-task`) instead of the node's GPUs shared by its ranks
    /// (`--gpus-per-node`).
    #[arg(long, value_name = "N")]
    pub gpus_per_task: Option<u32>,
    /// The program and its arguments, word by word (instead of --app).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl JobArgs {
    pub(crate) fn options(&self, program: &str) -> InputResult<JobOptions> {
        let app = match (&self.app, self.command.is_empty()) {
            (Some(_), false) => {
                return Err(InputError::Argument {
                    flag: "--app".into(),
                    expected: "the command either in --app or after --, not both".into(),
                    got: "both".into(),
                });
            }
            (Some(a), true) => slurm::split_app("--app", a)?,
            (None, false) => self.command.clone(),
            (None, true) => {
                return Err(InputError::Argument {
                    flag: "--app".into(),
                    expected: "the program the job runs: --app './app args' or -- ./app args"
                        .into(),
                    got: "nothing".into(),
                });
            }
        };
        let job_name = self.job_name.clone().unwrap_or_else(|| {
            let clean: String = program
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("jouleplan-{clean}")
        });
        let opts = JobOptions {
            app,
            account: self.account.clone(),
            partition: self.partition.clone(),
            time_margin: {
                let m = values::parse_fraction("--time-margin", &self.time_margin)?;
                if m > crate::limits::TIME_MARGIN_MAX {
                    return Err(values::bad(
                        "--time-margin",
                        format!(
                            "a margin up to {} (the limit = predicted time x (1 + margin))",
                            crate::limits::TIME_MARGIN_MAX
                        ),
                        &self.time_margin,
                    ));
                }
                m
            },
            job_name,
            constraint: self.constraint.clone(),
            tasks: slurm::TaskSplit {
                ntasks_per_node: self.ntasks_per_node,
                cpus_per_task: self.cpus_per_task,
                gpus_per_task: self.gpus_per_task,
            },
        };
        opts.validate()?;
        Ok(opts)
    }
}

/// `jouleplan slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The configuration: nodes,cores,GHz[,gpus[,GPU MHz]] (the GPU clock from the machine's
    /// gpu_clocks_mhz, for a profile with a GPU clock law).
    #[arg(long, value_name = "N,C,GHZ[,G[,MHZ]]")]
    pub config: String,
    /// Write the script here (atomically, executable) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub sbatch: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: InputArgs,
    #[command(flatten)]
    pub job: JobArgs,
}

/// Runs `slurm`: a job script for one configuration.
pub fn run_slurm(args: &SlurmArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let config = values::parse_config("--config", &args.config)?;
    let script: Vec<_> = args
        .sbatch
        .iter()
        .map(|p| ("--sbatch", p.as_path()))
        .collect();
    let _lock = super::outputs::guard(&args.inputs.source.files(), &script)?;
    with_model(&args.inputs.source, |model, trust| {
        let config = values::config_as_shown(model.machine, config);
        one_node_without_network(model.machine, config.nodes)?;
        crate::search::gpu_clocks::check_config("--config", model.machine, model.profile, &config)?;
        let opts = args.job.options(&model.profile.program)?;
        let p = match model.predict(config)? {
            Outcome::Finite(p) => p,
            Outcome::Saturated { rho, .. } => {
                return Err(InputError::Mismatch(format!(
                    "{}: the network is saturated there (rho = {rho:.3}): the model predicts no \
                     finite time, so no time limit can be set",
                    crate::search::plan::label(&config)
                ))
                .into());
            }
        };
        let mut prov = provenance(
            model.machine,
            model.profile,
            "configuration named with --config".into(),
        );
        prov.warnings = warnings_for(trust, config.nodes);
        prov.gpu_clock = crate::report::gpu_clock::note(model.machine, model.profile, &p);
        prov.mem_per_node_gib = model
            .profile
            .memory_footprint_gib
            .map(|m| m / f64::from(config.nodes));
        let script = slurm::job_script(&p, &prov, &opts)?;
        if let Some(w) = slurm::layout_warning(&p, &prov, &opts) {
            super::say::warning(&w);
        }
        if let Some(path) = &args.sbatch {
            save(path, script.as_bytes(), true)?;
            super::say::progress(&format!("wrote job script {}", path.display()));
        }
        if args.inputs.json {
            let minutes = slurm::time_limit_minutes(p.time, opts.time_margin);
            let v = crate::artefact::plan::JobOut {
                config: crate::report::json::config_json(&p),
                time_limit: slurm::slurm_time(minutes),
                time_limit_s: minutes * 60,
                warnings: prov.warnings.clone(),
                sbatch: args.sbatch.as_ref().map(|p| p.display().to_string()),
                script,
            };
            crate::artefact::write_sorted(&v, out)?;
        } else if args.sbatch.is_none() {
            out.write_all(script.as_bytes())?;
        }
        Ok(())
    })
}
