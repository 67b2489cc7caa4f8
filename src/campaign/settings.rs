//! What a campaign is asked: how close is close enough, what it may spend, the counts, cores
//! and frequencies it may measure and plan, and the query its recommendation answers.

use crate::search::query::Query;
use std::path::PathBuf;

/// The counts a campaign starts from: the smallest available at or above each, ascending.
pub const START: [u32; 3] = [1, 2, 4];

/// The default tolerance: run-to-run spread of one configuration is 2.7-8.4% (median per code)
/// on the clusters we measured, so an `E x T` gain under 5% cannot be told from repeating a run.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// A campaign's settings (`profile --nodes auto`'s flags, validated).
#[derive(Debug, Clone)]
pub struct Settings {
    /// An unmeasured count is explored only where its interval's favourable end beats the best
    /// measured count by more than this fraction (`--tolerance`).
    pub tolerance: f64,
    /// The node-hours the campaign may spend, its start included (`--node-hours`).
    pub node_hours: Option<f64>,
    /// The largest node count to plan and measure (`--max-nodes`, else the machine's).
    pub max_nodes: u32,
    /// Runs a count (`--repeat`).
    pub repeat: u32,
    /// The program's name in the fitted profile.
    pub program: String,
    /// The runs over several nodes are weak scaling (`--weak`).
    pub weak: bool,
    /// Cores a node to plan (`--cores`; `None`: those measured).
    pub cores: Option<Vec<u32>>,
    /// Frequencies to plan, Hz (`--freqs`; `None`: the machine's).
    pub freqs_hz: Option<Vec<f64>>,
    /// What the recommendation answers (none: least energy-delay product, or node-hours x
    /// time without energy).
    pub query: Query,
    /// The file the runs are kept in (`--measured-out`), named in the fit's messages as `fit
    /// --measured` on it would name them.
    pub runs_file: PathBuf,
}

impl Settings {
    /// Settings with the defaults: tolerance 5%, no budget, one run a count, no query.
    pub fn new(max_nodes: u32, program: &str, runs_file: PathBuf) -> Settings {
        Settings {
            tolerance: DEFAULT_TOLERANCE,
            node_hours: None,
            max_nodes,
            repeat: 1,
            program: program.into(),
            weak: false,
            cores: None,
            freqs_hz: None,
            query: Query::default(),
            runs_file,
        }
    }
}
