//! The GPU clock in a job script (MODEL.md 6e): why the recommendation's clock, against the
//! fastest clock of its layout, and Slurm's `--gpu-freq` that sets it (sbatch(1):
//! `--gpu-freq=[<type]=value>[,<type=value>][,verbose]`, a value without a type the GPU clock
//! in MHz, `memory=` the memory clock).

use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::model::{Model, Outcome, Prediction};

/// What a job script says of its GPU clock.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuClockNote {
    /// The clock set, MHz.
    pub mhz: f64,
    /// The machine's supported range, `595-1164 MHz`.
    pub supported: String,
    /// The memory clock the machine file names, MHz.
    pub memory_mhz: Option<f64>,
    /// The clocks the law was fitted on, `633-1164 MHz (measured: 633, 975, 1164)`; `None`: no
    /// law, the one clock the profile was measured at.
    pub measured: Option<String>,
    /// The same layout at the profile's reference (fastest measured) clock: MHz, time, energy.
    pub reference: Option<(f64, f64, f64)>,
}

/// The note for a prediction at a GPU clock, or with GPUs of a profile measured at one clock
/// without a law (`None` otherwise).
pub fn note(machine: &Machine, profile: &Profile, p: &Prediction) -> Option<GpuClockNote> {
    let supported = supported(&machine.gpu_clocks_mhz);
    let Some(law) = profile.gpu_clock.as_ref() else {
        return (p.config.gpus > 0)
            .then_some(profile.measured_gpu_clock_mhz)
            .flatten()
            .map(|mhz| GpuClockNote {
                mhz,
                supported,
                memory_mhz: machine.gpu_memory_clock_mhz,
                measured: None,
                reference: None,
            });
    };
    let mhz = p.config.gpu_clock_mhz?;
    let reference = Model::new(machine, profile).ok().and_then(|m| {
        let at = crate::model::Config {
            gpu_clock_mhz: Some(law.reference_mhz),
            ..p.config
        };
        match m.predict(at).ok()? {
            Outcome::Finite(r) => Some((law.reference_mhz, r.time.0, r.energy.0)),
            Outcome::Saturated { .. } => None,
        }
    });
    Some(GpuClockNote {
        mhz,
        supported,
        memory_mhz: machine.gpu_memory_clock_mhz,
        measured: Some(law.range_text()),
        reference,
    })
}

/// The machine's supported GPU clocks as a range, `595-1164 MHz`.
fn supported(c: &[f64]) -> String {
    match (c.first(), c.last()) {
        (Some(lo), Some(hi)) => format!("{lo}-{hi} MHz"),
        _ => "the machine's clocks".into(),
    }
}

impl GpuClockNote {
    /// The header's comment lines.
    pub fn comment(&self, p: &Prediction) -> Vec<String> {
        let memory = match self.memory_mhz {
            Some(m) => format!("memory {m} MHz"),
            None => "memory clock: the site's default (the machine file names none)".into(),
        };
        let mut v = vec![format!(
            "GPU clock: {} MHz of {} ({memory})",
            self.mhz, self.supported
        )];
        if let Some((r, t, e)) = self.reference {
            v.push(format!(
                "  predicted {} time and {} energy against {r} MHz, the fastest clock measured, at \
                 the same nodes, cores, frequency and GPUs",
                crate::units::signed_percent(p.time.0 / t - 1.0, 1),
                crate::units::signed_percent(p.energy.0 / e - 1.0, 1)
            ));
        }
        v.push(match &self.measured {
            Some(m) => format!("  the clock law was fitted on {m} (nothing outside it is planned)"),
            None => "  the one clock the profile was measured at (no clock law: the predictions \
                     hold there, so the job asks for it)"
                .into(),
        });
        v
    }

    /// The `#SBATCH --gpu-freq=...` value: the numeric clock (never a keyword whose meaning
    /// depends on the site), the memory clock where the machine file names it, and `verbose`
    /// so that the job's log shows the clocks set.
    pub fn gpu_freq(&self) -> String {
        let memory = self
            .memory_mhz
            .map_or(String::new(), |m| format!(",memory={m}"));
        format!("{}{memory},verbose", self.mhz)
    }
}

/// The clock axis of a recommendation: time and energy at every clock of the searched space
/// for its nodes, cores, frequency and GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockAxis {
    /// One row per clock, ascending.
    pub rows: Vec<ClockRow>,
    /// The recommendation's clock, MHz.
    pub chosen: f64,
    /// The time limit the query applied, s, where it applied one.
    pub time_limit: Option<f64>,
}

/// One clock of a [`ClockAxis`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockRow {
    /// The clock, MHz.
    pub mhz: f64,
    /// Predicted time, s.
    pub time_s: f64,
    /// Predicted energy, J.
    pub energy_j: f64,
    /// Whether the clock was measured (the law reproduces it).
    pub measured: bool,
}

/// The axis of the plan's recommendation (`None` without a recommendation at a GPU clock or
/// with fewer than two clocks searched).
pub fn axis(model: &Model<'_>, plan: &crate::search::plan::Plan) -> Option<ClockAxis> {
    let rec = &plan.recommendation()?.prediction;
    let chosen = rec.config.gpu_clock_mhz?;
    let law = model.profile.gpu_clock.as_ref()?;
    if plan.space.gpu_clocks.len() < 2 {
        return None;
    }
    let rows = plan
        .space
        .gpu_clocks
        .iter()
        .filter_map(|&mhz| {
            let c = crate::model::Config {
                gpu_clock_mhz: Some(mhz),
                ..rec.config
            };
            match model.predict(c).ok()? {
                Outcome::Finite(p) => Some(ClockRow {
                    mhz,
                    time_s: p.time.0,
                    energy_j: p.energy.0,
                    measured: law.measured(mhz),
                }),
                Outcome::Saturated { .. } => None,
            }
        })
        .collect();
    Some(ClockAxis {
        rows,
        chosen,
        time_limit: plan.answer.time_limit.map(|t| t.0),
    })
}

/// The axis as an HTML section: a table of time and energy against the clock, the chosen
/// clock marked, measured clocks named, and the time limit's line.
pub fn axis_html(w: &mut String, a: &ClockAxis, (energy, time_only): (&str, bool)) {
    use std::fmt::Write;
    // Readable at any scale (a kernel's 17.3 us and 1.7 mJ were `0.000017` and `0.0017`);
    // without measured power the model's energy is node-seconds, shown as node-hours.
    let (energy, head) = match time_only {
        true => ("node-hours", "node-hours"),
        false => (energy, "energy"),
    };
    let cell = |j: f64| match time_only {
        true => crate::units::node_hours_cell(j / 3600.0),
        false => crate::units::fmt_energy(crate::units::Joules(j)),
    };
    let _ = writeln!(
        w,
        "<h2 id=\"gpu-clock-axis\">GPU clock</h2>\n<p>Time and {energy} against the GPU core \
         clock for the recommendation's nodes, cores, frequency and GPUs; measured clocks are \
         marked, the others come from the clock law (MODEL.md 6e).{}</p>",
        a.time_limit.map_or(String::new(), |t| format!(
            " The query's time limit is {} (the unit of the table's times): clocks whose time \
             is above it are marked over the time limit.",
            crate::units::fmt_duration(crate::units::Seconds(t))
        ))
    );
    let _ = writeln!(
        w,
        "<table><tr><th>GPU MHz</th><th>time</th><th>{head}</th><th class=\"l\">clock</th></tr>"
    );
    for r in &a.rows {
        let over = a.time_limit.is_some_and(|t| r.time_s > t);
        let what = [
            (r.measured, "measured"),
            (r.mhz == a.chosen, "recommended"),
            (over, "over the time limit"),
        ]
        .iter()
        .filter(|x| x.0)
        .map(|x| x.1)
        .collect::<Vec<_>>()
        .join(", ");
        let _ = writeln!(
            w,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{what}</td></tr>",
            if r.mhz == a.chosen {
                " class=\"pick\""
            } else {
                ""
            },
            r.mhz,
            crate::units::fmt_duration(crate::units::Seconds(r.time_s)),
            cell(r.energy_j)
        );
    }
    let _ = writeln!(w, "</table>");
    match crate::report::plot::gpu_clock_svg(a, time_only) {
        Ok(svg) => {
            let svg = crate::report::markup::inline_svg(&svg);
            let _ = writeln!(w, "<div id=\"gpu-clock-plot\">{svg}</div>");
        }
        Err(e) => {
            let e = crate::report::markup::esc(&e);
            let _ = writeln!(
                w,
                "<p class=\"note\">The clock chart could not be drawn: {e}</p>"
            );
        }
    }
}
