//! A sweep's journal (`PROFILE.journal`) is read as an input of jouleplan's own: each line
//! names its sweep, and `--resume` refuses a line of another sweep or of a point the profile
//! never asked for, naming the line; a pipe, a link or a hard link at the journal's name is
//! refused at once (never read until memory runs out, never blocked on, never emptied).

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// `jouleplan profile ARGS` in `dir` outside Slurm, killed after 60 s: (exit code, stderr).
fn profile(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = assert_cmd::Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .arg("profile")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn record(path: &Path) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["sweep"]["record"].clone()
}

/// A finished one-run sweep of `true` in `dir/NAME`; returns its record.
fn swept(dir: &Path, name: &str) -> Value {
    let (code, err) = profile(dir, &["--cores", "1", "-o", name, "--", "true"]);
    assert_eq!(code, 0, "{err}");
    record(&dir.join(name))
}

fn resume(dir: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["--cores", "1", "-o", "a.json", "--resume"];
    args.extend_from_slice(extra);
    args.extend(["--", "true"]);
    profile(dir, &args)
}

/// Plants something at a name.
type Plant<'a> = Box<dyn Fn() + 'a>;

#[test]
fn resume_refuses_a_journal_line_of_another_sweep_or_of_a_point_never_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = swept(d, "a.json");
    let b = swept(d, "b.json");
    assert!(a["id"].is_string() && a["id"] != b["id"], "{a} {b}");
    let before = std::fs::read(d.join("a.json")).unwrap();
    let journal = d.join("a.json.journal");
    let line = |sweep: &Value, run: &Value| {
        format!("{}\n", json!({"index": 1, "sweep": sweep, "run": run}))
    };
    // Another sweep's run, at a point this one asked for.
    std::fs::write(&journal, line(&b["id"], &b["runs"][0])).unwrap();
    let (code, err) = resume(d, &["--repeat", "2"]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("a.json.journal: line 1") && err.contains("another sweep"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("a.json")).unwrap(),
        before,
        "nothing merged"
    );
    // This sweep's id on a 2-core run of a 1-core sweep.
    let mut two = a["runs"][0].clone();
    two["cores"] = 2.into();
    std::fs::write(&journal, line(&a["id"], &two)).unwrap();
    let (code, err) = resume(d, &["--repeat", "2"]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("line 1") && err.contains("never asked for"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("a.json")).unwrap(),
        before,
        "nothing merged"
    );
    // Its own second repeat is taken back, not made again.
    let mut own = a["runs"][0].clone();
    own["repeat"] = 2.into();
    std::fs::write(&journal, line(&a["id"], &own)).unwrap();
    let (code, err) = resume(d, &["--repeat", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 finished run read from"), "{err}");
    assert_eq!(
        record(&d.join("a.json"))["runs"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn a_pipe_a_link_or_a_hard_link_at_the_journals_name_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    swept(d, "a.json");
    let journal = d.join("a.json.journal");
    let victim = d.join("notes.txt");
    std::fs::write(&victim, "mine\n").unwrap();
    let c = std::ffi::CString::new(journal.to_str().unwrap()).unwrap();
    let plants: [(&str, Plant); 3] = [
        (
            "a pipe",
            // SAFETY: a NUL-terminated path.
            Box::new(|| assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0)),
        ),
        (
            "a symbolic link",
            Box::new(|| std::os::unix::fs::symlink("/dev/zero", &journal).unwrap()),
        ),
        (
            "2 names",
            Box::new(|| std::fs::hard_link(&victim, &journal).unwrap()),
        ),
    ];
    for (what, plant) in plants {
        plant();
        let t = std::time::Instant::now();
        let (code, err) = resume(d, &[]);
        assert!(t.elapsed() < Duration::from_secs(30), "{what}: no hang");
        assert_ne!(code, 0, "{what}: {err}");
        assert!(
            err.contains("a.json.journal") && err.contains(what),
            "{what}: {err}"
        );
        std::fs::remove_file(&journal).unwrap();
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
}
