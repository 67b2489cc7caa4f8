//! Each file format is one type (docs/ARCHITECTURE.md, "The artefacts"): every profile and machine file in the repository
//! reads through it and writes back as read; a file written before the types existed is
//! written again byte for byte; and a bad value is named by its key path with what was
//! expected and what was found.

use jouleplan::artefact::machine::MachineFile;
use jouleplan::artefact::profile::ProfileFile;
use jouleplan::measure::record::{self, Header};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Every profile in `tests/data` and `examples` (the JSON files that say they are one), but
/// the regression files of `tests/data/hostile`, which must be refused.
fn profiles() -> Vec<(PathBuf, String)> {
    let mut all = Vec::new();
    for d in ["tests/data", "examples"] {
        files_under(Path::new(d), "json", &mut all);
    }
    let found: Vec<(PathBuf, String)> = all
        .into_iter()
        .filter(|p| !p.starts_with("tests/data/hostile"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .filter(|(_, t)| t.contains("\"format\": \"jouleplan-profile/1\""))
        .collect();
    assert!(found.len() >= 10, "{} profiles", found.len());
    found
}

#[test]
fn every_profile_reads_and_writes_back_as_read() {
    let all = profiles();
    let mut same_text = 0;
    for (p, text) in &all {
        let (p, text) = (p.clone(), text.clone());
        let f = ProfileFile::read(&p, &text).unwrap_or_else(|e| panic!("{e}"));
        let again = f.to_text().unwrap();
        assert_eq!(ProfileFile::read(&p, &again).unwrap(), f, "{}", p.display());
        same_text += usize::from(again.trim_end() == text.trim_end());
        // What `profile` writes from the record is what the file holds.
        if let Some(s) = &f.sweep {
            let rebuilt = record::profile_file(&Header::of(&f), &s.record);
            assert_eq!(rebuilt.baseline.len(), f.baseline.len(), "{}", p.display());
        }
    }
    assert!(
        same_text >= 10,
        "only {same_text} profiles written back byte for byte"
    );
}

#[test]
fn every_machine_file_reads_and_its_values_survive_a_round_trip() {
    let mut all = Vec::new();
    for d in ["models", "tests/data"] {
        files_under(Path::new(d), "toml", &mut all);
    }
    let mut read = 0;
    for p in all {
        let text = std::fs::read_to_string(&p).unwrap();
        if !text.contains("[machine]") {
            continue;
        }
        if !text.lines().any(|l| l.trim() == "[power]") {
            // A machine `fit --machine-out` is to write power into: refused for planning.
            let e = MachineFile::read(&p, &text).unwrap_err().to_string();
            assert!(
                e.contains("no [power] section") || e.contains("no [network] section"),
                "{e}"
            );
            continue;
        }
        let f = MachineFile::read(&p, &text).unwrap_or_else(|e| panic!("{e}"));
        let again = toml::to_string(&f).unwrap();
        assert_eq!(MachineFile::read(&p, &again).unwrap(), f, "{}", p.display());
        read += 1;
    }
    assert!(read >= 3, "{read} machine files");
}

fn profile_error(edit: impl Fn(&mut serde_json::Value)) -> String {
    let (p, text) = profiles()
        .into_iter()
        .find(|(p, _)| p.ends_with("sync.json"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let bad = serde_json::to_string_pretty(&v).unwrap();
    ProfileFile::read(&p, &bad).unwrap_err().to_string()
}

#[test]
fn a_bad_profile_value_is_named_by_its_path() {
    let e = profile_error(|v| v["baseline"][1]["cores"] = "four".into());
    for want in [
        "baseline[1].cores",
        "a whole number from 1 to 100000",
        "the string \"four\"",
    ] {
        assert!(e.contains(want), "{want:?} not in {e}");
    }
    let e = profile_error(|v| {
        v["baseline"][0].as_object_mut().unwrap().remove("cycles");
    });
    for want in [
        "baseline[0].cycles",
        "a finite number from 0 to",
        "the key is missing",
    ] {
        assert!(e.contains(want), "{want:?} not in {e}");
    }
    let e = profile_error(|v| {
        let d = v["baseline"][0]["device"].as_object_mut().unwrap();
        let k = d.remove("kernel_s").unwrap();
        d.insert("kernel_secs".into(), k);
    });
    for want in ["baseline[0].device.kernel_s", "misspelling", "kernel_secs"] {
        assert!(e.contains(want), "{want:?} not in {e}");
    }
    let e = profile_error(|v| v["baseline"][2]["utilisation"] = 1.5.into());
    assert!(
        e.contains("baseline[2].utilisation") && e.contains("1.5"),
        "{e}"
    );
    let e = profile_error(|v| v["sweep"]["record"]["runs"][0]["cores"] = (-3).into());
    assert!(
        e.contains("sweep.record.runs[0].cores") && e.contains("-3"),
        "{e}"
    );
    let e = profile_error(|v| v["colour"] = "blue".into());
    assert!(e.contains("`colour`") && e.contains("unknown key"), "{e}");
}

#[test]
fn a_bad_machine_value_is_named_by_its_path() {
    let text = std::fs::read_to_string("models/h100-node.toml").unwrap();
    let p = Path::new("m.toml");
    let e = MachineFile::read(p, &text.replacen("nodes = ", "nodes = -", 1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("machine.nodes") && e.contains("from 1 to 10000000"),
        "{e}"
    );
    let e = MachineFile::read(p, &text.replacen("latency_s", "latency_us", 1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("network.latency_s") && e.contains("latency_us"),
        "{e}"
    );
    let tagged = format!("format = \"jouleplan-machine/1\"\n{text}");
    assert!(MachineFile::read(p, &tagged).is_ok());
    let e = MachineFile::read(p, &format!("format = \"jouleplan-machine/2\"\n{text}"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`format`") && e.contains("jouleplan-machine/1"),
        "{e}"
    );
    let no_power = text.split("\n[power]").next().unwrap().to_string();
    let e = MachineFile::read(p, &no_power).unwrap_err().to_string();
    assert!(e.contains("calibrate power"), "{e}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_bad_node_law_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let (rc, _, err) = common::jouleplan(&[
        "fit",
        "--measured",
        common::multinode("weather.csv").to_str().unwrap(),
        "--machine",
        "tests/data/machines/icelake-8360y.toml",
        "--profile-out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let f = ProfileFile::read(&out, &text).unwrap();
    assert!(f.node_law.is_some());
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["node_law"]["candidates"][0]["terms"][0]["j"] = 7.into();
    let e = ProfileFile::read(&out, &v.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node_law.candidates[0].terms[0].j") && e.contains("from 0 to 2"),
        "{e}"
    );
}

mod common;

#[test]
fn the_plan_validation_and_job_json_read_back_as_their_types() {
    use jouleplan::artefact::plan::{ConfigOut, JobOut, PlanOut};
    use jouleplan::artefact::validation::ValidationOut;
    let inputs = common::inputs();
    let (m, p) = (inputs.machine.as_str(), inputs.profile.as_str());
    let (rc, out, err) = common::jouleplan(&["plan", "--machine", m, "--profile", p, "--json"]);
    assert_eq!(rc, 0, "{err}");
    let plan: PlanOut = serde_json::from_str(&out).unwrap();
    assert!(!plan.front.is_empty() && plan.recommendation.is_some());
    assert_eq!(plan.format, "jouleplan-plan/1");
    assert!(out.contains("\"breakdown\"") && out.contains("\"ties\""));
    let (rc, out, err) = common::jouleplan(&["validate", "--machine", m, "--profile", p, "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: ValidationOut = serde_json::from_str(&out).unwrap();
    assert!(v.validations.iter().all(|b| b.time.points > 0), "{out}");
    assert_eq!(v.format, "jouleplan-validation/1");
    let cfg = [
        "--machine",
        m,
        "--profile",
        p,
        "--config",
        "2,8,2.0",
        "--json",
    ];
    let (rc, out, err) = common::jouleplan(&[&["predict"][..], &cfg[..]].concat());
    assert_eq!(rc, 0, "{err}");
    let c: ConfigOut = serde_json::from_str(&out).unwrap();
    assert_eq!((c.nodes, c.cores), (2, 8));
    let (rc, out, err) = common::jouleplan(&[&["slurm"][..], &cfg[..], &["--", "./app"]].concat());
    assert_eq!(rc, 0, "{err}");
    let j: JobOut = serde_json::from_str(&out).unwrap();
    assert!(j.script.contains("#SBATCH") && j.config.nodes == 2);
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_measured_csv_written_by_the_type_reads_back_row_for_row() {
    use jouleplan::artefact::measured::{self, MeasuredRow};
    let p = &common::multinode("weather.csv");
    let text = std::fs::read_to_string(p).unwrap();
    let mut rows = Vec::new();
    measured::read_rows(p, text.as_bytes(), |r, _| {
        rows.push(r);
        Ok(())
    })
    .unwrap();
    assert!(rows.len() > 10 && rows.iter().all(|r| r.energy_j.is_some()));
    let again = measured::to_csv(&rows).unwrap();
    assert!(
        again.starts_with("nodes,cores,freq_hz,gpus,time_s,energy_j,"),
        "{again}"
    );
    assert!(
        again.contains(",2400000000,"),
        "frequencies written whole: {again}"
    );
    let mut back: Vec<MeasuredRow> = Vec::new();
    measured::read_rows(p, again.as_bytes(), |r, _| {
        back.push(r);
        Ok(())
    })
    .unwrap();
    assert_eq!(back, rows);
    // Spaces around cells are read as before.
    let spaced = "Nodes, cores ,freq_hz,gpus,time_s,energy_j\n2, 54, 2.4e9 ,0, 10.5, 900\n";
    let mut one = Vec::new();
    measured::read_rows(p, spaced.as_bytes(), |r, line| {
        one.push((r, line));
        Ok(())
    })
    .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!((one[0].0.nodes, one[0].0.cores, one[0].1), (2, 54, 2));
    assert_eq!(one[0].0.energy_j, Some(900.0));
    // A bad cell is named by its line and column.
    let bad = text.replacen("\n2,", "\n2.5,", 1);
    let e = measured::read_rows(p, bad.as_bytes(), |_, _| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 2, column nodes") && e.contains("2.5"),
        "{e}"
    );
}
