//! The README's walkthroughs run as written: each `sh` block of a section, command by command,
//! in a scratch folder that sees the repository's `models`, `tests` and `examples`, with
//! `target/release/jouleplan` the binary cargo built (wherever `CARGO_TARGET_DIR` put it).
//! Each command must exit 0, or the code its README comment names (`exit 2`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The commands of every `sh` block in the README section whose heading starts with
/// `heading`, up to the next `## ` heading: continuation lines joined, comments after ` # `
/// dropped, `cargo` lines left out (`cargo test` builds the binary and the examples itself).
fn section_commands(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let start = readme
        .find(&format!("\n{heading}"))
        .unwrap_or_else(|| panic!("README has no section {heading:?}"));
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    let section = &rest[..end];
    let mut commands = Vec::new();
    for block in section.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        for line in block.replace("\\\n", " ").lines() {
            let command = line.split(" # ").next().unwrap().trim();
            if command.is_empty() || command.starts_with("cargo ") {
                continue;
            }
            // The README's comment names a non-zero exit where there is one.
            let keep = if line.contains("# exit 2") {
                format!("{command} # exit 2")
            } else {
                command.to_string()
            };
            commands.push(keep);
        }
    }
    assert!(!commands.is_empty(), "no sh block under {heading:?}");
    commands
}

/// Where the README's commands find the public data (`JOULEPLAN_FIXTURES`, as the README says):
/// the folder the build found, or a path that does not exist where it found none (the
/// walkthroughs that need it are then ignored).
fn public_data() -> &'static str {
    option_env!("JOULEPLAN_PUBLIC_FIXTURES").unwrap_or("/nonexistent/public-fixtures")
}

/// A scratch folder laid out like the repository root for the README's commands.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for link in ["models", "tests", "examples", "scripts"] {
        std::os::unix::fs::symlink(repo(link), dir.path().join(link)).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("target/release")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_jouleplan"));
    std::os::unix::fs::symlink(bin, dir.path().join("target/release/jouleplan")).unwrap();
    // `cargo test` builds the examples beside the binary.
    std::os::unix::fs::symlink(
        bin.parent().unwrap().join("examples"),
        dir.path().join("target/release/examples"),
    )
    .unwrap();
    dir
}

/// Runs each command in `dir` with `sh -c`; returns each one's stdout.
fn run_all(dir: &Path, commands: &[String]) -> Vec<String> {
    run_all_both(dir, commands)
        .into_iter()
        .map(|(out, _)| out)
        .collect()
}

/// Runs each command in `dir` with `sh -c`; returns each one's stdout and stderr.
fn run_all_both(dir: &Path, commands: &[String]) -> Vec<(String, String)> {
    let mut outs = Vec::new();
    for line in commands {
        let (command, want) = match line.strip_suffix(" # exit 2") {
            Some(c) => (c, 2),
            None => (line.as_str(), 0),
        };
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .env_remove("SLURM_JOB_ID")
            .env("JOULEPLAN_FIXTURES", public_data())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(want),
            "{command}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        outs.push((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    outs
}

/// Where the first `target/release/jouleplan WORD` command stands among `commands`.
fn position_of(commands: &[String], word: &str) -> usize {
    commands
        .iter()
        .position(|c| c.starts_with(&format!("target/release/jouleplan {word}")))
        .unwrap_or_else(|| panic!("no `jouleplan {word}` in {commands:?}"))
}

/// Every line of the `text` blocks of the README section under `heading` is a line the
/// section's commands printed (on standard output or error, trailing spaces aside), `...`
/// where lines are left out, or ends in `...` where a line is cut.
fn blocks_show_what_was_printed(heading: &str, both: &[(String, String)]) {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let section = readme
        .split(&format!("\n{heading}"))
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let printed: String = both
        .iter()
        .map(|(out, err)| format!("{out}\n{err}"))
        .collect();
    for block in section.split("```text\n").skip(1) {
        let block = block.split("```").next().unwrap();
        // `$ command` lines echo the command; a line ending in `...` is cut there.
        for line in block
            .lines()
            .filter(|l| l.trim() != "..." && !l.starts_with("$ "))
        {
            let shown = line.trim_end();
            let matches = |p: &str| match shown.strip_suffix("...") {
                Some(head) => p.starts_with(head),
                None => p.trim_end() == shown,
            };
            assert!(
                printed.lines().any(matches),
                "README line under {heading:?} not printed by its commands: {shown:?}"
            );
        }
    }
}

#[test]
fn the_quick_start_runs_verbatim() {
    let dir = scratch();
    let commands = section_commands("## Quick start");
    let both = run_all_both(dir.path(), &commands);
    blocks_show_what_was_printed("## Quick start", &both);
    let outs: Vec<&String> = both.iter().map(|(out, _)| out).collect();
    assert!(commands.len() >= 3, "{commands:?}");
    assert!(outs[0].contains("Recommendation:"), "{}", outs[0]);
    assert!(dir.path().join("report/index.html").exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn how_many_nodes_runs_verbatim_with_its_interval_layout_and_validation() {
    let dir = scratch();
    let commands = section_commands("## How many nodes?");
    let both = run_all_both(dir.path(), &commands);
    blocks_show_what_was_printed("## How many nodes?", &both);
    let outs: Vec<&String> = both.iter().map(|(out, _)| out).collect();
    let at = |word: &str| position_of(&commands, word);
    // Kept to 1, 2, 4 and 8 nodes.
    let runs = std::fs::read_to_string(dir.path().join("runs.csv")).unwrap();
    let mut counts: Vec<&str> = runs
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    counts.sort();
    counts.dedup();
    assert_eq!(counts, ["1", "2", "4", "8"], "{runs}");
    // The fit on the Ice Lake machine file writes a profile and the machine with [power].
    let fit = &commands[at("fit")];
    assert!(
        fit.contains("tests/data/machines/icelake-8360y.toml"),
        "{fit}"
    );
    assert!(fit.contains("--machine-out"), "{fit}");
    assert!(
        outs[at("fit")].contains("node law over nodes 1, 2, 4, 8"),
        "{}",
        outs[at("fit")]
    );
    let machine = std::fs::read_to_string(dir.path().join("icelake.toml")).unwrap();
    assert!(machine.contains("[power]"), "{machine}");
    // Asked among counts that were not measured, the plan prints the recommendation's interval.
    let beyond = commands
        .iter()
        .position(|c| c.starts_with("target/release/jouleplan plan") && c.contains("--nodes 9-16"))
        .expect("a plan over the counts that were not measured");
    let plan = &outs[beyond];
    assert!(
        plan.contains("at a node count not measured (measured up to 8): time "),
        "{plan}"
    );
    // The job script names the measured layout.
    let sbatch = commands
        .iter()
        .find(|c| c.contains("--sbatch"))
        .expect("a --sbatch command");
    let script_name = sbatch
        .split_whitespace()
        .skip_while(|w| *w != "--sbatch")
        .nth(1)
        .unwrap();
    let script = std::fs::read_to_string(dir.path().join(script_name)).unwrap();
    assert!(
        script.contains("# Layout: 72 MPI ranks a node x 1 thread a rank, as measured"),
        "{script}"
    );
    assert!(script.contains("#SBATCH --ntasks-per-node=72"), "{script}");
    // Validation on every measured node count.
    let validate = &commands[at("validate")];
    assert!(
        validate.contains("--measured multinode/hpgmgfv.csv"),
        "{validate}"
    );
    let scores = &outs[at("validate")];
    assert!(
        scores.contains("80% intervals at node counts not measured held"),
        "{scores}"
    );
}

#[test]
fn measure_your_own_program_runs_verbatim() {
    let dir = scratch();
    let commands = section_commands("## Measure your own program");
    run_all(dir.path(), &commands);
    assert!(commands.len() >= 4, "{commands:?}");
    assert!(dir.path().join("heat.json").exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn how_many_nodes_to_measure_runs_verbatim_and_ends_by_itself() {
    let dir = scratch();
    let commands = section_commands("## How many nodes to measure?");
    let both = run_all_both(dir.path(), &commands);
    let outs: Vec<&String> = both.iter().map(|(out, _)| out).collect();
    let at = |word: &str| position_of(&commands, word);
    let runs = std::fs::read_to_string(dir.path().join("soma-runs.csv")).unwrap();
    // The README's six runs (five counts, 8 nodes twice), under the recording's header.
    assert_eq!(runs.lines().count(), 7, "{runs}");
    assert!(dir.path().join("soma.json").exists());
    assert!(
        outs[at("profile")].contains("campaign: 6 steps measured node counts 1, 2, 4, 8, 16"),
        "{}",
        outs[at("profile")]
    );
    // The plan the campaign's last line names, on its own profile and fitted machine file.
    assert!(
        commands[at("plan")].contains("--machine soma.machine.toml --profile soma.json"),
        "{}",
        commands[at("plan")]
    );
    let fitted = std::fs::read_to_string(dir.path().join("soma.machine.toml")).unwrap();
    assert!(
        fitted.contains("[power]") && fitted.contains("fit_id"),
        "{fitted}"
    );
    // The fit of the same runs, with the machine's power, for its chart.
    let fit = &commands[at("fit")];
    assert!(
        fit.contains("--measured soma-runs.csv") && fit.contains("--machine-out"),
        "{fit}"
    );
    let machine = std::fs::read_to_string(dir.path().join("icelake-soma.toml")).unwrap();
    assert!(machine.contains("[power]"), "{machine}");
    let plan = &outs[at("plan")];
    assert!(
        plan.contains("Recommendation: (4, 72, 2.4 GHz, 0) = 4 nodes x 72 cores"),
        "{plan}"
    );
    // The node law drawn by fit, and the report's with the campaign's steps.
    let law = std::fs::read_to_string(dir.path().join("soma-law.svg")).unwrap();
    assert!(law.contains("80% interval"), "fit --plot drew no band");
    let steps = std::fs::read_to_string(dir.path().join("soma-report/node-law.svg")).unwrap();
    assert!(steps.contains("campaign step, in the order measured"));
    // 8 nodes was measured at steps 4 and 6 (the confirm step): its mark names both.
    let profile = std::fs::read_to_string(dir.path().join("soma.json")).unwrap();
    assert!(
        profile.contains("a step each, in this order: 1, 2, 4, 8, 16, 8"),
        "{profile}"
    );
    assert!(
        steps.contains("4, 6"),
        "the chart numbers steps, not counts"
    );
    blocks_show_what_was_printed("## How many nodes to measure?", &both);
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn which_gpu_clock_runs_verbatim_and_plans_every_supported_clock() {
    let dir = scratch();
    let commands = section_commands("## Which GPU clock?");
    let both = run_all_both(dir.path(), &commands);
    blocks_show_what_was_printed("## Which GPU clock?", &both);
    let outs: Vec<&String> = both.iter().map(|(out, _)| out).collect();
    let at = |word: &str| position_of(&commands, word);
    // Fitted on three clocks only; the machine file lists all sixteen of the sweep.
    let fitted = std::fs::read_to_string(dir.path().join("gemm-fit.csv")).unwrap();
    let clocks: Vec<&str> = fitted
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(clocks, ["595", "975", "1164"], "{fitted}");
    assert!(
        outs[at("fit")].contains("measured: 595, 975, 1164"),
        "{}",
        outs[at("fit")]
    );
    let plan = outs[at("plan")];
    assert!(plan.contains("16 GPU clocks = 16 configurations"), "{plan}");
    // The job script sets the clock the plan chose, at the sweep's memory clock.
    let script = std::fs::read_to_string(dir.path().join("gemm.sh")).unwrap();
    assert!(
        script.contains("#SBATCH --gpu-freq=1013,memory=3505,verbose"),
        "{script}"
    );
    // Validation scores every measured clock, the 13 left out of the fit with intervals.
    let scores = outs[at("validate")];
    assert!(scores.contains("over 16 points"), "{scores}");
    assert!(
        scores.contains("80% intervals at GPU clocks not measured held"),
        "{scores}"
    );
}

#[test]
fn the_public_data_steps_say_how_to_fetch_data_that_is_missing() {
    // Where the public data is not there, the README's first step of each walkthrough on it
    // stops (exit 2) naming the script that fetches it, and leaves no empty output behind.
    let dir = scratch();
    for heading in ["## How many nodes?", "## Which GPU clock?"] {
        let first = section_commands(heading)[0].clone();
        assert!(first.starts_with("scripts/"), "{first}");
        let out = Command::new("sh")
            .arg("-c")
            .arg(&first)
            .current_dir(dir.path())
            .env("JOULEPLAN_FIXTURES", "/nonexistent/public-fixtures")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{first}\n{err}");
        assert!(err.contains("scripts/public-data.sh DIR"), "{err}");
        assert!(err.contains("JOULEPLAN_FIXTURES=DIR"), "{err}");
        let made = first.split_whitespace().last().unwrap();
        assert!(!dir.path().join(made).exists(), "{first} left {made}");
    }
}
