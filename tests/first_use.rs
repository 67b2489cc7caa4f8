//! What a first-time user meets on a fresh clone, checked on the real fixtures: energy
//! breakdowns that add up, notes on stderr, frequencies in the units people type, plausible
//! machine files, exit codes in every help, job scripts and charts that explain themselves.
//! (The README's walkthroughs run verbatim in `readme_walkthroughs.rs`.)

mod common;

use common::{fixture, jouleplan};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Joules of a printed energy (`209.3 J`, `1.25 kJ`, `3.1 MJ`).
fn joules(text: &str) -> f64 {
    let t = text.trim();
    if t.rsplit(' ').next() == Some("0") {
        return 0.0; // a term that is exactly zero prints as 0
    }
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let v: f64 = num.trim().parse().unwrap_or_else(|_| panic!("{text:?}"));
    v * match unit.trim() {
        "J" => 1.0,
        "kJ" => 1e3,
        "MJ" => 1e6,
        "mJ" => 1e-3,
        u => panic!("unit {u:?} in {text:?}"),
    }
}

/// The total and the parts of `predict`'s text energy line.
fn energy_line(out: &str) -> (f64, Vec<f64>) {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("energy"))
        .unwrap_or_else(|| panic!("{out}"));
    let (total, parts) = line.trim_start()["energy".len()..].split_once('=').unwrap();
    let parts = parts
        .split(" + ")
        .map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            joules(&words[words.len() - 2..].join(" "))
        })
        .collect();
    (joules(total), parts)
}

#[test]
fn every_text_energy_breakdown_sums_to_its_total() {
    let heat = fixture("cpu-16core/heat_8192.json");
    let sync = fixture("gpu-h100/sync.json");
    let cases = [
        (heat.clone(), "1,16,2.1,0"),
        (heat, "1,8,2.1,0"),
        (sync, "1,2,2.1,1"),
    ];
    for (profile, config) in cases {
        let (code, out, err) = jouleplan(&[
            "predict",
            "--profile",
            profile.to_str().unwrap(),
            "--machine",
            &repo("models/h100-node.toml"),
            "--config",
            config,
        ]);
        assert_eq!(code, 0, "{err}");
        let (total, parts) = energy_line(&out);
        let sum: f64 = parts.iter().sum();
        // Each part is rounded to 4 significant digits.
        assert!(
            (sum - total).abs() <= 0.002 * total,
            "{config}: parts sum to {sum} J, total {total} J:\n{out}"
        );
    }
}

#[test]
fn notes_go_to_stderr_and_quiet_leaves_the_result_alone() {
    let (code, out, err) = jouleplan(&["plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("note: "), "{err}");
    assert!(
        !out.contains("note:") && out.contains("Recommendation"),
        "{out}"
    );
    let heat = fixture("cpu-16core/heat_8192.json");
    let (h, m) = (heat.to_str().unwrap(), repo("models/h100-node.toml"));
    let runs: [Vec<&str>; 4] = [
        vec!["plan", "-q"],
        vec![
            "predict",
            "--quiet",
            "--config",
            "1,16,2.1",
            "--profile",
            h,
            "--machine",
            &m,
        ],
        vec![
            "validate",
            "-q",
            "--profile",
            h,
            "--machine",
            &m,
            "--use-cores",
            "1,4,16",
        ],
        vec!["plan", "--deadline", "1ms", "-q"],
    ];
    for args in runs {
        let (code, out, err) = jouleplan(&args);
        assert!(code == 0 || code == 3, "{args:?}: {err}");
        assert_eq!(err, "", "{args:?} printed on stderr under --quiet");
        assert!(!out.is_empty(), "{args:?}: the result is still printed");
    }
}

#[test]
fn frequencies_take_their_units_and_ranges_name_what_was_typed() {
    let heat = fixture("cpu-16core/heat_8192.json");
    let (h, m) = (heat.to_str().unwrap(), repo("models/h100-node.toml"));
    let mut times = Vec::new();
    for f in ["2.1", "2.1GHz", "2100MHz", "2100 mhz"] {
        let config = format!("1,16,{f}");
        let (code, out, err) = jouleplan(&[
            "predict",
            "--json",
            "--config",
            &config,
            "--profile",
            h,
            "--machine",
            &m,
        ]);
        assert_eq!(code, 0, "{config}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        times.push(v["time_s"].as_f64().unwrap());
    }
    assert!(times.windows(2).all(|w| w[0] == w[1]), "{times:?}");
    // The worked example's machine: 16 nodes, 1 and 2 GHz.
    let i = common::inputs();
    let (code, _, err) = i.run("plan", &["--freqs", "2000MHz,2GHz", "-q"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = i.run("plan", &["--freqs", "2000"]);
    assert_eq!(code, 2);
    assert!(err.contains("2000MHz"), "{err}");
    let (code, _, err) = i.run("plan", &["--nodes", "1-1000"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("1-1000") && err.contains("17-1000") && err.contains("from 1 to 16"),
        "{err}"
    );
}

#[test]
fn machine_check_refuses_implausible_numbers_and_points_to_calibrate() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("models/h100-node.toml")).unwrap();
    let odd = dir.path().join("odd.toml");
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for l in lines.iter_mut() {
        if l.trim_start().starts_with("idle_w") {
            *l = "idle_w = 90000".into();
        }
    }
    std::fs::write(&odd, lines.join("\n")).unwrap();
    let (code, out, err) = jouleplan(&["machine", "check", odd.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("idle_w = 90000 is implausible"), "{err}");
    assert!(!out.contains("complete"), "{out}");
    let bare = dir.path().join("bare.toml");
    std::fs::write(
        &bare,
        "[machine]\nname = \"n\"\nnodes = 1\ncores_per_node = 4\nfrequencies_ghz = [2.0]\n",
    )
    .unwrap();
    let (code, _, err) = jouleplan(&["machine", "check", bare.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("jouleplan calibrate power") && err.contains("jouleplan calibrate network"),
        "{err}"
    );
}

/// `profile --freqs` where no frequency can be set (a cpufreq tree with nothing in it).
#[test]
fn frequencies_that_cannot_be_set_stop_the_sweep_unless_asked_to_run_at_the_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    std::fs::create_dir_all(&root).unwrap();
    let out = dir.path().join("p.json");
    let base = [
        "profile",
        "--cores",
        "1",
        "--freqs",
        "2.0",
        "--cpu-root",
        root.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ];
    let mut args = base.to_vec();
    args.extend(["--", "true"]);
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--at-node-frequency"), "{err}");
    assert!(!out.exists());
    let mut args = base.to_vec();
    args.extend(["--at-node-frequency", "--", "true"]);
    let (code, stdout, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("last run") && !err.contains("eta 0.0"),
        "{err}"
    );
    assert!(stdout.contains("sweep complete"), "{stdout}");
    // --quiet: errors only.
    let mut args = base.to_vec();
    args[8] = "q.json";
    args.extend(["--at-node-frequency", "-q", "--", "true"]);
    let q = assert_cmd::Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(dir.path())
        .args(&args)
        .output()
        .unwrap();
    assert!(q.status.success());
    assert!(q.stdout.is_empty() && q.stderr.is_empty(), "{q:?}");
}

#[test]
fn no_command_runs_the_demo_and_says_so_first() {
    let (code, out, _) = jouleplan(&[]);
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("demo") && first.contains("jouleplan --help"),
        "{first}"
    );
}

#[test]
fn an_infeasible_query_exits_3_with_sbatch_too_and_writes_no_script() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("x.sh");
    let (code, _, err) = jouleplan(&[
        "plan",
        "--deadline",
        "1ms",
        "--sbatch",
        job.to_str().unwrap(),
        "--app",
        "./app",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no job script written"), "{err}");
    assert!(!job.exists());
}

#[test]
fn the_job_script_says_what_is_unmeasured_and_takes_a_task_split() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.sh");
    let j = job.to_str().unwrap();
    // A machine whose network is illustrative, and a profile with no measured messages: a
    // warning with an apostrophe.
    let m = common::write(
        dir.path(),
        "m.toml",
        &format!(
            "{}\n[sources]\n\"network\" = \"illustrative: not measured\"\n",
            common::MACHINE
        ),
    );
    let p = common::write(dir.path(), "p.json", &common::profile_json());
    let (m, p) = (m.to_str().unwrap(), p.to_str().unwrap());
    let (code, _, err) = jouleplan(&[
        "plan",
        "--machine",
        m,
        "--profile",
        p,
        "--sbatch",
        j,
        "--app",
        "./app",
        "--ntasks-per-node",
        "2",
        "--cpus-per-task",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(!script.contains("\\'"), "{script}");
    assert!(
        script.contains("# Rests on numbers that were not measured:")
            && script.contains("#   - machine network: illustrative"),
        "{script}"
    );
    for line in [
        "#SBATCH --ntasks-per-node=2",
        "#SBATCH --cpus-per-task=4",
        "export OMP_NUM_THREADS=4",
    ] {
        assert!(script.contains(line), "{line}:\n{script}");
    }
    // A split that does not fill the node's cores is refused, naming the flag.
    let other = dir.path().join("k.sh");
    let (code, _, err) = jouleplan(&[
        "plan",
        "-q",
        "--machine",
        m,
        "--profile",
        p,
        "--sbatch",
        other.to_str().unwrap(),
        "--app",
        "./app",
        "--ntasks-per-node",
        "3",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--ntasks-per-node") && err.contains('8'),
        "{err}"
    );
    assert!(!other.exists());
}

#[test]
fn gpus_per_task_replace_gpus_per_node() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("g.sh");
    let sync = fixture("gpu-h100/sync.json");
    let (code, _, err) = jouleplan(&[
        "slurm",
        "--config",
        "1,2,2.1,1",
        "--profile",
        sync.to_str().unwrap(),
        "--machine",
        &repo("models/h100-node.toml"),
        "--sbatch",
        job.to_str().unwrap(),
        "--ntasks-per-node",
        "1",
        "--gpus-per-task",
        "1",
        "--",
        "./app",
    ]);
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(script.contains("#SBATCH --gpus-per-task=1"), "{script}");
    assert!(!script.contains("--gpus-per-node"), "{script}");
}

#[test]
fn exit_codes_are_in_every_help_and_the_man_page() {
    for args in [
        vec!["--help"],
        vec!["plan", "--help"],
        vec!["profile", "--help"],
        vec!["man"],
    ] {
        let (code, out, _) = jouleplan(&args);
        assert_eq!(code, 0, "{args:?}");
        assert!(out.contains("Exit codes"), "{args:?}: {out}");
        assert!(out.contains("130"), "{args:?}");
    }
}

#[test]
fn the_report_page_links_the_big_chart_instead_of_inlining_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let i = common::inputs();
    let (code, _, err) = i.run("report", &["-q", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::metadata(out.join("index.html")).unwrap().len();
    assert!(html < 300_000, "index.html is {html} bytes");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("<img src=\"pareto.png\""), "{page}");
    // The big chart is a file of its own: none of its drawing is in the page (the small
    // charts, the bars and the node law, are inline).
    let svg = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    let body = &svg[svg.find("<svg").unwrap()..];
    let head: Vec<&str> = body.lines().take(40).collect();
    assert_eq!(head.len(), 40, "{svg}");
    assert!(!page.contains(&head.join("\n")), "the chart is inlined");
    assert!(page.contains("<div id=\"node-law-plot\"><svg"));
    assert!(out.join("pareto.png").exists());
}

#[test]
fn the_pareto_chart_explains_its_labels_colours_and_zoom() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("n.svg");
    let i = common::inputs();
    let (code, _, err) = i.run(
        "plan",
        &["-q", "--nodes", "1-4", "--plot", svg.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let has = |t: &str| text.contains(t);
    assert!(has("UCR 0"), "a colour bar");
    assert!(has("labels: nodes x cores @ GHz"), "the tuple is explained");
    assert!(has("recommended: 4 nodes x 8 cores @ 2 GHz"), "{text}");
    assert!(has("x 8 @ 2 GHz"), "points labelled nodes x cores @ GHz");
    assert!(
        has("energy spans only"),
        "a zoomed axis over a sliver says so"
    );
}

/// The first run's notes say that the profile's assumptions were recorded where it was
/// measured (the demo's H100 node), not on this machine, and count one GPU in the singular.
#[test]
fn the_first_runs_notes_say_where_the_profiles_assumptions_come_from() {
    let (code, _, err) = jouleplan(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "note: profile assumption (recorded where it was measured): cycles were not counted"
        ),
        "{err}"
    );
    assert!(!err.contains("1 GPUs"), "{err}");
}
