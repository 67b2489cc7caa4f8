//! Hand-over outputs: the report folder, PNG charts decoded and checked, CSV and JSON with the
//! same keys, and snapshots of the text outputs (insta); `chromium_render.rs` renders the page.

mod common;

use common::jouleplan;
use common::{fit_on_1_2_4_8, inputs, png_stats, write};
use std::path::PathBuf;

#[test]
fn report_writes_every_file_and_the_png_has_content() {
    let i = inputs();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("rep");
    let (code, stdout, err) = i.run(
        "report",
        &["--deadline", "5m", "--out", dir.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    for f in [
        "index.html",
        "pareto.svg",
        "pareto.png",
        "breakdown.svg",
        "front.json",
        "front.csv",
    ] {
        let p = dir.join(f);
        assert!(
            p.is_file() && std::fs::metadata(&p).unwrap().len() > 100,
            "{f}"
        );
        assert!(err.contains(&format!("wrote {}", p.display())), "{err}");
    }
    assert_eq!(stdout, "", "notes on stderr; the folder is the result");
    let (w, h, colours, ink) = png_stats(&dir.join("pareto.png"));
    assert_eq!((w, h), (1000, 700));
    assert!(colours > 20, "only {colours} colours");
    assert!(ink > 0.02 && ink < 0.9, "non-white share {ink}");
    let svg = std::fs::read_to_string(dir.join("pareto.svg")).unwrap();
    assert!(
        svg.contains("Pareto front") && svg.contains("time limit 5m00.0s"),
        "legend missing"
    );
    assert!(
        svg.contains("recommended: "),
        "recommended point not labelled"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for fetch in ["src=\"http", "href=\"http", "<script", "<link", "url(http"] {
        assert!(
            !html.contains(fetch),
            "the page must need no network: {fetch}"
        );
    }
    assert!(html.contains("<svg") && html.contains("<table id=\"front\">"));
    assert!(html.contains("<img src=\"pareto.png\""));
}

#[test]
fn plot_flag_writes_svg_or_png_and_rejects_other_extensions() {
    let i = inputs();
    let out = tempfile::tempdir().unwrap();
    for name in ["a.svg", "a.png"] {
        let p = out.path().join(name);
        let (code, _, err) = i.run("plan", &["--plot", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(p.is_file());
    }
    let (code, stdout, err) = i.run("plan", &["--plot", "a.pdf"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty() && err.contains(".svg or .png"), "{err}");
}

#[test]
fn large_spaces_are_sampled_and_say_so() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("big");
    // The worked example on 10,000 nodes makes 160,000 configurations (10,000 nodes x 8 cores
    // x 2 frequencies), above the 100,000 cap: a stratified sample.
    let big = tempfile::tempdir().unwrap();
    let text = common::MACHINE.replace("nodes = 16", "nodes = 10000");
    let m = write(big.path(), "big.toml", &text);
    let p = write(big.path(), "p.json", &common::profile_json());
    let (code, _, err) = jouleplan(&[
        "report",
        "--machine",
        m.to_str().unwrap(),
        "--profile",
        p.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(dir.join("pareto.svg")).unwrap();
    assert!(svg.contains("a stratified sample of"), "no sampling note");
    let circles = svg.matches("<circle").count();
    assert!(circles <= 100_000 + 200, "{circles} points drawn");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("stratified sample"));
}

#[test]
fn csv_and_json_share_keys_and_order() {
    let i = inputs();
    let (_, csv, _) = i.run("plan", &["--csv", "--nodes", "1-4"]);
    let (_, json, _) = i.run("plan", &["--json", "--nodes", "1-4"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "nodes",
            "cores",
            "freq_hz",
            "gpus",
            "time_s",
            "energy_j",
            "ucr",
            "rho",
            "headroom",
            "node_hours",
            "energy_delay_js",
            "t_cpu_s",
            "t_mem_s",
            "t_wait_net_s",
            "t_serv_net_s",
            "t_gpu_s",
            "t_serial_s",
            "t_idle_wait_s",
            "e_cpu_j",
            "e_mem_j",
            "e_net_j",
            "e_idle_j",
            "e_gpu_j",
            "parallel_efficiency",
            "mpi_parallel_efficiency",
            "mpi_communication_efficiency",
            "mpi_load_balance",
            "openmp_parallel_efficiency",
            "device_offload_efficiency",
            "t_nodes_s",
            "time_low_s",
            "time_high_s",
            "energy_low_j",
            "energy_high_j",
            "interval_kind",
            "interval_coverage",
            "front_index",
            "ties",
            "recommended"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let front = v["front"].as_array().unwrap();
    assert_eq!(rows.len(), front.len());
    for (row, obj) in rows.iter().zip(front) {
        // The interval's ends are the JSON arrays'.
        for (k, key, i) in [
            ("time_low_s", "time_interval_s", 0),
            ("time_high_s", "time_interval_s", 1),
            ("energy_low_j", "energy_interval_j", 0),
            ("energy_high_j", "energy_interval_j", 1),
        ] {
            let at = header.iter().position(|h| *h == k).unwrap();
            match obj[key].as_array() {
                Some(a) => assert_eq!(row[at].parse::<f64>().unwrap(), a[i].as_f64().unwrap()),
                None => assert_eq!(row[at], ""),
            }
        }
        for (k, cell) in header.iter().zip(row) {
            let want = obj
                .get(*k)
                .or_else(|| obj["breakdown"].get(*k))
                .or_else(|| obj["host_tree"].get(*k))
                .filter(|v| !v.is_null());
            match want {
                Some(serde_json::Value::String(w)) => assert_eq!(cell, w, "{k}"),
                Some(want) => {
                    assert_eq!(cell.parse::<f64>().unwrap(), want.as_f64().unwrap(), "{k}")
                }
                None => {}
            }
        }
    }
    let picked: Vec<&Vec<&str>> = rows.iter().filter(|r| r[38] == "true").collect();
    assert_eq!(picked.len(), 1);
    assert_eq!(
        picked[0][4].parse::<f64>().unwrap(),
        v["recommendation"]["time_s"].as_f64().unwrap()
    );
}

#[test]
fn text_outputs_match_their_snapshots() {
    let i = inputs();
    let redact = |s: &str| {
        s.replace(&i.machine, "[machine.toml]")
            .replace(&i.profile, "[profile.json]")
    };
    let (_, plan, _) = i.run("plan", &["--nodes", "1-4", "--cores", "1,2"]);
    insta::assert_snapshot!("plan_text", redact(&plan));
    let (_, script, err) = jouleplan(&[
        "slurm",
        "--config",
        "4,4,2.0,1",
        "--machine",
        &i.machine,
        "--profile",
        &i.profile,
        "--account",
        "p1",
        "--partition",
        "gpu",
        "--app",
        "./app --in 'a b' $X",
    ]);
    // Only notes (here: the 1 GHz GPU point derived from the 2 GHz one) and the warning that
    // the layout is assumed (the profile records none) go to stderr.
    assert!(
        err.lines().all(|l| l.starts_with("note: ")
            || l.starts_with("warning: the job script's layout is assumed")),
        "{err}"
    );
    assert!(err.contains("layout is assumed"), "{err}");
    insta::assert_snapshot!("slurm_script", redact(&script));
    let (_, predict, _) = jouleplan(&[
        "predict",
        "--config",
        "4,4,2.0,2",
        "--machine",
        &i.machine,
        "--profile",
        &i.profile,
    ]);
    insta::assert_snapshot!("predict_gpu_text", predict);
}

#[test]
fn svg_chart_matches_its_snapshot() {
    let i = inputs();
    let out = tempfile::tempdir().unwrap();
    let p = out.path().join("small.svg");
    let (code, _, err) = i.run(
        "plan",
        &[
            "--nodes",
            "1-3",
            "--cores",
            "1,2",
            "--freqs",
            "2.0",
            "--budget",
            "2MJ",
            "--plot",
            p.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("pareto_small_svg", std::fs::read_to_string(&p).unwrap());
}

#[test]
fn charts_have_round_ticks_a_zoom_on_a_thin_front_and_bars_named_by_configuration() {
    // The worked example on 16 nodes: a front within 8.64-8.65 kJ inside a cloud up to 60 kJ.
    let i = inputs();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    let (code, _, err) = i.run("report", &["--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    // SVG text content stands alone on its line, between the tags.
    let text = |doc: &str, t: &str| doc.lines().any(|l| l.trim() == t);
    assert!(
        svg.contains("the front, zoomed"),
        "no zoom panel on a sliver front"
    );
    for tick in ["10 kJ", "20 kJ", "10 s", "100 s", "8.645 kJ"] {
        assert!(text(&svg, tick), "tick {tick} missing");
    }
    for odd in ["31.62 s", "316.2 s", "1m40.0s", "31.62 kJ"] {
        assert!(!svg.contains(odd), "unround tick {odd}");
    }
    assert!(svg.contains("recommended: 16 nodes x 8 cores @ 2 GHz"));
    let bars = std::fs::read_to_string(out.join("breakdown.svg")).unwrap();
    // Every bar is 8 cores at 2 GHz: the caption says so, a bar is named by its node count
    // (horizontal, so two-digit counts never run together), the recommended one in red.
    assert!(
        bars.contains("bars: nodes, each x 8 cores @ 2 GHz"),
        "bars not named"
    );
    assert!(text(&bars, "16") && text(&bars, "1") && !bars.contains("x8@"));
    assert!(
        bars.contains("fill=\"#FF0000\">\n16\n</text>"),
        "the recommended bar's label is not marked"
    );
    assert!(text(&bars, "recommended"));
    // The legend names the terms that add to the bars; those 0 along the whole front (here
    // the serial and idle time, the node law's) are left out, as in the page's tables.
    assert!(text(&bars, "T_CPU") && text(&bars, "T_w,net"));
    assert!(!text(&bars, "T_ser") && !text(&bars, "X(n) node law"));
}

#[test]
fn every_front_point_of_the_bundled_default_carries_the_predicted_host_tree() {
    let (code, out, err) = jouleplan(&["plan", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for p in v["front"].as_array().unwrap() {
        let h = &p["host_tree"];
        for k in [
            "parallel_efficiency",
            "mpi_parallel_efficiency",
            "mpi_communication_efficiency",
            "openmp_parallel_efficiency",
            "device_offload_efficiency",
        ] {
            let x = h[k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k} missing in {p}"));
            assert!((0.0..=1.0).contains(&x), "{k} = {x}");
        }
        let pe = h["parallel_efficiency"].as_f64().unwrap();
        let product = h["mpi_parallel_efficiency"].as_f64().unwrap()
            * h["openmp_parallel_efficiency"].as_f64().unwrap()
            * h["device_offload_efficiency"].as_f64().unwrap();
        assert!((pe - product).abs() < 1e-12);
        assert!(h["mpi_load_balance"].is_null());
        assert!(
            h["sources"]["mpi_load_balance"]
                .as_str()
                .unwrap()
                .starts_with("absent")
        );
    }
    let (_, text, _) = jouleplan(&["plan"]);
    assert!(text.contains("host tree (predicted):") && text.contains("- Communication efficiency"));
    let (_, csv, _) = jouleplan(&["plan", "--csv"]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("openmp_parallel_efficiency")
    );
}

/// The `data-v` values (s or J) of a terms table on the page: the total, then each term.
fn terms_of(html: &str, id: &str) -> (f64, Vec<(String, f64)>) {
    let start = html
        .find(&format!("<table id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let mut total = None;
    let mut terms = Vec::new();
    for row in table.split("<tr").skip(2) {
        let name = row
            .split("<td class=\"l\">")
            .nth(1)
            .unwrap()
            .split("</td>")
            .next();
        let v = row
            .split("data-v=\"")
            .nth(1)
            .map(|r| r.split('"').next().unwrap().parse::<f64>().unwrap());
        match (row.starts_with(" class=\"total\""), v) {
            (true, v) => total = v,
            (false, Some(v)) => terms.push((name.unwrap().to_string(), v)),
            (false, None) => {}
        }
    }
    (total.expect("a total row"), terms)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn one_node_count_planned_keeps_the_node_law_chart_where_there_is_a_law() {
    let dir = tempfile::tempdir().unwrap();
    let out = hpgmgfv_report(dir.path(), &["--nodes", "12", "--cores", "72"]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<div id=\"node-law-plot\"><svg"), "{html}");
    assert!(!html.contains("One node count planned"), "{html}");
}

/// A report of the Ice Lake fixture's hpgmgfv, fitted on 1, 2, 4 and 8 nodes (CPU energy).
fn hpgmgfv_report(dir: &std::path::Path, extra: &[&str]) -> std::path::PathBuf {
    let (prof, mach) = fit_on_1_2_4_8(dir, "hpgmgfv");
    let out = dir.join("rep");
    let mut args = vec![
        "report",
        "--machine",
        mach.to_str().unwrap(),
        "--profile",
        prof.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_report_shows_every_term_the_node_law_included_adding_up_to_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let out = hpgmgfv_report(dir.path(), &[]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let (t, terms) = terms_of(&html, "time-terms");
    let x = terms
        .iter()
        .find(|(n, _)| n.starts_with("X(n)"))
        .unwrap_or_else(|| panic!("no node-law term in {terms:?}"));
    assert!(x.1 > 0.1 * t, "X(n) = {} of T = {t}", x.1);
    let sum: f64 = terms.iter().map(|t| t.1).sum();
    assert!(common::close(sum, t, 1e-9), "time terms {sum} != T {t}");
    let (e, terms) = terms_of(&html, "energy-terms");
    let sum: f64 = terms.iter().map(|t| t.1).sum();
    assert!(common::close(sum, e, 1e-9), "energy terms {sum} != E {e}");
    // No "0.0 us" noise: the terms that are 0 share one row reading 0.
    assert!(!html.contains("0.0 us") && !html.contains("0.00 us") && !html.contains("0.0 J"));
    assert!(html.contains("<tr class=\"zero\"><td class=\"l\">T_mem"));
    // The time-terms chart has the node law's bar.
    let bars = std::fs::read_to_string(out.join("breakdown.svg")).unwrap();
    assert!(bars.lines().any(|l| l.trim() == "X(n) node law"));
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_report_shows_intervals_measure_next_and_the_energy_scope() {
    let dir = tempfile::tempdir().unwrap();
    // A deadline only 19 nodes or more meet: beyond twice the 8 measured, so measure next.
    let out = hpgmgfv_report(dir.path(), &["--deadline", "6m"]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<th>time interval (80%)</th><th>CPU energy interval (80%)</th>"));
    let front = &html[html.find("<table id=\"front\">").unwrap()..];
    let rows = front[..front.find("</table>").unwrap()]
        .matches("<tr")
        .count()
        - 1;
    let with_interval = front.matches("<td class=\"interval\">").count() / 2;
    assert!(
        with_interval > 0 && with_interval < rows,
        "{with_interval} of {rows}"
    );
    assert!(html.contains("<h2 id=\"measure-next\">Measure next</h2>"));
    let next = &html[html.find("<table id=\"measure-next-table\">").unwrap()..];
    assert!(next.contains("<td>72</td><td>2.4</td><td>0</td>"), "{next}");
    // One scope, named everywhere: the page, its tables, both charts.
    assert!(html.contains("Every energy on this page is CPU energy (RAPL packages and DRAM)"));
    assert!(html.contains("<td class=\"l\">CPU energy E</td>"));
    assert!(
        !html.contains("node energy"),
        "a CPU-scope profile called node energy"
    );
    let pareto = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    assert!(pareto.lines().any(|l| l.trim().starts_with("CPU energy")));
    assert!(pareto.contains("80% interval at node counts not measured"));
    let bars = std::fs::read_to_string(out.join("breakdown.svg")).unwrap();
    assert!(bars.contains("CPU energy terms along the front"));
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn measured_runs_are_drawn_beside_the_predictions() {
    let dir = tempfile::tempdir().unwrap();
    let runs = common::multinode("hpgmgfv.csv");
    let out = hpgmgfv_report(dir.path(), &["--measured", runs.to_str().unwrap()]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let table = &html[html.find("<table id=\"measured\">").unwrap()..];
    let rows = table[..table.find("</table>").unwrap()]
        .matches("<tr>")
        .count()
        - 1;
    assert!(rows >= 30, "{rows} measured rows");
    assert!(html.contains(&format!(
        "the time-energy chart marks the {rows} with CPU energy"
    )));
    // Orange triangles, one a run (a few may fall outside the chart), and a legend entry.
    let pareto = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    let marks = pareto.matches("fill=\"#E6550D\"").count();
    assert!(
        marks > rows / 2 && marks <= rows + 1,
        "{marks} marks for {rows} runs"
    );
    assert!(pareto.contains("measured run (--measured)"));
    // The node-law chart draws each run at the cores measured at the most node counts (72):
    // one on each of 1 to 21 nodes, each a dot under its count's mean.
    let law = std::fs::read_to_string(out.join("node-law.svg")).unwrap();
    let dots = law.matches("fill=\"#E6550D\"").count();
    assert!(dots >= 2 * 21, "{dots} run dots (time and energy)");
    assert!(law.contains("80% interval") && law.contains("72 cores @ 2.4 GHz a node"));
    assert!(html.contains("<div id=\"node-law-plot\"><svg"));
    // Without runs, none.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let out = hpgmgfv_report(&plain, &[]);
    let pareto = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    assert!(!pareto.contains("#E6550D") && !pareto.contains("measured run"));
    let law = std::fs::read_to_string(out.join("node-law.svg")).unwrap();
    assert!(law.contains("no runs given (report --measured RUNS.csv draws them)"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("<table id=\"measured\">"));
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_campaigns_profile_numbers_its_steps_on_the_node_law_chart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let machine = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let (runs, prof) = (d.join("runs.csv"), d.join("weather.json"));
    let replay = common::multinode("weather.csv");
    let campaign = [
        "profile",
        "--nodes",
        "auto",
        "--replay",
        replay.to_str().unwrap(),
        "--machine",
        machine.to_str().unwrap(),
        "--cores",
        "72",
        "--max-nodes",
        "16",
        "--measured-out",
        runs.to_str().unwrap(),
        "-o",
        prof.to_str().unwrap(),
    ];
    let (rc, _, err) = jouleplan(&campaign);
    assert_eq!(rc, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let order = doc["provenance"]["campaign"].as_str().unwrap();
    assert!(
        order.ends_with("in this order: 1, 2, 4, 8, 10, 16"),
        "{order}"
    );
    // Resumed once it ended, it says so instead of "0 steps".
    let (rc, out, err) = jouleplan(&[&campaign[..], &["--resume"]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains(
            "campaign: no new step after 6 resumed steps; measured node counts 1, 2, 4, 8, 10, 16"
        ),
        "{out}"
    );
    // The machine file with the power the campaign's last fit gave, beside its profile.
    let fitted = d.join("weather.machine.toml");
    let rep = d.join("rep");
    let (rc, _, err) = jouleplan(&[
        "report",
        "--machine",
        fitted.to_str().unwrap(),
        "--profile",
        prof.to_str().unwrap(),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--measured",
        runs.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    let law = std::fs::read_to_string(rep.join("node-law.svg")).unwrap();
    assert!(law.contains("campaign step, in the order measured"));
    // Steps 1-5 numbered in dark red, in each panel (time and energy).
    for step in 1..=5 {
        let mark = format!("fill=\"#A00000\">\n{step}\n</text>");
        assert!(law.matches(&mark).count() >= 2, "step {step} not numbered");
    }
}
