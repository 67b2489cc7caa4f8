//! How the measured runs laid their MPI ranks and OpenMP threads on a node's cores, so a job
//! script runs the layout its prediction is for (one rank a core, or a fixed number of ranks a
//! node each with the rest of the cores as threads).

pub use crate::artefact::profile::LayoutFile;

/// The rule the measured runs followed at every core count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A fixed number of ranks on each node; the node's cores shared out as threads.
    RanksPerNode(u32),
    /// A fixed number of threads per rank (1: MPI only, one rank a core).
    ThreadsPerRank(u32),
}

impl Layout {
    /// The rule that every `(cores, ranks per node)` pair follows: one rank a node wherever
    /// the cores vary and the ranks do not, one thread a rank wherever ranks equal cores,
    /// else a fixed threads-per-rank; `None` when there is no pair or no one rule fits.
    /// Where both fit (one core count only), ranks per node is taken only for one rank.
    pub fn infer(pairs: &[(u32, u32)]) -> Option<Layout> {
        let &(c0, r0) = pairs.first()?;
        if r0 == 0 || c0 == 0 {
            return None;
        }
        let all = |f: &dyn Fn(u32, u32) -> bool| pairs.iter().all(|&(c, r)| f(c, r));
        let threads_fixed = c0 % r0 == 0 && all(&|c, r| r > 0 && r * (c0 / r0) == c);
        let ranks_fixed = all(&|c, r| r == r0 && c % r == 0);
        match (ranks_fixed, threads_fixed) {
            (true, true) if r0 == 1 => Some(Layout::RanksPerNode(1)),
            (_, true) => Some(Layout::ThreadsPerRank(c0 / r0)),
            (true, false) => Some(Layout::RanksPerNode(r0)),
            (false, false) => None,
        }
    }

    /// Ranks per node and threads per rank at `cores` cores a node, when the rule divides them.
    pub fn tasks(self, cores: u32) -> Option<(u32, u32)> {
        let (r, t) = match self {
            Layout::RanksPerNode(r) => (r, cores.checked_div(r)?),
            Layout::ThreadsPerRank(t) => (cores.checked_div(t)?, t),
        };
        (r > 0 && t > 0 && r * t == cores).then_some((r, t))
    }

    /// The rule in words.
    pub fn describe(self) -> String {
        match self {
            Layout::RanksPerNode(1) => "one MPI rank a node, its cores as OpenMP threads".into(),
            Layout::RanksPerNode(r) => {
                format!("{r} MPI ranks a node, the node's cores shared out as OpenMP threads")
            }
            Layout::ThreadsPerRank(1) => "MPI only: one rank a core".into(),
            Layout::ThreadsPerRank(t) => format!("{t} OpenMP threads a rank"),
        }
    }

    /// As the profile stores it.
    pub fn to_file(self) -> LayoutFile {
        match self {
            Layout::RanksPerNode(r) => LayoutFile {
                ranks_per_node: Some(r),
                threads_per_rank: None,
            },
            Layout::ThreadsPerRank(t) => LayoutFile {
                ranks_per_node: None,
                threads_per_rank: Some(t),
            },
        }
    }
}

impl Layout {
    /// The rule a validated `layout` key holds ([`LayoutFile::check`]).
    pub fn from_file(f: LayoutFile) -> Option<Layout> {
        match (f.ranks_per_node, f.threads_per_rank) {
            (Some(r), None) if r > 0 => Some(Layout::RanksPerNode(r)),
            (None, Some(t)) if t > 0 => Some(Layout::ThreadsPerRank(t)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_only_runs_give_one_rank_a_core() {
        let l = Layout::infer(&[(72, 72), (36, 36), (18, 18)]);
        assert_eq!(l, Some(Layout::ThreadsPerRank(1)));
        assert_eq!(l.and_then(|l| l.tasks(104)), Some((104, 1)));
    }

    #[test]
    fn one_rank_a_node_gives_the_cores_as_threads() {
        let l = Layout::infer(&[(16, 1), (8, 1), (4, 1)]);
        assert_eq!(l, Some(Layout::RanksPerNode(1)));
        assert_eq!(l.and_then(|l| l.tasks(12)), Some((1, 12)));
        assert_eq!(Layout::infer(&[(16, 1)]), Some(Layout::RanksPerNode(1)));
    }

    #[test]
    fn fixed_threads_and_fixed_ranks_are_told_apart() {
        assert_eq!(
            Layout::infer(&[(16, 4), (8, 2)]),
            Some(Layout::ThreadsPerRank(4))
        );
        assert_eq!(
            Layout::infer(&[(16, 2), (8, 2)]),
            Some(Layout::RanksPerNode(2))
        );
        assert_eq!(Layout::infer(&[(16, 4), (8, 8)]), None);
        assert_eq!(Layout::ThreadsPerRank(4).tasks(6), None);
    }
}
