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
    let t = std::time::Instant::now();
    while !lock.exists() {
        assert!(t.elapsed().as_secs() < 10, "no lock taken");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
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
