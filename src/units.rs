//! Physical units carried in types across module boundaries.
//!
//! The hot loop of the search works on plain `f64` inside one group of configurations; everything
//! that leaves a module (predictions, machine parameters, query limits) carries its unit here.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! unit {
    ($(#[$doc:meta])* $name:ident, $sym:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub f64);

        impl $name {
            /// The bare value in the unit's SI base.
            pub fn get(self) -> f64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} {}", self.0, $sym)
            }
        }
    };
}

unit!(
    /// A duration in seconds.
    Seconds,
    "s"
);
unit!(
    /// An energy in joules.
    Joules,
    "J"
);
unit!(
    /// A power in watts.
    Watts,
    "W"
);
unit!(
    /// A frequency in hertz.
    Hertz,
    "Hz"
);

impl Hertz {
    /// The frequency in GHz, as users type it.
    pub fn ghz(self) -> f64 {
        self.0 / 1e9
    }
}

/// A fraction as a signed percent with `decimals` decimals: `+1.2%`, `-3.0%`. A value that
/// rounds to zero reads `+0.0%`, never `-0.0%`.
pub fn signed_percent(fraction: f64, decimals: usize) -> String {
    let s = format!("{:+.decimals$}", 100.0 * fraction);
    format!("{}%", without_negative_zero(s, '+'))
}

/// A coverage as a percent with the decimals it needs and no more: `80%`, `99.5%`, `99.9%`
/// (never `100%` for 0.995, which would claim an interval that holds everything).
pub fn coverage_pct(coverage: f64) -> String {
    let s = format!("{:.1}", 100.0 * coverage);
    format!("{}%", s.strip_suffix(".0").unwrap_or(&s))
}

/// A fraction as a percent with `decimals` decimals: `1.2%`; a value that rounds to zero
/// reads `0.0%`, never `-0.0%`.
pub fn percent(fraction: f64, decimals: usize) -> String {
    let s = format!("{:.decimals$}", 100.0 * fraction);
    format!("{}%", without_negative_zero(s, ' ').trim_start())
}

/// `s` (a formatted number) with a minus sign before digits that are all zero replaced by
/// `sign` (`+`, or a space to drop).
fn without_negative_zero(mut s: String, sign: char) -> String {
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s.replace_range(0..1, &sign.to_string());
    }
    s
}

/// `1 core`, `2 cores`: a count with its noun, in the singular where it is one.
pub fn count(k: impl Into<u64>, one: &str, many: &str) -> String {
    let k = k.into();
    format!("{k} {}", if k == 1 { one } else { many })
}

/// `2 of 3 configurations`, `1 of 1 configuration`: a part of a whole, the noun in the
/// singular where the whole is one.
pub fn part_of(k: impl Into<u64>, n: impl Into<u64>, one: &str, many: &str) -> String {
    format!("{} of {}", k.into(), count(n, one, many))
}

/// The verb for a count of `k` things: `is` where it is one, `are` otherwise.
pub fn is_are(k: impl Into<u64>) -> &'static str {
    if k.into() == 1 { "is" } else { "are" }
}

/// A configuration's GPUs as its summary line says them: `no GPUs` where it has none, else
/// `2 GPUs per node` (`at 1305 MHz` where a GPU clock is set).
pub fn gpus_per_node(gpus: u32, clock_mhz: Option<f64>) -> String {
    if gpus == 0 {
        return "no GPUs".into();
    }
    let clock = clock_mhz.map_or(String::new(), |m| format!(" at {m} MHz"));
    format!("{} per node{clock}", count(gpus, "GPU", "GPUs"))
}

/// Node-hours in the unit that shows the figure: `2.50 node-hours`, `0.15 node-hours`; under a
/// tenth of a node-hour with three significant digits or more, `12.5 node-minutes`,
/// `40.0 node-seconds` under a node-minute, `0.547 node-seconds`, `0.0173 node-seconds` (a GPU
/// kernel's: `0.0` told nothing, and a time-only plan's `0.5 node-seconds` little more).
pub fn fmt_node_hours(h: f64) -> String {
    let s = h * 3600.0;
    if !h.is_finite() || h == 0.0 || h >= 0.1 {
        format!("{h:.2} node-hours")
    } else if h * 60.0 >= 1.0 {
        format!("{} node-minutes", three_digits(h * 60.0))
    } else if s >= 1.0 {
        format!("{} node-seconds", three_digits(s))
    } else {
        format!("{s:.*} node-seconds", significant(s, 3))
    }
}

/// Node-hours as a table cell: two decimals from a tenth of a node-hour up, as
/// [`fmt_node_hours`] prints them (`1.27`, `0.85`), four below (`0.0812`), or three significant
/// digits where that shows nothing (`4.81e-6`, a millisecond on one node).
pub fn node_hours_cell(h: f64) -> String {
    if h.abs() >= 0.1 {
        format!("{h:.2}")
    } else if h != 0.0 && h.abs() < 1e-3 {
        format!("{h:.2e}")
    } else {
        format!("{h:.4}")
    }
}

/// Joules as a table cell under an `energy J` head: one decimal (`37612.9`), or three
/// significant digits under ten joules (`0.106`, `1.43`: a GPU kernel's; `0.1` and `1.4` told
/// none apart, and a measured 1.43 J printed `1.4` beside an interval `[1.3, 1.4]` it lies
/// outside of).
pub fn joules_cell(j: f64) -> String {
    if j != 0.0 && j.abs() < 10.0 {
        format!("{j:.*}", significant(j, 3))
    } else {
        format!("{j:.1}")
    }
}

/// `v` (a figure in its unit, from 0 up) with three significant digits or more: two decimals
/// under 10 (`5.83`), one above (`58.3`, `583.1`).
fn three_digits(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// The decimals that show `v` (0 < |v| < 1) with `digits` significant digits.
fn significant(v: f64, digits: i32) -> usize {
    usize::try_from(digits - 1 - v.abs().log10().floor() as i32).unwrap_or(0)
}

/// A list of counts (node counts, core counts) as people read it: sorted, each run of three
/// or more consecutive counts as a range (`1, 2, 4, 8` stays; `2-3525`), and at most 16 ranges
/// shown, the middle ones left out with how many counts the list holds (`2, 4, ..., 3524
/// (1762 counts)`), so that a list is one short line however many counts it holds.
pub fn count_ranges<T: Into<u64>>(counts: impl IntoIterator<Item = T>) -> String {
    count_ranges_with(counts, ", ")
}

/// [`count_ranges`] with `sep` between the ranges (`1-4,8,16` with `,`).
pub fn count_ranges_with<T: Into<u64>>(counts: impl IntoIterator<Item = T>, sep: &str) -> String {
    let mut v: Vec<u64> = counts.into_iter().map(Into::into).collect();
    v.sort_unstable();
    v.dedup();
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &n in &v {
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == n => *hi = n,
            _ => ranges.push((n, n)),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    for (lo, hi) in ranges {
        match hi - lo {
            0 => parts.push(lo.to_string()),
            1 => parts.extend([lo.to_string(), hi.to_string()]),
            _ => parts.push(format!("{lo}-{hi}")),
        }
    }
    if parts.len() <= 16 {
        return parts.join(sep);
    }
    format!(
        "{}{sep}...{sep}{} ({} counts)",
        parts[..10].join(sep),
        parts[parts.len() - 3..].join(sep),
        v.len()
    )
}

/// A human-friendly rendering of a duration (`850.0 ms`, `5.83 ms`, `12.35 s`, `4m05.0s`,
/// `2h13m`): three significant digits or more below a minute, so that a kernel's 5.83 and 5.76
/// ms (two points of one front) do not both read `5.8 ms`.
pub fn fmt_duration(s: Seconds) -> String {
    let v = s.0;
    if !v.is_finite() {
        return format!("{v}");
    }
    if v != 0.0 && v < 1e-6 {
        format!("{} ns", three_digits(v * 1e9))
    } else if v < 1e-3 {
        format!("{} us", three_digits(v * 1e6))
    } else if v < 1.0 {
        format!("{} ms", three_digits(v * 1e3))
    } else if v < 60.0 {
        format!("{v:.2} s")
    } else if v < 3600.0 {
        let m = (v / 60.0).floor();
        format!("{}m{:04.1}s", m as u64, v - m * 60.0)
    } else {
        let h = (v / 3600.0).floor();
        let m = ((v - h * 3600.0) / 60.0).floor();
        format!("{}h{:02}m", h as u64, m as u64)
    }
}

/// A human-friendly rendering of an energy (`812.0 J`, `4.52 kJ`, `1.20 MJ`; `106.4 mJ`,
/// `12.0 uJ` under a joule, where a GPU kernel's energies lie: `0.1 J` told none of them
/// apart), with three significant digits or more (`1.23 J`: `1.2 J` told the clocks of a
/// kernel's front apart no better).
pub fn fmt_energy(e: Joules) -> String {
    let v = e.0;
    if v == 0.0 {
        "0.0 J".into()
    } else if v.abs() < 1e-3 {
        format!("{} uJ", three_digits(v * 1e6))
    } else if v.abs() < 1.0 {
        format!("{} mJ", three_digits(v * 1e3))
    } else if v.abs() < 1e3 {
        format!("{} J", three_digits(v))
    } else if v.abs() < 1e6 {
        format!("{:.2} kJ", v / 1e3)
    } else if v.abs() < 1e9 {
        format!("{:.2} MJ", v / 1e6)
    } else if v.abs() < 1e12 {
        format!("{:.2} GJ", v / 1e9)
    } else {
        // Past a terajoule (an extrapolation's far end): `4.24e18 J`, not `4238136942.67 GJ`.
        format!("{v:.2e} J")
    }
}

/// The shortest run a measurement can time, s (a microsecond): shorter is a unit error or a
/// subnormal number.
pub const MIN_RUN_SECONDS: f64 = 1e-6;
/// The longest run any measured time may describe (a year, in seconds): a time beyond it in a
/// TALP, mpiP or CSV input is not a measurement and is refused.
pub const MAX_RUN_SECONDS: f64 = 3.2e7;

/// Today's date (UTC), `YYYY-MM-DD`, for the `[sources]` lines.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days to a civil date (H. Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A frequency as whole kHz: the key that tells two measured frequencies apart.
pub fn freq_key(f: Hertz) -> u64 {
    (f.0 / 1e3).round() as u64
}

/// The fewest decimals, 2 to 4, that print every frequency of `freqs` apart in GHz (`2.60`
/// and `2.596` need 3: `2.600`, `2.596`); frequencies within 1 kHz count as one.
pub fn ghz_decimals(freqs: &[Hertz]) -> usize {
    let mut keys: Vec<u64> = freqs.iter().map(|&f| freq_key(f)).collect();
    keys.sort_unstable();
    keys.dedup();
    (2..4)
        .find(|&d| {
            let mut shown: Vec<String> = keys
                .iter()
                .map(|&k| format!("{:.d$}", k as f64 / 1e6))
                .collect();
            shown.dedup();
            shown.len() == keys.len()
        })
        .unwrap_or(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coverage_keeps_the_decimal_it_needs() {
        assert_eq!(coverage_pct(0.8), "80%");
        assert_eq!(coverage_pct(0.995), "99.5%");
        assert_eq!(coverage_pct(0.999), "99.9%");
        assert_eq!(coverage_pct(0.5), "50%");
    }

    #[test]
    fn a_percent_that_rounds_to_zero_is_never_negative_zero() {
        assert_eq!(signed_percent(-0.0004, 1), "+0.0%");
        assert_eq!(signed_percent(-0.0, 1), "+0.0%");
        assert_eq!(signed_percent(-0.0006, 1), "-0.1%");
        assert_eq!(signed_percent(0.0123, 1), "+1.2%");
        assert_eq!(percent(-0.00004, 2), "0.00%");
        assert_eq!(percent(-0.5, 0), "-50%");
        assert_eq!(percent(0.034, 1), "3.4%");
    }

    #[test]
    fn frequencies_print_with_the_fewest_decimals_that_tell_them_apart() {
        let hz = |v: &[f64]| v.iter().map(|&g| Hertz(g * 1e9)).collect::<Vec<_>>();
        assert_eq!(ghz_decimals(&hz(&[1.2, 2.0, 2.6])), 2);
        assert_eq!(ghz_decimals(&hz(&[1.2, 2.596, 2.6])), 3);
        assert_eq!(ghz_decimals(&hz(&[2.6004, 2.6])), 4);
        assert_eq!(ghz_decimals(&hz(&[2.6, 2.6])), 2, "one frequency twice");
        assert_eq!(ghz_decimals(&[]), 2);
    }

    #[test]
    fn durations_render_in_readable_units() {
        assert_eq!(fmt_duration(Seconds(0.25)), "250.0 ms");
        assert_eq!(fmt_duration(Seconds(12.345)), "12.35 s");
        assert_eq!(fmt_duration(Seconds(245.0)), "4m05.0s");
        assert_eq!(fmt_duration(Seconds(7980.0)), "2h13m");
    }

    #[test]
    fn energies_render_with_si_prefixes() {
        assert_eq!(fmt_energy(Joules(812.0)), "812.0 J");
        assert_eq!(fmt_energy(Joules(4520.0)), "4.52 kJ");
        assert_eq!(fmt_energy(Joules(1.2e6)), "1.20 MJ");
        assert_eq!(fmt_energy(Joules(0.1064)), "106.4 mJ");
        assert_eq!(fmt_energy(Joules(1.2e-5)), "12.0 uJ");
        assert_eq!(fmt_energy(Joules(0.0)), "0.0 J");
    }

    #[test]
    fn figures_under_ten_of_their_unit_keep_three_significant_digits() {
        assert_eq!(fmt_energy(Joules(1.2274)), "1.23 J");
        assert_eq!(fmt_energy(Joules(1.1911)), "1.19 J");
        assert_eq!(fmt_energy(Joules(0.00123)), "1.23 mJ");
        assert_eq!(fmt_energy(Joules(1.234e-6)), "1.23 uJ");
        assert_eq!(fmt_energy(Joules(12.34)), "12.3 J");
        assert_eq!(fmt_duration(Seconds(0.0058305)), "5.83 ms");
        assert_eq!(fmt_duration(Seconds(0.0057041)), "5.70 ms");
        assert_eq!(fmt_duration(Seconds(2.933e-6)), "2.93 us");
        assert_eq!(fmt_duration(Seconds(0.0293)), "29.3 ms");
        assert_eq!(joules_cell(1.4395), "1.44");
        assert_eq!(joules_cell(9.994), "9.99");
        assert_eq!(fmt_duration(Seconds(5.704e-10)), "0.57 ns");
        assert_eq!(fmt_duration(Seconds(0.0)), "0.00 us");
        assert_eq!(fmt_energy(Joules(4.238e18)), "4.24e18 J");
        assert_eq!(fmt_energy(Joules(2.023e10)), "20.23 GJ");
    }

    #[test]
    fn node_hours_of_a_kernel_show_their_digits() {
        assert_eq!(fmt_node_hours(2.5), "2.50 node-hours");
        assert_eq!(fmt_node_hours(40.0 / 3600.0), "40.0 node-seconds");
        assert_eq!(fmt_node_hours(0.0173 / 3600.0), "0.0173 node-seconds");
        assert_eq!(fmt_node_hours(0.0), "0.00 node-hours");
        assert_eq!(fmt_node_hours(0.5467 / 3600.0), "0.547 node-seconds");
        assert_eq!(fmt_node_hours(7.09 / 3600.0), "7.09 node-seconds");
        assert_eq!(fmt_node_hours(3.9 / 60.0), "3.90 node-minutes");
        assert_eq!(fmt_node_hours(0.1518), "0.15 node-hours");
        assert_eq!(node_hours_cell(4.8096e-6), "4.81e-6");
        assert_eq!(node_hours_cell(0.85), "0.85");
        assert_eq!(node_hours_cell(0.0812), "0.0812");
        assert_eq!(joules_cell(0.10637), "0.106");
        assert_eq!(joules_cell(37612.94), "37612.9");
    }
}
