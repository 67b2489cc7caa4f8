//! A measuring budget over a sweep (a campaign's `--node-hours` left): each run's time limit
//! is its share of what is left, so that the sweep's runs cannot spend more; a run stopped at
//! that limit ends the sweep.

use super::options::Todo;
use std::time::Duration;

/// Seconds a run's budget limit is set short of its share: the sweep checks a run's limit
/// every 2 ms, then kills its process group (SIGKILL at once; `--grace` is for the stop
/// signals only) and waits for it to be reaped, and the run's wall time runs to the reaping.
/// A process that takes longer to die (uninterruptible I/O; ranks on other nodes that a
/// killed `srun` leaves to Slurm) can pass its share by the rest.
pub const KILL_ALLOWANCE_S: f64 = 0.1;

/// How a run stopped at its budget limit says so in the record (`failure`), followed by the
/// limit in seconds: a resumed campaign reads it back ([`budget_limit_of`]).
pub const BUDGET_STOP: &str = "stopped at its budget limit of ";

/// A run's time limit: the user's `--timeout`, or, where smaller, its share of the budget.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Limit {
    /// The limit (none: the run may take as long as it takes).
    pub(super) time: Option<Duration>,
    /// Whether the budget's share set it (a run stopped there is a budget stop).
    pub(super) budget: bool,
}

/// Where a budget ended a sweep: the run stopped at its limit, or not started.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetStop {
    /// The run's node count.
    pub nodes: u32,
    /// Seconds it ran (0: not started, its share was no longer than [`KILL_ALLOWANCE_S`]).
    pub ran_s: f64,
    /// Its limit, seconds.
    pub limit_s: f64,
    /// Whether it was started.
    pub started: bool,
}

/// The run's share of `left_node_s` (node-seconds) where `rest` (this run first) are the runs
/// still to make: what is left over their node counts (`left / (n x k)` for `k` runs on `n`
/// nodes), in whole milliseconds strictly below it (so that `n x share`, summed with what
/// was spent in floating point, never passes the budget).
pub fn share_s(left_node_s: f64, rest_nodes: impl Iterator<Item = u32>) -> f64 {
    let nodes: f64 = rest_nodes.map(f64::from).sum();
    if nodes <= 0.0 || left_node_s <= 0.0 {
        return 0.0;
    }
    ((left_node_s / nodes * 1e3).ceil() - 1.0).max(0.0) / 1e3
}

/// The limit of the first of `rest`: the share of `left_node_s` less [`KILL_ALLOWANCE_S`], or
/// `timeout` where smaller; `Err(share)` where the share leaves no time to run.
pub(super) fn limit(
    left_node_s: Option<f64>,
    rest: &[Todo],
    timeout: Option<Duration>,
) -> Result<Limit, f64> {
    let Some(left) = left_node_s else {
        return Ok(Limit {
            time: timeout,
            budget: false,
        });
    };
    let share = share_s(left, rest.iter().map(|(p, _)| p.nodes));
    let run_s = share - KILL_ALLOWANCE_S;
    if run_s <= 0.0 {
        return Err(share);
    }
    let own = Duration::from_secs_f64(run_s);
    Ok(match timeout {
        Some(t) if t <= own => Limit {
            time: Some(t),
            budget: false,
        },
        _ => Limit {
            time: Some(own),
            budget: true,
        },
    })
}

/// The failure a run stopped at its budget limit is recorded with.
pub(super) fn failure(limit: Duration) -> String {
    format!("{BUDGET_STOP}{:.3} s", limit.as_secs_f64())
}

/// The budget limit of a run recorded as stopped at it, seconds (`None`: another failure).
pub fn budget_limit_of(failure: &str) -> Option<f64> {
    failure
        .strip_prefix(BUDGET_STOP)?
        .strip_suffix(" s")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_what_is_left_over_the_nodes_of_the_runs_to_make_rounded_down() {
        // 0.5 node-hours over 2 runs on 16 nodes: 56.25 s each, a millisecond short.
        assert_eq!(share_s(1800.0, [16, 16].into_iter()), 56.249);
        // 10 node-seconds over 3 nodes: 3.333 s, never 3.334.
        assert_eq!(share_s(10.0, [3].into_iter()), 3.333);
        assert_eq!(share_s(-1.0, [3].into_iter()), 0.0);
    }

    #[test]
    fn a_budget_stop_reads_back_its_limit_and_no_other_failure_does() {
        let f = failure(Duration::from_secs_f64(12.5));
        assert_eq!(budget_limit_of(&f), Some(12.5));
        assert_eq!(budget_limit_of("stopped at the time limit"), None);
        assert_eq!(budget_limit_of("exit status 1"), None);
    }
}
