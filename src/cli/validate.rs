//! `jouleplan validate`: flags -> held-out measurements -> predictions -> the error table.

use super::{SourceArgs, bind, fit_to_machine, load_machine, load_profile, trust, values};
use crate::artefact::validation::{
    BlockOut, CoverageOut, NotPredictedOut, PointOut, ReasonOut, StatsOut, VALIDATION_FORMAT,
    ValidationOut,
};
use crate::calibrate::repeats::{Repeats, Replay};
use crate::calibrate::reproduce::EnergyScope;
use crate::calibrate::validate::{self, Compared, CsvFile, ErrorStats, Measured};
use crate::error::InputError;
use crate::model::Config;
use crate::model::machine::Machine;
use crate::model::workload::{BaselinePoint, Profile, freq_key};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `jouleplan validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Measured runs to predict: CSV with columns nodes,cores,freq_hz,gpus,time_s and
    /// optionally energy_j (whole node) or gpu_energy_j [default: the profile's own measured
    /// points, held out with --use-cores].
    #[arg(long, value_name = "CSV")]
    pub measured: Option<PathBuf>,
    /// Past Slurm jobs to predict: `sacct -P` output with the fields JobID, NNodes, NCPUS,
    /// Elapsed and ConsumedEnergyRaw (NTasks, State and ReqCPUFreq where known), one row per
    /// completed job step.
    #[arg(long, value_name = "FILE", conflicts_with = "measured")]
    pub sacct: Option<PathBuf>,
    /// What sacct's ConsumedEnergyRaw covers on this cluster: node (IPMI, a node's whole
    /// draw) or cpu (RAPL: packages and DRAM).
    #[arg(long, value_name = "SCOPE", default_value = "node", value_parser = ["node", "cpu"])]
    pub energy_scope: String,
    /// Fit on the profile's measured points at these core counts only (1,4,16); its other
    /// measured points are predicted as held-out measurements.
    #[arg(long, value_name = "SPEC")]
    pub use_cores: Option<String>,
    /// Fit on the profile's measured points at these frequencies only (GHz: 0.6,0.8,1.1); with
    /// --use-cores, at those core counts and these frequencies.
    #[arg(long, value_name = "GHZ,...")]
    pub use_freqs: Option<String>,
    /// Also leave each measured core count strictly inside the measured range out in turn,
    /// and predict it from the others.
    #[arg(long)]
    pub loo: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Draw predicted against measured (the first set of points: time, and energy when
    /// measured; log axes, y = x and a ±10% band) to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// The order rows are shown in: by configuration (nodes, cores, frequency, GPUs, as the
/// columns), runs of one configuration in the order read.
pub(crate) fn by_configuration(a: &Compared, b: &Compared) -> std::cmp::Ordering {
    let (x, y) = (&a.measured.config, &b.measured.config);
    (x.nodes, x.cores)
        .cmp(&(y.nodes, y.cores))
        .then(x.freq.0.total_cmp(&y.freq.0))
        .then(x.gpus.cmp(&y.gpus))
}

/// A block of results: what was fitted, the rows and their statistics.
pub(crate) struct Block {
    pub(crate) title: String,
    pub(crate) rows: Vec<Compared>,
    /// The intervals' nominal coverage.
    pub(crate) coverage: f64,
    /// Whether the ranges beyond the measured node counts are bounds (a profile measured on
    /// one node, no node law), not intervals: then no coverage is stated.
    pub(crate) bounds: bool,
    /// Time and energy error statistics over every measured run.
    stats: (ErrorStats, ErrorStats),
}

impl Block {
    /// The block, its ranges called bounds where `bounds` (a profile without a node law).
    fn bounds_if(self, bounds: bool) -> Block {
        Block { bounds, ..self }
    }

    /// A block of `rows` (sorted by configuration: nodes, cores, frequency, GPUs, as the columns), its
    /// statistics over every run read again from `runs` (without it, each row is one run).
    pub(crate) fn new(
        title: String,
        rows: Vec<Compared>,
        coverage: f64,
        runs: Option<&dyn Replay>,
    ) -> anyhow::Result<Block> {
        let stats = validate::summary(&rows, runs)?;
        // Shown by configuration, not in the file's order (the statistics are over every run,
        // in any order).
        let mut rows = rows;
        rows.sort_by(by_configuration);
        Ok(Block {
            title,
            rows,
            coverage,
            bounds: false,
            stats,
        })
    }
}

/// Runs `validate`.
pub fn run_validate(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(p) = &args.plot {
        super::plan::check_plot_path(p)?;
    }
    let _lock = super::outputs::lock(&args.plot.iter().map(|p| p.as_path()).collect::<Vec<_>>())?;
    let machine = load_machine(args.source.machine.as_deref())?;
    let mut profile = load_profile(args.source.profile.as_deref())?;
    trust::machine_matches(&machine, &profile, accept(&args.source))?;
    // Held-out profile points describe the baseline run itself: predict them with S = S_s.
    let given = args.measured.as_ref().or(args.sacct.as_ref());
    let own = given.is_none();
    if own {
        profile.target_iterations = profile.baseline_iterations;
    }
    let mut blocks = Vec::new();
    let mut notes = Vec::new();
    let held_out = args.use_cores.is_some() || args.use_freqs.is_some();
    let measured = match (&args.measured, &args.sacct) {
        (Some(path), _) => validate::read_csv_file(path)?,
        (None, Some(path)) => {
            // clap allows node and cpu only.
            let scope = EnergyScope::from_name(&args.energy_scope).unwrap_or(EnergyScope::Node);
            let text = crate::input::read_table(path)?;
            crate::calibrate::sacct_runs::read(path, &text, &machine, scope)?
        }
        (None, None) if held_out => hold_out(&mut profile, args)?,
        (None, None) => profile
            .baseline
            .iter()
            .filter(|p| p.measured)
            .map(|p| as_measured(&profile, p))
            .collect(),
    };
    let loo_source = profile.clone();
    notes.extend(fit_to_machine(&mut profile, &machine));
    let mut t = trust::Trust::default();
    // `validate` measures model error: it scores whatever the checks say, and prints them.
    let scoring = SourceArgs {
        accept_model_error: true,
        ..args.source.clone()
    };
    let model = bind(&machine, &profile, &scoring, &mut t, &mut notes)?;
    let csv = args.measured.as_deref().map(CsvFile);
    let block = Block::new(
        format!(
            "fitted on {} ({}); predicted: {}",
            profile.file.display(),
            fitted_cores(&loo_source),
            given.map_or("the profile's own measured points".to_string(), |p| p
                .display()
                .to_string())
        ),
        validate::compare(&model, &measured)?,
        model.coverage(),
        csv.as_ref().map(|c| c as &dyn Replay),
    )?;
    blocks.push(block.bounds_if(profile.node_law.is_none()));
    if let Some(path) = given {
        refuse_if_nothing_predicted(path, &blocks[0].rows)?;
    }
    if args.loo {
        blocks.push(leave_one_out(&machine, &loo_source, &args.source)?);
    }
    if let Some(path) = &args.plot {
        plot(path, &blocks[0].rows)?;
        super::say::progress(&format!("wrote {}", path.display()));
    }
    if args.json {
        crate::artefact::write_sorted(&to_json(&blocks, &notes, &t.problems), out)?;
    } else {
        for n in &notes {
            super::say::note(n);
        }
        for b in &blocks {
            write_block(b, out)?;
        }
        write_problems(&t.problems, out)?;
    }
    Ok(())
}

/// Rows not predicted, grouped by why, most frequent first.
fn not_predicted_reasons(rows: &[Compared]) -> Vec<(String, usize)> {
    let mut by: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in rows {
        if let Some(why) = r.not_predicted.as_deref() {
            *by.entry(why).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = by.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// A measured CSV none of whose rows the model can predict validates nothing: bad input.
fn refuse_if_nothing_predicted(path: &std::path::Path, rows: &[Compared]) -> anyhow::Result<()> {
    if rows.iter().any(|r| r.not_predicted.is_none()) {
        return Ok(());
    }
    let why: Vec<String> = not_predicted_reasons(rows)
        .iter()
        .take(3)
        .map(|(w, n)| format!("{n} x {w}"))
        .collect();
    Err(InputError::Mismatch(format!(
        "{}: none of its {} configurations can be predicted with this profile and machine ({}): \
         measure inside the profile's range, or fit a profile on these runs with `jouleplan fit`",
        path.display(),
        rows.len(),
        why.join("; ")
    ))
    .into())
}

/// Draws the compared points of one block: time, and energy in its measured scope.
fn plot(path: &std::path::Path, rows: &[Compared]) -> anyhow::Result<()> {
    use crate::report::plot::chart_label;
    use crate::report::plot::validation::{Panel, write_validation};
    let (mut time, mut time_labels) = (Vec::new(), Vec::new());
    let (mut energy, mut energy_labels) = (Vec::new(), Vec::new());
    let mut scope = None;
    for r in rows {
        let name = chart_label(&r.measured.config);
        if let Some(p) = r.time_s {
            time.push((r.measured.time_s, p));
            time_labels.push(name.clone());
        }
        if let (Some(p), Some((m, s))) = (r.energy_j, r.measured.energy) {
            energy.push((m, p));
            energy_labels.push(name);
            scope = Some(s);
        }
    }
    let mut panels = vec![Panel {
        name: "time",
        pairs: time,
        labels: time_labels,
        label: crate::report::plot::time_label,
    }];
    if let Some(s) = scope {
        panels.push(Panel {
            name: s.name(),
            pairs: energy,
            labels: energy_labels,
            label: crate::report::plot::energy_label,
        });
    }
    write_validation(path, &panels).map_err(anyhow::Error::msg)
}

fn accept(src: &SourceArgs) -> trust::Accept {
    trust::Accept {
        other_machine: src.other_machine,
        model_error: src.accept_model_error,
    }
}

fn fitted_cores(p: &Profile) -> String {
    let c: Vec<u64> = p.core_counts().iter().map(|&c| u64::from(c)).collect();
    format!("cores {}", crate::model::workload::compact_list(&c))
}

/// Removes the measured points outside `--use-cores`/`--use-freqs` from the profile and
/// returns them as held-out measurements.
fn hold_out(profile: &mut Profile, args: &ValidateArgs) -> anyhow::Result<Vec<Measured>> {
    let described = profile.describe_points();
    let cores = args
        .use_cores
        .as_deref()
        .map(|s| values::parse_int_spec("--use-cores", s))
        .transpose()?;
    let freqs: Option<Vec<u64>> = args
        .use_freqs
        .as_deref()
        .map(|s| values::parse_ghz_values("--use-freqs", s))
        .transpose()?
        .map(|v| {
            v.iter()
                .map(|&hz| freq_key(crate::units::Hertz(hz)))
                .collect()
        });
    let held = profile.restrict(|p| {
        cores.as_ref().is_none_or(|c| c.contains(&p.cores))
            && freqs.as_ref().is_none_or(|f| f.contains(&freq_key(p.freq)))
    });
    if !profile.baseline.iter().any(|p| p.measured) {
        return Err(InputError::Argument {
            flag: "--use-cores/--use-freqs".into(),
            expected: format!("points the profile measured: {described}"),
            got: format!(
                "{} / {}",
                args.use_cores.as_deref().unwrap_or("all cores"),
                args.use_freqs.as_deref().unwrap_or("all frequencies")
            ),
        }
        .into());
    }
    Ok(held.iter().map(|p| as_measured(profile, p)).collect())
}

/// A measured baseline point as a one-node measurement.
fn as_measured(profile: &Profile, p: &BaselinePoint) -> Measured {
    let scope = profile.point_scope(p);
    Measured {
        config: Config {
            nodes: 1,
            cores: p.cores,
            freq: p.freq,
            gpus: p.gpus,
        },
        ranks: None,
        time_s: p.wall_time.0,
        energy: p.energy.map(|e| (e.0, scope)),
        source: "profile point".into(),
        runs: Repeats::one(p.wall_time.0, p.energy.map(|e| e.0)),
    }
}

/// Each measured core count strictly inside the measured range of its `(f, g)` group, left
/// out in turn and predicted from the others.
fn leave_one_out(machine: &Machine, profile: &Profile, src: &SourceArgs) -> anyhow::Result<Block> {
    let cores = profile.core_counts();
    let mut rows = Vec::new();
    for &c in cores.iter().skip(1).take(cores.len().saturating_sub(2)) {
        let mut p = profile.clone();
        let keep: Vec<u32> = cores.iter().copied().filter(|&k| k != c).collect();
        let held = p.restrict_cores(&keep);
        let measured: Vec<Measured> = held.iter().map(|h| as_measured(&p, h)).collect();
        fit_to_machine(&mut p, machine);
        let mut t = trust::Trust::default();
        let src = SourceArgs {
            accept_model_error: true,
            ..src.clone()
        };
        let model = bind(machine, &p, &src, &mut t, &mut Vec::new())?;
        rows.extend(validate::compare(&model, &measured)?);
    }
    Block::new(
        "leave-one-out: each interior measured core count predicted from the others".into(),
        rows,
        crate::model::evidence::DEFAULT_COVERAGE,
        None,
    )
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |e| format!("{:+.1}%", 100.0 * e))
}

/// One line a row, and its intervals under it.
fn write_rows(b: &Block, out: &mut dyn Write) -> std::io::Result<()> {
    for r in &b.rows {
        let c = &r.measured.config;
        writeln!(
            out,
            "  {:>5} {:>5} {:>6.2} {:>4} {:>10.3}s {:>11} {:>7} {:>12} {:>12} {:>7}",
            c.nodes,
            c.cores,
            c.freq.ghz(),
            c.gpus,
            r.measured.time_s,
            r.time_s.map_or("-".into(), |t| format!("{t:.3}s")),
            pct(r.time_error()),
            r.measured
                .energy
                .map_or("-".into(), |e| format!("{:.1}", e.0)),
            r.energy_j.map_or("-".into(), |e| format!("{e:.1}")),
            pct(r.energy_error()),
        )?;
        if let Some((t, e)) = r.interval {
            writeln!(out, "{}", interval_line(r, t, e))?;
        }
    }
    Ok(())
}

pub(crate) fn write_block(b: &Block, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "\n{}", b.title)?;
    writeln!(
        out,
        "  {:>5} {:>5} {:>6} {:>4} {:>11} {:>11} {:>7} {:>12} {:>12} {:>7}",
        "nodes",
        "cores",
        "GHz",
        "GPUs",
        "time",
        "predicted",
        "error",
        "energy J",
        "predicted",
        "error"
    )?;
    let with_iv = b.rows.iter().any(|r| r.interval.is_some());
    if with_iv {
        writeln!(
            out,
            "  {} (time s; energy J): where the measured value lies outside, *",
            ranges_name(b)
        )?;
    }
    write_rows(b, out)?;
    let skipped = not_predicted_reasons(&b.rows);
    let total: usize = skipped.iter().map(|s| s.1).sum();
    if total > 0 {
        writeln!(
            out,
            "  {total} of {} points not predicted, so not in the figures below:",
            b.rows.len()
        )?;
        for (why, n) in &skipped {
            writeln!(out, "    {n} x {why}")?;
        }
    }
    let (t, e) = b.stats;
    write_stats("time", &t, out)?;
    if e.n > 0 {
        let scope = b
            .rows
            .iter()
            .find_map(|r| r.measured.energy.map(|e| e.1.name()))
            .unwrap_or("energy");
        write_stats(scope, &e, out)?;
    }
    let c = validate::coverage(&b.rows);
    if c.time_points > 0 {
        let share = |k: usize, n: usize| 100.0 * k as f64 / n.max(1) as f64;
        writeln!(
            out,
            "  {} at node counts not measured held {} of {} measured times ({:.0}%) and {} of \
             {} measured energies ({:.0}%)",
            ranges_name(b),
            c.time_covered,
            c.time_points,
            share(c.time_covered, c.time_points),
            c.energy_covered,
            c.energy_points,
            share(c.energy_covered, c.energy_points)
        )?;
    }
    Ok(())
}

/// What a block's ranges beyond the measured node counts are: `80% intervals`, or bounds
/// from perfect division of the work to no gain (a one-node profile: no coverage to state).
fn ranges_name(b: &Block) -> String {
    if b.bounds {
        "bounds (perfect division of the work to no gain past the node measured)".into()
    } else {
        format!("{:.0}% intervals", 100.0 * b.coverage)
    }
}

/// A row's intervals, marked `*` where the measurement lies outside.
fn interval_line(r: &Compared, t: (f64, f64), e: Option<(f64, f64)>) -> String {
    let mark = |v: f64, (lo, hi): (f64, f64)| if lo <= v && v <= hi { " " } else { "*" };
    let mut s = format!(
        "  {:>29}[{:.3}, {:.3}]{}",
        "",
        t.0,
        t.1,
        mark(r.measured.time_s, t)
    );
    if let (Some(e), Some((m, _))) = (e, r.measured.energy) {
        s.push_str(&format!("  [{:.1}, {:.1}]{}", e.0, e.1, mark(m, e)));
    }
    s
}

/// The model checks that failed, beside the scores (`plan` refuses on them).
fn write_problems(problems: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nmodel check failed (scored all the same; plan refuses this without \
         --accept-model-error):"
    )?;
    for p in problems {
        writeln!(out, "  - {p}")?;
    }
    Ok(())
}

fn write_stats(what: &str, s: &ErrorStats, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "  {what}: mean absolute error {:.1}% (sd {:.1}%, max {:.1}%), SMAPE {:.1}%, over {}",
        s.mape,
        s.sd,
        s.max,
        s.smape,
        crate::units::count(s.n as u64, "point", "points")
    )
}

fn stats_json(s: &ErrorStats) -> StatsOut {
    StatsOut {
        points: s.n,
        mape_pct: s.mape,
        sd_pct: s.sd,
        max_pct: s.max,
        smape_pct: s.smape,
    }
}

fn to_json(blocks: &[Block], notes: &[String], problems: &[String]) -> ValidationOut {
    ValidationOut {
        format: VALIDATION_FORMAT.into(),
        notes: notes.to_vec(),
        validations: blocks.iter().map(block_json).collect(),
        model_problems: problems.to_vec(),
    }
}

pub(crate) fn block_json(b: &Block) -> BlockOut {
    let (t, e) = b.stats;
    let why = not_predicted_reasons(&b.rows);
    let skipped: usize = why.iter().map(|w| w.1).sum();
    let reasons = why
        .into_iter()
        .map(|(reason, points)| ReasonOut { reason, points })
        .collect();
    let c = validate::coverage(&b.rows);
    BlockOut {
        title: b.title.clone(),
        points: b.rows.iter().map(point_json).collect(),
        time: stats_json(&t),
        energy: stats_json(&e),
        not_predicted: NotPredictedOut {
            points: skipped,
            reasons,
        },
        interval_coverage: CoverageOut {
            time_points: c.time_points,
            time_covered: c.time_covered,
            energy_points: c.energy_points,
            energy_covered: c.energy_covered,
            nominal: (c.time_points > 0 && !b.bounds).then_some(b.coverage),
            kind: (c.time_points > 0).then(|| if b.bounds { "bounds" } else { "interval" }.into()),
        },
    }
}

fn point_json(r: &Compared) -> PointOut {
    let c = &r.measured.config;
    PointOut {
        nodes: c.nodes,
        cores: c.cores,
        freq_hz: c.freq.0,
        gpus: c.gpus,
        time_s: r.measured.time_s,
        predicted_time_s: r.time_s,
        time_error: r.time_error(),
        energy_j: r.measured.energy.map(|e| e.0),
        energy_scope: r.measured.energy.map(|e| e.1.name().to_string()),
        predicted_energy_j: r.energy_j,
        energy_error: r.energy_error(),
        source: r.measured.described_source(),
        runs: r.measured.runs.count,
        not_predicted: r.not_predicted.clone(),
        time_interval_s: r.interval.map(|i| [i.0.0, i.0.1]),
        energy_interval_j: r.interval.and_then(|i| i.1).map(|e| [e.0, e.1]),
    }
}
