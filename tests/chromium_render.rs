//! The report page rendered in headless Chromium (Debian's package, installed when missing by
//! `scripts/ensure-packages.sh`): a screenshot with content, and the DOM holds the chart, the
//! front table with its intervals, the recommendation with its terms, what to measure next and
//! the energy scope. Where Chromium cannot be installed, the test is reported
//! as ignored with the reason in its name (a libtest-mimic harness), never as `ok`.

mod common;

use common::{inputs, png_stats};
use std::path::PathBuf;

const NAME: &str = "index_html_renders_in_headless_chromium";

/// Installs Chromium when missing; `Err` says why it cannot be had.
fn ensure_chromium() -> Result<(), String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-packages.sh");
    let out = std::process::Command::new(&script)
        .arg("chromium=chromium")
        .output()
        .map_err(|e| format!("{} did not run: {e}", script.display()))?;
    match out.status.code() {
        Some(0) => Ok(()),
        Some(77) => Err(format!(
            "Debian's chromium is not installable here: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        _ => panic!(
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn main() {
    common::real_trial(NAME, ensure_chromium, |()| {
        index_html_renders_in_headless_chromium()
    });
}

fn index_html_renders_in_headless_chromium() {
    let i = inputs();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("rep");
    let (code, _, err) = i.run("report", &["--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let url = format!("file://{}", dir.join("index.html").display());
    let chromium = |extra: &[&str]| {
        std::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!(
                "--user-data-dir={}",
                out.path().join("profile").display()
            ))
            .args(extra)
            .arg(&url)
            .output()
            .unwrap()
    };
    let shot = out.path().join("shot.png");
    let o = chromium(&[
        "--window-size=1200,1800",
        &format!("--screenshot={}", shot.display()),
    ]);
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (w, h, colours, ink) = png_stats(&shot);
    assert_eq!((w, h), (1200, 1800));
    assert!(
        colours > 50 && ink > 0.05,
        "blank page? {colours} colours, {ink} ink"
    );
    let dom = String::from_utf8_lossy(&chromium(&["--dump-dom"]).stdout).into_owned();
    assert!(
        dom.contains("<div id=\"pareto-plot\"><a href=\"pareto.svg\"><img src=\"pareto.png\""),
        "plot missing from the rendered page"
    );
    assert!(
        dom.contains("<table id=\"front\">"),
        "front table missing from the rendered page"
    );
    let rows = dom.matches("<tr").count();
    assert!(rows > 10, "{rows} table rows");
    assert!(dom.contains("Recommendation"));
    // The terms that add up to the total, the bounds (a one-node profile), what to measure
    // next, the scope and the node-law chart.
    for part in [
        "<table id=\"time-terms\">",
        "<table id=\"energy-terms\">",
        "<th>time bounds</th>",
        "<div id=\"node-law-plot\"><svg",
        "<h2 id=\"measure-next\">Measure next</h2>",
        "Every energy on this page is node energy",
    ] {
        assert!(dom.contains(part), "{part} missing from the rendered page");
    }
}
