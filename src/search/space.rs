//! The configuration space: the cartesian product of node, core, frequency and GPU sets.

use crate::error::{InputError, InputResult};
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::model::{Group, Model};

/// The sets to search, each sorted ascending and free of duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Node counts.
    pub nodes: Vec<u32>,
    /// Cores per node.
    pub cores: Vec<u32>,
    /// Indices into the machine's frequency set.
    pub freqs: Vec<usize>,
    /// GPUs per node.
    pub gpus: Vec<u32>,
    /// GPU core clocks, MHz, ascending, for the configurations with GPUs (empty: the profile's
    /// reference clock only, no clock axis).
    pub gpu_clocks: Vec<f64>,
}

impl Space {
    /// The machine's whole space, with the GPU counts the profile can support: `0` where it has
    /// CPU-only points, and `1..=g_max` where it has GPU points for every `(c, f)` of the space
    /// (name `--gpus` to plan GPU counts on part of the space). GPUs that the program never used
    /// only add idle power, so a CPU-only profile plans `g = 0`.
    pub fn full(machine: &Machine, profile: &Profile) -> Space {
        let cores: Vec<u32> = (1..=machine.cores_per_node).collect();
        let freqs: Vec<usize> = (0..machine.frequencies.len()).collect();
        let gpus = Space::default_gpus(machine, profile, &cores, &freqs);
        Space {
            nodes: (1..=machine.max_nodes).collect(),
            cores,
            freqs,
            gpus,
            gpu_clocks: Vec::new(),
        }
    }

    /// The GPU counts searched where none are asked for: 0 where the profile ran without GPUs
    /// (or cannot serve GPUs everywhere), and 1 to the machine's where the profile has a
    /// point with GPUs at every core count and frequency of `cores` and `freqs` (those searched).
    pub fn default_gpus(
        machine: &Machine,
        profile: &Profile,
        cores: &[u32],
        freqs: &[usize],
    ) -> Vec<u32> {
        let gpu_everywhere = machine.gpus_per_node > 0
            && cores.iter().all(|&c| {
                freqs.iter().all(|&f| {
                    machine
                        .frequencies
                        .get(f)
                        .is_some_and(|&hz| profile.point(c, hz, 1).is_ok())
                })
            });
        let mut gpus = Vec::new();
        if profile.has_cpu_points() || !gpu_everywhere {
            gpus.push(0);
        }
        if gpu_everywhere {
            gpus.extend(1..=machine.gpus_per_node);
        }
        gpus
    }

    /// Leaves out the node counts whose memory cannot hold the profile's footprint (MODEL.md
    /// section 7's fit filter). Returns a note saying what was left out, if anything.
    pub fn filter_memory(
        &mut self,
        machine: &Machine,
        profile: &Profile,
    ) -> InputResult<Option<String>> {
        let (Some(need), Some(per_node)) =
            (profile.memory_footprint_gib, machine.memory_per_node_gib)
        else {
            return Ok(None);
        };
        let min_nodes = (need / per_node).ceil().max(1.0);
        let before = self.nodes.len();
        self.nodes.retain(|&n| f64::from(n) >= min_nodes);
        if self.nodes.is_empty() {
            return Err(InputError::Mismatch(format!(
                "{}: the run needs {need} GiB (memory_footprint_gib) and machine `{}` has {per_node} GiB per node, \
                 so it needs at least {min_nodes} nodes; none of the node counts asked for is that large",
                profile.file.display(),
                machine.name
            )));
        }
        let left_out = before - self.nodes.len();
        Ok((left_out > 0).then(|| {
            format!(
                "{left_out} node counts below {min_nodes} left out: the run needs {need} GiB, {per_node} GiB per node"
            )
        }))
    }

    /// Keeps one node for a profile of one process without MPI (MODEL.md 6c d). Returns a
    /// note saying so when other node counts were asked for.
    pub fn filter_single_process(&mut self, profile: &Profile) -> InputResult<Option<String>> {
        if !profile.facts.single_process || self.nodes.iter().all(|&n| n == 1) {
            return Ok(None);
        }
        if !self.nodes.contains(&1) {
            return Err(InputError::Mismatch(format!(
                "{}: the program was profiled as one process without MPI (its sweep ran 1 rank \
                 and no launcher), so it cannot use more than one node; plan with --nodes 1, or \
                 profile it with --ranks under MPI",
                profile.file.display()
            )));
        }
        self.nodes = vec![1];
        Ok(Some(
            "one node only: the program was profiled as one process without MPI (1 rank, no \
             launcher), and a second node would only add idle power"
                .into(),
        ))
    }

    /// Number of configurations.
    pub fn size(&self) -> u64 {
        let clocks = self.gpu_clocks.len().max(1);
        let per_fc: usize = self
            .gpus
            .iter()
            .map(|&g| if g == 0 { 1 } else { clocks })
            .sum();
        (self.nodes.len() * self.cores.len() * self.freqs.len() * per_fc) as u64
    }

    /// Checks every set against the machine's limits and that none is empty.
    pub fn validate(&self, machine: &Machine) -> InputResult<()> {
        let check = |flag: &str, vals: &[u32], lo: u32, hi: u32| -> InputResult<()> {
            if vals.is_empty() {
                return Err(InputError::Argument {
                    flag: flag.into(),
                    expected: format!("at least one value from {lo} to {hi}"),
                    got: "an empty set".into(),
                });
            }
            let outside: Vec<u64> = vals
                .iter()
                .filter(|v| !(lo..=hi).contains(*v))
                .map(|&v| u64::from(v))
                .collect();
            if outside.is_empty() {
                return Ok(());
            }
            let all: Vec<u64> = vals.iter().map(|&v| u64::from(v)).collect();
            let list = crate::model::workload::compact_list;
            Err(InputError::Argument {
                flag: flag.into(),
                expected: format!(
                    "values from {lo} to {hi}, the most machine `{}` has",
                    machine.name
                ),
                got: format!(
                    "{} ({} of them outside {lo}-{hi}: {})",
                    list(&all),
                    outside.len(),
                    list(&outside)
                ),
            })
        };
        check("--nodes", &self.nodes, 1, machine.max_nodes)?;
        check("--cores", &self.cores, 1, machine.cores_per_node)?;
        check("--gpus", &self.gpus, 0, machine.gpus_per_node)?;
        if self.freqs.is_empty() {
            return Err(InputError::Argument {
                flag: "--freqs".into(),
                expected: format!("at least one of {} GHz", machine.frequency_list_ghz()),
                got: "an empty set".into(),
            });
        }
        Ok(())
    }

    /// The `(index, clock)` pairs a group with `g` GPUs is searched at: one without GPUs or
    /// without a clock axis (the profile's reference clock), else one per clock.
    fn clocks_for(&self, g: u32) -> Vec<(u32, Option<f64>)> {
        if g == 0 || self.gpu_clocks.is_empty() {
            return vec![(0, None)];
        }
        // Index 0 is the highest clock searched (the clocks are ascending) and the key of a tie
        // keeps the least index: configurations nothing tells apart run at the highest clock,
        // nearest the default, never at a lower one that no prediction favours.
        let top = self.gpu_clocks.len() as u32 - 1;
        (0..=top)
            .rev()
            .zip(self.gpu_clocks.iter().map(|&m| Some(m)))
            .collect()
    }

    /// The groups `(c, f, g, fg)` of the space; fails on the first missing baseline point.
    pub fn groups(&self, model: &Model<'_>) -> InputResult<Vec<Group>> {
        use rayon::prelude::*;
        let mut keys: Vec<(u32, usize, u32, u32, Option<f64>)> = Vec::new();
        for &c in &self.cores {
            for &f in &self.freqs {
                for &g in &self.gpus {
                    for (i, clock) in self.clocks_for(g) {
                        keys.push((c, f, g, i, clock));
                    }
                }
            }
        }
        // In parallel: tens of thousands of groups are a visible share of a wide search. The
        // error reported is the first in order, as a sequential build would give.
        let built: Vec<InputResult<Group>> = keys
            .par_iter()
            .map(|&(c, f, g, i, clock)| {
                let mut group = model.group_at(c, f, g, clock)?;
                group.clock_index = i;
                Ok(group)
            })
            .collect();
        built.into_iter().collect()
    }
}
