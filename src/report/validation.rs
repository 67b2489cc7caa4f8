//! `validate`'s outputs: each validation as a table (a row a measured configuration, its
//! intervals under it, the error statistics and the intervals' coverage) or as JSON
//! ([`ValidationOut`]).

use crate::artefact::validation::{
    BlockOut, CoverageOut, NotFittedOut, NotPredictedOut, PointOut, ReasonOut, StatsOut,
    VALIDATION_FORMAT, ValidationOut,
};
use crate::calibrate::validate::{
    Compared, ErrorStats, NotFitted, Validation, coverage, not_predicted_reasons,
};
use std::io::Write;

/// A time as the other outputs show one: `19.0 ms`, `7.25 s`, `7m18.6s`.
fn duration(s: f64) -> String {
    crate::units::fmt_duration(crate::units::Seconds(s))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |e| crate::units::signed_percent(e, 1))
}

/// One line a row, and its intervals under it.
/// Whether a row of the block names a GPU clock (the tables then show a GPU MHz column).
fn clocked(b: &Validation) -> bool {
    b.rows
        .iter()
        .any(|r| r.measured.config.gpu_clock_mhz.is_some())
}

/// The rows at GPU clocks beyond the clock law's measured range, where there are any: scored
/// with the others, the law carried beyond its clocks.
fn write_extrapolated(b: &Validation, out: &mut dyn Write) -> std::io::Result<()> {
    let mut clocks: Vec<f64> = b
        .rows
        .iter()
        .filter(|r| r.extrapolated)
        .filter_map(|r| r.measured.config.gpu_clock_mhz)
        .collect();
    if clocks.is_empty() {
        return Ok(());
    }
    let k = clocks.len() as u64;
    clocks.sort_by(f64::total_cmp);
    clocks.dedup();
    writeln!(
        out,
        "  {} at GPU clocks outside the clock law's measured range ({} MHz) {} scored with the \
         others, marked extrapolated: the law carried beyond its clocks (the time's residual \
         held at the nearest measured clock's, the power law extended, the interval growing \
         with the distance); `plan` does not go there",
        crate::units::part_of(k, b.rows.len() as u64, "point", "points"),
        crate::model::gpu_clock::mhz_list(&clocks),
        crate::units::is_are(k)
    )
}

fn write_rows(b: &Validation, out: &mut dyn Write) -> std::io::Result<()> {
    let clocked = clocked(b);
    let freqs: Vec<crate::units::Hertz> = b.rows.iter().map(|r| r.measured.config.freq).collect();
    let d = crate::units::ghz_decimals(&freqs);
    for r in &b.rows {
        let c = &r.measured.config;
        let mhz = match (clocked, c.gpu_clock_mhz) {
            (false, _) => String::new(),
            (true, Some(m)) => format!(" {m:>7}"),
            (true, None) => format!(" {:>7}", "-"),
        };
        writeln!(
            out,
            "  {:>5} {:>5} {:>6.d$} {:>4}{mhz} {:>11} {:>11} {:>7} {:>12} {:>12} {:>7}{}",
            c.nodes,
            c.cores,
            c.freq.ghz(),
            c.gpus,
            duration(r.measured.time_s),
            r.time_s.map_or("-".into(), duration),
            pct(r.time_error()),
            r.measured
                .energy
                .map_or("-".into(), |e| crate::units::joules_cell(e.0)),
            r.energy_j.map_or("-".into(), crate::units::joules_cell),
            pct(r.energy_error()),
            if r.extrapolated { "  extrapolated" } else { "" },
        )?;
        if let Some((t, e)) = r.interval {
            writeln!(out, "{}", interval_line(r, t, e))?;
        }
    }
    Ok(())
}

/// One validation as a table, its title first (the caller puts a blank line between blocks).
pub fn write_block(b: &Validation, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", b.title)?;
    let mhz = if clocked(b) {
        format!(" {:>7}", "GPU MHz")
    } else {
        String::new()
    };
    writeln!(
        out,
        "  {:>5} {:>5} {:>6} {:>4}{mhz} {:>11} {:>11} {:>7} {:>12} {:>12} {:>7}",
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
            "  {} (time; energy J): where the measured value lies outside, *",
            b.ranges_name()
        )?;
    }
    write_rows(b, out)?;
    let skipped = not_predicted_reasons(&b.rows);
    let total: usize = skipped.iter().map(|s| s.1).sum();
    if total > 0 {
        writeln!(
            out,
            "  {} not predicted, so not in the figures below:",
            crate::units::part_of(total as u64, b.rows.len() as u64, "point", "points")
        )?;
        for (why, n) in &skipped {
            writeln!(out, "    {n} x {why}")?;
        }
    }
    write_summary(b, out)?;
    let c = coverage(&b.rows);
    if c.time_points > 0 {
        let share = |k: usize, n: usize| 100.0 * k as f64 / n.max(1) as f64;
        let part = |k: usize, n: usize, one: &str, many: &str| {
            crate::units::part_of(
                k as u64,
                n as u64,
                &format!("measured {one}"),
                &format!("measured {many}"),
            )
        };
        // No energy interval scored (none measured, or none priced): no "0 of 0 (0%)".
        let energy = match c.energy_points {
            0 => String::new(),
            n => format!(
                " and {} ({:.0}%)",
                part(c.energy_covered, n, "energy", "energies"),
                share(c.energy_covered, n)
            ),
        };
        writeln!(
            out,
            "  {} at {} not measured held {} ({:.0}%){energy}",
            b.ranges_name(),
            where_not_measured(&b.rows),
            part(c.time_covered, c.time_points, "time", "times"),
            share(c.time_covered, c.time_points),
        )?;
    }
    Ok(())
}

/// The error statistics of a block, and how many of its configurations the fit saw.
fn write_summary(b: &Validation, out: &mut dyn Write) -> std::io::Result<()> {
    let (t, e) = b.stats;
    let scored = |f: fn(&Compared) -> Option<f64>| b.rows.iter().filter(|r| f(r).is_some()).count();
    write_stats("time", &t, scored(Compared::time_error), out)?;
    if e.n > 0 {
        write_stats(energy_name(b), &e, scored(Compared::energy_error), out)?;
    }
    if let Some(why) = &b.energy_not_scored {
        writeln!(out, "  {why}")?;
    }
    write_extrapolated(b, out)?;
    if let Some(k) = b.fitted_on.filter(|&k| k > 0) {
        let clocked = b
            .rows
            .iter()
            .any(|r| r.measured.config.gpu_clock_mhz.is_some());
        writeln!(
            out,
            "  {} {} at what the profile was fitted on ({}): their errors show how the fit \
             reproduces its runs, not how it predicts",
            crate::units::part_of(
                k as u64,
                b.rows.len() as u64,
                "configuration",
                "configurations"
            ),
            crate::units::is_are(k as u64),
            match clocked {
                true => "its measured GPU clocks",
                false => "its measured points at 1 node, its node law's node counts",
            }
        )?;
    }
    if let Some(n) = &b.not_fitted {
        write_not_fitted(n, energy_name(b), out)?;
    }
    Ok(())
}

/// What the block's energy is called: the measured scope's name.
fn energy_name(b: &Validation) -> &'static str {
    b.rows
        .iter()
        .find_map(|r| r.measured.energy.map(|e| e.1.name()))
        .unwrap_or("energy")
}

/// The errors at the configurations the profile was not fitted on, in one line: `at the 13
/// configurations not fitted on: time 0.8% mean absolute error (max 1.6%), GPU energy ...`.
fn write_not_fitted(n: &NotFitted, energy: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let (t, e) = n.stats;
    let part = |what: &str, s: &ErrorStats| {
        format!(
            "{what} {:.1}% mean absolute error (max {:.1}%)",
            s.mape, s.max
        )
    };
    let runs = match t.n == n.configurations {
        true => String::new(),
        false => format!(" ({})", crate::units::count(t.n as u64, "run", "runs")),
    };
    let mut line = format!(
        "  at the {}{runs} not fitted on: {}",
        crate::units::count(n.configurations as u64, "configuration", "configurations"),
        part("time", &t)
    );
    if e.n > 0 {
        line += &format!(", {}", part(energy, &e));
    }
    writeln!(out, "{line}")
}

/// Where the rows with intervals lie: node counts, GPU clocks, or both, not measured.
fn where_not_measured(rows: &[Compared]) -> &'static str {
    let clocked = rows
        .iter()
        .any(|r| r.measured.config.gpu_clock_mhz.is_some());
    let nodes = rows.iter().any(|r| r.measured.config.nodes > 1);
    match (clocked, nodes) {
        (true, true) => "node counts and GPU clocks",
        (true, false) => "GPU clocks",
        _ => "node counts",
    }
}

/// A row's intervals, marked `*` where the measurement lies outside.
fn interval_line(r: &Compared, t: (f64, f64), e: Option<(f64, f64)>) -> String {
    let mark = |v: f64, (lo, hi): (f64, f64)| if lo <= v && v <= hi { " " } else { "*" };
    let mut s = format!(
        "  {:>29}[{}, {}]{}",
        "",
        duration(t.0),
        duration(t.1),
        mark(r.measured.time_s, t)
    );
    if let (Some(e), Some((m, _))) = (e, r.measured.energy) {
        let outside = mark(m, e) == "*";
        let end = |x: f64| match outside {
            true => apart(x, m),
            false => crate::units::joules_cell(x),
        };
        s.push_str(&format!("  [{}, {}]{}", end(e.0), end(e.1), mark(m, e)));
    }
    s
}

/// An interval's end in J as the table's energies are printed, with more decimals where it
/// would print as the measured energy `m` but is not it: a measurement marked outside its
/// interval never reads as on its end (`1.27` against `[1.11, 1.27]*` is `[1.11, 1.2698]*`).
fn apart(end: f64, m: f64) -> String {
    let cell = crate::units::joules_cell(end);
    if end == m || cell != crate::units::joules_cell(m) {
        return cell;
    }
    (3..=9)
        .map(|k| (format!("{end:.k$}"), format!("{m:.k$}")))
        .find(|(a, b)| a != b)
        .map_or(cell, |(a, _)| a)
}

/// The model checks that failed, beside the scores (`plan` refuses on them).
pub fn write_problems(problems: &[String], out: &mut dyn Write) -> std::io::Result<()> {
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

/// One statistic's line: over `s.n` runs, at `configs` configurations (the table's rows) where
/// repeats make the two differ.
fn write_stats(
    what: &str,
    s: &ErrorStats,
    configs: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if s.n == 0 {
        return writeln!(out, "  {what}: no error figures: nothing was predicted");
    }
    let over = if s.n == configs {
        crate::units::count(s.n as u64, "point", "points")
    } else {
        format!(
            "{} at {}",
            crate::units::count(s.n as u64, "run", "runs"),
            crate::units::count(configs as u64, "configuration", "configurations")
        )
    };
    writeln!(
        out,
        "  {what}: mean absolute error {:.1}% (sd {:.1}%, max {:.1}%), SMAPE {:.1}%, over {over}",
        s.mape, s.sd, s.max, s.smape,
    )
}

fn stats_json(s: &ErrorStats) -> StatsOut {
    let some = |v: f64| (s.n > 0).then_some(v);
    StatsOut {
        points: s.n,
        mape_pct: some(s.mape),
        sd_pct: some(s.sd),
        max_pct: some(s.max),
        smape_pct: some(s.smape),
    }
}

pub fn to_json(blocks: &[Validation], notes: &[String], problems: &[String]) -> ValidationOut {
    ValidationOut {
        format: VALIDATION_FORMAT.into(),
        notes: notes.to_vec(),
        validations: blocks.iter().map(block_json).collect(),
        model_problems: problems.to_vec(),
    }
}

pub fn block_json(b: &Validation) -> BlockOut {
    let (t, e) = b.stats;
    let why = not_predicted_reasons(&b.rows);
    let skipped: usize = why.iter().map(|w| w.1).sum();
    let reasons = why
        .into_iter()
        .map(|(reason, points)| ReasonOut { reason, points })
        .collect();
    let c = coverage(&b.rows);
    BlockOut {
        title: b.title.clone(),
        points: b.rows.iter().map(point_json).collect(),
        time: stats_json(&t),
        energy: b.energy_not_scored.is_none().then(|| stats_json(&e)),
        energy_not_scored: b.energy_not_scored.clone(),
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
        not_fitted_on: b.not_fitted.map(|n| NotFittedOut {
            configurations: n.configurations,
            time: stats_json(&n.stats.0),
            energy: (b.energy_not_scored.is_none() && n.stats.1.n > 0)
                .then(|| stats_json(&n.stats.1)),
        }),
    }
}

fn point_json(r: &Compared) -> PointOut {
    let c = &r.measured.config;
    PointOut {
        nodes: c.nodes,
        cores: c.cores,
        freq_hz: c.freq.0,
        gpus: c.gpus,
        gpu_clock_mhz: c.gpu_clock_mhz,
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
        extrapolated: r.extrapolated,
    }
}

#[cfg(test)]
mod tests {
    use super::apart;

    #[test]
    fn an_interval_end_a_starred_measurement_crossed_never_prints_as_that_measurement() {
        // A newcomer's try: 1.2700 J measured against [1.11, 1.2698]* read `[1.11, 1.27]*`.
        assert_eq!(apart(1.2698, 1.2700), "1.2698");
        assert_eq!(apart(1.26999, 1.27), "1.26999");
        // Printed apart already, or equal: as the table prints energies.
        assert_eq!(apart(1.11, 1.27), "1.11");
        assert_eq!(apart(1.27, 1.27), "1.27");
    }
}
