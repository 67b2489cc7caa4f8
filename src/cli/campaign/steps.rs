//! The campaign's loop: measure, refit and replan as `fit` and `plan` do, decide the next count.

use super::{Campaign, Next, Rec, Report, Step, rec_of, said};
use crate::cli::{Cli, Command};
use crate::search::plan::Plan;
use clap::Parser;
use std::io::Write;
use std::path::Path;

impl Campaign<'_> {
    /// Measures the start counts, then one count a step until the campaign stops; returns the
    /// steps and why it stopped.
    pub(super) fn steps(
        &mut self,
        tolerance: f64,
        csv: &Path,
    ) -> anyhow::Result<(Vec<Step>, String)> {
        let mut steps = Vec::new();
        let mut before: Option<Rec> = None;
        let word = self.source.word();
        let mut todo: Vec<(u32, String)> = self
            .start()
            .into_iter()
            .map(|n| {
                let at = super::START;
                (
                    n,
                    format!("start: the smallest {word} count at or above {at:?}"),
                )
            })
            .collect();
        loop {
            if let Some(sig) = self.source.interrupted() {
                return Ok((steps, interrupted(sig, self.runs.len())));
            }
            if todo.is_empty() {
                if self.measured.is_empty() {
                    return Ok((steps, format!("nothing {word} to start from")));
                }
                let plan = self.fit_and_plan(csv)?;
                if let Some(sig) = self.source.interrupted() {
                    return Ok((steps, interrupted(sig, self.runs.len())));
                }
                let after = rec_of(&plan, &|n, c| self.measured_at(n, c));
                self.last = after.clone();
                if let Some(last) = steps.last_mut().filter(|s: &&mut Step| s.after.is_none()) {
                    last.after = after.clone();
                    self.say_step(last);
                }
                match self.next(&plan, tolerance) {
                    Next::Stop(why) => return Ok((steps, why)),
                    Next::Measure(n, why) => todo.push((n, why)),
                }
                before = after;
            }
            let (n, why) = todo.remove(0);
            let Some(step) = self.measure(n, why, (steps.len() + 1, before.clone()), csv)? else {
                continue;
            };
            if !todo.is_empty() {
                // The start is fitted once it is complete.
                self.say_step(&step);
            }
            steps.push(step);
        }
    }

    /// Takes `--repeat` runs on `n` nodes and saves every run so far to `csv`; no step where
    /// no run on `n` nodes could be had (every one failed, or a stop signal came).
    fn measure(
        &mut self,
        n: u32,
        why: String,
        (number, before): (usize, Option<Rec>),
        csv: &Path,
    ) -> anyhow::Result<Option<Step>> {
        let taken = self.source.take(n, self.args.repeat.max(1))?;
        let of_n = || taken.iter().filter(|r| r.0 == n);
        let node_hours: f64 = of_n().map(|(_, t, _)| f64::from(n) * t / 3600.0).sum();
        let runs = of_n().count();
        self.measured.extend(taken.iter().map(|r| r.0));
        self.runs.extend(taken);
        let mut text = self.source.header().to_string() + "\n";
        for (_, _, line) in &self.runs {
            text += line;
            text.push('\n');
        }
        crate::atomic_write::write_atomic(csv, text.as_bytes(), false)?;
        if runs == 0 {
            return Ok(None);
        }
        Ok(Some(Step {
            step: number,
            nodes: n,
            runs,
            why,
            node_hours,
            node_runs: n * runs as u32,
            before,
            after: None,
        }))
    }

    /// Fits the runs so far and plans `1..=max_nodes`, through the same code as `fit` and
    /// `plan` (their checks accepted: a campaign goes on and the final fit says them).
    fn fit_and_plan(&self, csv: &Path) -> anyhow::Result<Plan> {
        let a = self.args;
        let dir = self.work.path();
        let (prof, mach) = (dir.join("profile.json"), dir.join("machine.toml"));
        let machine = a.machine.clone().unwrap_or_default();
        let energy = self.any_energy();
        let mut fit: Vec<String> = vec!["jouleplan".into(), "-q".into(), "fit".into()];
        fit.extend(["--measured", path(csv), "--machine", &machine].map(String::from));
        fit.extend(["--profile-out", path(&prof), "--accept-model-error"].map(String::from));
        if let Some(p) = &a.program {
            fit.extend(["--program".into(), p.clone()]);
        }
        if energy {
            fit.extend(["--machine-out".into(), path(&mach).into()]);
        }
        if a.weak {
            fit.push("--weak".into());
        }
        let planned = if energy {
            path(&mach).to_string()
        } else {
            machine
        };
        let mut plan: Vec<String> = vec!["jouleplan".into(), "-q".into(), "plan".into()];
        plan.extend(["--machine", &planned, "--profile", path(&prof)].map(String::from));
        plan.extend(["--nodes".into(), format!("1-{}", self.max_nodes)]);
        plan.push("--accept-model-error".into());
        for (flag, v) in [("--cores", &a.cores), ("--freqs", &a.freqs)] {
            if let Some(v) = v {
                plan.extend([flag.to_string(), v.clone()]);
            }
        }
        let was_quiet = crate::cli::say::quiet();
        crate::cli::say::set_quiet(true);
        let result = run_quietly(&fit, &plan);
        crate::cli::say::set_quiet(was_quiet);
        result.map_err(|e| {
            anyhow::anyhow!(
                "the campaign's fit and plan of the runs so far ({}, on {} node counts) failed \
                 (it runs `fit --measured {}{}` and `plan --nodes 1-{}` itself): {e:#}",
                csv.display(),
                self.measured.len(),
                csv.display(),
                if energy { " --machine-out" } else { "" },
                self.max_nodes
            )
        })
    }

    /// What to measure next: the recommended count where it is unmeasured (or, not recorded,
    /// the nearest recorded count); where it is measured, the unmeasured count whose low ends
    /// could beat its `E x T` by more than `tolerance`; else stop.
    fn next(&self, plan: &Plan, tolerance: f64) -> Next {
        let Some(rec) = plan.recommendation() else {
            return Next::Stop(format!("no recommendation: {}", plan.answer.reason));
        };
        let n = rec.prediction.config.nodes;
        let word = self.source.word();
        let avail: Vec<u32> = self
            .source
            .available(self.max_nodes)
            .into_iter()
            .filter(|m| !self.measured.contains(m))
            .collect();
        if !self.measured.contains(&n) {
            if avail.contains(&n) {
                return self.within_budget(
                    plan,
                    n,
                    format!("the recommendation, {n} nodes, was not measured"),
                );
            }
            // Nearness in doublings.
            let d = |m: u32| (f64::from(m) / f64::from(n)).ln().abs();
            let near = avail
                .iter()
                .copied()
                .min_by(|&a, &b| d(a).total_cmp(&d(b)).then(a.cmp(&b)));
            let closest_measured = self
                .measured
                .iter()
                .map(|&m| d(m))
                .fold(f64::INFINITY, f64::min);
            return match near {
                Some(m) if d(m) >= closest_measured => Next::Stop(format!(
                    "the recommendation, {n} nodes, was not {word}, and a measured count lies \
                     nearer to it than any {word} count left"
                )),
                Some(m) => self.within_budget(plan, m, format!(
                    "the recommendation, {n} nodes, was not {word}: {m} is the nearest {word} count"
                )),
                None => Next::Stop(format!(
                    "the recommendation, {n} nodes, was not measured and no {word} count is left"
                )),
            };
        }
        self.after_measured(plan, rec, (&avail, tolerance))
    }

    /// The recommendation's count was measured: the far-end ranking already prefers it to
    /// every unmeasured count at its interval's high ends; measure on only where a count's
    /// prediction itself beats it by more than the tolerance.
    fn after_measured(
        &self,
        plan: &Plan,
        rec: &crate::search::plan::FrontEntry,
        (avail, tolerance): (&[u32], f64),
    ) -> Next {
        let n = rec.prediction.config.nodes;
        let word = self.source.word();
        let edp = |f: &crate::search::plan::FrontEntry| f.prediction.time.0 * f.prediction.energy.0;
        let best = plan
            .front
            .iter()
            .filter(|f| avail.contains(&f.prediction.config.nodes))
            .min_by(|a, b| edp(a).total_cmp(&edp(b)));
        let product = match plan.time_only() {
            true => "product of node-hours and time",
            false => "energy-delay product",
        };
        let cores = rec.prediction.config.cores;
        let layout = match self.measured_at(n, cores) {
            Some(_) => String::new(),
            None => format!(
                " (at other cores a node than its {cores}: give --cores to measure the layout \
                 you plan)"
            ),
        };
        match best {
            Some(f) if edp(f) < edp(rec) * (1.0 - tolerance) => {
                let m = f.prediction.config.nodes;
                self.within_budget(
                    plan,
                    m,
                    format!(
                        "the recommendation, {n} nodes, was measured{layout}, but {m} nodes are \
                     predicted to beat its {product} by {:.1}% (tolerance {:.1}%)",
                        100.0 * (1.0 - edp(f) / edp(rec)),
                        100.0 * tolerance
                    ),
                )
            }
            _ => Next::Stop(format!(
                "stable: the recommendation, {n} nodes, was measured{layout}, and no unmeasured \
                 {word} count up to {} is predicted to beat its {product} by more than {:.1}%",
                self.max_nodes,
                100.0 * tolerance
            )),
        }
    }

    /// Measures `m` unless its predicted cost would pass `--node-hours`.
    fn within_budget(&self, plan: &Plan, m: u32, why: String) -> Next {
        let Some(budget) = self.args.campaign.node_hours else {
            return Next::Measure(m, why);
        };
        let spent: f64 = self
            .runs
            .iter()
            .map(|(n, t, _)| f64::from(*n) * t / 3600.0)
            .sum();
        let time = plan
            .front
            .iter()
            .find(|f| f.prediction.config.nodes == m)
            .or(plan.recommendation())
            .map_or(0.0, |f| f.prediction.time.0);
        let cost = f64::from(m) * time * f64::from(self.args.repeat.max(1)) / 3600.0;
        if spent + cost > budget {
            return Next::Stop(format!(
                "budget: {why}, but measuring {m} nodes would cost about {cost:.2} node-hours \
                 and {:.2} of {budget:.2} are left",
                (budget - spent).max(0.0)
            ));
        }
        Next::Measure(m, why)
    }

    /// Says a step on stderr.
    fn say_step(&self, s: &Step) {
        crate::cli::say::progress(&format!(
            "step {}: measured {} ({}, {:.3} node-hours, {}): {}\n  \
             recommendation before: {}\n  after: {}",
            s.step,
            crate::units::count(u64::from(s.nodes), "node", "nodes"),
            crate::units::count(s.runs as u64, "run", "runs"),
            s.node_hours,
            crate::units::count(u64::from(s.node_runs), "node-run", "node-runs"),
            s.why,
            said(&s.before),
            match s.after {
                None => "fitted once the start is measured".to_string(),
                Some(_) => said(&s.after),
            }
        ));
    }

    /// Writes the profile of the last fit to `--output`, prints the summary (or the JSON).
    pub(super) fn finish(
        &self,
        csv: &Path,
        (steps, stopped): (Vec<Step>, String),
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let a = self.args;
        self.source
            .write_profile(a, &self.work.path().join("profile.json"))?;
        if self.source.interrupted().is_none() {
            super::record_order(&a.output, &self.runs)?;
        }
        // + 0.0: an empty sum is -0.0.
        let node_hours: f64 = self
            .runs
            .iter()
            .map(|(n, t, _)| f64::from(*n) * t / 3600.0)
            .sum::<f64>()
            + 0.0;
        let node_runs: u32 = self.runs.iter().map(|(n, _, _)| n).sum();
        let recommendation = self.last.clone();
        crate::cli::say::progress(&format!("campaign ended: {stopped}"));
        let report = Report {
            format: "jouleplan-campaign/1",
            measured_nodes: self.measured.iter().copied().collect(),
            steps,
            stopped,
            recommendation,
            node_hours,
            node_runs,
            runs_file: csv.display().to_string(),
            profile_file: a.output.display().to_string(),
        };
        if a.campaign.json {
            crate::artefact::write_sorted(&report, out)?;
            return Ok(());
        }
        summary(&report, (a, self.any_energy()), out)
    }
}

/// The campaign's end in a few lines, with the commands that reproduce its recommendation.
fn summary(
    r: &Report,
    (a, energy): (&crate::cli::profile::ProfileArgs, bool),
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let counts: Vec<String> = r.measured_nodes.iter().map(u32::to_string).collect();
    let steps = match (r.steps.len(), counts.is_empty()) {
        (_, true) => "nothing measured".to_string(),
        // A resumed campaign that had already ended measures nothing new.
        (0, false) => format!(
            "no new step (resumed: nothing left to measure); measured node counts {}",
            counts.join(", ")
        ),
        (1, false) => format!("1 step measured node counts {}", counts.join(", ")),
        (k, false) => format!("{k} steps measured node counts {}", counts.join(", ")),
    };
    writeln!(
        out,
        "campaign: {steps} at {:.3} node-hours ({} node-runs)",
        r.node_hours, r.node_runs
    )?;
    writeln!(out, "stopped: {}", r.stopped)?;
    writeln!(out, "recommendation: {}", said(&r.recommendation))?;
    let machine = a.machine.as_deref().unwrap_or("M.toml");
    let fit = format!(
        "jouleplan fit --measured {} --machine {machine} --profile-out P.json",
        r.runs_file
    );
    let then = match energy {
        true => format!("the machine's power from them: {fit} --machine-out M.toml"),
        false => format!("no energy was measured, so plans rank by time and node-hours: {fit}"),
    };
    writeln!(
        out,
        "runs in {}; profile in {}; {then}",
        r.runs_file, r.profile_file
    )?;
    Ok(())
}

impl Campaign<'_> {
    /// The position of the column `name` in the runs' CSV header.
    fn column(&self, name: &str) -> Option<usize> {
        self.source
            .header()
            .split(',')
            .position(|c| c.trim() == name)
    }

    /// The mean time of the runs so far on `nodes` nodes of `cores` cores, where there are.
    fn measured_at(&self, nodes: u32, cores: u32) -> Option<f64> {
        let col = self.column("cores")?;
        let times: Vec<f64> = self
            .runs
            .iter()
            .filter(|(n, _, l)| {
                *n == nodes
                    && l.split(',').nth(col).and_then(|v| v.trim().parse().ok()) == Some(cores)
            })
            .map(|r| r.1)
            .collect();
        (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64)
    }

    /// Whether a run so far has an energy (a value in the `energy_j` column).
    fn any_energy(&self) -> bool {
        let Some(col) = self.column("energy_j") else {
            return false;
        };
        self.runs
            .iter()
            .any(|(_, _, l)| l.split(',').nth(col).is_some_and(|v| !v.trim().is_empty()))
    }
}

/// Why an interrupted campaign stopped.
fn interrupted(sig: i32, runs: usize) -> String {
    format!(
        "interrupted ({}) after {}: every finished run is saved in --output and \
         --measured-out; continue with --resume",
        crate::measure::launch::signal_name(sig),
        crate::units::count(runs as u64, "run", "runs")
    )
}

/// Runs `fit` then `plan` from their command lines, their output discarded.
fn run_quietly(fit: &[String], plan: &[String]) -> anyhow::Result<Plan> {
    let mut sink = std::io::sink();
    match Cli::try_parse_from(fit).map(|c| c.command) {
        Ok(Some(Command::Fit(f))) => crate::cli::fit::run_fit(&f, &mut sink)?,
        other => anyhow::bail!("internal: the campaign's fit did not parse: {other:?}"),
    }
    match Cli::try_parse_from(plan).map(|c| c.command) {
        Ok(Some(Command::Plan(p))) => crate::cli::plan::run_plan(&p, &mut sink),
        other => anyhow::bail!("internal: the campaign's plan did not parse: {other:?}"),
    }
}

/// A path as a command-line argument.
fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}
