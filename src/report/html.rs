//! `index.html`: the report folder's page (inline style, no network) with the charts, the front
//! table, the recommendation and the model inputs. The Pareto chart, whose scatter of up to
//! 10^5 configurations makes a 2 MB SVG, is the folder's `pareto.png` linked to `pareto.svg`,
//! so that the page loads at once; the small charts are inline SVG.

use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::search::plan::{Plan, label};
use crate::search::sample::Sample;
use crate::units::{fmt_duration, fmt_energy};
use std::fmt::Write as _;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Strips an XML declaration so an SVG document can be inlined.
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The page.
pub fn index_html(
    plan: &Plan,
    machine: &Machine,
    profile: &Profile,
    sample: &Sample,
    breakdown: &str,
) -> String {
    let mut h = String::new();
    let w = &mut h;
    let title = format!("jouleplan: {} on {}", plan.program, plan.machine);
    let _ = write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\
         body{{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0;font-size:13px}}\
         td,th{{border:1px solid #bbb;padding:3px 7px;text-align:right}}\
         th{{background:#eee}} tr.pick{{background:#fde2e2;font-weight:bold}}\
         td.l,th.l{{text-align:left}} .note{{color:#555}}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(w, "<h1>{}</h1>", esc(&title));
    let s = &plan.space;
    let _ = writeln!(
        w,
        "<p>{} configurations ({} node counts x {} core counts x {} frequencies x {} GPU counts); \
         {} network-saturated; exact Pareto front of {} points.</p>",
        plan.evaluated,
        s.nodes.len(),
        s.cores.len(),
        s.freqs.len(),
        s.gpus.len(),
        plan.saturated,
        plan.front.len()
    );
    for n in &plan.notes {
        let _ = writeln!(w, "<p class=\"note\">Note: {}</p>", esc(n));
    }

    let _ = writeln!(w, "<h2>Recommendation</h2>");
    match plan.recommendation() {
        Some(f) => {
            let p = &f.prediction;
            let _ = writeln!(
                w,
                "<p id=\"recommendation\"><b>{}</b>: {} nodes x {} cores at {} GHz, {} GPUs per node. {}</p>",
                esc(&label(&p.config)),
                p.config.nodes,
                p.config.cores,
                p.config.freq.ghz(),
                p.config.gpus,
                esc(&plan.answer.reason)
            );
            for warning in &plan.warnings {
                let _ = writeln!(
                    w,
                    "<p class=\"warning\"><b>Warning:</b> {}</p>",
                    esc(warning)
                );
            }
            let _ = writeln!(w, "<table><tr><th class=\"l\">term</th><th>value</th></tr>");
            let rows = [
                ("time T", fmt_duration(p.time)),
                ("T_CPU", fmt_duration(crate::units::Seconds(p.t.cpu))),
                ("T_mem", fmt_duration(crate::units::Seconds(p.t.mem))),
                ("T_w,net", fmt_duration(crate::units::Seconds(p.t.wait_net))),
                (
                    crate::model::TimeTerms::serv_net_name(p.config.nodes),
                    fmt_duration(crate::units::Seconds(p.t.serv_net)),
                ),
                ("T_gpu", fmt_duration(crate::units::Seconds(p.t.gpu))),
                ("T_ser", fmt_duration(crate::units::Seconds(p.t.serial))),
                ("T_idle", fmt_duration(crate::units::Seconds(p.t.wait))),
                ("energy E", fmt_energy(p.energy)),
                ("E_CPU", fmt_energy(crate::units::Joules(p.e.cpu))),
                ("E_mem", fmt_energy(crate::units::Joules(p.e.mem))),
                ("E_net", fmt_energy(crate::units::Joules(p.e.net))),
                ("E_idle", fmt_energy(crate::units::Joules(p.e.idle))),
                ("E_gpu", fmt_energy(crate::units::Joules(p.e.gpu))),
                ("UCR", format!("{:.3}", p.ucr)),
                ("network headroom 1-rho", format!("{:.3}", 1.0 - p.rho)),
            ];
            for (k, v) in rows {
                let _ = writeln!(
                    w,
                    "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
                    esc(k),
                    esc(&v)
                );
            }
            let _ = writeln!(w, "</table>");
        }
        None => {
            let _ = writeln!(
                w,
                "<p id=\"recommendation\">No recommendation: {}</p>",
                esc(&plan.answer.reason)
            );
        }
    }

    let _ = writeln!(w, "<h2>Time and energy of the space</h2>");
    if !sample.complete {
        let _ = writeln!(
            w,
            "<p class=\"note\">The scatter shows a stratified sample of {} of {} configurations; the front is exact.</p>",
            sample.taken, plan.evaluated
        );
    }
    let _ = writeln!(
        w,
        "<div id=\"pareto-plot\"><a href=\"pareto.svg\"><img src=\"pareto.png\" width=\"1000\" \
         alt=\"Time against energy of every configuration, the Pareto front and the \
         recommendation (pareto.svg: the same chart as a vector)\"></a></div>"
    );
    let _ = writeln!(w, "<h2>Time and energy terms along the front</h2>");
    let _ = writeln!(
        w,
        "<div id=\"breakdown-plot\">{}</div>",
        inline_svg(breakdown)
    );

    let _ = writeln!(w, "<h2>Pareto front</h2>");
    let _ = writeln!(
        w,
        "<table id=\"front\"><tr><th>#</th><th>nodes</th><th>cores</th><th>GHz</th><th>GPUs</th>\
         <th>time</th><th>energy</th><th>UCR</th><th>1-rho</th><th>node-hours</th><th>ties</th></tr>"
    );
    for (i, f) in plan.front.iter().enumerate() {
        let p = &f.prediction;
        let _ = writeln!(
            w,
            "<tr{}><td>{i}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.4}</td><td>{}</td></tr>",
            if plan.answer.pick == Some(i) {
                " class=\"pick\""
            } else {
                ""
            },
            p.config.nodes,
            p.config.cores,
            p.config.freq.ghz(),
            p.config.gpus,
            esc(&fmt_duration(p.time)),
            esc(&fmt_energy(p.energy)),
            p.ucr,
            1.0 - p.rho,
            f64::from(p.config.nodes) * p.time.0 / 3600.0,
            f.ties
        );
    }
    let _ = writeln!(w, "</table>");

    let _ = writeln!(w, "<h2>Model inputs</h2>");
    let _ = writeln!(
        w,
        "<p>Machine <b>{}</b> ({}), sha256 <code>{}</code>: {}</p>",
        esc(&machine.name),
        esc(&machine.file.display().to_string()),
        esc(&machine.digest),
        esc(&machine.description)
    );
    notes_table(w, &machine.sources);
    let _ = writeln!(
        w,
        "<p>Workload <b>{}</b> ({}), sha256 <code>{}</code>: {}</p>",
        esc(&profile.program),
        esc(&profile.file.display().to_string()),
        esc(&profile.digest),
        esc(&profile.description)
    );
    notes_table(w, &profile.provenance);
    trees_section(w, plan, profile);
    let _ = writeln!(
        w,
        "<p class=\"note\">Generated by jouleplan {}.</p></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    h
}

/// The columns of the trees table: TALP's JSON name and a short heading.
const TREE_COLUMNS: [(&str, &str); 7] = [
    ("parallelEfficiency", "parallel"),
    ("mpiParallelEfficiency", "MPI"),
    ("mpiCommunicationEfficiency", "MPI comm."),
    ("mpiLoadBalance", "MPI load bal."),
    ("ompParallelEfficiency", "OpenMP"),
    ("deviceOffloadEfficiency", "device offload"),
    ("gpuParallelEfficiency", "GPU parallel"),
];

/// The baseline's measured trees (TALP, one row per measured point) with POP's strong-scaling
/// efficiency across its core counts, and the recommended configuration's predicted tree.
fn trees_section(w: &mut String, plan: &Plan, profile: &Profile) {
    let _ = writeln!(w, "<h2>Efficiency trees of the baseline</h2>");
    let mut rows: Vec<&crate::model::workload::BaselinePoint> =
        profile.baseline.iter().filter(|p| p.measured).collect();
    rows.sort_by(|a, b| {
        (a.gpus, a.freq.0, a.cores)
            .partial_cmp(&(b.gpus, b.freq.0, b.cores))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    if !rows.iter().any(|p| p.measured_tree.is_some()) {
        let _ = writeln!(
            w,
            "<p class=\"note\">No measured tree: attach TALP outputs with <code>jouleplan profile --talp \
             CORES=FILE</code> to show them here.</p>"
        );
    }
    let mut chart_points: Vec<crate::report::plot::TreePoint> = Vec::new();
    let _ = write!(
        w,
        "<table id=\"trees\"><tr><th class=\"l\">point</th><th class=\"l\">source</th>"
    );
    for (_, head) in TREE_COLUMNS {
        let _ = write!(w, "<th>{head}</th>");
    }
    let _ = writeln!(w, "<th>POP speedup</th><th>POP scaling eff.</th></tr>");
    for p in &rows {
        // Strong scaling against the fewest cores measured at the same frequency and GPUs.
        let base = rows
            .iter()
            .filter(|q| q.gpus == p.gpus && q.freq == p.freq)
            .min_by_key(|q| q.cores);
        let (speedup, eff) = base.map_or((f64::NAN, f64::NAN), |b| {
            let s = b.wall_time.0 / p.wall_time.0;
            (s, s * f64::from(b.cores) / f64::from(p.cores))
        });
        let (source, values) = p
            .measured_tree
            .as_ref()
            .map_or(("-", &[][..]), |(s, v)| (s.as_str(), &v[..]));
        let _ = write!(
            w,
            "<tr><td class=\"l\">({} cores, {} GHz, {} GPUs)</td><td class=\"l\">{}</td>",
            p.cores,
            p.freq.ghz(),
            p.gpus,
            esc(source)
        );
        for (key, _) in TREE_COLUMNS {
            match values.iter().find(|(k, _)| k == key) {
                Some((_, v)) => {
                    let _ = write!(w, "<td>{v:.2}</td>");
                }
                None => {
                    let _ = write!(w, "<td>-</td>");
                }
            }
        }
        let _ = writeln!(w, "<td>{speedup:.2}</td><td>{eff:.2}</td></tr>");
        let first = rows.first().map(|q| (q.gpus, q.freq.0));
        if first == Some((p.gpus, p.freq.0)) && eff.is_finite() {
            let pe = values
                .iter()
                .find(|(k, _)| k == "parallelEfficiency")
                .map(|v| v.1);
            chart_points.push((p.cores, pe, eff));
        }
    }
    if let Some(f) = plan.recommendation() {
        let h = crate::model::host_tree::HostTree::of(&f.prediction);
        let gpu = f.prediction.device.map(|d| d.parallel_efficiency);
        let cells = [
            Some(h.parallel_efficiency),
            Some(h.mpi_parallel_efficiency),
            Some(h.mpi_communication_efficiency),
            h.mpi_load_balance,
            Some(h.openmp_parallel_efficiency),
            Some(h.device_offload_efficiency),
            gpu,
        ];
        let _ = write!(
            w,
            "<tr class=\"pick\"><td class=\"l\">recommended {}</td><td class=\"l\">predicted</td>",
            esc(&label(&f.prediction.config))
        );
        for c in cells {
            match c {
                Some(v) => {
                    let _ = write!(w, "<td>{v:.2}</td>");
                }
                None => {
                    let _ = write!(w, "<td>-</td>");
                }
            }
        }
        let _ = writeln!(w, "<td></td><td></td></tr>");
    }
    let _ = writeln!(w, "</table>");
    if chart_points.len() >= 2
        && let Ok(svg) = crate::report::plot::trees_svg(&chart_points)
    {
        let _ = writeln!(w, "<div id=\"trees-plot\">{}</div>", inline_svg(&svg));
    }
}

fn notes_table(w: &mut String, notes: &[(String, String)]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "<table><tr><th class=\"l\">key</th><th class=\"l\">source</th></tr>"
    );
    for (k, v) in notes {
        let _ = writeln!(
            w,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(k),
            esc(v)
        );
    }
    let _ = writeln!(w, "</table>");
}
