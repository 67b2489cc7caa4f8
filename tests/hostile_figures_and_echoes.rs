//! What a user reads back: figures of a GPU kernel's clock front printed with digits enough to
//! tell its points apart in every output, the report naming the space it searched, a run with
//! two energies refused instead of one dropped, and an error that quotes a huge cell in a line.

mod common;
use common::{jouleplan, write};
use std::path::{Path, PathBuf};

/// The public Titan X sweep of `gemm` at 3505 MHz memory (gpuPTXModel): `(core MHz, time s,
/// GPU energy J)` for each clock, ascending (times in ms and energy in mJ there).
fn titan_x_gemm() -> Vec<(u32, f64, f64)> {
    let runs = common::titan_x_real_runs();
    let out: Vec<(u32, f64, f64)> = runs[&("gemm".to_string(), 3505)]
        .iter()
        .flat_map(|(&c, r)| r.iter().map(move |&(t, e)| (c, t, e)))
        .collect();
    assert_eq!(out.len(), 16, "16 clocks of gemm at 3505 MHz");
    out
}

/// A one-GTX-Titan-X machine listing the sweep's clocks, host power 0 (GPU energy only), and
/// the profile `fit` makes from the runs at 595, 975 and 1164 MHz: (machine, profile).
fn titan_x_fitted(d: &Path) -> (PathBuf, PathBuf) {
    let sweep = titan_x_gemm();
    let clocks: Vec<String> = sweep.iter().map(|r| r.0.to_string()).collect();
    let m = write(
        d,
        "m.toml",
        &format!(
            "[machine]\nname = \"gtx-titan-x\"\nnodes = 1\ncores_per_node = 1\n\
             frequencies_ghz = [2.0]\ngpus_per_node = 1\ngpu_clocks_mhz = [{}]\n\
             gpu_memory_clock_mhz = 3505\n\n[network]\nlatency_s = 1e-6\n\
             bandwidth_bytes_per_s = 1e10\n\n[power]\nidle_w = 0.0\ncore_active_w = 0.0\n\
             core_stall_w = 0.0\nmemory_w = 0.0\nnetwork_w = 0.0\ngpu_active_w = 0.0\n\
             gpu_idle_w = 0.0\n",
            clocks.join(", ")
        ),
    );
    let mut csv =
        String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope,gpu_clock_mhz\n");
    for (c, t, e) in sweep.iter().filter(|r| [595, 975, 1164].contains(&r.0)) {
        csv += &format!("1,1,2e9,1,{t},{e},gpu,{c}\n");
    }
    let runs = write(d, "runs.csv", &csv);
    let (p, m2) = (d.join("p.json"), d.join("m2.toml"));
    fitted(&runs, &m, (&p, &["--machine-out", m2.to_str().unwrap()]));
    (m2, p)
}

/// `jouleplan fit --measured runs --machine m --profile-out p -q` with `extra`, which must
/// succeed.
fn fitted(runs: &Path, m: &Path, (p, extra): (&Path, &[&str])) {
    let mut args = vec![
        "fit",
        "--measured",
        runs.to_str().unwrap(),
        "--machine",
        m.to_str().unwrap(),
        "--profile-out",
        p.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
}

/// `jouleplan cmd --machine m --profile p` with `extra`: (code, stdout, stderr).
fn on_inputs(cmd: &str, (m, p): (&Path, &Path), extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        cmd,
        "--machine",
        m.to_str().unwrap(),
        "--profile",
        p.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    jouleplan(&args)
}

/// The whole public sweep of `gemm` at 3505 MHz memory as a measured CSV in `d`.
fn titan_x_all_runs(d: &Path) -> PathBuf {
    let mut csv =
        String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope,gpu_clock_mhz\n");
    for (c, t, e) in titan_x_gemm() {
        csv += &format!("1,1,2e9,1,{t},{e},gpu,{c}\n");
    }
    write(d, "all.csv", &csv)
}

/// The project's time-only runs on an H200 node (tests/data/h200-time-only: no [power])
/// fitted into `d`: (its machine file, the profile).
fn time_only_fitted(d: &Path) -> (PathBuf, PathBuf) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only");
    let machine = data.join("node.toml");
    let p = d.join("p.json");
    fitted(&data.join("runs.csv"), &machine, (&p, &[]));
    (machine, p)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_kernels_clock_front_prints_a_distinct_time_and_energy_for_each_point() {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let mp = (m.as_path(), p.as_path());
    let (code, out, err) = on_inputs("plan", mp, &["--gpu-clocks", "all", "-q"]);
    assert_eq!(code, 0, "{err}");
    // Front rows: `   1      1   2.00     1    1126     5.83 ms      1.23 J  0.978`.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.ends_with("  ") || l.contains(" ms "))
        .map(|l| l.trim_start_matches('*').split_whitespace().collect())
        .filter(|v: &Vec<&str>| v.len() >= 10 && v[6] == "ms" && v[8] == "J")
        .collect();
    assert!(rows.len() >= 5, "a front of several clocks:\n{out}");
    // The CSV of the same plan agrees with the text to the digits printed.
    let (code, csv, err) = on_inputs("plan", mp, &["--gpu-clocks", "all", "-q", "--csv"]);
    assert_eq!(code, 0, "{err}");
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let mut exact = Vec::new();
    for (line, row) in csv.lines().skip(1).zip(&rows) {
        let v: Vec<&str> = line.split(',').collect();
        let e: f64 = v[col("energy_j")].parse().unwrap();
        let t: f64 = v[col("time_s")].parse().unwrap();
        assert_eq!(format!("{e:.2}"), row[7], "{line}\n{out}");
        assert_eq!(format!("{:.2}", t * 1e3), row[5], "{line}\n{out}");
        exact.push((t, e));
    }
    assert_eq!(exact.len(), rows.len(), "{csv}");
    // The front's energies of this kernel lie within 1.12-1.28 J: one decimal printed three
    // points as `1.2 J` and three as `1.1 J`. Neighbours more than 1% apart must read apart.
    for (i, w) in exact.windows(2).enumerate() {
        for (k, col) in [(0, 5), (1, 7)] {
            let (a, b) = if k == 0 {
                (w[0].0, w[1].0)
            } else {
                (w[0].1, w[1].1)
            };
            if (a - b).abs() > 0.01 * a.max(b) {
                assert_ne!(rows[i][col], rows[i + 1][col], "row {i}:\n{out}");
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_report_counts_the_gpu_clocks_it_searched_and_states_the_deadline_in_the_tables_unit() {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let out = d.path().join("rep");
    let (code, _, err) = on_inputs(
        "report",
        (&m, &p),
        &[
            "--gpu-clocks",
            "all",
            "--deadline",
            "6ms",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    // It read `16 configurations (1 node counts x ... x 1 GPU counts)`: a product of 1.
    assert!(
        html.contains(
            "16 configurations (1 node count x 1 core count x 1 frequency x 1 GPU count x 16 GPU clocks)"
        ),
        "{}",
        &html[..html.len().min(3000)]
    );
    // It read `0.006000 s` beside a table in ms.
    assert!(html.contains("time limit is 6.00 ms"), "the deadline in ms");
    assert!(!html.contains("0.006000 s"));
}

/// A GPU run as the project recorded it on an H200 (`tests/data/h200-gpu-smoke/runs.csv`, its
/// first row), its GPU energy in both energy columns: `energy_j` in `scope`, and `gpu_energy_j`.
fn both_energies(d: &Path, scope: &str) -> PathBuf {
    write(
        d,
        "both.csv",
        &format!(
            "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope,gpu_energy_j\n\
             1,2,2100000000,1,6.826084592,1389.427,{scope},1389.427\n"
        ),
    )
}

#[test]
fn a_run_with_energy_j_and_gpu_energy_j_is_refused_naming_both_instead_of_dropping_one() {
    let d = tempfile::tempdir().unwrap();
    for scope in ["node", "gpu"] {
        let runs = both_energies(d.path(), scope);
        let p = d.path().join("p.json");
        let (code, _, err) = jouleplan(&[
            "fit",
            "--measured",
            runs.to_str().unwrap(),
            "--machine",
            "h100-gpu",
            "--profile-out",
            p.to_str().unwrap(),
        ]);
        // It took energy_j and dropped gpu_energy_j without a word; in node scope it then
        // asked for the gpu_energy_j the row has.
        assert_eq!(code, 2, "{scope}: {err}");
        assert!(
            err.contains("line 2, column gpu_energy_j")
                && err.contains("one energy a run")
                && err.contains("energy_j too"),
            "{scope}: {err}"
        );
        assert!(!p.exists(), "nothing written");
        let (code, _, err) = jouleplan(&[
            "validate",
            "--measured",
            runs.to_str().unwrap(),
            "--machine",
            "h100-gpu",
        ]);
        assert_eq!(code, 2, "{scope}: {err}");
        assert!(err.contains("column gpu_energy_j"), "{scope}: {err}");
    }
}

#[test]
fn an_error_quotes_a_ten_megabyte_cell_or_header_in_one_short_line() {
    let d = tempfile::tempdir().unwrap();
    let cell = format!("1,2,2100000000,1,{}\n", "x".repeat(10_000_000));
    let header = format!(
        "nodes,cores,freq_hz,gpus,time_s{}\n",
        ",c".repeat(5_000_000)
    );
    for (name, text) in [
        (
            "cell.csv",
            format!("nodes,cores,freq_hz,gpus,time_s\n{cell}"),
        ),
        ("header.csv", header),
    ] {
        let runs = write(d.path(), name, &text);
        let (code, _, err) = jouleplan(&[
            "fit",
            "--measured",
            runs.to_str().unwrap(),
            "--machine",
            "h100-gpu",
            "--profile-out",
            d.path().join("p.json").to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 2, "{name}");
        // The whole 10 MB came back in the message.
        assert!(err.len() < 2000, "{name}: {} bytes", err.len());
        assert!(err.contains("characters in all)"), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}: key `line ")),
            "{name}: {err}"
        );
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_clock_not_measured_on_a_node_count_not_measured_names_both_sources_of_its_bounds() {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let two = std::fs::read_to_string(&m)
        .unwrap()
        .replacen("nodes = 1\n", "nodes = 2\n", 1);
    let m = write(d.path(), "two.toml", &two);
    let predict = |config: &str| {
        let (code, out, err) = on_inputs("predict", (&m, &p), &["--config", config, "-q"]);
        assert_eq!(code, 0, "{err}");
        out
    };
    // At 2 nodes and 1088 MHz the range runs from the clock law's low end at perfect division
    // to no gain past the node measured: it read `bounds at a GPU clock not measured (...)`,
    // as if the clock law alone made bounds twice as wide as its +/- 1.4%.
    let both = predict("2,1,2,1,1088");
    assert!(
        both.contains("bounds beyond the 1 node measured (from perfect division")
            && both.contains(") and at a GPU clock not measured (+/- "),
        "{both}"
    );
    let clock = predict("1,1,2,1,1088");
    assert!(
        clock.contains("80% interval at a GPU clock not measured (+/- ")
            && !clock.contains("bounds"),
        "{clock}"
    );
    let nodes = predict("2,1,2,1,1164");
    assert!(
        nodes.contains("bounds beyond the 1 node measured") && !nodes.contains("GPU clock not"),
        "{nodes}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_time_under_a_microsecond_prints_in_ns_not_as_zero() {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let many =
        std::fs::read_to_string(&m)
            .unwrap()
            .replacen("nodes = 1\n", "nodes = 10000000\n", 1);
    let m = write(d.path(), "many.toml", &many);
    let (code, out, err) = on_inputs(
        "predict",
        (&m, &p),
        &["--config", "10000000,1,2,1,1164", "-q"],
    );
    assert_eq!(code, 0, "{err}");
    // 5.70 ms divided over 10^7 nodes is 0.57 ns: it read `time 0.0 us = T_CPU 0.0 us`.
    assert!(out.contains("time       0.57 ns = T_run 0.57 ns"), "{out}");
}

#[test]
fn a_time_only_plan_gives_its_node_seconds_to_three_digits_as_its_json_has_them() {
    let d = tempfile::tempdir().unwrap();
    let (machine, p) = time_only_fitted(d.path());
    let mp = (machine.as_path(), p.as_path());
    let (code, out, err) = on_inputs("plan", mp, &["-q"]);
    assert_eq!(code, 0, "{err}");
    let (code, json, err) = on_inputs("plan", mp, &["-q", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = v["recommendation"]["node_hours"].as_f64().unwrap() * 3600.0;
    // 0.547 node-seconds on 16 cores read `0.5 node-seconds`: one digit of the one figure a
    // time-only plan weighs besides time.
    assert!((0.1..1.0).contains(&s), "{json}");
    assert!(
        out.contains(&format!("   {s:.3} node-seconds")),
        "{s:.3}:\n{out}"
    );
}

/// The texts of an SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// The texts of the report's node chart of the Titan X profile with the whole sweep given as
/// `--measured`, and `extra`.
fn node_chart_with_all_runs(extra: &[&str]) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let all = titan_x_all_runs(d.path());
    let out = d.path().join("rep");
    let mut args = vec![
        "--measured",
        all.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = on_inputs("report", (&m, &p), &args);
    assert_eq!(code, 0, "{err}");
    svg_texts(&std::fs::read_to_string(out.join("node-law.svg")).unwrap())
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_reports_node_chart_draws_the_runs_at_its_gpu_clock_not_every_clocks_runs_as_one() {
    let texts = node_chart_with_all_runs(&["--gpu-clocks", "all"]);
    // The recommendation's clock, 1088 MHz, is named, and the time axis holds its run (5.9
    // ms) and the model there, not the 595 MHz run's 10.4 ms: the 16 clocks' runs were drawn
    // as one configuration's spread at 1 node beside the model at 1164 MHz.
    assert!(
        texts[0].contains("1 core @ 2 GHz + 1 GPU @ 1088 MHz a node"),
        "{texts:?}"
    );
    let ms: Vec<f64> = texts
        .iter()
        .filter_map(|t| t.strip_suffix(" ms")?.parse().ok())
        .collect();
    assert!(!ms.is_empty(), "{texts:?}");
    assert!(ms.iter().all(|&t| (5.0..7.0).contains(&t)), "{texts:?}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_node_charts_ticks_over_a_narrow_range_read_apart() {
    // At 1164 MHz, the clock the profile was measured at: its run's GPU energy and the
    // model's lie within 1.2745-1.2785 J.
    let texts = node_chart_with_all_runs(&[]);
    let joules: Vec<&String> = texts.iter().filter(|t| t.ends_with(" J")).collect();
    assert!(joules.len() >= 3, "{texts:?}");
    // They read `1.275 J|1.275 J|1.276 J|1.276 J`.
    let mut distinct = joules.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), joules.len(), "{joules:?}");
}

#[test]
fn plan_csv_with_a_query_nothing_meets_exits_3_saying_why() {
    let d = tempfile::tempdir().unwrap();
    let (machine, p) = time_only_fitted(d.path());
    let (code, csv, err) = on_inputs(
        "plan",
        (&machine, &p),
        &["--deadline", "1ms", "--csv", "-q"],
    );
    // It exited 3 with the front and not a word: no row recommended, no reason anywhere.
    assert_eq!(code, 3, "{err}");
    assert!(csv.starts_with("nodes,cores,"), "{csv}");
    assert!(
        err.contains("No recommendation: infeasible: no configuration finishes within 1.00 ms")
            && err.contains("nearest front point"),
        "{err}"
    );
}

#[test]
fn a_gpu_memory_clock_that_is_not_a_whole_mhz_is_refused_naming_the_key() {
    // The H200's recorded clocks (tests/data/h200-gpu-clocks/node.toml), its memory clock
    // written with half a MHz.
    let d = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-gpu-clocks");
    let text = std::fs::read_to_string(data.join("node.toml")).unwrap();
    assert!(text.contains("gpu_memory_clock_mhz = 3201.0\n"), "{text}");
    let m = write(
        d.path(),
        "m.toml",
        &text.replace(
            "gpu_memory_clock_mhz = 3201.0\n",
            "gpu_memory_clock_mhz = 3201.5\n",
        ),
    );
    let (code, _, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
    // It was accepted, and a job script then asked Slurm for `--gpu-freq=...,memory=3201.5`.
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("key `machine.gpu_memory_clock_mhz`")
            && err.contains("a whole number of MHz, got 3201.5"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_clock_law_measured_at_another_memory_clock_than_the_machine_sets_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    // The same Titan X at its other memory clock of the public sweeps, 810 MHz, where most
    // kernels stop gaining past a few hundred MHz of core clock.
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("gpu_memory_clock_mhz = 3505"), "{text}");
    let low = write(
        d.path(),
        "low.toml",
        &text.replace("gpu_memory_clock_mhz = 3505", "gpu_memory_clock_mhz = 810"),
    );
    let (code, _, err) = on_inputs("plan", (&low, &p), &["--gpu-clocks", "all", "-q"]);
    // It planned with the law of 3505 MHz and wrote `--gpu-freq=1088,memory=810` without a
    // word.
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("measured at a 3505 MHz memory clock")
            && err.contains("sets 810 MHz (gpu_memory_clock_mhz")
            && err.contains("--other-machine"),
        "{err}"
    );
    let (code, _, err) = on_inputs(
        "plan",
        (&low, &p),
        &["--gpu-clocks", "all", "--other-machine"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: planned at another GPU memory clock than the one measured"),
        "{err}"
    );
    let (code, _, err) = on_inputs("plan", (&m, &p), &["--gpu-clocks", "all", "-q"]);
    assert_eq!(code, 0, "the machine file it was fitted with: {err}");
}

#[test]
fn a_count_of_one_reads_in_the_singular_where_validate_counts_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, p) = time_only_fitted(d);
    let inputs = (m.as_path(), p.as_path());
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only/runs.csv");
    let all = std::fs::read_to_string(&data).unwrap();
    // The two real runs at one core: one configuration, the one the profile was fitted on.
    let one: String = all.lines().take(3).map(|l| format!("{l}\n")).collect();
    let one = write(d, "one.csv", &one);
    let (rc, out, err) = on_inputs("validate", inputs, &["--measured", one.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    // It read `1 of 1 configuration are at what the profile was fitted on`.
    assert!(
        out.contains("  1 of 1 configuration is at what the profile was fitted on"),
        "{out}"
    );
    let (rc, out, err) = on_inputs("validate", inputs, &["--measured", data.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("  3 of 3 configurations are at what the profile was fitted on"),
        "{out}"
    );
}

/// The text of an HTML page as a reader that pads each tag with a space sees it (text
/// extractors, screen readers), whitespace collapsed.
fn padded_text(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_cpu_only_report_says_no_gpus_and_sets_no_flag_before_a_comma() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, p) = time_only_fitted(d);
    let inputs = (m.as_path(), p.as_path());
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-time-only/runs.csv");
    let out_dir = d.join("report");
    let (rc, _, err) = on_inputs(
        "report",
        inputs,
        &[
            "--measured",
            runs.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(rc, 0, "{err}");
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    let text = padded_text(&html);
    let rec = text
        .split("Recommendation ")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    // It read `1 node x 16 cores at 2.1 GHz, 0 GPUs per node`.
    assert!(
        rec.contains("1 node x 16 cores at 2.1 GHz, no GPUs.") && !text.contains("GPUs per node"),
        "{rec}"
    );
    assert!(
        text.contains("exact Pareto front of 1 point.") && !text.contains("1 points"),
        "{text}"
    );
    // `(of <code>--measured</code>, or ...` read `(of --measured , or` wherever a tag is a space.
    // One node count planned: a note stands where the chart against node count was.
    assert!(
        text.contains(
            "One node count planned (1 node): no chart against node count here (node-law.svg \
             holds its one point)."
        ),
        "{text}"
    );
    assert!(!text.contains("--measured ,"), "{text}");
}

#[test]
fn a_pareto_chart_of_one_front_point_titles_it_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let (m, p) = time_only_fitted(dir.path());
    let svg = dir.path().join("front.svg");
    let (code, _, err) = on_inputs("plan", (&m, &p), &["-q", "--plot", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
    assert!(
        texts
            .iter()
            .any(|t| t.ends_with("the exact front (1 point)")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("1 points")), "{texts:?}");
}

#[test]
fn validate_prints_its_table_from_the_first_line_and_never_a_negative_zero_percent() {
    // The bundled profile against its own points: errors of +-2e-16, some below zero.
    let (code, json, err) = jouleplan(&["validate", "-q", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let negative = v["validations"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| [&p["time_error"], &p["energy_error"]])
        .filter_map(|e| e.as_f64())
        .any(|e| e < 0.0 && e > -5e-4);
    assert!(negative, "a tiny negative error to round: {json}");
    let (code, out, err) = jouleplan(&["validate", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("fitted on "), "{out:?}");
    assert!(out.contains("+0.0%") && !out.contains("-0.0%"), "{out}");
}

#[test]
fn a_host_named_in_words_is_not_quoted_inside_a_quote_on_another_machine() {
    // What `fit` records as the host of runs fitted to a machine file.
    let d = tempfile::tempdir().unwrap();
    let mut prof: serde_json::Value = serde_json::from_str(&common::profile_json()).unwrap();
    prof["measured_on"] =
        serde_json::json!({"machine": "the node of machine `big-node`", "physical_cores": 64});
    let p = write(d.path(), "p.json", &prof.to_string());
    let m = write(d.path(), "m.toml", common::MACHINE);
    let (code, _, err) = on_inputs("plan", (&m, &p), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("was measured on the node of machine `big-node` (CPU not recorded), not on machine `worked-example`"),
        "{err}"
    );
    assert!(!err.contains("``"), "{err}");
    // A host name is quoted.
    prof["measured_on"]["machine"] = "node17".into();
    let p = write(d.path(), "p.json", &prof.to_string());
    let (code, _, err) = on_inputs("plan", (&m, &p), &["--other-machine"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("was measured on `node17` (CPU not recorded)"),
        "{err}"
    );
}

#[test]
fn a_time_only_machine_does_not_say_its_predictions_use_a_power_it_lacks() {
    // `sleep 1`, profiled without energy, on a machine file without [power].
    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "vm.toml",
        "[machine]\nname = \"vm\"\nnodes = 1\ncores_per_node = 2\nfrequencies_ghz = [2.445]\n",
    );
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sleep/sleep_1.json");
    let job = d.path().join("job.sh");
    let (code, _, err) = on_inputs(
        "plan",
        (&m, &p),
        &[
            "--accept-model-error",
            "--sbatch",
            job.to_str().unwrap(),
            "--app",
            "./app",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    for said in [&err, &script] {
        assert!(
            said.contains(
                "no energy was measured on the baseline, and the machine file has no [power] \
                 section: predictions are of time and node-hours only"
            ),
            "{said}"
        );
        assert!(!said.contains("machine model's power only"), "{said}");
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn gpu_energy_fitted_from_a_csv_is_not_said_to_come_through_nvml() {
    // The Titan X runs' GPU energy came from a CSV, not through NVML here.
    let d = tempfile::tempdir().unwrap();
    let (m, p) = titan_x_fitted(d.path());
    let job = d.path().join("job.sh");
    let (code, out, err) = on_inputs(
        "plan",
        (&m, &p),
        &["-q", "--sbatch", job.to_str().unwrap(), "--app", "./gemm"],
    );
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(
        out.contains("energy: GPU energy (the GPUs' own counters), the scope"),
        "{out}"
    );
    assert!(
        script.contains("GPU energy (the GPUs' own counters)"),
        "{script}"
    );
    // No energy is said to come through NVML (a line may say NVML measures device times).
    for said in [&out, &script] {
        let energy = said.lines().filter(|l| l.contains("energy"));
        assert!(energy.clone().all(|l| !l.contains("NVML")), "{said}");
        assert!(energy.count() > 1, "{said}");
    }
    // The bundled profile's own sweep read its GPUs through NVML, and says so.
    let (code, out, err) = jouleplan(&["plan", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("energy: GPU energy (the GPUs' own counters, NVML), the scope"),
        "{out}"
    );
}
