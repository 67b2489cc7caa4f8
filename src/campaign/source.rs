//! Where a campaign's runs come from ([`RunSource`]): recorded runs (`--replay`,
//! [`super::replay::Recorded`]) or the program launched through the sweep
//! ([`super::launch::Launch`]). Each gives the runs it made as measured rows; none invents one.

use crate::artefact::measured::MeasuredRow;
use serde::Serialize;

/// A run the campaign took: its row of the measured CSV, and where it came from (the
/// recording's file and line, or the sweep's profile and run).
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    /// The run as a row of the measured CSV.
    pub row: MeasuredRow,
    /// Where it came from, for messages (`weather.csv:14`).
    pub from: String,
}

/// A source of runs.
pub trait RunSource {
    /// The node counts up to `max` that can still be measured, ascending.
    fn available(&self, max: u32) -> Vec<u32>;

    /// `k` runs on `n` nodes (fewer, or none, where fewer could be had). A launch may also
    /// return runs it completed on counts measured before (an interrupted campaign's last
    /// count).
    fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Taken>>;

    /// How a count that can be measured is called in the steps' reasons (`recorded`,
    /// `available`).
    fn word(&self) -> &'static str;

    /// The stop signal that interrupted the runs, if one did (0: stopped without a signal).
    fn interrupted(&self) -> Option<i32> {
        None
    }

    /// What the campaign predicts it will measure after the count it takes next (`None`
    /// before the start is fitted), for the progress a source says as its runs go.
    fn ahead(&mut self, _ahead: Option<Ahead>) {}

    /// The node-hours the next [`RunSource::take`] may spend in all (`None`: no budget):
    /// each run's time limit is its share of what is left ([`crate::measure::sweep::share_s`]:
    /// what is left over the node count x the runs still to make), and a run longer than
    /// its limit is stopped there: spent, but no measurement ([`Spend::stopped`]).
    fn budget(&mut self, left_node_hours: Option<f64>);

    /// What the runs taken spent without giving time, and the budget's stop.
    fn spend(&self) -> &Spend;
}

/// What a source's runs spent of a budget without giving time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    /// The node-hours the next take may spend (`None`: no budget).
    pub left: Option<f64>,
    /// The node-hours of the runs taken that gave no time: stopped at their budget limit, or
    /// (launched) failed.
    pub unmeasured_node_hours: f64,
    /// The run stopped at its budget limit (or not started, its share leaving no time), where
    /// one was: the campaign ends there.
    pub stopped: Option<Stopped>,
}

/// A run the budget stopped: the node-hours it ran are spent, and it gives no time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stopped {
    /// Its node count.
    pub nodes: u32,
    /// Seconds it ran until it was stopped (0: not started).
    pub ran_s: f64,
    /// Its limit, seconds.
    pub limit_s: f64,
    /// The node-hours it spent (`nodes x ran_s`).
    pub node_hours: f64,
    /// Which run it was (`weather.csv:14`, `P.sweep.json: run 12`; none where not started).
    pub from: Option<String>,
}

/// What a campaign predicts it will still measure after the step it is taking: the steps
/// its rules would choose were every count to come out as the last fit predicts it
/// ([`super::forecast`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ahead {
    /// Steps.
    pub steps: usize,
    /// Runs.
    pub runs: u32,
    /// Their predicted cost, node-hours.
    pub node_hours: f64,
    /// Their predicted wall time one after another, seconds.
    pub seconds: f64,
}
