//! `profile --nodes auto --replay RUNS.csv`: each requested run taken from recorded runs
//! instead of launching the program (MODEL.md 6d). A count that was not recorded is never
//! invented: it is unavailable, and the campaign chooses among the recorded ones.

use crate::calibrate::validate as cv;
use crate::error::{InputError, InputResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Recorded runs: each one's time (s) and CSV line.
type Runs = Vec<(f64, String)>;

/// The recorded runs, in file order, by node count.
#[derive(Debug)]
pub struct Recorded {
    /// The file they came from.
    pub file: PathBuf,
    /// The CSV header line, written at the top of the campaign's runs.
    pub header: String,
    /// Each node count's recorded lines (file order) that match the requested cores, and how
    /// many of them the campaign has taken.
    by_nodes: BTreeMap<u32, (Runs, usize)>,
}

/// What a recording holds, in words: `runs at 72 cores 2.4 GHz, 36 cores 2.4 GHz`.
fn held_words(held: &std::collections::BTreeSet<(u32, u64, u32)>) -> String {
    if held.is_empty() {
        return "no runs".into();
    }
    let list: Vec<String> = held
        .iter()
        .map(|(c, mhz, g)| {
            let gpus = match g {
                0 => String::new(),
                g => format!(" {g} GPUs"),
            };
            format!("{c} cores {} GHz{gpus}", *mhz as f64 / 1e3)
        })
        .collect();
    format!("runs at {} (--cores, --freqs)", list.join(", "))
}

impl Recorded {
    /// Reads `file` (a `fit`/`validate` CSV, checked by the same reader, errors naming the
    /// line), keeping the runs with `cores` cores a node (any, without `--cores`), no GPUs,
    /// and `freq_hz` among `freqs_hz` where given.
    pub fn read(
        file: &Path,
        cores: Option<&[u32]>,
        freqs_hz: Option<&[f64]>,
    ) -> InputResult<Recorded> {
        let text = crate::input::read_table(file)?;
        let lines: Vec<&str> = text.lines().collect();
        let header = lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or(String::new(), |l| l.trim_end().to_string());
        let mut by_nodes: BTreeMap<u32, (Runs, usize)> = BTreeMap::new();
        // What the recording holds, for the refusal when nothing matches.
        let mut held: std::collections::BTreeSet<(u32, u64, u32)> = Default::default();
        cv::each_row(file, &text, |c, time_s, line| {
            held.insert((c.cores, (c.freq.0 / 1e6).round() as u64, c.gpus));
            let cores_ok = cores.is_none_or(|cs| cs.contains(&c.cores));
            let freq_ok = freqs_hz.is_none_or(|fs| {
                fs.iter()
                    .any(|f| (f - c.freq.0).abs() <= 1e-6 * f.abs().max(1.0))
            });
            let text = lines.get((line as usize).wrapping_sub(1));
            if let (true, true, 0, Some(l)) = (cores_ok, freq_ok, c.gpus, text) {
                let e = by_nodes.entry(c.nodes).or_default();
                e.0.push((time_s, l.trim_end().to_string()));
            }
        })?;
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
            header,
            by_nodes,
        })
    }

    /// The node counts with runs left to take, up to `max`.
    pub fn available(&self, max: u32) -> Vec<u32> {
        self.by_nodes
            .iter()
            .filter(|(n, (lines, taken))| **n <= max && *taken < lines.len())
            .map(|(n, _)| *n)
            .collect()
    }

    /// The next `k` recorded runs on `nodes` nodes, in file order (fewer where fewer are
    /// left; none where the count was not recorded): each one's time and line.
    pub fn take(&mut self, nodes: u32, k: u32) -> Runs {
        let Some((lines, taken)) = self.by_nodes.get_mut(&nodes) else {
            return Vec::new();
        };
        let end = (*taken + k as usize).min(lines.len());
        let out = lines[*taken..end].to_vec();
        *taken = end;
        out
    }

    /// `--resume`: the runs already in `csv` (the campaign's `--measured-out`), taken again
    /// from the recording in the same order, so the campaign goes on where it stopped.
    pub(super) fn resume(&mut self, csv: &Path) -> anyhow::Result<Vec<super::source::Run>> {
        if !csv.exists() {
            return Ok(Vec::new());
        }
        let text = crate::input::read_table(csv)?;
        let mut nodes = Vec::new();
        cv::each_row(csv, &text, |c, _, _| nodes.push(c.nodes))?;
        let mut runs = Vec::new();
        for n in nodes {
            let taken = self.take(n, 1);
            if taken.is_empty() {
                return Err(InputError::Mismatch(format!(
                    "{}: --resume holds a run on {n} nodes that {} has no more of: resume with \
                     the recording the campaign began with",
                    csv.display(),
                    self.file.display()
                ))
                .into());
            }
            runs.extend(taken.into_iter().map(|(t, l)| (n, t, l)));
        }
        Ok(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_taken_in_file_order_and_never_invented() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.csv");
        std::fs::write(
            &f,
            "nodes,cores,freq_hz,gpus,time_s,energy_j\n\
             1,72,2.4e9,0,10,1000\n2,72,2.4e9,0,6,1100\n2,36,2.4e9,0,9,1000\n2,72,2.4e9,0,6.2,1120\n",
        )
        .unwrap();
        let mut r = Recorded::read(&f, Some(&[72]), None).unwrap();
        assert_eq!(r.available(16), vec![1, 2]);
        assert_eq!(r.take(2, 1), vec![(6.0, "2,72,2.4e9,0,6,1100".to_string())]);
        assert_eq!(
            r.take(2, 5),
            vec![(6.2, "2,72,2.4e9,0,6.2,1120".to_string())]
        );
        assert_eq!(r.available(16), vec![1]);
        assert!(r.take(3, 1).is_empty(), "3 nodes were not recorded");
        assert!(Recorded::read(&f, Some(&[8]), None).is_err());
    }
}
