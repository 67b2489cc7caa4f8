//! The measured-runs CSV that `fit --measured` and `validate --measured` read (and `validate
//! --sacct`'s `sacct -P` text): a row with more or fewer fields than the header is refused
//! before any of its cells is read, naming the file, the line and both counts; and energy in a
//! file without an `energy_scope` column is taken as the whole node's, said once on stderr and
//! in `--help`. The spread of repeated runs `fit` averages is kept in the profile, so that
//! `plan` notes the noisy ones as `fit` did; a quote left open is named on its own line.

mod common;

use common::{fit_into, jouleplan, two_frequency_fit_inputs, write};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `runs.csv` (of [`two_frequency_fit_inputs`]) with its line `line` (from 1, the header's)
/// replaced by `edit` of it, written as `name`.
fn edited(d: &Path, name: &str, line: usize, edit: impl Fn(&str) -> String) -> std::path::PathBuf {
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                edit(l)
            } else {
                l.to_string()
            }
        })
        .collect();
    write(d, name, &(lines.join("\n") + "\n"))
}

/// `jouleplan fit` of `csv` on `machine`, the profile to `out`, with `extra` flags.
fn fit(csv: &Path, machine: &Path, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "fit",
        "--measured",
        s(csv),
        "--machine",
        s(machine),
        "--profile-out",
        s(out),
    ];
    args.extend_from_slice(extra);
    jouleplan(&args)
}

#[test]
fn a_quote_left_open_is_named_on_the_line_it_opens_with_the_lines_it_took_in() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (_, machine) = two_frequency_fit_inputs(d);
    let out = d.join("p.json");
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let rows = text.lines().count();
    assert!(rows >= 4, "the fixture has a header and 3 rows or more");
    // A quote opened in the third column of line 3 runs to the end of the file, with and
    // without a line break after the last row.
    for (name, tail) in [("open.csv", "\n"), ("open-last.csv", "")] {
        let csv = edited(d, name, 3, |l| {
            let cells: Vec<&str> = l.split(',').collect();
            format!("{},{},\"{}", cells[0], cells[1], cells[2..].join(","))
        });
        let body = std::fs::read_to_string(&csv).unwrap();
        std::fs::write(&csv, body.trim_end_matches('\n').to_string() + tail).unwrap();
        let (code, _, err) = fit(&csv, &machine, &out, &[]);
        assert_eq!(code, 2, "{err}");
        let taken = rows - 3;
        let lines = if taken == 1 { "line" } else { "lines" };
        assert!(
            err.contains(name) && err.contains("line 3 has 3 fields"),
            "{err}"
        );
        assert!(
            err.contains("a quote (`\"`) opened on this line is not closed")
                && err.contains(&format!("takes in the next {taken} {lines}")),
            "{err}"
        );
        assert!(!out.exists(), "nothing written from a refused file");
    }
}

#[test]
fn a_row_with_more_or_fewer_fields_than_the_header_is_refused_naming_its_line_and_both_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let out = d.join("p.json");
    let fit = |csv: &Path| fit(csv, &machine, &out, &[]);
    // A stray field after the last column was read as nothing at all.
    let extra = edited(d, "extra.csv", 3, |l| format!("{l},cpu"));
    let (code, _, err) = fit(&extra);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("extra.csv") && err.contains("line 3 has 7 fields, the header 6"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written from a refused file");
    // A number split in two (a decimal comma): the error names the row's shape, not a power.
    let split = edited(d, "split.csv", 4, |l| {
        let (head, energy) = l.rsplit_once(',').unwrap();
        let mid = energy.len() / 2;
        format!("{head},{},{}", &energy[..mid], &energy[mid..])
    });
    let (code, _, err) = fit(&split);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("split.csv") && err.contains("line 4 has 7 fields, the header 6"),
        "{err}"
    );
    assert!(!err.contains("W a node"), "{err}");
    // A row missing its last cell.
    let short = edited(d, "short.csv", 3, |l| {
        l.rsplit_once(',').unwrap().0.to_string()
    });
    let (code, _, err) = fit(&short);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("short.csv") && err.contains("line 3 has 5 fields, the header 6"),
        "{err}"
    );
    // `validate --measured` reads through the same reader.
    let (code, _, err) = fit(&runs);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&machine),
        "--profile",
        s(&out),
        "--measured",
        s(&short),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 3 has 5 fields, the header 6"), "{err}");
    // So does `validate --sacct` with its own `|`-separated reader.
    let sacct = write(
        d,
        "s.txt",
        "JobID|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw\n1.0|1|8|00:00:14|1600\n2.0|1|8|00:00:14|1600|7\n",
    );
    let (code, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&machine),
        "--profile",
        s(&out),
        "--sacct",
        s(&sacct),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("s.txt") && err.contains("line 3 has 6 fields, the header 5"),
        "{err}"
    );
}

#[test]
fn energy_without_an_energy_scope_column_is_the_whole_nodes_and_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let out = d.join("p.json");
    let m_out = d.join("m.toml");
    let fit_both = |csv: &Path| fit(csv, &machine, &out, &["--machine-out", s(&m_out)]);
    let note = "no energy_scope column: energy_j taken as the whole node's (energy_scope node)";
    let (code, _, err) = fit_both(&runs);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches(note).count(), 1, "{err}");
    let profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(profile["energy_scope"], "node", "{profile}");
    // validate says it too, once.
    let (code, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m_out),
        "--profile",
        s(&out),
        "--measured",
        s(&runs),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches(note).count(), 1, "{err}");
    // A file that names its scope earns no note.
    let text = std::fs::read_to_string(&runs).unwrap();
    let mut lines = text.lines();
    let mut with_scope = format!("{},energy_scope\n", lines.next().unwrap());
    for l in lines {
        with_scope += &format!("{l},node\n");
    }
    let named = write(d, "named.csv", &with_scope);
    let (code, _, err) = fit_both(&named);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no energy_scope column"), "{err}");
    // Nor does a file whose energy_j cells are all empty (no energy to take as anything).
    let text = std::fs::read_to_string(&runs).unwrap();
    let blank: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!("{l}\n"),
            _ => format!("{},\n", l.rsplit_once(',').unwrap().0),
        })
        .collect();
    let blank = write(d, "blank.csv", &blank);
    let (code, _, err) = fit(&blank, &machine, &d.join("t.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no energy_scope column"), "{err}");
    // The default is in the help of both readers.
    for cmd in ["fit", "validate"] {
        let (code, help, _) = jouleplan(&[cmd, "--help"]);
        assert_eq!(code, 0);
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("without the column, the whole node"),
            "{cmd}: {help}"
        );
    }
}

#[test]
fn a_measured_csv_with_a_header_and_no_rows_is_refused_by_fit_and_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let header = std::fs::read_to_string(&runs).unwrap();
    let empty = write(d, "empty.csv", header.lines().next().unwrap());
    let said = format!(
        "{} holds no runs (a header and no rows): give the runs to fit/validate",
        empty.display()
    );
    let out = d.join("p.json");
    let (code, _, err) = fit(&empty, &machine, &out, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&said), "{err}");
    assert!(!out.exists(), "nothing written from an empty file");
    // The profile fitted on the runs themselves, then validated against no runs.
    let (code, _, err) = fit(&runs, &machine, &out, &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = jouleplan(&[
        "validate",
        "--measured",
        s(&empty),
        "--machine",
        s(&machine),
        "--profile",
        s(&out),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&said), "{err}");
    assert!(!err.contains("none of its 0"), "{err}");
}

/// `runs.csv` (of [`two_frequency_fit_inputs`], a stated law, illustrative) with its last run
/// repeated, time and energy times `k`, written as `name`.
fn last_run_again(d: &Path, name: &str, k: f64) -> std::path::PathBuf {
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let last = text.lines().last().unwrap().to_string();
    let cells: Vec<&str> = last.split(',').collect();
    let t: f64 = cells[4].parse().unwrap();
    let e: f64 = cells[5].parse().unwrap();
    let again = format!("{},{},{}\n", cells[..4].join(","), k * t, k * e);
    write(d, name, &(text + &again))
}

/// What `jouleplan CMD --machine m --profile p` with `extra` flags said (both streams),
/// succeeding.
fn said_by(cmd: &str, m: &Path, p: &Path, extra: &[&str]) -> String {
    let mut args = vec![cmd, "--machine", s(m), "--profile", s(p)];
    args.extend_from_slice(extra);
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    format!("{out}{err}")
}

#[test]
fn plan_notes_the_repeats_that_spread_as_fit_did_from_the_profile_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    // A second run of (1, 8, 2 GHz, 0), 30% slower than the first.
    let csv = last_run_again(d, "noisy.csv", 1.3);
    let f = fit_into(d, &csv, &machine, "m2.toml", &[]);
    assert!(
        f.err.contains("(1, 8, 2 GHz, 0) 18.4% over 2 runs"),
        "{}",
        f.err
    );
    let profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f.profile).unwrap()).unwrap();
    let kept = &profile["measured_on"]["repeats"];
    assert_eq!(kept.as_array().map(Vec::len), Some(1), "{kept}");
    assert_eq!(kept[0]["runs"], 2, "{kept}");
    let said = said_by("plan", &f.machine, &f.profile, &["--nodes", "1"]);
    assert!(
        said.contains(
            "the measured runs the profile was fitted on spread run to run by more than 10%"
        ) && said.contains("(1, 8, 2 GHz, 0) 18.4% over 2 runs"),
        "{said}"
    );
    // validate scores those runs against the profile, and says their mean is no firm measure.
    let said = said_by("validate", &f.machine, &f.profile, &["--measured", s(&csv)]);
    assert!(
        said.contains("the measured runs spread run to run by more than 10%")
            && said.contains("(1, 8, 2 GHz, 0) 18.4% over 2 runs"),
        "{said}"
    );
    // A profile whose repeats agree says nothing of them.
    let f = fit_into(d, &runs, &machine, "m2.toml", &[]);
    let said = said_by("plan", &f.machine, &f.profile, &["--nodes", "1"]);
    assert!(!said.contains("spread run to run"), "{said}");
}

#[test]
fn a_profile_whose_kept_repeats_are_out_of_range_is_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (_, machine) = two_frequency_fit_inputs(d);
    let csv = last_run_again(d, "twice.csv", 1.0);
    let f = fit_into(d, &csv, &machine, "m2.toml", &[]);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f.profile).unwrap()).unwrap();
    v["measured_on"]["repeats"][0]["runs"] = 1.into();
    std::fs::write(&f.profile, v.to_string()).unwrap();
    let (code, _, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&f.machine),
        "--profile",
        s(&f.profile),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("measured_on.repeats[0].runs") && err.contains("from 2 to"),
        "{err}"
    );
}

/// `runs.csv` (of [`two_frequency_fit_inputs`]) with a column `name` added, `cell` in each row.
fn with_column(d: &Path, file: &str, name: &str, cell: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{l},{}", if i == 0 { name } else { cell }))
        .collect();
    write(d, file, &(lines.join("\n") + "\n"))
}

#[test]
fn a_column_misnaming_an_absent_optional_one_is_refused_not_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let out = d.join("p.json");
    // Skipped, `gpu_clock_hz` made fit average three clocks' runs as repeats of one point.
    for (column, cell, meant) in [
        ("gpu_clock_hz", "1164000000", "gpu_clock_mhz"),
        ("GPU clock", "1164", "gpu_clock_mhz"),
        ("Energy Scope", "cpu", "energy_scope"),
        ("gpu_energy", "12", "gpu_energy_j"),
        ("ranks_per_node", "1", "ranks"),
    ] {
        let csv = with_column(d, "misnamed.csv", column, cell);
        let (code, _, err) = fit(&csv, &machine, &out, &[]);
        assert_eq!(code, 2, "{column}: {err}");
        for needle in ["misnamed.csv", "line 1, column header", column, meant] {
            assert!(err.contains(needle), "{column}: lacks {needle}: {err}");
        }
        assert!(!out.exists(), "{column}: nothing written");
    }
    // A column of the user's own that names nothing the reader knows is still read past.
    let notes = with_column(d, "notes.csv", "notes", "rack 3");
    let (code, _, err) = fit(&notes, &machine, &out, &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = fit(&runs, &machine, &out, &[]);
    assert_eq!(code, 0, "{err}");
    let csv = with_column(d, "misnamed.csv", "gpu_clock_hz", "1164000000");
    let (code, _, err) = jouleplan(&[
        "validate",
        "--measured",
        s(&csv),
        "--machine",
        s(&machine),
        "--profile",
        s(&out),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gpu_clock_mhz"), "{err}");
}

#[test]
fn rows_that_repeat_an_earlier_row_in_every_value_are_said_counted_as_runs() {
    // A file joined to itself was fitted as every run measured twice, unsaid: the copies read
    // as repeats that agree exactly.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let text = std::fs::read_to_string(&runs).unwrap();
    let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let twice = write(d, "twice.csv", &format!("{text}{body}"));
    let out = d.join("p.json");
    let (rc, _, err) = fit(&twice, &machine, &out, &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("twice.csv: 8 rows repeat an earlier row in every value (line 10 as line 2, line 11 as line 3, line 12 as line 4, ...)"),
        "{err}"
    );
    let (rc, _, err) = fit(&runs, &machine, &out, &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("earlier row"), "{err}");
}
