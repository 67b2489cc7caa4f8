//! A recommendation's chance (MODEL.md section 7): the front configuration next to it that
//! would do better, predicted just past the limit it was chosen under but with its interval
//! reaching back within it. A 5% slowdown cap decided one GPU clock too high, or a deadline
//! missed by a fraction of a percent, is then named with what measuring it could save.

use super::query::{Answer, Cost};
use crate::model::Prediction;
use crate::model::evidence::IntervalKind;
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};

/// The limit the chance concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A deadline, or a slowdown's `(1 + th) T_ref`: the chance uses less energy.
    Time,
    /// An energy budget: the chance is faster.
    Energy,
}

/// A front configuration past the limit by its prediction, within it by its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Chance {
    /// Which limit.
    pub limit: Limit,
    /// The limit, s or J.
    pub value: f64,
    /// The chance's interval end on the limit's side (within it), s or J.
    pub near_end: f64,
    /// Its relative saving against the recommendation: energy (a time limit) or time (a
    /// budget).
    pub saving: f64,
    /// The chance.
    pub prediction: Prediction,
    /// The nominal coverage of its interval.
    pub coverage: f64,
    /// What the front's second axis counts (energy, or node-hours without power).
    pub cost: Cost,
}

/// The least saving worth naming a run for: one that the outputs' one decimal of a percent shows
/// (a neighbour saving less is printed as `0.0%` less, and a run to learn it costs more).
pub const MIN_SAVING: f64 = 0.0005;

/// The chance of the recommendation `rec` under `answer`'s single limit, from its neighbours on
/// the front `(faster, slower)`: the one on the far side of the limit (the slower under a time
/// limit, the faster under a budget), where its interval (never bounds) reaches within the
/// limit; `cost`, what the front's second axis counts. None under both limits at once, or none.
pub fn chance(
    answer: &Answer,
    rec: &Prediction,
    (faster, slower): (Option<&Prediction>, Option<&Prediction>),
    cost: Cost,
) -> Option<Chance> {
    let interval = |p: &Prediction| p.interval.filter(|iv| iv.kind == IntervalKind::Interval);
    let (limit, value, p) = match (answer.time_limit, answer.energy_limit) {
        (Some(t), None) => (Limit::Time, t.0, slower?),
        (None, Some(e)) => (Limit::Energy, e.0, faster?),
        _ => return None,
    };
    let iv = interval(p)?;
    let (past, near_end, saving) = match limit {
        Limit::Time => (
            p.time.0 > value,
            iv.time_s.0,
            1.0 - p.energy.0 / rec.energy.0,
        ),
        Limit::Energy => (
            p.energy.0 > value,
            iv.energy_j.0,
            1.0 - p.time.0 / rec.time.0,
        ),
    };
    (past && near_end <= value && saving >= MIN_SAVING).then_some(Chance {
        limit,
        value,
        near_end,
        saving,
        prediction: *p,
        coverage: iv.coverage,
        cost,
    })
}

/// The chance in words: `(1, 1, 2 GHz, 1, 1088 MHz) is predicted 0.1% past it (5.99 ms against
/// the limit's 5.985 ms), but its 80% interval reaches 5.92 ms, and it would use 3.1% less
/// energy (1.19 J): measure it to know`.
pub fn describe(c: &Chance) -> String {
    let p = &c.prediction;
    let (at, fmt): (f64, fn(f64) -> String) = match c.limit {
        Limit::Time => (p.time.0, |x| fmt_duration(Seconds(x))),
        Limit::Energy => (p.energy.0, |x| fmt_energy(Joules(x))),
    };
    let (mut at_s, mut limit_s) = (fmt(at), fmt(c.value));
    if at_s == limit_s {
        let unit = if c.limit == Limit::Time { " s" } else { " J" };
        let (a, l) = super::query::told_apart(at, c.value);
        (at_s, limit_s) = (a + unit, l + unit);
    }
    let gain = match (c.limit, c.cost) {
        (Limit::Energy, _) => format!("it would finish {:.1}% sooner", 100.0 * c.saving),
        (Limit::Time, Cost::Energy) => format!(
            "it would use {:.1}% less energy ({})",
            100.0 * c.saving,
            fmt_energy(p.energy)
        ),
        (Limit::Time, Cost::NodeHours) => {
            format!("it would use {:.1}% fewer node-hours", 100.0 * c.saving)
        }
    };
    format!(
        "{} is predicted {:.1}% past it ({at_s} against the limit's {limit_s}), but its {:.0}% \
         interval reaches {}, and {gain}: measure it to know",
        p.config.label(),
        100.0 * (at / c.value - 1.0),
        100.0 * c.coverage,
        fmt(c.near_end),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::evidence::Interval;
    use crate::model::{Config, Prediction};
    use crate::units::Hertz;

    /// An illustrative prediction at `mhz` with a 1% time and 2% energy interval.
    fn at(mhz: f64, time: f64, energy: f64) -> Prediction {
        Prediction {
            config: Config {
                nodes: 1,
                cores: 1,
                freq: Hertz(2e9),
                gpus: 1,
                gpu_clock_mhz: Some(mhz),
            },
            time: Seconds(time),
            energy: Joules(energy),
            ucr: 1.0,
            rho: 0.0,
            t: Default::default(),
            e: Default::default(),
            device: None,
            carried: Default::default(),
            interval: Some(Interval {
                time_s: (time / 1.01, time * 1.01),
                energy_j: (energy / 1.02, energy * 1.02),
                idle_w: 0.0,
                largest_measured: 1,
                power_rel: 0.0,
                energy_widen: 1.0,
                energy_span: (1.0, 1.0),
                coverage: 0.8,
                kind: IntervalKind::Interval,
                gpu_clock: (0.01, 0.02),
            }),
            time_only: false,
            whole_run: false,
        }
    }

    fn under(limit: f64) -> Answer {
        Answer {
            pick: Some(0),
            time_limit: Some(Seconds(limit)),
            energy_limit: None,
            reason: String::new(),
            feasible: true,
        }
    }

    #[test]
    fn a_neighbour_saving_what_one_decimal_of_a_percent_shows_is_named_and_less_is_not() {
        let rec = at(1126.0, 9.1, 2.500);
        // 0.2% past a 9.3 s limit, its interval reaching 9.21 s: named, saving 0.1%.
        let named = at(1088.0, 9.32, 2.4975);
        let c = chance(&under(9.3), &rec, (None, Some(&named)), Cost::Energy);
        assert!(c.is_some_and(|c| (c.saving - 0.001).abs() < 1e-9));
        // The same but saving 0.04% (printed as 0.0%): not worth a run, not named.
        let tiny = at(1088.0, 9.32, 2.499);
        assert_eq!(
            chance(&under(9.3), &rec, (None, Some(&tiny)), Cost::Energy),
            None
        );
    }
}
