//! Output of `jouleplan metrics`: an indented tree like TALP's (two decimals), or JSON
//! `{ "runs": [...], "scaling": {...}|null }`.

use crate::metrics::run::Run;
use crate::metrics::scaling::Scaling;
use std::io::{self, Write};

/// Everything `metrics` reports; its JSON is this type (`{ "runs": [...], "scaling": ... }`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct MetricsReport {
    /// One per TALP region, mpiP report or trace.
    pub runs: Vec<Run>,
    /// Across runs, when several runs of one program are given.
    pub scaling: Option<Scaling>,
}

fn line(out: &mut dyn Write, depth: usize, name: &str, v: f64) -> io::Result<()> {
    let label = format!(
        "{}{}",
        "   ".repeat(depth),
        if depth > 0 {
            format!("- {name}")
        } else {
            name.to_string()
        }
    );
    writeln!(out, "  {label:<44} {v:>6.2}")
}

/// The text tree.
pub fn write_text(r: &MetricsReport, out: &mut dyn Write) -> io::Result<()> {
    for run in &r.runs {
        writeln!(
            out,
            "{}{} ({}, {}, elapsed {:.6} s)",
            run.source,
            run.region
                .as_deref()
                .map(|g| format!(" region {g}"))
                .unwrap_or_default(),
            run.kind,
            match run.ranks {
                0 => "1 process, no MPI".to_string(),
                1 => "1 rank".to_string(),
                n => format!("{n} ranks"),
            },
            run.elapsed_s
        )?;
        host_tree(run, out)?;
        device_and_pop(run, out)?;
        extras(run, out)?;
        writeln!(out)?;
    }
    if let Some(s) = &r.scaling {
        scaling(s, out)?;
    }
    Ok(())
}

/// Rows of a tree: depth, name, value.
fn lines(out: &mut dyn Write, rows: &[(usize, &str, f64)]) -> io::Result<()> {
    for &(depth, name, v) in rows {
        line(out, depth, name, v)?;
    }
    Ok(())
}

/// The host tree of one run (TALP's layout).
fn host_tree(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    let Some(h) = &run.host else {
        return Ok(());
    };
    writeln!(out, "  Host")?;
    lines(
        out,
        &[
            (0, "Parallel efficiency", h.parallel_efficiency),
            (1, "MPI Parallel efficiency", h.mpi_parallel_efficiency),
            (
                2,
                "Communication efficiency",
                h.mpi_communication_efficiency,
            ),
            (2, "Load Balance", h.mpi_load_balance),
            (3, "In", h.mpi_load_balance_in),
            (3, "Out", h.mpi_load_balance_out),
            (1, "OpenMP Parallel efficiency", h.omp_parallel_efficiency),
            (2, "Load Balance", h.omp_load_balance),
            (2, "Scheduling efficiency", h.omp_scheduling_efficiency),
            (
                2,
                "Serialization efficiency",
                h.omp_serialization_efficiency,
            ),
            (1, "Device Offload efficiency", h.device_offload_efficiency),
        ],
    )
}

/// The device tree and POP's tree of one run.
fn device_and_pop(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    if let Some(d) = &run.device {
        writeln!(out, "  Device")?;
        lines(
            out,
            &[
                (0, "Parallel efficiency", d.parallel_efficiency),
                (1, "Load Balance", d.load_balance),
                (1, "Communication efficiency", d.communication_efficiency),
                (1, "Orchestration efficiency", d.orchestration_efficiency),
            ],
        )?;
    }
    if let Some(p) = &run.pop {
        writeln!(out, "  POP")?;
        lines(
            out,
            &[
                (0, "Parallel efficiency", p.parallel_efficiency),
                (1, "Load balance", p.load_balance),
                (1, "Communication efficiency", p.communication),
            ],
        )?;
        if let (Some(s), Some(t)) = (p.serialisation, p.transfer) {
            line(out, 2, "Serialisation efficiency", s)?;
            line(out, 2, "Transfer efficiency", t)?;
        }
    }
    Ok(())
}

/// Counters, windows and notes of one run.
fn extras(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    if let Some(c) = &run.counters {
        writeln!(
            out,
            "  Counters: IPC {:.2}, frequency {:.2} GHz, {:.3e} instructions",
            c.ipc, c.frequency_ghz, c.instructions
        )?;
    }
    if let Some(w) = &run.windows {
        writeln!(out, "  Windows: {}", w.len())?;
        for x in w.iter().take(50) {
            writeln!(
                out,
                "    [{:>10.6} s, {:>10.6} s)  LB {:.2}  Ser {:.2}  Trf {:.2}  PE {:.2}",
                x.start_s,
                x.end_s,
                x.load_balance,
                x.serialisation,
                x.transfer,
                x.parallel_efficiency
            )?;
        }
        if w.len() > 50 {
            writeln!(out, "    ... {} more (--json for all)", w.len() - 50)?;
        }
    }
    for d in &run.talp_disagreements {
        writeln!(
            out,
            "  note: TALP printed {} = {:.2}; the raw times give {:.4}",
            d.metric, d.printed, d.recomputed
        )?;
    }
    for n in &run.notes {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

/// The scaling table across runs.
fn scaling(s: &Scaling, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Scaling ({}), reference: {} processes",
        s.mode, s.reference_processes
    )?;
    writeln!(
        out,
        "  {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "processes", "PE", "comp", "instr", "IPC", "freq", "global", "speedup"
    )?;
    for p in &s.points {
        let f = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "  {:>9} {:>8.2} {:>8.2} {:>8} {:>8} {:>8} {:>8.2} {:>8.2}",
            p.processes,
            p.parallel_efficiency,
            p.computation_scaling,
            f(p.instruction_scaling),
            f(p.ipc_scaling),
            f(p.frequency_scaling),
            p.global_efficiency,
            p.speedup
        )?;
    }
    Ok(())
}

/// One CSV row per run: identity, then the host tree, device tree, POP and counters (empty
/// cells where the input does not give them).
pub fn write_csv(r: &MetricsReport, out: &mut dyn Write) -> io::Result<()> {
    const HOST: [&str; 11] = [
        "parallel_efficiency",
        "mpi_parallel_efficiency",
        "mpi_communication_efficiency",
        "mpi_load_balance",
        "mpi_load_balance_in",
        "mpi_load_balance_out",
        "omp_parallel_efficiency",
        "omp_load_balance",
        "omp_scheduling_efficiency",
        "omp_serialization_efficiency",
        "device_offload_efficiency",
    ];
    const DEVICE: [&str; 4] = [
        "parallel_efficiency",
        "load_balance",
        "communication_efficiency",
        "orchestration_efficiency",
    ];
    const POP: [&str; 5] = [
        "load_balance",
        "communication",
        "serialisation",
        "transfer",
        "parallel_efficiency",
    ];
    const COUNTERS: [&str; 3] = ["instructions", "ipc", "frequency_ghz"];
    let mut header = vec![
        "source".to_string(),
        "region".into(),
        "kind".into(),
        "ranks".into(),
        "elapsed_s".into(),
        "useful_s".into(),
    ];
    header.extend(HOST.iter().map(|k| format!("host_{k}")));
    header.extend(DEVICE.iter().map(|k| format!("device_{k}")));
    header.extend(POP.iter().map(|k| format!("pop_{k}")));
    header.extend(COUNTERS.iter().map(|k| format!("counters_{k}")));
    writeln!(out, "{}", header.join(","))?;
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for run in &r.runs {
        let v = serde_json::to_value(run).map_err(io::Error::other)?;
        let cell = |sec: &str, k: &str| match &v[sec][k] {
            serde_json::Value::Null => String::new(),
            x => x.to_string(),
        };
        let mut row = vec![
            quote(&run.source),
            quote(run.region.as_deref().unwrap_or("")),
            run.kind.to_string(),
            run.ranks.to_string(),
            run.elapsed_s.to_string(),
            run.useful_s.to_string(),
        ];
        row.extend(HOST.iter().map(|k| cell("host", k)));
        row.extend(DEVICE.iter().map(|k| cell("device", k)));
        row.extend(POP.iter().map(|k| cell("pop", k)));
        row.extend(COUNTERS.iter().map(|k| cell("counters", k)));
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}

/// A named, coloured metric of a window.
type Series = (
    &'static str,
    plotters::style::RGBColor,
    fn(&crate::metrics::windows::Window) -> f64,
);

/// Draws the windowed LB, Ser, Trf and PE of every run with windows over time, as SVG.
pub fn write_plot(path: &std::path::Path, r: &MetricsReport) -> Result<(), String> {
    use plotters::prelude::*;
    if path.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(format!(
            "{}: expected a file ending in .svg",
            path.display()
        ));
    }
    let runs: Vec<&Run> = r
        .runs
        .iter()
        .filter(|x| x.windows.as_ref().is_some_and(|w| !w.is_empty()))
        .collect();
    if runs.is_empty() {
        return Err(
            "--plot needs windows: give a trace with --window DURATION or --adaptive N".into(),
        );
    }
    crate::report::plot::ensure_font();
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (1000, 320 * runs.len() as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
        for (area, run) in root.split_evenly((runs.len(), 1)).iter().zip(&runs) {
            let w = run.windows.as_deref().unwrap_or(&[]);
            let t1 = w.last().map_or(1.0, |x| x.end_s);
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{}: metrics per window", run.source),
                    ("sans-serif", 16),
                )
                .margin(10)
                .x_label_area_size(35)
                .y_label_area_size(45)
                .build_cartesian_2d(0.0..t1, 0.0..1.05)
                .map_err(|e| format!("{e:?}"))?;
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(|e| format!("{e:?}"))?;
            let series: [Series; 4] = [
                ("load balance", BLUE, |x| x.load_balance),
                ("serialisation", RED, |x| x.serialisation),
                ("transfer", GREEN, |x| x.transfer),
                ("parallel efficiency", BLACK, |x| x.parallel_efficiency),
            ];
            for (name, colour, get) in series {
                let pts: Vec<(f64, f64)> = w
                    .iter()
                    .flat_map(|x| [(x.start_s, get(x)), (x.end_s, get(x))])
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                    .map_err(|e| format!("{e:?}"))?
                    .label(name)
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .position(SeriesLabelPosition::LowerLeft)
                .draw()
                .map_err(|e| format!("{e:?}"))?;
        }
        root.present().map_err(|e| format!("{e:?}"))?;
    }
    crate::atomic_write::write_atomic(path, svg.as_bytes(), false).map_err(|e| e.to_string())
}
