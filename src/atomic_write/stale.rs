//! What a killed command leaves beside an output, removed by the next command that takes the
//! output's lock (so never while another command writes it): hidden temporaries of jouleplan's
//! own naming (`.NAME.XXXXXX.jouleplan-tmp`, files or report folders), and in `NAME.runs/` the
//! per-point hostfiles and the empty folders of runs. Nothing else is touched: a run folder a
//! profiler wrote into is kept, and the folder with it.

use super::{TMP_SUFFIX, folder_of, runs_dir};
use std::fs;
use std::path::Path;

/// Whether `file` is one of jouleplan's temporaries of the output named `name`: `.NAME.` then
/// 1 to 16 letters and digits (the random part) or `aside`, then the suffix.
pub(super) fn is_temporary(file: &str, name: &str) -> bool {
    let Some(mid) = file
        .strip_prefix('.')
        .and_then(|f| f.strip_prefix(name))
        .and_then(|f| f.strip_prefix('.'))
        .and_then(|f| f.strip_suffix(TMP_SUFFIX))
    else {
        return false;
    };
    (1..=16).contains(&mid.len()) && mid.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Whether `dir` is the folder of one run (`2n-4c-2400000khz-0g-r3`) or of one node count's
/// hostfile (`16-nodes`).
fn is_run_folder(dir: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = dir.strip_suffix("-nodes") {
        return digits(n);
    }
    let parts: Vec<&str> = dir.split('-').collect();
    let units = ["n", "c", "khz", "g"];
    parts.len() == 5
        && parts[..4]
            .iter()
            .zip(units)
            .all(|(p, u)| p.strip_suffix(u).is_some_and(digits))
        && parts[4].strip_prefix('r').is_some_and(digits)
}

/// Removes what a killed command left beside `output` (see the module); returns how many
/// entries went. Best effort: what cannot be removed stays.
pub fn clean(output: &Path) -> usize {
    let Some(name) = output.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return 0;
    };
    let mut gone = 0;
    if let Ok(entries) = fs::read_dir(folder_of(output)) {
        for e in entries.flatten() {
            if !is_temporary(&e.file_name().to_string_lossy(), &name) {
                continue;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            let removed = if is_dir {
                fs::remove_dir_all(e.path())
            } else {
                fs::remove_file(e.path())
            };
            gone += usize::from(removed.is_ok());
        }
    }
    let runs = runs_dir(output);
    let real_dir = fs::symlink_metadata(&runs).is_ok_and(|m| m.is_dir());
    if real_dir && let Ok(entries) = fs::read_dir(&runs) {
        for e in entries.flatten() {
            let dir = e.file_name().to_string_lossy().into_owned();
            if !e.file_type().is_ok_and(|t| t.is_dir()) || !is_run_folder(&dir) {
                continue;
            }
            if dir.ends_with("-nodes") {
                let _ = fs::remove_file(e.path().join("hostfile"));
            }
            gone += usize::from(fs::remove_dir(e.path()).is_ok());
        }
        let _ = fs::remove_dir(&runs);
    }
    gone
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_own_names_are_recognised() {
        assert!(is_temporary(".p.json.0QP12e.jouleplan-tmp", "p.json"));
        assert!(is_temporary(".report.aside.jouleplan-tmp", "report"));
        assert!(!is_temporary(".p.json.0QP12e.jouleplan-tmp", "q.json"));
        assert!(!is_temporary(".p.json..jouleplan-tmp", "p.json"));
        assert!(!is_temporary(".p.json.a/b.jouleplan-tmp", "p.json"));
        assert!(!is_temporary("p.json.journal", "p.json"));
        assert!(is_run_folder("2n-4c-2400000khz-0g-r3"));
        assert!(is_run_folder("16-nodes"));
        assert!(!is_run_folder("results"));
        assert!(!is_run_folder("2n-4c-2400000khz-0g-rx"));
    }
}
