//! Axis ranges and tick marks people read at a glance: 1-2-5 steps (linear) or 1-2-5 per
//! decade (logarithmic), with the range widened to the ticks just outside the data so every
//! datum lies between two labelled ticks, and tick labels in plain units (`200 ms`, `5 kJ`).

/// One axis: the data range widened to ticks, and whether it is logarithmic.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Logarithmic (the data span more than a decade).
    pub log: bool,
    /// Lower end, in data units.
    pub lo: f64,
    /// Upper end, in data units.
    pub hi: f64,
    /// Tick values, in data units, ascending.
    pub ticks: Vec<f64>,
    /// The axis's unit per data unit: 1, or 1/3600 where node-seconds are shown as
    /// node-hours (`lo`, `hi` and `ticks` are then in node-hours).
    pub scale: f64,
}

/// At most this many labelled ticks on an axis, unless told fewer.
pub const MAX_TICKS: usize = 12;

impl Axis {
    /// The axis for positive finite `values` (others ignored); `log` forces a scale, `None`
    /// chooses logarithmic when the data span more than a decade.
    pub fn new(values: impl Iterator<Item = f64>, log: Option<bool>) -> Axis {
        Axis::with_max_ticks(values, log, MAX_TICKS)
    }

    /// As [`Axis::new`] with at most `max` ticks (from the room the axis has).
    pub fn with_max_ticks(
        values: impl Iterator<Item = f64>,
        log: Option<bool>,
        max: usize,
    ) -> Axis {
        let max = max.clamp(3, MAX_TICKS);
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        if hi <= lo {
            (lo, hi) = (lo * 0.95, hi * 1.05 + 1e-300);
        }
        if log.unwrap_or(hi / lo > 10.0) {
            log_axis(lo, hi, max)
        } else {
            linear_axis(lo, hi, max)
        }
    }

    /// As [`Axis::new`] in another unit: each value times `scale` (node-seconds x 1/3600 =
    /// node-hours), with ticks round in that unit; [`Axis::map`] still takes data units.
    pub fn scaled(values: impl Iterator<Item = f64>, log: Option<bool>, scale: f64) -> Axis {
        let mut a = Axis::new(values.map(|v| v * scale), log);
        a.scale = scale;
        a
    }

    /// A linear axis from 0 to at least `max` (stacked bars), with round ticks.
    pub fn from_zero(max: f64, max_ticks: usize) -> Axis {
        let a = linear_axis(max * 1e-6, max.max(1e-300), max_ticks.clamp(3, MAX_TICKS));
        let ticks = std::iter::once(0.0)
            .chain(a.ticks.into_iter().filter(|t| *t > 0.0))
            .collect();
        Axis {
            log: false,
            lo: 0.0,
            hi: a.hi,
            ticks,
            scale: 1.0,
        }
    }

    /// A value in the axis's unit -> chart coordinate (log10 on a log axis).
    fn coord(&self, d: f64) -> f64 {
        if self.log { d.max(1e-300).log10() } else { d }
    }

    /// Data value -> chart coordinate (log10 on a log axis).
    pub fn map(&self, v: f64) -> f64 {
        self.coord(v * self.scale)
    }

    /// Chart coordinate -> data value.
    pub fn unmap(&self, x: f64) -> f64 {
        (if self.log { 10f64.powf(x) } else { x }) / self.scale
    }

    /// The range in chart coordinates, 3% wider than the ticks at both ends so that no point
    /// sits on the frame.
    pub fn range(&self) -> std::ops::Range<f64> {
        let (a, b) = (self.coord(self.lo), self.coord(self.hi));
        let pad = (b - a) * 0.03;
        (a - pad)..(b + pad)
    }

    /// The smallest gap between two ticks of a linear axis, in its unit (0 on a log axis,
    /// whose 1-2-5 ticks need no extra decimals).
    pub fn step(&self) -> f64 {
        if self.log {
            return 0.0;
        }
        self.ticks
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(0.0, |m: f64, d| if m == 0.0 { d } else { m.min(d) })
    }

    /// The ticks in chart coordinates.
    pub fn mapped_ticks(&self) -> Vec<f64> {
        self.ticks.iter().map(|&t| self.coord(t)).collect()
    }
}

fn log_axis(lo: f64, hi: f64, max: usize) -> Axis {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let candidates = |mults: &[f64], every: i32| -> Vec<f64> {
        let mut v = Vec::new();
        for k in k0 - 1..=k1 {
            if (k - k0).rem_euclid(every) != 0 {
                continue;
            }
            for m in mults {
                v.push(m * 10f64.powi(k));
            }
        }
        v
    };
    let widen = |all: &[f64]| -> (f64, f64) {
        let a = all
            .iter()
            .copied()
            .filter(|&t| t <= lo * (1.0 + 1e-9))
            .fold(f64::NAN, f64::max);
        let b = all
            .iter()
            .copied()
            .filter(|&t| t >= hi * (1.0 - 1e-9))
            .fold(f64::NAN, f64::min);
        (
            if a.is_nan() { lo } else { a },
            if b.is_nan() { hi } else { b },
        )
    };
    for (mults, every) in [
        (&[1.0, 2.0, 5.0][..], 1),
        (&[1.0, 3.0][..], 1),
        (&[1.0][..], 1),
        (&[1.0][..], 2),
        (&[1.0][..], 3),
    ] {
        let all = candidates(mults, every);
        let (a, b) = widen(&all);
        let ticks: Vec<f64> = all
            .into_iter()
            .filter(|&t| t >= a * (1.0 - 1e-9) && t <= b * (1.0 + 1e-9))
            .collect();
        if ticks.len() <= max {
            return Axis {
                log: true,
                lo: a,
                hi: b,
                ticks,
                scale: 1.0,
            };
        }
    }
    Axis {
        log: true,
        lo,
        hi,
        ticks: vec![lo, hi],
        scale: 1.0,
    }
}

fn linear_axis(lo: f64, hi: f64, max: usize) -> Axis {
    let span = hi - lo;
    let raw = span / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
        .iter()
        .map(|m| m * p)
        .find(|s| span / s <= (max - 1).min(8) as f64)
        .unwrap_or(50.0 * p);
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    let n = ((b - a) / step).round() as usize;
    let ticks = (0..=n)
        .map(|i| a + step * i as f64)
        .filter(|t| *t > 0.0 || a <= 0.0)
        .collect();
    Axis {
        log: false,
        lo: a.max(lo * 0.5),
        hi: b,
        ticks,
        scale: 1.0,
    }
}

/// The shortest rendering of a tick number (`200`, `1.5`, `0.02`), with enough decimals that
/// ticks `step` apart read apart (`8.6455`, not `8.646` twice; 0: no step known).
fn short_step(v: f64, step: f64) -> String {
    let needed = match step > 0.0 && step.is_finite() {
        true => (-step.log10()).ceil().max(0.0) as usize,
        false => 0,
    };
    let s = format!("{:.*}", needed.clamp(3, 9), v);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A tick label for a time in seconds: `500 us`, `200 ms`, `5 s`, `2000 s`, `50 h`. Ticks are
/// round numbers of seconds, so they stay in seconds up to a day (minutes would give 16.667).
pub fn time_label(s: f64) -> String {
    time_label_step(s, 0.0)
}

/// As [`time_label`] for ticks `step` seconds apart: as many decimals as tell them apart.
pub fn time_label_step(s: f64, step: f64) -> String {
    if s == 0.0 {
        "0".into()
    } else if s < 1e-3 {
        format!("{} us", short_step(s * 1e6, step * 1e6))
    } else if s < 1.0 {
        format!("{} ms", short_step(s * 1e3, step * 1e3))
    } else if s < 1e5 {
        format!("{} s", short_step(s, step))
    } else {
        format!("{} h", short_step(s / 3600.0, step / 3600.0))
    }
}

/// A tick label for node-seconds shown as node-hours: `0.02`, `1.5`, `200` (two significant
/// digits at least).
pub fn node_hours_label(node_s: f64) -> String {
    let h = node_s / 3600.0;
    if h == 0.0 || !h.is_finite() {
        return "0".into();
    }
    let decimals = (1 - h.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{h:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A tick label for an energy in joules: `500 J`, `2 kJ`, `1.5 MJ`; `0.5 mJ`, `20 uJ` under a
/// joule (a GPU kernel's: in J, three decimals read 0.0005 and 0.001 both as `0.001 J`).
pub fn energy_label(j: f64) -> String {
    energy_label_step(j, 0.0)
}

/// As [`energy_label`] for ticks `step` joules apart: as many decimals as tell them apart.
pub fn energy_label_step(j: f64, step: f64) -> String {
    let (unit, name) = match j {
        j if j < 1e-3 => (1e-6, "uJ"),
        j if j < 1.0 => (1e-3, "mJ"),
        j if j < 1e3 => (1.0, "J"),
        j if j < 1e6 => (1e3, "kJ"),
        j if j < 1e9 => (1e6, "MJ"),
        _ => (1e9, "GJ"),
    };
    if j == 0.0 {
        "0".into()
    } else {
        format!("{} {name}", short_step(j / unit, step / unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_ticks_under_a_joule_read_apart() {
        let labels: Vec<String> = [0.0005, 0.001, 0.0015, 0.002]
            .iter()
            .map(|&j| energy_label(j))
            .collect();
        assert_eq!(labels, ["500 uJ", "1 mJ", "1.5 mJ", "2 mJ"]);
        assert_eq!(energy_label(0.106), "106 mJ");
        assert_eq!(energy_label(2500.0), "2.5 kJ");
    }

    #[test]
    fn log_ticks_are_1_2_5_and_enclose_the_data() {
        let a = Axis::new([463.0, 492.0, 100e3].into_iter(), None);
        assert!(a.log);
        assert!(a.lo <= 463.0 && a.hi >= 100e3);
        assert_eq!(a.ticks[0], 200.0);
        assert!(a.ticks.contains(&500.0) && a.ticks.contains(&1000.0) && a.ticks.contains(&2000.0));
        assert!(a.ticks.len() <= MAX_TICKS);
        for t in &a.ticks {
            let m = t / 10f64.powf(t.log10().floor());
            assert!([1.0, 2.0, 5.0].iter().any(|x| (m - x).abs() < 1e-9), "{t}");
        }
    }

    #[test]
    fn linear_ticks_are_round_and_labels_plain() {
        let a = Axis::new([462.9, 492.8].into_iter(), None);
        assert!(!a.log);
        assert!(a.lo <= 462.9 && a.hi >= 492.8);
        assert!(
            a.ticks.iter().all(|t| (t / 5.0).fract().abs() < 1e-9),
            "{:?}",
            a.ticks
        );
        assert_eq!(time_label(0.2), "200 ms");
        assert_eq!(time_label(100.0), "100 s");
        assert_eq!(time_label(1000.0), "1000 s");
        assert_eq!(energy_label(2000.0), "2 kJ");
        assert_eq!(energy_label(463.0), "463 J");
    }
}

/// An axis as a plotters coordinate: linear in chart coordinates (log10 on a log axis), with
/// exactly our ticks as its key points (plotters' own would be evenly spaced: 3.16 kJ).
#[derive(Debug, Clone)]
pub struct Coord {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Coord {
    /// A linear coordinate from `lo` to `hi` with key points `ticks`.
    pub fn linear(lo: f64, hi: f64, ticks: Vec<f64>) -> Coord {
        Coord { lo, hi, ticks }
    }
}

impl From<&Axis> for Coord {
    fn from(a: &Axis) -> Coord {
        let r = a.range();
        Coord {
            lo: r.start,
            hi: r.end,
            ticks: a.mapped_ticks(),
        }
    }
}

impl plotters::coord::ranged1d::Ranged for Coord {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.max_num_points() == 0 {
            return Vec::new();
        }
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}
