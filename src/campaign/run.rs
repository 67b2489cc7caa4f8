//! The campaign (MODEL.md 6d): it measures a few small node counts, fits and plans them in
//! memory exactly as `fit` and `plan` do ([`evaluate`]), then measures, step by step, the count
//! that can still change the recommendation ([`decide::next`]), until nothing can (within the
//! tolerance), the node-hours are spent, or no count is left. Every run it takes is handed to
//! an [`Observer`] to keep, and every step is said; what a stage refuses ends the campaign with
//! the runs kept and the reason said, never with an internal error.

use super::decide::{self, Next, View};
use super::evaluate::{self, Evaluated, evaluate};
use super::objective::Run;
use super::settings::{START, Settings};
use super::source::{Ahead, RunSource, Stopped, Taken};
use super::step::{Rec, Step};
use crate::calibrate::fit::MachineDoc;
use crate::error::{InputError, InputResult};
use crate::model::workload::Profile;
use std::collections::BTreeSet;

/// What a campaign tells its caller as it goes.
pub trait Observer {
    /// Every run so far, after each count measured: keep them (the `--measured-out` file).
    fn runs(&mut self, runs: &[Taken]) -> anyhow::Result<()>;
    /// A step, once its recommendation after is known (a start step at once).
    fn step(&mut self, step: &Step);
}

/// An observer that keeps nothing and says nothing.
pub struct Quiet;

impl Observer for Quiet {
    fn runs(&mut self, _: &[Taken]) -> anyhow::Result<()> {
        Ok(())
    }
    fn step(&mut self, _: &Step) {
        // Says nothing.
    }
}

/// How a campaign ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Its steps.
    pub steps: Vec<Step>,
    /// Why it stopped.
    pub stopped: String,
    /// The recommendation: the measured count the query ranks best by the mean of its runs,
    /// with the other axes of the last fit planned on that count alone (the fitted model's pick
    /// where no count was measured at its cores a node).
    pub recommendation: Option<Rec>,
    /// The last plan's pick over every count (the recommendation where they agree).
    pub model_pick: Option<Rec>,
    /// The measured count the query ranks best by the mean of its runs.
    pub measured_best: Option<u32>,
    /// Where the recommendation is not the fitted model's pick: why, in words.
    pub model_differs: Option<String>,
    /// The largest count planned.
    pub max_nodes: u32,
    /// The steps of the campaign this one resumed (0: not resumed), counted from its runs:
    /// each run of consecutive runs on one count is a step, or one a `repeat` runs in it.
    pub resumed_steps: usize,
    /// The node counts measured.
    pub measured_nodes: Vec<u32>,
    /// The node-hours its runs cost, those that gave no time included.
    pub node_hours: f64,
    /// The node-hours of its runs that gave no time (stopped at their budget limit, or,
    /// launched, failed), within `node_hours`.
    pub unmeasured_node_hours: f64,
    /// The run its budget stopped, where one did (the campaign ended there).
    pub budget_stop: Option<Stopped>,
    /// The node-runs its runs cost (a run on `n` nodes costs `n`).
    pub node_runs: u32,
    /// Whether a run measured energy.
    pub energy: bool,
    /// Whether the machine file has `[power]` (the energies planned without energy measured).
    pub file_power: bool,
    /// Why the last fit fitted no power from the energy measured (`None`: it did, or no run
    /// measured energy).
    pub power_gap: Option<String>,
}

/// A campaign over a source of runs.
pub struct Campaign<S> {
    machine: MachineDoc,
    settings: Settings,
    source: S,
    runs: Vec<Taken>,
    measured: BTreeSet<u32>,
    last: Option<Evaluated>,
    resumed_steps: usize,
    /// The node-hours left when the step now taken began (none: no budget, or none taken).
    step_left: Option<f64>,
}

impl<S: RunSource> Campaign<S> {
    /// A campaign of `source`'s runs against `machine`; refused before anything is measured
    /// where the machine cannot plan what it would measure.
    pub fn new(machine: MachineDoc, settings: Settings, source: S) -> InputResult<Campaign<S>> {
        if machine.lacks.network && settings.max_nodes > 1 {
            return Err(InputError::Mismatch(format!(
                "{}: the machine file has no [network] section, which the campaign's runs over \
                 several nodes need (it plans up to {} nodes); give it {}",
                machine.file.display(),
                settings.max_nodes,
                crate::model::machine::NETWORK_HINT
            )));
        }
        if let Some(f) = settings.freqs_hz.iter().flatten().find(|f| {
            machine
                .machine
                .frequency_index(crate::units::Hertz(**f))
                .is_none()
        }) {
            return Err(InputError::Argument {
                flag: "--freqs".into(),
                expected: format!(
                    "frequencies of {}: {} GHz",
                    machine.file.display(),
                    machine.machine.frequency_list_ghz()
                ),
                got: format!("{}", f / 1e9),
            });
        }
        Ok(Campaign {
            machine,
            settings,
            source,
            runs: Vec::new(),
            measured: BTreeSet::new(),
            last: None,
            resumed_steps: 0,
            step_left: None,
        })
    }

    /// The runs measured before (a resumed campaign's), in their order.
    pub fn resume_with(&mut self, runs: Vec<Taken>) {
        self.resumed_steps += super::order::steps(&runs, self.settings.repeat).len();
        self.measured.extend(runs.iter().map(|t| t.row.nodes));
        self.runs.extend(runs);
    }

    /// The runs so far.
    pub fn runs(&self) -> &[Taken] {
        &self.runs
    }

    /// The source of runs.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The source of runs, to finish with it.
    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The profile of the last fit, where there was one.
    pub fn profile(&self) -> Option<&Profile> {
        self.last.as_ref().map(|e| e.fitted.profile())
    }

    /// The last fit and plan, where there were.
    pub fn last(&self) -> Option<&Evaluated> {
        self.last.as_ref()
    }

    /// The counts to start from that are not yet measured.
    pub fn start(&self) -> Vec<u32> {
        let mut avail = self.source.available(self.settings.max_nodes);
        avail.extend(self.measured.iter().copied());
        avail.sort_unstable();
        avail.dedup();
        let mut chosen: Vec<u32> = Vec::new();
        for t in START {
            let above = chosen.last().copied().unwrap_or(0);
            if let Some(&n) = avail.iter().find(|&&n| n >= t && n > above) {
                chosen.push(n);
            }
        }
        chosen.retain(|n| !self.measured.contains(n));
        chosen
    }

    /// Fits and plans the runs so far, in memory; `Err` says what refused them.
    pub fn evaluate(&self) -> Result<Evaluated, String> {
        evaluate(&self.runs, &self.machine, &self.settings)
    }

    /// What to measure next after `evaluated`, or why to stop, the predicted cost of the
    /// next count in node-hours, and what is predicted to follow it.
    pub fn next(&self, evaluated: &Evaluated) -> (Next, Option<f64>, Option<Ahead>) {
        let measured_at = |n: u32, c: u32| self.measured_at(n, c).is_some();
        let runs = self.objective_runs();
        let available = self.source.available(self.settings.max_nodes);
        let view = View {
            measured: &self.measured,
            unmeasured: available
                .iter()
                .copied()
                .filter(|m| !self.measured.contains(m))
                .collect(),
            again: available
                .iter()
                .copied()
                .filter(|m| self.measured.contains(m))
                .collect(),
            runs: &runs,
            word: self.source.word(),
            max_nodes: self.settings.max_nodes,
            tolerance: self.settings.tolerance,
            budget: self.settings.node_hours.map(|b| (b, self.node_hours())),
            repeat: self.settings.repeat,
            measured_at: &measured_at,
        };
        let next = decide::next(&view, &evaluated.plan);
        let (cost, ahead) = match &next {
            Next::Measure(m, _) => (
                Some(decide::cost(&view, &evaluated.plan, *m)),
                Some(super::forecast::after(&view, &evaluated.plan, *m)),
            ),
            Next::Stop(_) => (None, None),
        };
        (next, cost, ahead)
    }

    /// The runs so far as the objective sees them.
    fn objective_runs(&self) -> Vec<Run> {
        self.runs
            .iter()
            .map(|t| Run {
                nodes: t.row.nodes,
                cores: t.row.cores,
                time: t.row.time_s,
                energy: t.row.energy().map(|(e, _)| e),
            })
            .collect()
    }

    /// Takes the settings' runs on `n` nodes and hands every run so far to `observer`; no
    /// step where no run on `n` nodes could be had (every one failed, or a stop signal came).
    pub fn measure(
        &mut self,
        n: u32,
        why: String,
        (number, before): (usize, Option<Rec>),
        observer: &mut dyn Observer,
    ) -> anyhow::Result<Option<Step>> {
        let taken = self.source.take(n, self.settings.repeat.max(1))?;
        let of_n = || taken.iter().filter(|t| t.row.nodes == n);
        let node_hours: f64 = of_n().map(|t| f64::from(n) * t.row.time_s / 3600.0).sum();
        let runs = of_n().count();
        self.measured.extend(taken.iter().map(|t| t.row.nodes));
        self.runs.extend(taken);
        observer.runs(&self.runs)?;
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
            spent_node_hours: self.node_hours(),
            next_node_hours: None,
            ahead: None,
            before,
            after: None,
            findings: Vec::new(),
        }))
    }

    /// The mean time of the runs so far on `nodes` nodes of `cores` cores, where there are.
    pub fn measured_at(&self, nodes: u32, cores: u32) -> Option<f64> {
        let times: Vec<f64> = self
            .runs
            .iter()
            .filter(|t| t.row.nodes == nodes && t.row.cores == cores)
            .map(|t| t.row.time_s)
            .collect();
        (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64)
    }

    /// The node-hours of the runs so far, those that gave no time (stopped at their budget
    /// limit, failed) included.
    pub fn node_hours(&self) -> f64 {
        // + 0.0: an empty sum is -0.0.
        self.runs
            .iter()
            .map(|t| f64::from(t.row.nodes) * t.row.time_s / 3600.0)
            .sum::<f64>()
            + self.source.spend().unmeasured_node_hours
            + 0.0
    }

    /// The node-hours left of the budget (`None`: no budget).
    pub fn left(&self) -> Option<f64> {
        self.settings
            .node_hours
            .map(|b| (b - self.node_hours()).max(0.0))
    }

    /// Whether a run so far measured energy.
    pub fn any_energy(&self) -> bool {
        self.runs.iter().any(|t| t.row.energy().is_some())
    }

    /// Measures the start counts, then one count a step until the campaign stops.
    pub fn run(&mut self, observer: &mut dyn Observer) -> anyhow::Result<Outcome> {
        let mut steps = Vec::new();
        let stopped = self.steps(&mut steps, observer)?;
        if let Some(last) = steps
            .last()
            .filter(|s| s.after.is_none() && !s.findings.is_empty())
        {
            observer.step(last);
        }
        let (recommendation, model_pick, measured_best, model_differs) = self.recommended();
        Ok(Outcome {
            steps,
            stopped,
            recommendation,
            model_pick,
            measured_best,
            model_differs,
            max_nodes: self.settings.max_nodes,
            resumed_steps: self.resumed_steps,
            measured_nodes: self.measured.iter().copied().collect(),
            node_hours: self.node_hours(),
            unmeasured_node_hours: self.source.spend().unmeasured_node_hours,
            budget_stop: self.source.spend().stopped.clone(),
            node_runs: self.runs.iter().map(|t| t.row.nodes).sum(),
            energy: self.any_energy(),
            file_power: !self.machine.lacks.power,
            power_gap: self.power_gap(),
        })
    }

    /// The recommendation (the best measured count, planned on it alone), the model's pick,
    /// the best measured count, and why the two differ where they do.
    fn recommended(&self) -> (Option<Rec>, Option<Rec>, Option<u32>, Option<String>) {
        let Some(e) = &self.last else {
            return (None, None, None, None);
        };
        let pick = self.rec_of(e);
        let best = decide::measured_best(&self.objective_runs(), &e.plan);
        let Some((p, b)) = pick
            .as_ref()
            .map(|p| p.nodes)
            .zip(best)
            .filter(|(p, b)| p != b)
        else {
            return (pick.clone(), pick, best, None);
        };
        let b_nodes = crate::units::count(b, "node", "nodes");
        let why = match decide::measured_gain(&self.objective_runs(), &e.plan, b, p) {
            Some(g) => format!(
                "as measured, {b_nodes} beat it by {:.1}% by the mean of their runs",
                100.0 * g
            ),
            None => format!("it was not measured; {b_nodes} is the best measured count"),
        };
        let at_b = evaluate::plan_at(e, &self.machine, &self.settings, b).and_then(|plan| {
            self.rec_of_plan(&plan).ok_or(format!(
                "the plan on {b_nodes} alone leaves it unanswered ({})",
                plan.answer.reason
            ))
        });
        match at_b {
            Ok(r) => (
                Some(r),
                pick,
                best,
                Some(format!("{why}: recommended, planned on {b_nodes} alone")),
            ),
            Err(refused) => (
                pick.clone(),
                pick,
                best,
                Some(format!("{why}, but {refused}: the model's pick stands")),
            ),
        }
    }

    /// The recommendation of a plan, as a step reports it.
    fn rec_of_plan(&self, plan: &crate::search::plan::Plan) -> Option<Rec> {
        Rec::of(plan, &|n, c| self.measured_at(n, c))
    }

    /// Why no power was fitted from the energy measured, where energy was measured.
    fn power_gap(&self) -> Option<String> {
        if !self.any_energy() {
            return None;
        }
        match &self.last {
            Some(e) => e.fitted.power_gap.clone(),
            None => Some("no fit was made".into()),
        }
    }

    /// The recommendation of an evaluation, as a step reports it.
    fn rec_of(&self, e: &Evaluated) -> Option<Rec> {
        Rec::of(&e.plan, &|n, c| self.measured_at(n, c))
    }

    /// The loop: returns why the campaign stopped.
    fn steps(
        &mut self,
        steps: &mut Vec<Step>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<String> {
        let word = self.source.word();
        let mut todo: Vec<(u32, String)> = self
            .start()
            .into_iter()
            .map(|n| {
                let why = format!("start: the smallest {word} count at or above {START:?}");
                (n, why)
            })
            .collect();
        let mut before: Option<Rec> = None;
        // Whether the last step was said when it was measured (a start step but the last).
        let mut said = false;
        loop {
            if let Some(sig) = self.source.interrupted() {
                return Ok(interrupted(sig, self.runs.len()));
            }
            if let Some(stop) = self.source.spend().stopped.clone() {
                self.refit_after_stop(steps, observer, said);
                return Ok(self.budget_reached(&stop));
            }
            if todo.is_empty() {
                match self.decide(steps, observer) {
                    Ok((next, after)) => {
                        todo.push(next);
                        before = after;
                    }
                    Err(stop) => return Ok(stop),
                }
            }
            let (n, why) = todo.remove(0);
            let number = (self.resumed_steps + steps.len() + 1, before.clone());
            self.step_left = self.left();
            self.source.budget(self.step_left);
            let Some(step) = self.measure(n, why, number, observer)? else {
                continue;
            };
            said = !todo.is_empty();
            if said {
                // The start is fitted once it is complete.
                observer.step(&step);
            }
            steps.push(step);
        }
    }

    /// Refits and replans, completes and says the last step, and decides: the next count and
    /// the recommendation now, or (`Err`) why the campaign stops.
    fn decide(
        &mut self,
        steps: &mut [Step],
        observer: &mut dyn Observer,
    ) -> Result<((u32, String), Option<Rec>), String> {
        let word = self.source.word();
        if self.measured.is_empty() {
            return Err(format!("nothing {word} to start from"));
        }
        if self.measured.len() == 1 {
            let stop = self.one_count();
            if let Some(last) = steps.last_mut() {
                last.findings.push(stop.clone());
            }
            return Err(stop);
        }
        let evaluated = self.evaluate();
        if let Some(sig) = self.source.interrupted() {
            return Err(interrupted(sig, self.runs.len()));
        }
        let pending = steps.last_mut().filter(|s| s.after.is_none());
        let evaluated = match evaluated {
            Ok(e) => e,
            Err(refused) => {
                if let Some(last) = pending {
                    last.findings.push(refused.clone());
                }
                return Err(format!("{refused}; every run is kept"));
            }
        };
        let after = self.rec_of(&evaluated);
        let (next, cost, ahead) = self.next(&evaluated);
        self.source.ahead(ahead);
        if let Some(last) = pending {
            last.after = after.clone();
            last.findings.clone_from(&evaluated.findings);
            if self.last.is_none() {
                last.findings.extend(self.no_energy());
            }
            last.next_node_hours = cost;
            last.ahead = ahead;
            observer.step(last);
        }
        self.last = Some(evaluated);
        match next {
            Next::Stop(why) => Err(why),
            Next::Measure(n, why) => Ok(((n, why), after)),
        }
    }

    /// Said once the start is fitted, where its runs measured no energy but the machine file
    /// has `[power]`: every energy the campaign ranks by is that file's prediction.
    fn no_energy(&self) -> Option<String> {
        (!self.any_energy() && !self.machine.lacks.power).then(|| {
            format!(
                "the runs measured no energy: every energy the campaign ranks by (the \
                 energy-delay product) is predicted from the [power] of {}, not measured; \
                 measure energy (RAPL, an energy plugin) or give a machine file without \
                 [power] to rank by node-hours and time",
                self.machine.file.display()
            )
        })
    }

    /// Why a campaign with runs on one node count stops: what it has, and what to measure.
    fn one_count(&self) -> String {
        let n = self.measured.first().copied().unwrap_or(1);
        let word = self.source.word();
        let other = match n {
            1 => "2 nodes".to_string(),
            _ => format!("{} or {} nodes", n / 2, n * 2),
        };
        format!(
            "only one node count was {word}: {} on {} ({}); a node law needs \
             runs on two or more counts and no other {word} count up to {} is left: measure \
             another count ({other}), then resume",
            crate::units::count(self.runs.len() as u64, "run", "runs"),
            crate::units::count(u64::from(n), "node", "nodes"),
            crate::units::fmt_node_hours(self.node_hours()),
            self.settings.max_nodes,
        )
    }
}

impl<S: RunSource> Campaign<S> {
    /// Refits after a budget stop where the last step has no recommendation after it yet
    /// (or nothing was fitted: a resumed campaign), so that the recommendation rests on every
    /// run measured; a fit refused is the step's finding, and the last fit stands. The step is
    /// said unless it was (`said`: a start step, said as it was measured).
    fn refit_after_stop(&mut self, steps: &mut [Step], observer: &mut dyn Observer, said: bool) {
        let pending = steps.last().is_some_and(|s| s.after.is_none());
        if self.measured.len() < 2 || (!pending && self.last.is_some()) {
            return;
        }
        let evaluated = self.evaluate();
        let last = steps.last_mut().filter(|s| s.after.is_none());
        match evaluated {
            Ok(e) => {
                if let Some(last) = last {
                    last.after = self.rec_of(&e);
                    last.findings.clone_from(&e.findings);
                    if !said {
                        observer.step(last);
                    }
                }
                self.last = Some(e);
            }
            Err(refused) => {
                if let Some(last) = last {
                    last.findings.push(refused);
                }
            }
        }
    }

    /// Why the campaign stopped at its budget: the run stopped, its limit, what was spent,
    /// and, where the stop was found before any run of this invocation, that it was resumed
    /// after its budget was reached.
    fn budget_reached(&self, s: &Stopped) -> String {
        use crate::units::fmt_node_hours;
        let on = crate::units::count(s.nodes, "node", "nodes");
        let share = match self.step_left {
            Some(left) => format!(
                "its share of the {} left when it began over the runs still to make in its \
                 step",
                fmt_node_hours(left)
            ),
            None => "its share of the budget left".into(),
        };
        let run = match &s.from {
            Some(from) => format!(
                "the run on {on} ({from}) was stopped at {:.1} s (its limit, {:.1} s, is \
                 {share}); it gives no time",
                s.ran_s, s.limit_s
            ),
            None => format!(
                "the next run on {on} was not started: {share} is {:.3} s, no time to run",
                s.limit_s
            ),
        };
        let spent = match self.settings.node_hours {
            Some(b) => format!(
                "{} spent of the {} budget",
                fmt_node_hours(self.node_hours()),
                fmt_node_hours(b)
            ),
            None => format!("{} spent", fmt_node_hours(self.node_hours())),
        };
        let again = match self.step_left.is_none() && self.resumed_steps > 0 {
            true => {
                "; resumed after the budget was reached: it is spent, and nothing more is \
                     measured"
            }
            false => "",
        };
        format!(
            "budget reached: {run}; {spent}; the recommendation rests on the runs measured \
             before it{again}"
        )
    }
}

/// Why an interrupted campaign stopped.
fn interrupted(sig: i32, runs: usize) -> String {
    format!(
        "interrupted ({}) after {}: every finished run is saved in --measured-out and in the \
         record of the runs beside --output (--output holds the last fit, where one was made); \
         continue with --resume",
        crate::measure::launch::signal_name(sig),
        crate::units::count(runs as u64, "run", "runs")
    )
}
