//! Human output: the front as a table and the recommendation with its breakdown.

use super::{Exporter, PredictionView};
use crate::model::evidence::{Interval, IntervalKind};
use crate::model::{Prediction, TimeTerms};
use crate::search::plan::{Plan, label};
use crate::units::{Joules, Seconds, count, fmt_duration, fmt_energy, fmt_node_hours};
use std::io::{self, Write};

/// Text exporter. `max_rows` bounds the front table (evenly spaced rows, both ends kept).
pub struct Text {
    /// At most this many front rows; `None` prints all.
    pub max_rows: Option<usize>,
}

fn rows_to_show(len: usize, max: Option<usize>) -> Vec<usize> {
    match max {
        Some(m) if len > m && m >= 2 => {
            let mut v: Vec<usize> = (0..m).map(|i| i * (len - 1) / (m - 1)).collect();
            v.dedup();
            v
        }
        _ => (0..len).collect(),
    }
}

/// Writes the breakdown of one prediction, indented.
pub fn breakdown(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let d = term_duration;
    let extra = |name: &str, v: f64| {
        if v > 0.0 {
            format!(" + {name} {}", d(v))
        } else {
            String::new()
        }
    };
    if p.whole_run {
        return whole_run_breakdown(p, out);
    }
    writeln!(
        out,
        "  time    {:>10} = T_CPU {} + T_mem {} + T_w,net {} + T_s,net {}{}{}{}{}",
        d(p.time.0),
        d(p.t.cpu),
        d(p.t.mem),
        d(p.t.wait_net),
        d(p.t.serv_net),
        extra("T_gpu", p.t.gpu),
        extra("T_ser", p.t.serial),
        extra("T_idle", p.t.wait),
        node_law_term(p.t.nodes),
    )?;
    if let Some(note) = TimeTerms::serv_net_at(p.config.nodes).filter(|_| p.t.serv_net != 0.0) {
        writeln!(out, "  ({note})")?;
    }
    if p.time_only {
        return time_only_rest(p, out);
    }
    interval_line(p, out)?;
    energy_line(p, out)?;
    writeln!(
        out,
        "  UCR {:.3}   network headroom 1-rho {:.3}   {}   E x T {:.4e} J s",
        p.ucr,
        1.0 - p.rho,
        node_hours(p),
        p.energy.0 * p.time.0
    )?;
    host_tree(p, out)?;
    device_tree(p, out)
}

/// A breakdown's term in time: one that is exactly zero reads as 0, not as "0.0 us" of
/// something.
fn term_duration(s: f64) -> String {
    if s == 0.0 {
        "0".into()
    } else {
        fmt_duration(Seconds(s))
    }
}

/// A breakdown's term in energy, 0 as [`term_duration`]'s.
fn term_energy(j: f64) -> String {
    if j == 0.0 {
        "0".into()
    } else {
        fmt_energy(Joules(j))
    }
}

/// The prediction's node-hours, as a breakdown says them.
fn node_hours(p: &Prediction) -> String {
    fmt_node_hours(f64::from(p.config.nodes) * p.time.0 / 3600.0)
}

/// The interval line of a breakdown, where the prediction has an interval: its energy, or
/// without measured power its node-hours.
fn interval_line(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let Some(i) = &p.interval else {
        return Ok(());
    };
    let (lo, hi) = i.energy_j;
    let (time, energy): (fn(f64) -> String, String) = match p.time_only {
        true => (
            |s| fmt_duration(Seconds(s)),
            format!(
                "{} to {}",
                fmt_node_hours(lo / 3600.0),
                fmt_node_hours(hi / 3600.0)
            ),
        ),
        false => (
            term_duration,
            format!("energy {} to {}", term_energy(lo), term_energy(hi)),
        ),
    };
    writeln!(
        out,
        "  {}: time {} to {}, {energy}",
        interval_head(i),
        time(i.time_s.0),
        time(i.time_s.1)
    )
}

/// The energy line of a breakdown: the total and its terms.
fn energy_line(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let e = term_energy;
    writeln!(
        out,
        "  energy  {:>10} = CPU {} + memory {} + network {} + idle {}{}",
        e(p.energy.0),
        e(p.e.cpu),
        e(p.e.mem),
        e(p.e.net),
        e(p.e.idle),
        match (p.config.gpus, p.e.gpu) {
            (0, g) if g > 0.0 => format!(" + GPUs idle {}", e(g)),
            (0, _) => String::new(),
            (_, g) => format!(" + GPU {}", e(g)),
        }
    )
}

/// The breakdown of a prediction from whole-run times alone ([`Prediction::whole_run`]): the
/// measured run's time and what the GPU clock adds, the terms that are not zero, and no
/// efficiency trees (nothing measured splits host from device).
fn whole_run_breakdown(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let d = |s: f64| fmt_duration(Seconds(s));
    let terms = [
        ("T_mem", p.t.mem),
        ("T_w,net", p.t.wait_net),
        ("T_s,net", p.t.serv_net),
        ("T_ser", p.t.serial),
        ("T_idle", p.t.wait),
    ];
    let mut line = format!(
        "  time    {:>10} = T_run {} (host and GPUs together)",
        d(p.time.0),
        d(p.t.cpu)
    );
    for (name, v) in terms.iter().filter(|t| t.1 != 0.0) {
        line += &format!(" + {name} {}", d(*v));
    }
    if p.t.gpu > 0.0 {
        line += &format!(" + T_gpu {} (what the slower GPU clock adds)", d(p.t.gpu));
    }
    writeln!(out, "{line}{}", node_law_term(p.t.nodes))?;
    if p.time_only {
        writeln!(
            out,
            "  energy unavailable (the machine file has no [power])   {}",
            node_hours(p)
        )?;
    } else {
        whole_run_energy(p, out)?;
    }
    writeln!(
        out,
        "  efficiency trees: not predicted (whole-run times only: nothing measured splits host \
         from device; `jouleplan profile` measures device times through NVML or TALP)"
    )
}

/// The energy lines of [`whole_run_breakdown`]: the interval, and the terms that are not zero.
fn whole_run_energy(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let e = |j: f64| fmt_energy(Joules(j));
    interval_line(p, out)?;
    let gpu = if p.config.gpus == 0 {
        "GPUs idle"
    } else {
        "GPU"
    };
    let parts: Vec<String> = [
        ("CPU", p.e.cpu),
        ("memory", p.e.mem),
        ("network", p.e.net),
        ("idle", p.e.idle),
        (gpu, p.e.gpu),
    ]
    .iter()
    .filter(|t| t.1 != 0.0)
    .map(|(name, j)| format!("{name} {}", e(*j)))
    .collect();
    writeln!(
        out,
        "  energy  {:>10} = {}   {}   E x T {:.4e} J s",
        e(p.energy.0),
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(" + ")
        },
        node_hours(p),
        p.energy.0 * p.time.0
    )
}

/// What a prediction's range at a node count not measured is and where it comes from:
/// `80% interval at a node count not measured (measured up to 8)`, between the measured counts
/// as beyond them, or for a profile measured on one
/// node `bounds beyond the 1 node measured (...)`: bounds are never called an interval. At a
/// GPU clock not measured it names the clock law's share, and both where a one-node profile's
/// bounds and the clock law's interval make it (`bounds beyond the 1 node measured (...) and
/// at a GPU clock not measured (...)`).
pub fn interval_head(i: &Interval) -> String {
    if i.gpu_clock != (0.0, 0.0) {
        let clock = format!(
            "at a GPU clock not measured (+/- {:.1}% time, {:.1}% energy from the clock law{})",
            100.0 * i.gpu_clock.0,
            100.0 * i.gpu_clock.1,
            if i.power_rel > 0.0 || i.idle_w > 0.0 {
                ", with the node axis's"
            } else {
                ""
            }
        );
        return match i.kind {
            IntervalKind::Bounds => format!("{} and {clock}", node_head(i)),
            IntervalKind::Interval => format!("{} {clock}", i.what()),
        };
    }
    node_head(i)
}

/// [`interval_head`] of a range from the node axis alone.
fn node_head(i: &Interval) -> String {
    match i.kind {
        IntervalKind::Interval => format!(
            "{} at a node count not measured (measured up to {})",
            i.what(),
            i.largest_measured
        ),
        IntervalKind::Bounds => format!(
            "bounds beyond the {} measured (from perfect division of the work to no gain past \
             it; measure a second node count for a node law)",
            count(i.largest_measured, "node", "nodes")
        ),
    }
}

/// [`interval_head`] opening a sentence.
pub fn interval_head_capitalised(i: &Interval) -> String {
    let head = interval_head(i);
    let mut c = head.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// The rest of a breakdown without measured power: the interval in time and node-hours, and
/// no energy.
fn time_only_rest(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let nh = |node_s: f64| node_s / 3600.0;
    interval_line(p, out)?;
    writeln!(
        out,
        "  energy unavailable (the machine file has no [power])   UCR {:.3}   network headroom \
         1-rho {:.3}   {}",
        p.ucr,
        1.0 - p.rho,
        crate::units::fmt_node_hours(nh(p.energy.0))
    )?;
    host_tree(p, out)?;
    device_tree(p, out)
}

/// The device tree line, for predictions with GPUs doing device work.
fn device_tree(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    if let Some(dev) = &p.device {
        writeln!(
            out,
            "  device: parallel efficiency {:.2} = load balance {:.2} x communication {:.2} x orchestration {:.2}; host offload efficiency {:.2}",
            dev.parallel_efficiency,
            dev.load_balance,
            dev.communication_efficiency,
            dev.orchestration_efficiency,
            dev.offload_efficiency
        )?;
    }
    Ok(())
}

/// The node counts to measure before trusting a recommendation far beyond the evidence.
fn measure_next(plan: &Plan, out: &mut dyn Write) -> io::Result<()> {
    if plan.measure_next.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = plan
        .measure_next
        .iter()
        .map(|m| {
            format!(
                "{} nodes ({})",
                m.config.nodes,
                fmt_node_hours(m.node_hours)
            )
        })
        .collect();
    let what = plan
        .recommendation()
        .and_then(|f| f.prediction.interval)
        .map_or("interval is".into(), |i| i.what_is());
    writeln!(
        out,
        "  measure next: {} (this recommendation lies beyond twice the largest node count \
         measured, or its {what} wider than {:.0}% either side; its {what} above)",
        list.join(", "),
        100.0 * crate::search::plan::MEASURE_TOLERANCE
    )
}

/// The node law's term in the time line: `+ X(n) 12 s` (waiting beyond the single-node
/// terms), `- X(n) 3 s` where the law gains time, nothing where it is 0.
fn node_law_term(x: f64) -> String {
    let d = |s: f64| fmt_duration(Seconds(s));
    if x > 0.0 {
        format!(" + X(n) {}", d(x))
    } else if x < 0.0 {
        format!(" - X(n) {}", d(-x))
    } else {
        String::new()
    }
}

/// The predicted host tree, in TALP's layout (indented, two decimals).
fn host_tree(p: &Prediction, out: &mut dyn Write) -> io::Result<()> {
    let h = crate::model::host_tree::HostTree::of(p);
    writeln!(out, "  host tree (predicted):")?;
    let rows = [
        (0, "Parallel efficiency", Some(h.parallel_efficiency)),
        (
            1,
            "MPI Parallel efficiency",
            Some(h.mpi_parallel_efficiency),
        ),
        (
            2,
            "Communication efficiency",
            Some(h.mpi_communication_efficiency),
        ),
        (2, "Load Balance", h.mpi_load_balance),
        (
            1,
            "OpenMP Parallel efficiency",
            Some(h.openmp_parallel_efficiency),
        ),
        (
            1,
            "Device Offload efficiency",
            Some(h.device_offload_efficiency),
        ),
    ];
    let carried = match h.openmp_source {
        (crate::model::host_tree::Source::Carried, Some(c)) => {
            format!("  (carried: measured at {c} cores)")
        }
        _ => String::new(),
    };
    let lb_note = h
        .load_balance_from
        .map(|c| format!("  (carried: measured at {c} cores)"))
        .unwrap_or_default();
    for (depth, name, v) in rows {
        let label = format!(
            "{}{}{name}",
            "   ".repeat(depth),
            if depth > 0 { "- " } else { "" }
        );
        let note = if name.starts_with("OpenMP") {
            carried.as_str()
        } else if name == "Load Balance" {
            lb_note.as_str()
        } else {
            ""
        };
        match v {
            Some(v) => writeln!(out, "    {label:<40} {v:>6.2}{note}")?,
            None => writeln!(out, "    {label:<40} {:>6}  (absent: not measured)", "-")?,
        }
    }
    Ok(())
}

/// The front, fastest first (the first and last rows when it is long), the pick marked.
fn front_table(plan: &Plan, max_rows: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    let shown = rows_to_show(plan.front.len(), max_rows);
    if shown.len() < plan.front.len() {
        writeln!(
            out,
            "Pareto front, fastest first ({} of {} points; --full or --json for all):",
            shown.len(),
            plan.front.len()
        )?;
    } else {
        writeln!(out, "Pareto front, fastest first:")?;
    }
    let cols = Columns::of(plan);
    let mhz_head = cols.mhz(Some("GPU MHz"));
    let energy_head = cols.energy_head();
    let range_head = cols.ranges(|| cols.range_heads());
    writeln!(
        out,
        "  {:>nw$} {:>6} {:>6} {:>5}{mhz_head} {:>11} {:>11}{range_head} {:>6}  ties",
        "nodes",
        "cores",
        "GHz",
        "GPUs",
        "time",
        energy_head,
        "UCR",
        nw = cols.nodes
    )?;
    for i in shown {
        front_row(plan, i, &cols, out)?;
    }
    Ok(())
}

/// The front table's columns that depend on the plan.
struct Columns {
    /// The nodes column's width: 6, or the largest count's digits (a machine of a million
    /// nodes keeps its columns under their heads).
    nodes: usize,
    /// Whether a GPU clock column is shown.
    clocked: bool,
    /// Whether the energy column holds node-hours.
    time_only: bool,
    /// The word heading the range columns (`80%`, `bounds`, or `range` where the front holds
    /// both), where a front point has a range.
    range: Option<String>,
    /// The range columns' widths (time, energy).
    range_widths: (usize, usize),
}

impl Columns {
    fn of(plan: &Plan) -> Columns {
        let configs = || plan.front.iter().map(|f| &f.prediction.config);
        Columns {
            nodes: configs()
                .map(|c| c.nodes.to_string().len())
                .max()
                .unwrap_or(0)
                .max(6),
            clocked: configs().any(|c| c.gpu_clock_mhz.is_some()),
            time_only: plan.time_only(),
            range: range_word(plan),
            range_widths: (14, 14),
        }
        .with_range_widths(plan)
    }

    /// The energy column's head: `energy`, or `node-hours` without measured power.
    fn energy_head(&self) -> &'static str {
        match self.time_only {
            true => "node-hours",
            false => "energy",
        }
    }

    /// The range columns' heads: `time 80%`, `energy 80%`.
    fn range_heads(&self) -> (String, String) {
        let w = self.range.as_deref().unwrap_or_default();
        (format!("time {w}"), format!("{} {w}", self.energy_head()))
    }

    /// The range columns as wide as their heads and widest cells need (14 at least).
    fn with_range_widths(mut self, plan: &Plan) -> Columns {
        if self.range.is_none() {
            return self;
        }
        let (ht, he) = self.range_heads();
        let (mut t, mut e) = (ht.len().max(14), he.len().max(14));
        for f in &plan.front {
            let (ct, ce) = range_cells(&f.prediction);
            (t, e) = (t.max(ct.len()), e.max(ce.len()));
        }
        self.range_widths = (t, e);
        self
    }

    /// The two range cells (time, energy) of [`Columns::range`], or nothing without them.
    fn ranges(&self, cells: impl FnOnce() -> (String, String)) -> String {
        match self.range {
            None => String::new(),
            Some(_) => {
                let (t, e) = cells();
                let (tw, ew) = self.range_widths;
                format!(" {t:>tw$} {e:>ew$}")
            }
        }
    }

    /// The GPU clock cell (`-` for none), or nothing without the column.
    fn mhz(&self, cell: Option<&str>) -> String {
        match (self.clocked, cell) {
            (false, _) => String::new(),
            (true, c) => format!(" {:>7}", c.unwrap_or("-")),
        }
    }
}

/// What the front's ranges are, in a word: their coverage (`80%`), `bounds`, or `range` where
/// both are on the front; `None` where no point has one (every point measured).
fn range_word(plan: &Plan) -> Option<String> {
    let mut kinds = plan.front.iter().filter_map(|f| f.prediction.interval);
    let first = kinds.next()?;
    let word = |i: &Interval| match i.nominal() {
        Some(c) => crate::units::coverage_pct(c),
        None => "bounds".into(),
    };
    let w = word(&first);
    Some(match kinds.all(|i| word(&i) == w) {
        true => w,
        false => "range".into(),
    })
}

/// A range cell: how far below and above the point its ends lie (`-1.3% +1.4%`), or `-` at a
/// point without one.
fn range_cell(point: f64, ends: Option<(f64, f64)>) -> String {
    let Some((low, high)) = ends.filter(|_| point > 0.0) else {
        return "-".into();
    };
    let pct = |x: f64| {
        let r = 100.0 * (x / point - 1.0);
        match r.abs() {
            a if a < 0.05 => "0%".to_string(),
            a if a < 9.95 => format!("{r:+.1}%"),
            _ => format!("{r:+.0}%"),
        }
    };
    format!("{} {}", pct(low), pct(high))
}

/// A prediction's two range cells: time and energy ([`range_cell`]).
fn range_cells(p: &Prediction) -> (String, String) {
    (
        range_cell(p.time.0, p.interval.map(|i| i.time_s)),
        range_cell(p.energy.0, p.interval.map(|i| i.energy_j)),
    )
}

/// Row `i` of the front table.
fn front_row(plan: &Plan, i: usize, cols: &Columns, out: &mut dyn Write) -> io::Result<()> {
    let f = &plan.front[i];
    let p = &f.prediction;
    let mhz = cols.mhz(p.config.gpu_clock_mhz.map(|m| m.to_string()).as_deref());
    let ranges = cols.ranges(|| range_cells(p));
    let d = plan.ghz_decimals;
    writeln!(
        out,
        "{} {:>nw$} {:>6} {:>6.d$} {:>5}{mhz} {:>11} {:>11}{ranges} {:>6.3}  {}",
        if Some(i) == plan.answer.pick {
            "*"
        } else {
            " "
        },
        p.config.nodes,
        p.config.cores,
        p.config.freq.ghz(),
        p.config.gpus,
        fmt_duration(p.time),
        if cols.time_only {
            crate::units::node_hours_cell(p.energy.0 / 3600.0)
        } else {
            fmt_energy(p.energy)
        },
        p.ucr,
        if f.ties > 1 {
            f.ties.to_string()
        } else {
            String::new()
        },
        nw = cols.nodes
    )
}

/// The axes of a space, as the text and the report name them: `16 node counts x 1 core count
/// x 1 frequency x 1 GPU count`, with ` x 16 GPU clocks` where it searches GPU clocks.
pub fn space_axes(s: &crate::search::space::Space) -> String {
    let mut out = format!(
        "{} x {} x {} x {}",
        count(s.nodes.len() as u64, "node count", "node counts"),
        count(s.cores.len() as u64, "core count", "core counts"),
        count(s.freqs.len() as u64, "frequency", "frequencies"),
        count(s.gpus.len() as u64, "GPU count", "GPU counts")
    );
    if !s.gpu_clocks.is_empty() {
        let n = s.gpu_clocks.len() as u64;
        out += &format!(" x {}", count(n, "GPU clock", "GPU clocks"));
    }
    out
}

/// The plan as text: its inputs and space, the front table (`max_rows` of it), the
/// recommendation with its breakdown.
fn plan_text(plan: &Plan, max_rows: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    let s = &plan.space;
    writeln!(
        out,
        "machine {} ({}), workload {} ({})",
        plan.machine,
        plan.machine_file.display(),
        plan.program,
        plan.profile_file.display()
    )?;
    writeln!(
        out,
        "space: {} = {}; {} network-saturated; {} on the exact front",
        space_axes(s),
        count(plan.evaluated, "configuration", "configurations"),
        plan.saturated,
        plan.front.len()
    )?;
    if plan.time_only() {
        writeln!(
            out,
            "energy: unavailable (the machine file has no [power]): ranked by time and \
             node-hours"
        )?;
    } else {
        writeln!(
            out,
            "energy: {}, {}",
            plan.energy_scope.describe_read(plan.energy_read),
            plan.energy_read.clause()
        )?;
    }
    writeln!(out)?;
    front_table(plan, max_rows, out)?;
    writeln!(out)?;
    match plan.recommendation() {
        Some(f) => {
            let p = &f.prediction;
            writeln!(
                out,
                "Recommendation: {} = {} x {} at {} GHz, {}",
                label(&p.config),
                count(p.config.nodes, "node", "nodes"),
                count(p.config.cores, "core", "cores"),
                p.config.freq.ghz(),
                crate::units::gpus_per_node(p.config.gpus, p.config.gpu_clock_mhz)
            )?;
            writeln!(out, "  why: {}", plan.answer.reason)?;
            if let Some(c) = &plan.chance {
                writeln!(
                    out,
                    "  may also meet it: {}",
                    crate::search::chance::describe(c)
                )?;
            }
            breakdown(p, out)?;
            measure_next(plan, out)?;
        }
        None => writeln!(out, "No recommendation: {}", plan.answer.reason)?,
    }
    Ok(())
}

impl Exporter for Text {
    fn plan(&self, plan: &Plan, out: &mut dyn Write) -> io::Result<()> {
        // Buffered: a --full front of a million points is a million lines, otherwise each a
        // write of its own to a line-buffered standard output.
        let mut buffered = io::BufWriter::with_capacity(1 << 16, out);
        plan_text(plan, self.max_rows, &mut buffered)?;
        buffered.flush()
    }

    fn prediction(&self, p: PredictionView<'_>, out: &mut dyn Write) -> io::Result<()> {
        match p {
            PredictionView::Finite(p) => {
                writeln!(out, "{}", label(&p.config))?;
                breakdown(p, out)
            }
            PredictionView::Saturated { config, rho } => writeln!(
                out,
                "{}: network-saturated (rho = {rho:.3} >= 1): the switch cannot serve the messages of {} nodes, \
                 so the model has no finite time",
                label(config),
                config.nodes
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::range_cell;

    #[test]
    fn a_range_cell_says_how_far_each_end_lies_from_the_point() {
        assert_eq!(range_cell(6.0, Some((5.916, 6.084))), "-1.4% +1.4%");
        // Ten percent and more in whole percents; an end at the point itself is 0.
        assert_eq!(range_cell(59.13, Some((59.13, 224.1))), "0% +279%");
        assert_eq!(range_cell(100.0, Some((90.0, 110.0))), "-10% +10%");
        // A point measured, or without a time to be relative to, has none.
        assert_eq!(range_cell(6.0, None), "-");
        assert_eq!(range_cell(0.0, Some((0.0, 1.0))), "-");
    }
}
