//! What jouleplan keeps beside an output (its lock, a set's marker, a sweep's journal, its
//! temporaries) is never a user's file, and no output may take one of those names: a hard
//! link, link, pipe or folder at a lock's name is refused naming the lock file and what to do;
//! an output named like another output's lock, journal or temporary is refused before
//! anything runs; a report folder never moves a folder of the user's; `plan` refuses a
//! profile and a machine file from two different fits.

mod common;

use common::{jouleplan, jouleplan_in as run_in, write};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// One quick run of `true` measured into `p.json`.
fn sweep(dir: &Path) -> (i32, String, String) {
    run_in(
        dir,
        &["profile", "--cores", "1", "-o", "p.json", "--", "true"],
    )
}

/// Plants something at a name.
type Plant<'a> = Box<dyn Fn() + 'a>;

#[test]
fn a_hard_link_planted_at_a_lock_name_is_refused_and_the_file_it_links_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let victim = write(d, "thesis.tex", "years of work\n");
    std::fs::hard_link(&victim, d.join(".p.json.jouleplan-lock")).unwrap();
    let (code, _, err) = sweep(d);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(".p.json.jouleplan-lock") && err.contains("2 names"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "years of work\n");
    assert!(d.join(".p.json.jouleplan-lock").exists(), "never unlinked");
    assert!(!d.join("p.json").exists(), "nothing ran");
}

#[test]
fn trouble_at_a_lock_name_names_the_lock_file_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lock = d.join(".p.json.jouleplan-lock");
    let fifo = std::ffi::CString::new(s(&lock)).unwrap();
    let plant: [(&str, Plant); 4] = [
        (
            "symbolic link",
            Box::new(|| std::os::unix::fs::symlink(d.join("nowhere"), &lock).unwrap()),
        ),
        ("folder", Box::new(|| std::fs::create_dir(&lock).unwrap())),
        (
            "pipe",
            // SAFETY: a NUL-terminated path.
            Box::new(|| assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0)),
        ),
        (
            "something other than a process number",
            Box::new(|| std::fs::write(&lock, "my notes").unwrap()),
        ),
    ];
    for (what, plant) in plant {
        plant();
        let (code, _, err) = sweep(d);
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(what), "{what}: {err}");
        assert!(
            err.contains("its lock file .p.json.jouleplan-lock")
                && err.contains("`rm .p.json.jouleplan-lock`"),
            "{what}: the lock file is named, and what to do: {err}"
        );
        assert!(!d.join("p.json").exists(), "{what}: nothing ran");
        match std::fs::symlink_metadata(&lock).unwrap().is_dir() {
            true => std::fs::remove_dir(&lock).unwrap(),
            false => std::fs::remove_file(&lock).unwrap(),
        }
    }
    // A lock a killed command left (its process number) is taken over.
    std::fs::write(&lock, "999999999").unwrap();
    let (code, _, err) = sweep(d);
    assert_eq!(code, 0, "{err}");
    assert!(!lock.exists(), "the lock it made is removed when it ends");
}

#[test]
fn an_output_named_like_another_outputs_lock_or_journal_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (flag, name) in [
        ("--measured-out", ".q.json.jouleplan-lock"),
        ("--measured-out", "q.json.journal"),
        ("--measured-out", ".q.json.AbC123.jouleplan-tmp"),
    ] {
        let (code, _, err) = run_in(
            d,
            &[
                "profile", "--cores", "1", "-o", "q.json", flag, name, "--", "true",
            ],
        );
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(flag) && err.contains(name), "{name}: {err}");
        let left: Vec<_> = std::fs::read_dir(d).unwrap().flatten().collect();
        assert!(left.is_empty(), "{name}: nothing written: {left:?}");
    }
    // The campaign's runs CSV named like its profile's journal.
    let m = write(d, "m.toml", common::MACHINE);
    let runs = write(
        d,
        "runs.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,8,2e9,0,10\n",
    );
    let (code, _, err) = run_in(
        d,
        &[
            "profile",
            "--nodes",
            "auto",
            "--replay",
            s(&runs),
            "--machine",
            s(&m),
            "-o",
            "p.json",
            "--measured-out",
            "p.json.journal",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--measured-out") && err.contains("journal of --output"),
        "{err}"
    );
    assert!(!d.join("p.json").exists() && !d.join("p.json.journal").exists());
}

fn fit(d: &Path, program: &str, profile: &str, machine: &str) -> (i32, String) {
    let (csv, m) = common::two_frequency_fit_inputs(d);
    let (code, _, err) = run_in(
        d,
        &[
            "fit",
            "--measured",
            s(&csv),
            "--machine",
            s(&m),
            "--program",
            program,
            "--profile-out",
            profile,
            "--machine-out",
            machine,
        ],
    );
    (code, err)
}

#[test]
fn fit_refuses_a_machine_file_named_like_its_profiles_lock() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, err) = fit(d, "a", "p.json", ".p.json.jouleplan-lock");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--machine-out") && err.contains(".p.json.jouleplan-lock"),
        "{err}"
    );
    assert!(!d.join("p.json").exists() && !d.join(".p.json.jouleplan-lock").exists());
}

fn plan(d: &Path, profile: &str, machine: &str) -> (i32, String) {
    let (code, _, err) = run_in(
        d,
        &[
            "plan",
            "-q",
            "--profile",
            profile,
            "--machine",
            machine,
            "--nodes",
            "1",
        ],
    );
    (code, err)
}

#[test]
fn plan_refuses_a_profile_and_a_machine_file_from_two_different_fits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(fit(d, "a", "a.json", "a.toml").0, 0);
    assert_eq!(fit(d, "b", "b.json", "b.toml").0, 0);
    let (code, err) = plan(d, "a.json", "a.toml");
    assert_eq!(code, 0, "a fit's own pair: {err}");
    let (code, err) = plan(d, "b.json", "a.toml");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("two different fits") && err.contains("b.json"),
        "{err}"
    );
    // A profile written before profiles carried the fit's id is planned as before.
    let text = std::fs::read_to_string(d.join("b.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(doc["fit_id"].is_string(), "{doc}");
    doc.as_object_mut().unwrap().remove("fit_id");
    std::fs::write(d.join("old.json"), doc.to_string()).unwrap();
    let (code, err) = plan(d, "old.json", "a.toml");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_report_never_moves_a_users_folder_named_like_one_of_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inputs = common::inputs();
    let out = d.join("report");
    std::fs::create_dir_all(out.join("index.html")).unwrap();
    write(&out.join("index.html"), "draft.md", "mine\n");
    let (code, _, err) = jouleplan(&[
        "report",
        "--machine",
        &inputs.machine,
        "--profile",
        &inputs.profile,
        "--out",
        s(&out),
    ]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("index.html") && err.contains("not a plain file"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("index.html/draft.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_dash_as_an_output_is_refused_not_written_as_a_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (runs, machine) = common::two_frequency_fit_inputs(d);
    let (runs, machine) = (runs.to_str().unwrap(), machine.to_str().unwrap());
    for (args, flag) in [
        (vec!["plan", "--sbatch", "-", "--app", "./app"], "--sbatch"),
        (vec!["report", "-o", "-"], "--out"),
        (vec!["machine", "init", "-o", "-"], "--output"),
        (
            vec![
                "fit",
                "--measured",
                runs,
                "--machine",
                machine,
                "--profile-out",
                "-",
            ],
            "--profile-out",
        ),
    ] {
        let (code, out, err) = run_in(d, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(flag) && err.contains("./- for one called `-`"),
            "{args:?}: {err}"
        );
        assert!(!d.join("-").exists(), "{args:?} wrote a file named -");
    }
    // Named as a path, a file called `-` is written.
    let (code, _, err) = run_in(d, &["plan", "--sbatch", "./-", "--app", "./app"]);
    assert_eq!(code, 0, "{err}");
    assert!(d.join("-").is_file());
}
