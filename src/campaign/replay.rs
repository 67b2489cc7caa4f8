//! A campaign replayed on recorded runs (`profile --nodes auto --replay RUNS.csv`): each
//! requested run is the recording's next one on that count, in file order, read by the one
//! reader of measured runs ([`crate::artefact::measured::read_lines`]: quoting, blank lines and
//! line numbers as `fit` reads them). A count that was not recorded is never invented: it is
//! unavailable, and the campaign chooses among the recorded ones.

use super::source::{RunSource, Spend, Stopped, Taken};
use crate::artefact::measured::{self, MeasuredLine, MeasuredRow};
use crate::error::{InputError, InputResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which recorded runs a campaign may take: `--cores` and `--freqs` where given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Cores a node (any where `None`).
    pub cores: Option<Vec<u32>>,
    /// Frequencies, Hz (any where `None`).
    pub freqs_hz: Option<Vec<f64>>,
}

impl Filter {
    /// Whether a recorded run may be taken: CPU only, and within the cores and frequencies.
    pub fn admits(&self, r: &MeasuredRow) -> bool {
        let cores_ok = self.cores.as_ref().is_none_or(|cs| cs.contains(&r.cores));
        let freq_ok = self.freqs_hz.as_ref().is_none_or(|fs| {
            fs.iter()
                .any(|f| (f - r.freq_hz).abs() <= 1e-6 * f.abs().max(1.0))
        });
        cores_ok && freq_ok && r.gpus == 0
    }
}

/// What a recording holds, in words: `runs at 36 cores 2.4 GHz, 72 cores 2.4 GHz (--cores,
/// --freqs)`.
fn held_words(held: &std::collections::BTreeSet<(u32, u64, u32)>) -> String {
    if held.is_empty() {
        return "no runs".into();
    }
    let list: Vec<String> = held
        .iter()
        .map(|(c, mhz, g)| {
            let gpus = match g {
                0 => String::new(),
                g => format!(" {}", crate::units::count(*g, "GPU", "GPUs")),
            };
            format!(
                "{} {} GHz{gpus}",
                crate::units::count(*c, "core", "cores"),
                *mhz as f64 / 1e3
            )
        })
        .collect();
    format!("runs at {} (--cores, --freqs)", list.join(", "))
}

/// The recorded runs, in file order, by node count.
#[derive(Debug)]
pub struct Recorded {
    file: PathBuf,
    /// Each node count's recorded runs (file order) that the filter admits, and how many of
    /// them the campaign has taken.
    by_nodes: BTreeMap<u32, (Vec<MeasuredLine>, usize)>,
    /// What the runs taken spent without giving time (a run stopped at its limit).
    spend: Spend,
}

impl Recorded {
    /// Reads `file` (a `fit`/`validate` CSV, checked by the same reader, errors naming the
    /// line) and keeps the runs `filter` admits.
    pub fn read(file: &Path, filter: &Filter) -> InputResult<Recorded> {
        Recorded::new(file, measured::read_lines(file)?, filter)
    }

    /// The runs of `lines` (read from `file`) that `filter` admits.
    pub fn new(file: &Path, lines: Vec<MeasuredLine>, filter: &Filter) -> InputResult<Recorded> {
        let mut by_nodes: BTreeMap<u32, (Vec<MeasuredLine>, usize)> = BTreeMap::new();
        // What the recording holds, for the refusal when nothing is admitted.
        let held: std::collections::BTreeSet<(u32, u64, u32)> = lines
            .iter()
            .map(|l| {
                (
                    l.row.cores,
                    (l.row.freq_hz / 1e6).round() as u64,
                    l.row.gpus,
                )
            })
            .collect();
        for l in lines.into_iter().filter(|l| filter.admits(&l.row)) {
            by_nodes.entry(l.row.nodes).or_default().0.push(l);
        }
        if by_nodes.is_empty() {
            return Err(InputError::Key {
                file: file.to_path_buf(),
                key: "rows".into(),
                expected: "recorded CPU runs (gpus 0) with the requested --cores and --freqs"
                    .into(),
                got: format!("none; it holds {}", held_words(&held)),
            });
        }
        Ok(Recorded {
            file: file.to_path_buf(),
            by_nodes,
            spend: Spend::default(),
        })
    }

    /// The next `k` recorded runs on `nodes` nodes, in file order (fewer where fewer are
    /// left; none where the count was not recorded).
    fn next(&mut self, nodes: u32, k: u32) -> Vec<Taken> {
        let file = &self.file;
        let Some((lines, taken)) = self.by_nodes.get_mut(&nodes) else {
            return Vec::new();
        };
        let end = (*taken + k as usize).min(lines.len());
        let out = lines[*taken..end]
            .iter()
            .map(|l| Taken {
                row: l.row.clone(),
                from: format!("{}:{}", file.display(), l.line),
            })
            .collect();
        *taken = end;
        out
    }

    /// `--resume`: the runs a campaign saved (`saved`, read from `csv`), taken again from the
    /// recording in their order, so the campaign goes on where it stopped. Each must be the
    /// recording's next run on its count under this campaign's `--cores` and `--freqs`: a run
    /// that is not (another recording, or changed flags) is refused, naming its line.
    pub fn resume(&mut self, csv: &Path, saved: &[MeasuredLine]) -> InputResult<Vec<Taken>> {
        let mut runs = Vec::new();
        for s in saved {
            let n = s.row.nodes;
            let taken = self.next(n, 1);
            match taken.first() {
                Some(t) if t.row == s.row => runs.extend(taken),
                found => return Err(self.mismatch(csv, s, found)),
            }
        }
        Ok(runs)
    }

    /// A saved run that is not the recording's next one on its count.
    fn mismatch(&self, csv: &Path, saved: &MeasuredLine, found: Option<&Taken>) -> InputError {
        let row = &saved.row;
        let on = crate::units::count(row.nodes, "node", "nodes");
        let what = match found {
            Some(t) => format!("the next recorded run on {on} is {}", t.from),
            None => format!(
                "{} holds no more runs on {on} with these flags",
                self.file.display(),
            ),
        };
        InputError::Mismatch(format!(
            "{}: line {}, a run on {} x {} of {} s, is not a run of this \
             campaign's recording ({what}): resume with the recording and the --cores and \
             --freqs the campaign began with, or remove {} to start again",
            csv.display(),
            saved.line,
            crate::units::count(row.nodes, "node", "nodes"),
            crate::units::count(row.cores, "core", "cores"),
            row.time_s,
            csv.display()
        ))
    }
}

impl RunSource for Recorded {
    fn available(&self, max: u32) -> Vec<u32> {
        self.by_nodes
            .iter()
            .filter(|(n, (lines, taken))| **n <= max && *taken < lines.len())
            .map(|(n, _)| *n)
            .collect()
    }

    /// The next `k` recorded runs on `n` nodes; within a budget, a recorded run longer than
    /// its limit is taken as stopped there: the limit is spent, and no time is taken, and the
    /// runs after it are not taken.
    fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Taken>> {
        let Some(mut left) = self.spend.left else {
            return Ok(self.next(n, k));
        };
        let recorded = self.by_nodes.get(&n).map_or(0, |(l, t)| l.len() - t);
        let runs = (k as usize).min(recorded);
        let mut out = Vec::new();
        for i in 0..runs {
            let share =
                crate::measure::sweep::share_s(left * 3600.0, std::iter::repeat_n(n, runs - i));
            let mut run = self.next(n, 1);
            let Some(t) = run.pop() else { break };
            if t.row.time_s > share {
                self.stop(n, share, t);
                break;
            }
            left -= f64::from(n) * t.row.time_s / 3600.0;
            out.push(t);
        }
        Ok(out)
    }

    fn word(&self) -> &'static str {
        "recorded"
    }

    fn budget(&mut self, left_node_hours: Option<f64>) {
        self.spend.left = left_node_hours;
    }

    fn spend(&self) -> &Spend {
        &self.spend
    }
}

impl Recorded {
    /// The recorded run `t` on `n` nodes, longer than its limit `limit_s`, taken as stopped
    /// there (not started where the limit is 0 s, and then left for a later take).
    fn stop(&mut self, n: u32, limit_s: f64, t: Taken) {
        let started = limit_s > 0.0;
        if !started && let Some((_, taken)) = self.by_nodes.get_mut(&n) {
            *taken -= 1;
        }
        let node_hours = f64::from(n) * limit_s / 3600.0;
        self.spend.unmeasured_node_hours += node_hours;
        self.spend.stopped = Some(Stopped {
            nodes: n,
            ran_s: limit_s,
            limit_s,
            node_hours,
            from: started.then_some(t.from),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(text: &str, cores: Option<Vec<u32>>) -> InputResult<Recorded> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.csv");
        std::fs::write(&f, text).unwrap();
        let filter = Filter {
            cores,
            freqs_hz: None,
        };
        Recorded::read(&f, &filter)
    }

    const RUNS: &str = "nodes,cores,freq_hz,gpus,time_s,energy_j\n\
         1,72,2.4e9,0,10,1000\n2,72,2.4e9,0,6,1100\n2,36,2.4e9,0,9,1000\n2,72,2.4e9,0,6.2,1120\n";

    #[test]
    fn runs_are_taken_in_file_order_and_never_invented() {
        let mut r = recorded(RUNS, Some(vec![72])).unwrap();
        assert_eq!(r.available(16), vec![1, 2]);
        let t = r.take(2, 1).unwrap();
        assert_eq!((t.len(), t[0].row.time_s), (1, 6.0));
        assert!(t[0].from.ends_with("r.csv:3"), "{}", t[0].from);
        let t = r.take(2, 5).unwrap();
        assert_eq!((t.len(), t[0].row.time_s), (1, 6.2));
        assert_eq!(r.available(16), vec![1]);
        assert!(
            r.take(3, 1).unwrap().is_empty(),
            "3 nodes were not recorded"
        );
        assert!(recorded(RUNS, Some(vec![8])).is_err());
    }

    #[test]
    fn within_a_budget_a_recorded_run_longer_than_its_limit_is_stopped_there_and_gives_no_time() {
        let mut r = recorded(RUNS, Some(vec![72])).unwrap();
        // 2 runs on 2 nodes with 20 node-seconds left: 5 s each (a millisecond short); the
        // first recorded run takes 6 s.
        r.budget(Some(20.0 / 3600.0));
        let t = r.take(2, 2).unwrap();
        assert!(t.is_empty(), "{t:?}");
        let s = r.spend().stopped.clone().unwrap();
        assert_eq!((s.nodes, s.ran_s, s.limit_s), (2, 4.999, 4.999));
        assert!(s.from.as_deref().unwrap().ends_with("r.csv:3"), "{s:?}");
        let spent = r.spend().unmeasured_node_hours;
        assert!((spent - 2.0 * 4.999 / 3600.0).abs() < 1e-15 && spent <= 20.0 / 3600.0);
    }

    #[test]
    fn within_a_budget_runs_that_fit_are_taken_and_a_run_with_no_time_left_is_not_started() {
        let mut r = recorded(RUNS, Some(vec![72])).unwrap();
        // 1 run on 1 node with 11 node-seconds left: 10.999 s, and it took 10 s.
        r.budget(Some(11.0 / 3600.0));
        assert_eq!(r.take(1, 1).unwrap().len(), 1);
        assert!(r.spend().stopped.is_none());
        r.budget(Some(0.0));
        assert!(r.take(2, 1).unwrap().is_empty());
        let s = r.spend().stopped.clone().unwrap();
        assert_eq!((s.ran_s, s.node_hours, s.from), (0.0, 0.0, None));
        assert_eq!(r.available(16), vec![2], "the run not started is left");
    }

    #[test]
    fn a_quoted_cell_over_two_lines_and_blank_lines_keep_every_run_and_its_line() {
        let text = "\"nodes\",\"cores\",freq_hz,gpus,time_s,energy_j,note\n\n\
             1,72,2.4e9,0,10,1000,\"a note\nover two lines\"\n\n2,72,2.4e9,0,6,1100,x\n";
        let mut r = recorded(text, None).unwrap();
        assert_eq!(r.available(16), vec![1, 2]);
        let one = r.take(1, 1).unwrap();
        let two = r.take(2, 1).unwrap();
        assert!(one[0].from.ends_with(":3"), "{}", one[0].from);
        assert!(two[0].from.ends_with(":6"), "{}", two[0].from);
        assert_eq!(
            two[0].row.energy_j,
            Some(1100.0),
            "the energy column is found"
        );
    }

    #[test]
    fn a_resumed_run_that_is_not_the_recording_s_next_is_refused_naming_its_line() {
        let mut r = recorded(RUNS, None).unwrap();
        let saved = |time_s: f64, cores: u32| MeasuredLine {
            line: 3,
            row: MeasuredRow {
                nodes: 2,
                cores,
                freq_hz: 2.4e9,
                gpus: 0,
                time_s,
                energy_j: Some(1100.0),
                gpu_energy_j: None,
                ranks: None,
                gpu_clock_mhz: None,
                gpu_mem_clock_mhz: None,
                energy_scope: None,
            },
        };
        let ok = r.resume(Path::new("out.csv"), &[saved(6.0, 72)]).unwrap();
        assert_eq!(ok.len(), 1);
        // The next recorded run on 2 nodes is the 36-core one: with no --cores it differs.
        let e = r
            .resume(Path::new("out.csv"), &[saved(6.2, 72)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("out.csv: line 3") && e.contains("r.csv:4"),
            "{e}"
        );
    }
}
