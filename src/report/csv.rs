//! CSV output: one row per front point (or per prediction), with the keys of `plan --json` as
//! column names, in a fixed order; every name carries its unit (`_s`, `_j`, `_hz`).

use super::json::config_json;
use super::{Exporter, PredictionView};
use crate::search::plan::Plan;
use serde_json::Value;
use std::io::{self, Write};

/// CSV exporter.
pub struct Csv;

/// Columns, in order: top-level keys of a config object, then its breakdown.
pub const COLUMNS: &[&str] = &[
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
    "breakdown.t_cpu_s",
    "breakdown.t_mem_s",
    "breakdown.t_wait_net_s",
    "breakdown.t_serv_net_s",
    "breakdown.t_gpu_s",
    "breakdown.t_serial_s",
    "breakdown.t_idle_wait_s",
    "breakdown.e_cpu_j",
    "breakdown.e_mem_j",
    "breakdown.e_net_j",
    "breakdown.e_idle_j",
    "breakdown.e_gpu_j",
    "host_tree.parallel_efficiency",
    "host_tree.mpi_parallel_efficiency",
    "host_tree.mpi_communication_efficiency",
    "host_tree.mpi_load_balance",
    "host_tree.openmp_parallel_efficiency",
    "host_tree.device_offload_efficiency",
    "breakdown.t_nodes_s",
    "time_interval_s.0",
    "time_interval_s.1",
    "energy_interval_j.0",
    "energy_interval_j.1",
    "interval_kind",
    "interval_coverage",
];

/// The device tree's columns (`device_parallel_efficiency`, ...), after [`COLUMNS`] where a
/// configuration has GPUs: the tree the text prints under each GPU configuration.
pub const DEVICE_COLUMNS: &[&str] = &[
    "device.parallel_efficiency",
    "device.load_balance",
    "device.communication_efficiency",
    "device.orchestration_efficiency",
];

/// A column's name in the header: its last key, `time_low_s` for `time_interval_s.0`, or
/// `device_load_balance` for `device.load_balance` (the host tree has one too).
fn name(column: &str) -> String {
    if let Some(key) = column.strip_prefix("device.") {
        return format!("device_{key}");
    }
    match column.split_once('.') {
        Some((a, i @ ("0" | "1"))) => {
            let (what, unit) = a.split_once("_interval").unwrap_or((a, ""));
            let end = if i == "0" { "low" } else { "high" };
            format!("{what}_{end}{unit}")
        }
        _ => column.rsplit('.').next().unwrap_or(column).to_string(),
    }
}

/// The value of `key` (`a`, `a.b` or `a.0`) in a config object.
fn at<'v>(v: &'v Value, key: &str) -> &'v Value {
    match key.split_once('.') {
        Some((a, b)) => match b.parse::<usize>() {
            Ok(i) => &v[a][i],
            Err(_) => &v[a][b],
        },
        None => &v[key],
    }
}

/// Writes the cells of `columns` of `v`, each followed by a comma: a value as JSON writes it,
/// a string bare, null empty. Written in place: no string is made a cell.
fn write_cells(v: &Value, columns: &[&str], out: &mut dyn Write) -> io::Result<()> {
    for c in columns {
        match at(v, c) {
            Value::Null => {}
            Value::String(s) => out.write_all(s.as_bytes())?,
            other => write!(out, "{other}")?,
        }
        out.write_all(b",")?;
    }
    Ok(())
}

fn cell(v: &Value, key: &str) -> String {
    match at(v, key) {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn header(columns: &[&str], extra: &[&str]) -> String {
    columns
        .iter()
        .map(|c| name(c))
        .chain(extra.iter().map(|e| e.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// [`COLUMNS`], with `gpu_clock_mhz` after `gpus` where a configuration has a GPU clock, and
/// [`DEVICE_COLUMNS`] at the end where one has a device tree (a CPU plan, or one without a
/// GPU clock law, keeps the columns it always had).
fn columns(clocked: bool, device: bool) -> Vec<&'static str> {
    let mut c = COLUMNS.to_vec();
    if clocked {
        c.insert(4, "gpu_clock_mhz");
    }
    if device {
        c.extend_from_slice(DEVICE_COLUMNS);
    }
    c
}

impl Exporter for Csv {
    fn plan(&self, plan: &Plan, out: &mut dyn Write) -> io::Result<()> {
        // Buffered: one line a front point, otherwise each a write of its own to a
        // line-buffered standard output.
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        let clocked = plan
            .front
            .iter()
            .any(|f| f.prediction.config.gpu_clock_mhz.is_some());
        let device = plan.front.iter().any(|f| f.prediction.device.is_some());
        let cols = columns(clocked, device);
        writeln!(
            out,
            "{}",
            header(&cols, &["front_index", "ties", "recommended"])
        )?;
        for (i, f) in plan.front.iter().enumerate() {
            let v = serde_json::to_value(config_json(&f.prediction))?;
            write_cells(&v, &cols, &mut out)?;
            writeln!(out, "{i},{},{}", f.ties, plan.answer.pick == Some(i))?;
        }
        out.flush()
    }

    fn prediction(&self, p: PredictionView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let (clocked, device) = match p {
            PredictionView::Finite(p) => (p.config.gpu_clock_mhz.is_some(), p.device.is_some()),
            PredictionView::Saturated { config, .. } => (config.gpu_clock_mhz.is_some(), false),
        };
        let cols = columns(clocked, device);
        writeln!(out, "{}", header(&cols, &["saturated"]))?;
        match p {
            PredictionView::Finite(p) => {
                let v = serde_json::to_value(config_json(p))?;
                let cells: Vec<String> = cols.iter().map(|c| cell(&v, c)).collect();
                writeln!(out, "{},false", cells.join(","))
            }
            PredictionView::Saturated { config, rho } => {
                let mut cells = vec![String::new(); cols.len()];
                let mut set = |key: &str, value: String| {
                    if let Some(i) = cols.iter().position(|c| *c == key) {
                        cells[i] = value;
                    }
                };
                set("nodes", config.nodes.to_string());
                set("cores", config.cores.to_string());
                set("freq_hz", config.freq.0.to_string());
                set("gpus", config.gpus.to_string());
                // By name: with a GPU clock column the columns after `gpus` move one on.
                set(
                    "gpu_clock_mhz",
                    config
                        .gpu_clock_mhz
                        .map_or(String::new(), |m| format!("{m}")),
                );
                set("rho", rho.to_string());
                writeln!(out, "{},true", cells.join(","))
            }
        }
    }
}
