//! The examples at the end of every subcommand's `--help`, each followed by the exit codes.
//! The files they name (`node.toml`, `fitted.toml`, `app.json`, `runs.csv`) are the user's, as
//! the walkthroughs in the README make them.

/// `plan --help`.
pub const PLAN: &str = concat!(
    "Examples:
  jouleplan plan                                  the bundled default
  jouleplan plan --machine fitted.toml --profile app.json --nodes 1-16 --deadline 1h
  jouleplan plan --machine fitted.toml --profile app.json --slowdown 10% --json
  jouleplan plan --machine fitted.toml --profile app.json --plot front.svg
  jouleplan plan --machine fitted.toml --profile app.json --nodes 1-16 \\
      --sbatch job.sh -- ./app args               the job script of the recommendation

",
    exit_codes!()
);

/// `predict --help`.
pub const PREDICT: &str = concat!(
    "Examples:
  jouleplan predict --machine fitted.toml --profile app.json --config 4,72,2.4
  jouleplan predict --machine fitted.toml --profile app.json --config 1,8,2.1,1 --json
                                                  1 node x 8 cores at 2.1 GHz, 1 GPU

",
    exit_codes!()
);

/// `slurm --help`.
pub const SLURM: &str = concat!(
    "Examples:
  jouleplan slurm --machine fitted.toml --profile app.json --config 8,72,2.4 -- ./app args
  jouleplan slurm --machine fitted.toml --profile app.json --config 8,72,2.4 \\
      --ntasks-per-node 72 --cpus-per-task 1 --sbatch job.sh -- ./app args

",
    exit_codes!()
);

/// `report --help`.
pub const REPORT: &str = concat!(
    "Examples:
  jouleplan report --machine fitted.toml --profile app.json --nodes 1-16 --out report
  jouleplan report --machine fitted.toml --profile app.json --measured runs.csv --out report
                                                  then open report/index.html
  jouleplan report --machine node.toml --profile app.json --out report
                                                  without [power]: in time and node-hours

",
    exit_codes!()
);

/// `metrics --help`.
pub const METRICS: &str = concat!(
    "Examples:
  jouleplan metrics talp.json                     TALP's trees recomputed, POP metrics
  jouleplan metrics trace.prv.gz --window 1s      a Paraver trace, window by window
  jouleplan metrics talp-1.json talp-2.json talp-4.json --scaling strong
  jouleplan metrics app.mpiP --json

",
    exit_codes!()
);

/// `profile --help`.
pub const PROFILE: &str = concat!(
    "Examples:
  jouleplan profile --cores 1,2,4,8 --repeat 3 -o app.json -- ./app args
  jouleplan profile --machine node.toml --cores 1-16 --freqs 1.2,2.4 -o app.json -- ./app
  jouleplan profile --nodes 1,2,4 --cores 72 --ranks 72 --machine node.toml \\
      --measured-out runs.csv -o app.json -- ./app      inside a Slurm allocation
  jouleplan profile --nodes auto --cores 72 --ranks 72 --machine node.toml \\
      --measured-out runs.csv -o app.json -- ./app      the campaign: only the counts that matter
  jouleplan profile --nodes auto --replay past-runs.csv --cores 72 --machine node.toml \\
      --measured-out replayed.csv -o app.json           the campaign on recorded runs
  jouleplan profile --cores 8 --gpus 1 --gpu-clocks 870,1305,1710 --machine gpu.toml \\
      --measured-out runs.csv -o app.json -- ./app      GPU clocks, then fit --measured runs.csv

",
    exit_codes!()
);

/// `validate --help`.
pub const VALIDATE: &str = concat!(
    "Examples:
  jouleplan validate --machine fitted.toml --profile app.json --measured more.csv
  jouleplan validate --machine node.toml --profile app.json --loo --plot checked.svg
  jouleplan validate --machine fitted.toml --profile app.json --sacct sacct.txt --json

",
    exit_codes!()
);

/// `calibrate --help`.
pub const CALIBRATE: &str = concat!(
    "Examples:
  mpirun -n 2 jouleplan calibrate network --machine node.toml   (a build with --features mpi)
  jouleplan calibrate network --machine node.toml --from node.toml.pingpong.json
  jouleplan calibrate power --machine node.toml --cores 1,8,16 --freqs 1.2,2.4

",
    exit_codes!()
);

/// `calibrate network --help`.
pub const CALIBRATE_NETWORK: &str = concat!(
    "Examples:
  mpirun -n 2 jouleplan calibrate network --machine node.toml   (a build with --features mpi)
  srun -N 2 -n 2 jouleplan calibrate network --machine node.toml --max-bytes 64MiB
  jouleplan calibrate network --machine node.toml --from node.toml.pingpong.json

",
    exit_codes!()
);

/// `calibrate power --help`.
pub const CALIBRATE_POWER: &str = concat!(
    "Examples:
  jouleplan calibrate power --machine node.toml --cores 1,8,16 --freqs 1.2,2.4
  jouleplan calibrate power --machine node.toml --from program=app.json

",
    exit_codes!()
);

/// `fit --help`.
pub const FIT: &str = concat!(
    "Examples:
  jouleplan fit --measured runs.csv --machine node.toml --profile-out app.json \\
      --machine-out fitted.toml
  jouleplan fit --measured runs.csv --machine node.toml --profile-out app.json \\
      --loo --plot node-law.svg                   leave-one-out, and the node law drawn
  jouleplan fit --measured runs.csv --machine node.toml --profile-out app.json --json

",
    exit_codes!()
);

/// `machine --help`.
pub const MACHINE: &str = concat!(
    "Examples:
  jouleplan machine init --output node.toml       what this node tells about itself
  jouleplan machine check node.toml               what is missing or implausible
  jouleplan machine check node.toml --json

",
    exit_codes!()
);

/// `machine init --help`.
pub const MACHINE_INIT: &str = concat!(
    "Examples:
  jouleplan machine init --output node.toml
  jouleplan machine init > node.toml

",
    exit_codes!()
);

/// `machine check --help`.
pub const MACHINE_CHECK: &str = concat!(
    "Examples:
  jouleplan machine check node.toml
  jouleplan machine check node.toml --json

",
    exit_codes!()
);

/// `completions --help`.
pub const COMPLETIONS: &str = concat!(
    "Examples:
  jouleplan completions bash > ~/.local/share/bash-completion/completions/jouleplan
  jouleplan completions zsh > ~/.zfunc/_jouleplan
  jouleplan completions fish > ~/.config/fish/completions/jouleplan.fish

",
    exit_codes!()
);

/// `man --help`.
pub const MAN: &str = concat!(
    "Examples:
  jouleplan man | man -l -
  jouleplan man > jouleplan.1

",
    exit_codes!()
);
