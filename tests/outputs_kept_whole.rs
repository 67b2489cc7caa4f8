//! What jouleplan writes goes through one safe writer, and nothing empty replaces data: a PNG
//! chart planted as a link is refused like every other output (never written through), a
//! chart is rendered in memory and put in place whole, and a sweep in which no run succeeded
//! leaves an earlier measured CSV as it was.

mod common;

use common::jouleplan;
use std::os::unix::fs::symlink;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_png_chart_planted_as_a_link_is_refused_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("bashrc");
    std::fs::write(&victim, "precious\n").unwrap();
    for (cmd, name) in [("plan", "front.png"), ("validate", "check.png")] {
        let chart = dir.path().join(name);
        symlink(&victim, &chart).unwrap();
        let (code, _, err) = jouleplan(&[cmd, "--plot", s(&chart)]);
        assert_eq!(code, 1, "{cmd}: {err}");
        assert!(err.contains(name) && err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }
}

#[test]
fn an_output_that_is_a_link_is_refused_before_anything_runs() {
    // The writer refused it only at the end: `profile --measured-out LINK` measured every run
    // first (and wrote -o without the CSV), `plan` and `fit` printed all they found.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let victim = d.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let link = d.join("runs.csv");
    symlink(&victim, &link).unwrap();
    let p = d.join("p.json");
    let args = [
        "profile",
        "--cores",
        "1",
        "-o",
        s(&p),
        "--measured-out",
        s(&link),
    ];
    let (code, _, err) = jouleplan(&[&args[..], &["--", "true"]].concat());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("runs.csv") && err.contains("symbolic link"),
        "{err}"
    );
    assert!(
        !err.contains("1 core,") && !p.exists(),
        "a run was made: {err}"
    );
    let (code, out, err) = jouleplan(&["plan", "--plot", s(&link.with_extension("svg"))]);
    assert_eq!(code, 0, "no link there: {err}");
    assert!(out.contains("Recommendation"), "{out}");
    let chart = d.join("front.svg");
    symlink(&victim, &chart).unwrap();
    let (code, out, err) = jouleplan(&["plan", "--plot", s(&chart)]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.is_empty(),
        "the plan was printed before the refusal: {out}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn a_report_folder_planted_as_a_link_is_refused_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("elsewhere");
    std::fs::create_dir(&victim).unwrap();
    let report = dir.path().join("report");
    symlink(&victim, &report).unwrap();
    let (code, _, err) = jouleplan(&["report", "--out", s(&report)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
}

#[test]
fn a_png_chart_is_a_whole_png() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("front.png");
    let (code, _, err) = jouleplan(&["plan", "--plot", s(&chart)]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&chart).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let (w, h) = (reader.info().width, reader.info().height);
    assert_eq!((w, h), (1000, 700));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let inked = buf.chunks(3).filter(|p| p != &[255, 255, 255]).count();
    assert!(inked > 5_000, "{inked} pixels drawn");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary left: {left:?}");
}

#[test]
fn a_sweep_with_no_successful_run_leaves_the_measured_csv_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = d.join("runs.csv");
    std::fs::write(&csv, "nodes,cores,freq_hz,gpus,time_s\n1,1,2e9,0,3.5\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args([
            "profile",
            "--cores",
            "1",
            "--output",
            "p.json",
            "--measured-out",
            "runs.csv",
            "--",
            "/bin/false",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "nodes,cores,freq_hz,gpus,time_s\n1,1,2e9,0,3.5\n",
        "{err}"
    );
}

/// Waits (10 s at most) until a command has taken the lock `lock`.
fn wait_for(lock: &Path) {
    let t = std::time::Instant::now();
    while !lock.exists() {
        assert!(t.elapsed().as_secs() < 10, "no lock taken");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_second_writer_onto_one_output_is_refused_at_once_and_no_run_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let start = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
            .current_dir(d)
            .env_remove("SLURM_JOB_ID")
            .args([
                "profile", "--cores", "1", "--repeat", "3", "-o", "p.json", "--", "sleep", "0.4",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = start();
    let lock = d.join(".p.json.jouleplan-lock");
    wait_for(&lock);
    let second = start().wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert!(
        err.contains("p.json is being written by another jouleplan"),
        "{err}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert_eq!(doc["sweep"]["record"]["runs"].as_array().unwrap().len(), 3);
    assert!(!lock.exists(), "the lock is removed when its command ends");
}

#[test]
fn every_command_that_writes_a_file_refuses_an_output_another_command_is_writing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A sweep holds out.file for its whole run.
    let first = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args([
            "profile", "--cores", "1", "-o", "out.file", "--", "sleep", "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&d.join(".out.file.jouleplan-lock"));
    let out = s(&d.join("out.file")).to_string();
    for args in [
        vec![
            "plan", "-q", "--nodes", "1", "--sbatch", &out, "--app", "./a",
        ],
        vec!["plan", "-q", "--nodes", "1", "--plot", &out],
        vec!["machine", "init", "--output", &out],
    ] {
        let (code, _, err) = jouleplan(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("being written by another jouleplan"), "{err}");
    }
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
}

/// A fitted profile and machine file in `d` (p.json, m.toml), and the fit's CSV (fit.csv).
fn fitted(d: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    common::fit_on_1_2_4_8(d, "hpgmgfv")
}

fn fit_again(d: &Path, profile_out: &Path, machine_out: &Path) -> (i32, String) {
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let (code, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&d.join("fit.csv")),
        "--machine",
        s(&machine),
        "--profile-out",
        s(profile_out),
        "--machine-out",
        s(machine_out),
    ]);
    (code, err)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_write_error_names_the_output_the_user_gave_never_a_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, machine) = fitted(d);
    // A parent that is a regular file fails for root too.
    std::fs::write(d.join("file"), "not a folder").unwrap();
    let out = d.join("file").join("p.json");
    let (code, err) = fit_again(d, &out, &d.join("m2.toml"));
    assert_ne!(code, 0, "{err}");
    assert!(err.contains(s(&out)), "{err}");
    assert!(!err.contains("jouleplan-tmp"), "{err}");
    assert!(
        !d.join("m2.toml").exists(),
        "nothing of the set was written"
    );
    // A read-only folder, where the lock beside the output is already there (left by a
    // killed command): the temporary cannot be made.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped the read-only folder: root ignores permissions");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join(".p.json.jouleplan-lock"), "").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = ro.join("p.json");
    let (code, err) = fit_again(d, &out, &machine);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(s(&out)) && !err.contains("jouleplan-tmp"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_machine_file_that_cannot_be_written_leaves_the_profile_written_with_it_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (profile, _) = fitted(d);
    let old = std::fs::read(&profile).unwrap();
    // Refit onto the same profile with another program name, so its bytes would change...
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    // A device jouleplan will not replace (a folder there is refused before anything runs).
    let blocked = Path::new("/dev/full");
    let (code, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&d.join("fit.csv")),
        "--machine",
        s(&machine),
        "--program",
        "renamed",
        "--profile-out",
        s(&profile),
        "--machine-out",
        s(blocked),
    ]);
    // ...but the machine file cannot be written: neither is.
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(s(blocked)), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(
        std::fs::read(&profile).unwrap(),
        old,
        "the profile kept its bytes"
    );
    let left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("jouleplan"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_report_is_swapped_in_whole_leaving_no_half_folder_beside_it() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let (code, _, err) = jouleplan(&["report", "--out", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let first = std::fs::metadata(&out).unwrap().ino();
    let (code, _, err) = jouleplan(&["report", "--deadline", "10s", "--out", s(&out)]);
    assert_eq!(code, 0, "{err}");
    // A new folder took the old one's place (one rename), with every file in it.
    assert_ne!(std::fs::metadata(&out).unwrap().ino(), first);
    for f in [
        "index.html",
        "pareto.svg",
        "pareto.png",
        "breakdown.svg",
        "front.json",
        "front.csv",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["report"], "nothing is left beside the report");
}

#[test]
fn report_refuses_a_folder_of_the_users_unless_forced_and_replaces_its_own_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("index.html"), "<html>my lab's page</html>\n").unwrap();
    std::fs::write(out.join("notes.txt"), "precious\n").unwrap();
    // A folder of the user's: refused before anything runs, naming it and --force.
    let (code, stdout, err) = jouleplan(&["report", "--out", s(&out)]);
    assert_eq!(code, 2, "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    for needle in [
        "--out",
        "results",
        "`index.html` (a page no jouleplan report wrote) and 1 more",
        "--force",
    ] {
        assert!(err.contains(needle), "lacks {needle}: {err}");
    }
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        page, "<html>my lab's page</html>\n",
        "the user's page is kept"
    );
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        2,
        "nothing written"
    );
    // An index.html alone that no report wrote is the user's too.
    std::fs::remove_file(out.join("notes.txt")).unwrap();
    let (code, _, err) = jouleplan(&["report", "--out", s(&out)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no jouleplan report wrote"), "{err}");
    // --force writes the report's files into it, keeping the others.
    std::fs::write(out.join("notes.txt"), "precious\n").unwrap();
    let (code, _, err) = jouleplan(&["report", "--out", s(&out), "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(--force)"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "precious\n"
    );
    assert!(out.join("front.csv").is_file());
    // A previous report, alone in its folder, is replaced whole without --force; so is an
    // empty folder.
    let own = dir.path().join("report");
    for _ in 0..2 {
        let (code, _, err) = jouleplan(&["report", "--out", s(&own)]);
        assert_eq!(code, 0, "{err}");
    }
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let (code, _, err) = jouleplan(&["report", "--out", s(&dir.path().join("empty"))]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_report_out_that_is_a_file_is_refused_under_the_flag_before_the_plan_is_made() {
    // Refused at the end, exit 1, as "afile exists and is not a folder", after the plan and
    // every chart were made; the flag was not named.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine\n").unwrap();
    let (code, out, err) = jouleplan(&["report", "--out", s(&file)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--out: expected a folder for the report's files")
            && err.contains("this is a file"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
}
