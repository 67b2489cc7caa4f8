//! What the user takes away matches what was measured: a job script launches the ranks and
//! threads the profile's runs used (or says loudly that it does not), and `fit` and
//! `machine check` print JSON on request. On the real Ice Lake runs of
//! the public data read from `../shared/fixtures`.

mod common;

use common::{fit_fixture_code, jouleplan, plan_full_nodes};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `plan --sbatch` on `(profile, machine)` with `extra` flags: (exit code, stderr, script).
fn job(d: &Path, (prof, mach): (&Path, &Path), extra: &[&str]) -> (i32, String, String) {
    let script = d.join("job.sh");
    let _ = std::fs::remove_file(&script);
    let mut args = vec![
        "plan",
        "--machine",
        s(mach),
        "--profile",
        s(prof),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--sbatch",
        s(&script),
        "--app",
        "./hpgmgfv",
    ];
    args.extend(extra);
    let (rc, _, err) = jouleplan(&args);
    let text = std::fs::read_to_string(&script).unwrap_or_default();
    (rc, err, text)
}

fn line_value(script: &str, key: &str) -> String {
    script
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in\n{script}"))
        .trim()
        .to_string()
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_job_script_for_mpi_only_runs_launches_one_rank_a_core() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert_eq!(doc["layout"]["threads_per_rank"], 1, "{}", doc["layout"]);
    let (rc, err, script) = job(d, (&prof, &mach), &[]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(line_value(&script, "#SBATCH --ntasks-per-node="), "72");
    assert_eq!(line_value(&script, "#SBATCH --cpus-per-task="), "1");
    assert_eq!(line_value(&script, "export OMP_NUM_THREADS="), "1");
    assert!(
        script.contains("# Layout: 72 MPI ranks a node x 1 thread a rank, as measured"),
        "{script}"
    );
    assert!(!script.contains("WARNING: the layout asked"), "{script}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_layout_asked_that_differs_from_the_measured_one_is_said_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, err, script) = job(d, (&prof, &mach), &["--ntasks-per-node", "1"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(line_value(&script, "#SBATCH --cpus-per-task="), "72");
    let said = "is not the one measured (72 MPI ranks a node x 1 thread a rank)";
    assert!(err.contains(said), "{err}");
    assert!(script.contains("# WARNING: the layout asked"), "{script}");
    assert!(script.contains(said), "{script}");
    // Asking for the measured layout is no warning.
    let (rc, err, script) = job(d, (&prof, &mach), &["--cpus-per-task", "1"]);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("is not the one measured"), "{err}");
    assert_eq!(line_value(&script, "#SBATCH --ntasks-per-node="), "72");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn runs_without_ranks_give_a_job_script_that_says_its_layout_is_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    // The same runs without their ranks column.
    let text = std::fs::read_to_string(d.join("fit.csv")).unwrap();
    let cut: String = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{}\n", f[..6].join(","), f[7])
        })
        .collect();
    let csv = common::write(d, "noranks.csv", &cut);
    let prof2 = d.join("p2.json");
    let (rc, out, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof2),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("layout: not recorded"), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof2).unwrap()).unwrap();
    assert!(doc.get("layout").is_none(), "{doc}");
    let (rc, err, script) = job(d, (&prof2, &mach), &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        script.contains("assumed: the profile records no layout"),
        "{script}"
    );
    drop(prof);
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fit_json_carries_the_figures_the_text_prints() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let prof = d.join("pj.json");
    let fit_csv = d.join("fit.csv");
    let args = |json: bool| {
        let mut a = vec![
            "fit",
            "--measured",
            s(&fit_csv),
            "--machine",
            s(&mach),
            "--profile-out",
            s(&prof),
            "--loo",
        ];
        if json {
            a.push("--json");
        }
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let run = |json: bool| {
        let a = args(json);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        jouleplan(&a)
    };
    let (rc, text, _) = run(false);
    assert_eq!(rc, 0);
    let (rc, out, err) = run(true);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["format"], "jouleplan-fit/1");
    assert_eq!(doc["node_counts"], serde_json::json!([1, 2, 4, 8]));
    assert_eq!(doc["energy_scope"], "cpu");
    assert_eq!(doc["layout"]["threads_per_rank"], 1);
    let combined = doc["node_law"]["combined"].as_str().unwrap();
    assert!(text.contains(combined), "{combined} not in\n{text}");
    let weights: f64 = doc["node_law"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["weight"].as_f64().unwrap())
        .sum();
    assert!((weights - 1.0).abs() < 1e-9, "{weights}");
    assert!(doc["power"][0]["idle_w"].as_f64().unwrap() > 0.0, "{doc}");
    assert_eq!(doc["wrote"], serde_json::json!([s(&prof)]));
    assert!(doc["leave_one_out"]["time"]["mape_pct"].as_f64().unwrap() < 20.0);
    assert!(!err.contains('{'), "stderr holds notes only: {err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn machine_check_json_names_what_is_missing_and_init_keeps_stdout_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("node.toml");
    let (rc, out, err) = jouleplan(&["machine", "init", "--output", s(&file)]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "", "machine init --output prints nothing on stdout");
    assert!(err.contains("wrote"), "{err}");
    let (rc, out, err) = jouleplan(&["machine", "check", "--json", s(&file)]);
    assert_eq!(rc, 2, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["complete"], false);
    let problems = doc["problems"].to_string();
    assert!(
        problems.contains("[network]") && problems.contains("[power]"),
        "{problems}"
    );
    assert!(doc["power"].is_null() && doc["network"].is_null(), "{doc}");
    // A complete file: exit 0, its values.
    let (_, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, out, err) = jouleplan(&["machine", "check", "--json", s(&mach)]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["cores_per_node"], 72);
    assert!(doc["power"]["idle_w"][0].as_f64().unwrap() > 0.0, "{doc}");
}

#[test]
fn small_things_read_as_a_user_expects() {
    // The flag of a missing file is named.
    let (rc, _, err) = jouleplan(&["plan", "--profile", "nothere.json"]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--profile nothere.json: cannot read: No such file"),
        "{err}"
    );
    // --help ends with examples; the man page's NAME line does not repeat the name.
    let (_, help, _) = jouleplan(&["--help"]);
    assert!(help.contains("Examples:\n  jouleplan "), "{help}");
    let (_, man, _) = jouleplan(&["man"]);
    let name = man.lines().skip_while(|l| *l != ".SH NAME").nth(1).unwrap();
    assert!(name.starts_with("jouleplan \\- Energy"), "{name}");
    // A frequency in MHz gets a hint.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/icelake-8360y.toml"),
    )
    .unwrap()
    .replace("frequencies_ghz = [2.4]", "frequencies_ghz = [2400]");
    let f = common::write(dir.path(), "mhz.toml", &text);
    let (rc, _, err) = jouleplan(&["machine", "check", "--json", s(&f)]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("2400 looks like MHz, which is 2.4 GHz"),
        "{err}"
    );
    // Counts of one in the singular.
    let (rc, out, err) = jouleplan(&[]);
    assert_eq!(rc, 0, "{err}");
    for wrong in ["1 cores", "1 GPU counts", "1 points", "1 runs"] {
        assert!(
            !out.contains(wrong) && !err.contains(wrong),
            "{wrong}:\n{out}\n{err}"
        );
    }
    assert!(out.contains("x 1 GPU count ="), "{out}");
    assert!(out.contains("measured on one H100 node"), "{out}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_closed_standard_error_loses_no_output() {
    // `fit ... 2>&1 | head -2`: the reader goes away while notes are still being said.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, _) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (prof, mach) = (d.join("p2.json"), d.join("m2.toml"));
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .args([
            "fit",
            "--measured",
            s(&d.join("fit.csv")),
            "--machine",
            s(&machine),
        ])
        .args(["--profile-out", s(&prof), "--machine-out", s(&mach)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "no panic on a closed pipe");
    assert!(
        prof.is_file() && mach.is_file(),
        "both outputs written: {status}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn too_few_runs_with_energy_are_not_called_a_missing_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let csv = common::write(d, "one.csv", &two);
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&machine),
        "--profile-out",
        s(&d.join("p.json")),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(!err.contains("no energy_j column"), "{err}");
    assert!(err.contains("1 run with energy"), "{err}");
}

/// The page's visible text: tags dropped (attribute names such as `id="interval"` are not
/// words a reader sees).
fn visible(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn a_one_node_profile_has_bounds_never_an_interval_in_text_json_csv_and_report() {
    // The worked example is measured on one node: beyond it the model gives bounds (perfect
    // division of the work to no gain), which carry no coverage.
    let i = common::inputs();
    let (rc, out, err) = i.run("plan", &["--deadline", "30s"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("bounds beyond the 1 node measured (from perfect division of the work"),
        "{out}"
    );
    // The risk is said in the units every other line uses.
    assert!(
        err.contains(
            "deadline risk: the recommendation's bounds (no gain past the node measured) reach \
             1m11.8s, past the deadline of 30.00 s"
        ),
        "{err}"
    );
    for said in [&out, &err] {
        assert!(
            !said.contains("interval") && !said.contains("80%"),
            "{said}"
        );
    }
    // Asking for a coverage there changes nothing, and the plan says so and why.
    let (rc, out, err) = i.run("plan", &["--coverage", "90%", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert!(
        doc["recommendation"]["interval_coverage"].is_null(),
        "{out}"
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("--coverage 90% changes nothing here: the profile has no node law"),
        "{notes}"
    );
    // JSON keeps its keys and says what they hold.
    let (rc, out, err) = i.run("plan", &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let rec = &doc["recommendation"];
    assert_eq!(rec["interval_kind"], "bounds", "{rec}");
    assert!(rec["interval_coverage"].is_null() && rec["time_interval_s"].is_array());
    let front = doc["front"].as_array().unwrap();
    let one = front.iter().find(|f| f["nodes"] == 1).unwrap();
    assert!(one["interval_kind"].is_null(), "the node measured has none");
    // CSV: a column saying which.
    let (rc, out, err) = i.run("plan", &["--csv"]);
    assert_eq!(rc, 0, "{err}");
    let header: Vec<&str> = out.lines().next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == "interval_kind").unwrap();
    let first: Vec<&str> = out.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(first[k], "bounds", "{out}");
    // The report: the page's words, its tables and both charts' legends.
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("rep");
    let (rc, _, err) = i.run("report", &["--out", s(&rep)]);
    assert_eq!(rc, 0, "{err}");
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("<th>time bounds</th><th>node energy bounds</th>"));
    assert!(html.contains("<p id=\"interval\">Bounds beyond the 1 node measured"));
    let text = visible(&html);
    assert!(
        !text.contains("interval") && !text.contains("80%"),
        "{text}"
    );
    for chart in ["pareto.svg", "node-law.svg"] {
        let svg = std::fs::read_to_string(rep.join(chart)).unwrap();
        assert!(svg.contains("bounds"), "{chart}");
        assert!(!svg.contains("interval") && !svg.contains("80%"), "{chart}");
    }
}

#[test]
fn quiet_drops_the_notes_but_keeps_the_warning_that_the_job_may_miss_its_deadline_or_budget() {
    // -q is for scripts that want the result alone: the notes go, but a recommendation that
    // may miss the user's own limit is said, with --sbatch as without.
    let i = common::inputs();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.sh");
    let (rc, out, err) = i.run(
        "plan",
        &[
            "--deadline",
            "30s",
            "-q",
            "--sbatch",
            s(&job),
            "--app",
            "./app",
        ],
    );
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("Recommendation"), "{out}");
    assert!(job.exists());
    assert!(
        err.contains("warning: deadline risk: the recommendation's bounds"),
        "{err}"
    );
    assert!(
        !err.contains("note:") && !err.contains("wrote job script"),
        "{err}"
    );
    // A budget the recommendation's energy bounds reach past is warned of the same way.
    let (rc, out, err) = i.run("plan", &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let e = &doc["recommendation"]["energy_interval_j"];
    let (lo, hi) = (e[0].as_f64().unwrap(), e[1].as_f64().unwrap());
    assert!(lo < hi, "{e}");
    let budget = format!("{:.0}J", (lo + hi) / 2.0);
    let (rc, _, err) = i.run("plan", &["--budget", &budget, "-q"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: budget risk:"), "{err}");
    assert!(!err.contains("note:"), "{err}");
}

#[test]
fn an_assumed_rank_layout_is_said_on_stderr_with_how_to_give_it() {
    let i = common::inputs();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.sh");
    let (rc, _, err) = i.run("plan", &["--sbatch", s(&job), "--app", "./app"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("warning: the job script's layout is assumed: 1 MPI rank a node x 8 threads"),
        "{err}"
    );
    assert!(
        err.contains("--ntasks-per-node N --cpus-per-task C (N x C = 8)"),
        "{err}"
    );
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(
        script.contains("assumed: the profile records no layout"),
        "{script}"
    );
    // A layout given is no guess.
    let flags = ["--ntasks-per-node", "8", "--cpus-per-task", "1"];
    let (rc, _, err) = i.run(
        "plan",
        &[&["--sbatch", s(&job), "--app", "./app"][..], &flags[..]].concat(),
    );
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("layout is assumed"), "{err}");
}

/// The subcommands a `--help` lists under `Commands:` (`help` left out).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_subcommands_help_ends_with_examples_of_itself() {
    let (_, top, _) = jouleplan(&["--help"]);
    let mut todo: Vec<Vec<String>> = commands(&top).into_iter().map(|c| vec![c]).collect();
    assert!(todo.len() >= 12, "{top}");
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (rc, help, err) = jouleplan(&args);
        assert_eq!(rc, 0, "{err}");
        let sub = commands(&help);
        todo.extend(sub.iter().map(|c| [path.clone(), vec![c.clone()]].concat()));
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("no examples in `{}`:\n{help}", args.join(" ")));
        let own = format!("jouleplan {}", path.join(" "));
        assert!(
            examples.lines().any(|l| l.contains(&own)),
            "`{own}` has no example of itself:\n{examples}"
        );
        assert!(help.contains("Exit codes"), "{help}");
        seen += 1;
    }
    assert!(seen >= 16, "{seen} helps read");
    // The campaign is among profile's examples.
    let (_, help, _) = jouleplan(&["profile", "--help"]);
    assert!(help.contains("jouleplan profile --nodes auto"), "{help}");
}

#[test]
fn small_wording_reads_as_a_user_expects() {
    let i = common::inputs();
    // The cost of measuring next in a unit that shows it, never 0.00 node-hours.
    let (rc, out, err) = i.run("plan", &[]);
    assert_eq!(rc, 0, "{err}");
    let next = out.lines().find(|l| l.contains("measure next:")).unwrap();
    assert!(next.contains("2 nodes (2.42 node-minutes)"), "{next}");
    assert!(!out.contains("0.00 node-hours"), "{out}");
    // One name for the network service time at every node count, explained at one node.
    let (rc, out, err) = i.run("predict", &["--config", "1,8,2"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("+ T_s,net "), "{out}");
    assert!(
        out.contains("at one node T_s,net is the time the cores are not busy"),
        "{out}"
    );
    assert!(
        !out.contains("T_unbusy") && !out.contains("unbusy at P_net"),
        "{out}"
    );
    // --budget names Wh; --nodes shows its own syntax.
    let (_, help, _) = jouleplan(&["plan", "--help"]);
    assert!(help.contains("(mJ, J, kJ, MJ, Wh, kWh)"), "{help}");
    assert!(
        help.contains("[default: 1-N, N the machine file's nodes]"),
        "{help}"
    );
    assert!(!help.contains("1..="), "{help}");
}

#[test]
fn report_without_power_is_a_page_in_time_and_node_hours() {
    // The real time-only runs of an H200 node, against the machine file `machine init` wrote
    // there: no [power], no [network] (so one node).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only");
    let (mach, csv) = (data.join("node.toml"), data.join("runs.csv"));
    let prof = d.join("p.json");
    let law = d.join("law.png");
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof),
        "--plot",
        s(&law),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains(&format!("wrote {}", law.display())), "{err}");
    let (w, h, colours, _) = common::png_stats(&law);
    assert_eq!((w, h), (1000, 700));
    assert!(colours > 5, "{colours} colours");
    let rep = d.join("rep");
    let src = ["--machine", s(&mach), "--profile", s(&prof)];
    let (rc, out, err) = jouleplan(&[&["report"], &src[..], &["--out", s(&rep)]].concat());
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "");
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("Energy is unavailable (the machine file has no [power])"));
    assert!(html.contains("<th>time</th><th>node-hours</th>"), "{html}");
    assert!(html.contains("<table id=\"time-terms\">"));
    assert!(!html.contains("<table id=\"energy-terms\">"));
    assert!(html.contains("<h2 id=\"measure-next\">Measure next</h2>"));
    let text = visible(&html);
    for energy in [" J ", " kJ", " MJ"] {
        assert!(
            !text.contains(energy),
            "an energy on a page without energy: {energy}"
        );
    }
    let pareto = std::fs::read_to_string(rep.join("pareto.svg")).unwrap();
    assert!(
        pareto.lines().any(|l| l.trim() == "node-hours"),
        "axis not named"
    );
    let bars = std::fs::read_to_string(rep.join("breakdown.svg")).unwrap();
    assert!(bars.contains("time terms along the front") && !bars.contains("energy terms"));
    // plan --plot draws the same chart.
    let (rc, _, err) = jouleplan(&[&["plan", "--plot", s(&d.join("f.svg"))], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn validate_lists_runs_by_configuration_whatever_the_files_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = common::fit_on_1_2_4_8(d, "hpgmgfv");
    // Every run of the code, last line first.
    let text = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].reverse();
    let reversed = common::write(d, "reversed.csv", &(lines.join("\n") + "\n"));
    let (rc, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--measured",
        s(&reversed),
    ]);
    assert_eq!(rc, 0, "{err}");
    let rows: Vec<(u32, u32)> = out
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match (w.first()?.parse().ok(), w.get(1)?.parse().ok(), w.len()) {
                (Some(n), Some(c), 10) => Some((n, c)),
                _ => None,
            }
        })
        .collect();
    assert!(rows.len() > 30, "{out}");
    assert!(
        rows.windows(2).all(|w| w[0] <= w[1]),
        "not sorted: {rows:?}"
    );
    assert_eq!(rows.first(), Some(&(1, 72)), "{rows:?}");
    // One run: a point, in the singular.
    let one = common::write(d, "one.csv", &format!("{}\n{}\n", lines[0], lines[1]));
    let (rc, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--measured",
        s(&one),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("over 1 point\n"), "{out}");
    assert!(!out.contains("1 points"), "{out}");
}

#[cfg(unix)]
#[test]
fn fit_writes_its_chart_with_the_profile_or_nothing() {
    // The real time-only runs of an H200 node. A chart that cannot be written (a link planted
    // at its name) leaves no profile; otherwise the profile and the chart are both written.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only");
    let (mach, csv) = (data.join("node.toml"), data.join("runs.csv"));
    let (prof, law) = (d.join("p.json"), d.join("law.svg"));
    std::os::unix::fs::symlink(d.join("elsewhere.svg"), &law).unwrap();
    let fit = ["fit", "--measured", s(&csv), "--machine", s(&mach)];
    let outs = ["--profile-out", s(&prof), "--plot", s(&law)];
    let (rc, _, err) = jouleplan(&[&fit[..], &outs[..]].concat());
    assert_ne!(rc, 0, "{err}");
    assert!(
        err.contains("is a symbolic link") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!prof.exists(), "the profile was written without its chart");
    // The chart onto the machine file it reads is refused before anything is written.
    let mine = d.join("m.svg");
    std::fs::copy(&mach, &mine).unwrap();
    let onto = ["fit", "--measured", s(&csv), "--machine", s(&mine)];
    let outs2 = ["--profile-out", s(&prof), "--plot", s(&mine)];
    let (rc, _, err) = jouleplan(&[&onto[..], &outs2[..]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("not the input of --machine"), "{err}");
    assert_eq!(std::fs::read(&mine).unwrap(), std::fs::read(&mach).unwrap());
    std::fs::remove_file(&law).unwrap();
    let (rc, _, err) = jouleplan(&[&fit[..], &outs[..]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(prof.exists() && law.exists(), "{err}");
    assert!(std::fs::read_to_string(&law).unwrap().starts_with("<svg"));
}

#[test]
fn validate_scores_one_node_time_only_runs_against_a_file_plan_accepts() {
    // The real time-only runs of an H200 node, against the machine file `machine init` wrote
    // there (no [power], no [network]): `plan` takes it, so `validate` scores time on it.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only");
    let (mach, csv) = (data.join("node.toml"), data.join("runs.csv"));
    let prof = d.join("p.json");
    let fit = ["fit", "--measured", s(&csv), "--machine", s(&mach)];
    let (rc, _, err) = jouleplan(&[&fit[..], &["--profile-out", s(&prof)]].concat());
    assert_eq!(rc, 0, "{err}");
    let src = ["--machine", s(&mach), "--profile", s(&prof)];
    let (rc, out, err) = jouleplan(&[&["validate", "--measured", s(&csv)], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("no [power] section and the runs measured no energy: time alone is scored"),
        "{err}"
    );
    assert!(out.contains("time: mean absolute error"), "{out}");
    assert!(!out.contains("energy: mean absolute error"), "{out}");
    // Runs over two nodes need [network] and are refused; runs with energy are scored in time,
    // their energy said not scored (an H200 node's GPU energy against `machine init`'s file
    // was refused whole until 2026-11-28).
    let text = std::fs::read_to_string(&csv).unwrap();
    let two = d.join("two.csv");
    std::fs::write(&two, text.replacen("\n1,1,", "\n2,1,", 1)).unwrap();
    let (rc, _, err) = jouleplan(&[&["validate", "--measured", s(&two)], &src[..]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("no [network] section, which 2 nodes need"),
        "{err}"
    );
    let joules = d.join("joules.csv");
    std::fs::write(
        &joules,
        text.replacen("2.044480086,,", "2.044480086,400,", 1),
    )
    .unwrap();
    let (rc, out, err) = jouleplan(&[&["validate", "--measured", s(&joules)], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("energy not scored: the runs measured energy, but")
            && out.contains("has no [power] section to predict it from; time alone is scored"),
        "{out}"
    );
    assert!(out.contains("time: mean absolute error"), "{out}");
    assert!(!out.contains("energy: mean absolute error"), "{out}");
    let json = [&["validate", "--json", "--measured", s(&joules)], &src[..]].concat();
    let (rc, out, err) = jouleplan(&json);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let block = &v["validations"][0];
    assert!(block["energy"].is_null(), "{block}");
    assert!(
        block["energy_not_scored"]
            .as_str()
            .is_some_and(|w| w.contains("no [power] section")),
        "{block}"
    );
}

#[test]
fn gpu_energy_runs_held_out_on_a_real_h200_are_scored_against_machine_inits_file() {
    // Real runs of an H200 node (NVML GPU energy) at 4 and 16 cores, held out of the profile
    // made there at 2 and 8, against the machine file `machine init` wrote there (no [power]):
    // the GPU energy is scored from the power the profile's runs drew.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-gpu-energy");
    let (mach, prof, held) = (
        data.join("node.toml"),
        data.join("p.json"),
        data.join("held.csv"),
    );
    let args = [
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--measured",
        s(&held),
    ];
    let (rc, out, err) = jouleplan(&args);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("6.87 s      6.04 s  -12.1%       1399.3       1284.7   -8.2%"),
        "{out}"
    );
    assert!(out.contains("no baseline point for 16 cores"), "{out}");
    assert!(
        out.contains("GPU energy: mean absolute error 8.2%"),
        "{out}"
    );
    assert!(!out.contains("energy not scored"), "{out}");
    assert!(
        err.contains("energy: the GPU's alone, from the power")
            && err.contains("GPU power drawn by the runs")
            && err.contains("207.1 to 224.1 W per GPU"),
        "{err}"
    );
    let loo = [&args[..5], &["--loo"]].concat();
    let (rc, out, err) = jouleplan(&loo);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("model check failed") && !out.contains("model check failed"));
}

#[test]
fn gpu_energy_runs_of_a_real_h200_fitted_at_two_core_counts_plan_between_them() {
    // Real runs of an H200 node at 2 and 8 cores (one GPU clock, none named): `fit` derives
    // 3-7 cores between them, whose GPU (taken busy for the whole run) must not outlast the
    // run, or `plan` refuses the profile as one the model cannot explain.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-gpu-energy");
    let (prof, mach) = (d.join("p.json"), d.join("m.toml"));
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&data.join("fit.csv")),
        "--machine",
        s(&data.join("node.toml")),
        "--profile-out",
        s(&prof),
        "--machine-out",
        s(&mach),
    ]);
    assert_eq!(rc, 0, "{err}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    // No clock law was fitted, and the profile does not say one was.
    assert!(
        p["gpu_clock"].is_null() && p["provenance"]["gpu_clock"].is_null(),
        "{p}"
    );
    let wall = p["provenance"]["baseline.wall_time_s"].as_str().unwrap();
    assert!(
        wall.contains("the rows name no GPU clock: taken as the top"),
        "{wall}"
    );
    let plan = [
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--json",
    ];
    let (rc, out, err) = jouleplan(&plan);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["evaluated"], 7, "{v}");
    // Each derived count's time falls from the 2 cores' measured 6.82 s to the 8 cores' 5.65 s.
    // The GPU energy the runs measured (the mean of each count's two) at the measured counts.
    let predicted = |c: u32| {
        let config = format!("1,{c},2.1,1");
        let predict = [&["predict"], &plan[1..5], &["--config", &config, "--json"]].concat();
        let (rc, out, err) = jouleplan(&predict);
        assert_eq!(rc, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (
            v["time_s"].as_f64().unwrap(),
            v["energy_j"].as_f64().unwrap(),
        )
    };
    assert!((predicted(2).1 - 1412.6735).abs() < 1e-6);
    assert!((predicted(8).1 - 1265.489).abs() < 1e-6);
    let mut before = 6.83;
    for c in 3..=7 {
        let (t, e) = predicted(c);
        assert!(t < before && t > 5.64, "{c} cores: {t} s");
        assert!(e < 1412.68 && e > 1250.0, "{c} cores: {e} J");
        before = t;
    }
}

#[test]
fn a_replay_with_no_run_to_take_lists_the_runs_the_recording_holds() {
    // The real time-only runs of an H200 node: 1, 4 and 16 cores at 2.1 GHz.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only");
    let (rc, _, err) = jouleplan(&[
        "profile",
        "--nodes",
        "auto",
        "--replay",
        s(&data.join("runs.csv")),
        "--machine",
        s(&data.join("node.toml")),
        "--cores",
        "64",
        "--measured-out",
        s(&d.join("runs.csv")),
        "-o",
        s(&d.join("p.json")),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains(
            "got none; it holds runs at 1 core 2.1 GHz, 4 cores 2.1 GHz, 16 cores 2.1 GHz \
             (--cores, --freqs)"
        ),
        "{err}"
    );
    assert!(!d.join("runs.csv").exists(), "nothing is measured");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_job_scripts_interval_carries_the_digits_of_its_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, err, script) = job(d, (&prof, &mach), &["--deadline", "10m"]);
    assert_eq!(rc, 0, "{err}");
    let (_, out, err) = plan_full_nodes(&mach, &prof, &["--deadline", "10m", "--json"]);
    let plan: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let rec = &plan["recommendation"];
    // `# 80% interval ...: time A to B s, CPU energy C to D J.`: A 1.7 J interval was printed
    // `2 to 2 J`, and a 18.0 to 19.1 ms one `0.018 to 0.019 s`.
    let line = script
        .lines()
        .find(|l| l.starts_with("# 80% interval"))
        .unwrap_or_else(|| panic!("no interval in\n{script}"));
    let numbers: Vec<f64> = line
        .split([' ', ','])
        .filter_map(|w| w.trim_end_matches('.').parse().ok())
        .filter(|v: &f64| *v > 100.0)
        .collect();
    let want = [
        (&rec["time_interval_s"][0], 5e-7),
        (&rec["time_interval_s"][1], 5e-7),
        (&rec["energy_interval_j"][0], 5e-4),
        (&rec["energy_interval_j"][1], 5e-4),
    ];
    assert_eq!(numbers.len(), 4, "{line}");
    for (got, (json, within)) in numbers.iter().zip(want) {
        let json = json.as_f64().unwrap();
        assert!((got - json).abs() <= within, "{got} against {json}: {line}");
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_job_script_whose_deadline_lies_in_its_interval_says_the_deadline_is_at_risk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let risk = |script: &str| {
        script
            .lines()
            .find(|l| l.starts_with("# WARNING: deadline at risk"))
            .map(String::from)
    };
    // 8 minutes: the recommendation is predicted within it, its interval's high end is not.
    let (_, out, err) = plan_full_nodes(&mach, &prof, &["--deadline", "8m", "--json"]);
    let plan: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let rec = &plan["recommendation"];
    let (t, hi) = (
        rec["time_s"].as_f64().unwrap(),
        rec["time_interval_s"][1].as_f64().unwrap(),
    );
    assert!(t <= 480.0 && hi > 480.0, "{rec}");
    let (rc, err, script) = job(d, (&prof, &mach), &["--deadline", "8m"]);
    assert_eq!(rc, 0, "{err}");
    let line = risk(&script).unwrap_or_else(|| panic!("no deadline warning in\n{script}"));
    assert!(
        line.contains("the deadline of 8m00.0s lies inside the 80% interval of the predicted time")
            && line.contains(&format!(
                "{} to {}",
                common_duration(rec["time_interval_s"][0].as_f64().unwrap()),
                common_duration(hi)
            )),
        "{line}"
    );
    // A deadline the interval's high end meets: no warning.
    let (rc, err, script) = job(d, (&prof, &mach), &["--deadline", "2h"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(risk(&script), None, "{script}");
    // A point picked past the deadline (one node, measured: no interval) is said in the script
    // and on standard error.
    let last = (plan["front"].as_array().unwrap().len() - 1).to_string();
    let (rc, err, script) = job(d, (&prof, &mach), &["--deadline", "8m", "--pick", &last]);
    assert_eq!(rc, 0, "{err}");
    let line = risk(&script).unwrap_or_else(|| panic!("no deadline warning in\n{script}"));
    assert!(line.contains("is past the deadline of 8m00.0s"), "{line}");
    assert!(err.contains("warning: deadline at risk"), "{err}");
}

/// A duration as every output prints it (`7m26.3s`), for durations from a minute to an hour.
fn common_duration(s: f64) -> String {
    let m = (s / 60.0).floor();
    format!("{}m{:04.1}s", m as u64, s - m * 60.0)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_cpu_only_job_script_says_no_gpus_and_echoes_its_energy_with_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, err, script) = job(d, (&prof, &mach), &[]);
    assert_eq!(rc, 0, "{err}");
    let head = script
        .lines()
        .find(|l| l.starts_with("# Configuration"))
        .unwrap();
    assert!(
        head.ends_with("no GPUs.") && !head.contains("0 GPUs"),
        "{head}"
    );
    // `CPU energy 1712860 J` was whole joules; it reads as every other energy does (`1.71 MJ`).
    let echo = script
        .lines()
        .find(|l| l.starts_with("echo \"jouleplan predicted"))
        .unwrap();
    let energy = echo
        .split("CPU energy ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .unwrap_or_else(|| panic!("{echo}"));
    let (value, unit) = energy.split_once(' ').unwrap();
    assert_eq!(unit, "MJ", "{echo}");
    assert_eq!(value.split('.').nth(1).map(str::len), Some(2), "{echo}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn node_hours_from_a_tenth_up_print_two_decimals_in_the_table_as_in_the_headline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, _) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    // The machine file without [power]: the plan is in time and node-hours.
    let bare = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let (rc, out, err) = plan_full_nodes(&bare, &prof, &[]);
    assert_eq!(rc, 0, "{err}");
    let cells: Vec<&str> = out
        .lines()
        .skip_while(|l| !(l.contains(" node-hours ") && l.ends_with("UCR  ties")))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim_start_matches('*').split_whitespace().nth(5).unwrap())
        .collect();
    assert_eq!(cells.len(), 16, "{out}");
    for c in &cells {
        let v: f64 = c.parse().unwrap();
        assert!(v >= 0.1, "{c}");
        // `1.2749` beside a headline of `1.27 node-hours`.
        assert_eq!(c.split('.').nth(1).map(str::len), Some(2), "{c} in\n{out}");
    }
    let head = out
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "node-hours" && w[0].parse::<f64>().is_ok())
        .map(|w| w[0].to_string())
        .unwrap_or_else(|| panic!("no headline in\n{out}"));
    assert_eq!(head.split('.').nth(1).map(str::len), Some(2), "{head}");
    assert!(cells.contains(&head.as_str()), "{head} among {cells:?}");
}

#[test]
fn a_job_script_sets_a_cpu_frequency_only_where_the_machine_file_lists_a_choice() {
    // Hostile round 6 (a newcomer's try): a machine file of one frequency (a node without
    // cpufreq, as `machine init` reads it; a placeholder host) had `srun --cpu-freq` set to it,
    // which a cluster without cpufreq may refuse, and which may cap a turbo the runs had.
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("one.sh");
    let (code, _, err) = common::jouleplan(&["plan", "-q", "--sbatch", s(&script), "--app", "./a"]);
    assert_eq!(code, 0, "{err}");
    let one = std::fs::read_to_string(&script).unwrap();
    assert!(
        !one.contains("--cpu-freq=")
            && one.contains("# No --cpu-freq: the machine file lists one CPU frequency (2.1 GHz)")
            && one.contains("srun --cpu-bind=cores -- ./a"),
        "{one}"
    );
    // Several frequencies, one chosen: set (tests/frequencies_as_shown.rs checks its value).
}
