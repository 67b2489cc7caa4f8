//! How the core frequency is set for the sweep (cpufreq, srun, or not at all), and the
//! frequencies it runs at.

use super::options::*;
use crate::measure::cpufreq::{self, Control, FreqGuard};

/// How the frequency is controlled, the frequencies to run at, and the note for the record.
pub(super) fn frequency_control(
    o: &Options,
    words: &[String],
    cpu_mhz: &[f64],
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<(Control, Vec<f64>, String)> {
    let control = control(o, words, cpu_mhz)?;
    let (freqs, note) = match (&control, &o.freqs) {
        (Control::Fixed { hz, why }, asked) => fixed(o, (*hz, why), asked.is_some(), log)?,
        (Control::Sysfs(g), Some(f)) => {
            if let Some(bad) = f.iter().find(|&&x| {
                !g.available.is_empty() && !g.available.iter().any(|&a| (a - x).abs() < 1e3)
            }) {
                return Err(crate::error::InputError::Mismatch(format!(
                    "--freqs: {:.3} GHz is not one the cpufreq driver offers ({} GHz)",
                    bad / 1e9,
                    g.available
                        .iter()
                        .map(|a| format!("{}", a / 1e9))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .into());
            }
            (
                f.clone(),
                format!("set with {}, restored after", g.describe()),
            )
        }
        (Control::Srun, Some(f)) => (f.clone(), "set with srun --cpu-freq".into()),
        (_, None) => unreachable!("a frequency list exists unless the control is Fixed"),
    };
    Ok((control, freqs, note))
}

/// How the frequency is set: srun (a launcher of the user's that is srun), cpufreq, or not at
/// all (the frequency the node runs at, read from cpufreq or /proc/cpuinfo).
fn control(o: &Options, words: &[String], cpu_mhz: &[f64]) -> anyhow::Result<Control> {
    let srun = words.first().is_some_and(|w| w.ends_with("srun"));
    if srun && o.freqs.is_some() {
        return Ok(Control::Srun);
    }
    let taken = match (FreqGuard::take(&o.roots.cpu), o.freqs.is_some()) {
        (Ok(g), true) => Ok(Control::Sysfs(g)),
        (Ok(_), false) => Err("no --freqs asked for".to_string()),
        (Err(e), _) => Err(e),
    };
    match taken {
        Ok(c) => Ok(c),
        Err(why) => {
            let hz = cpufreq::current_hz(&o.roots.cpu, cpu_mhz).ok_or_else(|| {
                anyhow::anyhow!(
                    "the core frequency can neither be set ({why}) nor read (no cpufreq, no \
                     `cpu MHz` in /proc/cpuinfo)"
                )
            })?;
            Ok(Control::Fixed { hz, why })
        }
    }
}

/// The node's own frequency `hz` (it cannot be set: `why`): refused when `--freqs` asked for
/// others, unless `--at-node-frequency`.
fn fixed(
    o: &Options,
    (hz, why): (f64, &str),
    asked: bool,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<(Vec<f64>, String)> {
    if asked && !o.at_node_frequency {
        return Err(crate::error::InputError::Argument {
            flag: "--freqs".into(),
            expected: format!(
                "frequencies this node can set, but it cannot set any ({why}): run where \
                 cpufreq or srun --cpu-freq works, drop --freqs, or add --at-node-frequency to \
                 measure every point at the node's {:.3} GHz",
                hz / 1e9
            ),
            got: o
                .freqs
                .iter()
                .flatten()
                .map(|f| format!("{:.3} GHz", f / 1e9))
                .collect::<Vec<_>>()
                .join(", "),
        }
        .into());
    }
    if asked {
        log(&format!(
            "frequency sweep not done (--at-node-frequency): {why}; every run goes at the \
             machine's {:.3} GHz",
            hz / 1e9
        ));
    }
    Ok((
        vec![hz],
        format!(
            "not set ({why}); runs at the machine's {:.3} GHz (cpufreq or /proc/cpuinfo)",
            hz / 1e9
        ),
    ))
}
