//! The values a user writes, parsed: SPEC sets (`1-8,16`), frequencies in GHz, durations
//! (`90s`, `1h30m`, `D-HH:MM:SS`), energies (`kWh`), fractions (`5%`) and configurations.
//! Each parser names the flag (or key) it reads and shows what a valid value looks like.

use crate::error::{InputError, InputResult};
use crate::limits::Bound;
use crate::model::Config;
use crate::model::machine::Machine;
use crate::units::{Hertz, Joules, Seconds};

/// The error for a command-line value: the flag, what it takes, what was given.
pub fn bad(flag: &str, expected: impl Into<String>, got: impl Into<String>) -> InputError {
    InputError::Argument {
        flag: flag.into(),
        expected: expected.into(),
        got: got.into(),
    }
}

/// Most values a SPEC may hold (a machine has at most 10^7 nodes).
const SPEC_MAX: u64 = 10_000_000;

/// Parses a SPEC of whole numbers: comma-separated values and inclusive ranges (`1-8,16,32`).
/// The result is sorted and free of duplicates.
pub fn parse_int_spec(flag: &str, spec: &str) -> InputResult<Vec<u32>> {
    const EXPECTED: &str =
        "a comma-separated list of whole numbers and inclusive ranges, like 1-8,16,32";
    let mut out = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            let s = s.trim();
            s.parse::<u32>()
                .map_err(|_| match s.bytes().all(|b| b.is_ascii_digit()) {
                    // Whole, but beyond what any count of nodes, cores or GPUs can be.
                    true if !s.is_empty() => bad(flag, "whole numbers up to 4294967295", spec),
                    _ => bad(flag, EXPECTED, spec),
                })
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(flag, "ranges written low-high, like 1-8", part));
                }
                if out.len() as u64 + u64::from(b - a) + 1 > SPEC_MAX {
                    return Err(bad(flag, "at most 10^7 values in all", spec));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
        if out.len() as u64 > SPEC_MAX {
            return Err(bad(flag, "at most 10^7 values in all", spec));
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses a SPEC of frequencies in GHz against the machine's set: values must be in the set
/// (as the tables show them: [`Machine::frequency_as_shown`]); a range `a-b` selects exactly
/// the frequencies of the set within it, each end first read as shown ([`frequency_as_shown`]).
/// Returns indices into the set.
pub fn parse_freq_spec(spec: &str, machine: &Machine) -> InputResult<Vec<usize>> {
    let flag = "--freqs";
    let set = format!(
        "frequencies in GHz from machine `{}`: {} (values or ranges like 1.2-1.8)",
        machine.name,
        machine.frequency_list_ghz()
    );
    let num = |s: &str| -> InputResult<Hertz> {
        parse_ghz(s)
            .map(|g| Hertz(g * 1e9))
            .map_err(|why| bad(flag, format!("{why}: {set}"), s.trim()))
    };
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let end = |s: &str| num(s).map(|f| frequency_as_shown(machine, f).0);
                // 1 kHz: a machine frequency is the same one within it (`frequency_index`).
                let (lo, hi) = (end(a)? - 1e3, end(b)? + 1e3);
                let before = out.len();
                out.extend(
                    machine
                        .frequencies
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| (lo..=hi).contains(&f.0))
                        .map(|(i, _)| i),
                );
                if out.len() == before {
                    return Err(bad(flag, &set, part.trim()));
                }
            }
            None => {
                let f = num(part)?;
                out.push(machine.frequency_as_shown(f).ok_or_else(|| {
                    let why = machine.ambiguous_frequency(f);
                    bad(
                        flag,
                        why.map_or(set.clone(), |w| format!("{set}; {w}")),
                        part.trim(),
                    )
                })?);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A core frequency in GHz as people type it: `2.4`, `2.4GHz`, `2.4 ghz`, `2400MHz`,
/// `2400000kHz`. A bare number above 50 is refused with the unit it probably had.
pub fn parse_ghz(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| "a frequency like 2.4, 2.4GHz or 2400MHz".to_string())?;
    let ghz = match unit.trim().to_ascii_lowercase().as_str() {
        "" if v > 50.0 => {
            return Err(format!(
                "GHz, or a unit: {v} GHz is no core frequency; write {v}MHz or {}",
                v / 1e3
            ));
        }
        "" | "ghz" | "g" => v,
        "mhz" => v / 1e3,
        "khz" => v / 1e6,
        "hz" => v / 1e9,
        _ => {
            return Err(format!(
                "a frequency in GHz, MHz or kHz (2.4, 2.4GHz, 2400MHz), not `{}`",
                unit.trim()
            ));
        }
    };
    if ghz.is_finite() && ghz > 0.0 && ghz <= 50.0 {
        Ok(ghz)
    } else {
        Err("a core frequency above 0 and at most 50 GHz".into())
    }
}

/// Splits `12.5kJ` into (`12.5`, `kJ`), and `1e3J`, `5E-1kJ` at the end of their exponent
/// (no unit begins with `e`).
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let digits = |from: usize| {
        s[from..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(s.len(), |n| from + n)
    };
    let mut end = digits(0);
    let rest = &s[end..];
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        let sign = usize::from(exp.starts_with(['+', '-']));
        if exp[sign..].starts_with(|c: char| c.is_ascii_digit()) {
            end = digits(end + 1 + sign);
        }
    }
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

const DURATION_FORMS: &str = "a duration with units, like 90s, 500 ms, 15m, 2h or 1h30m, or \
     Slurm's MM:SS, HH:MM:SS or D-HH:MM:SS";

const CLOCK_FORMS: &str = "a duration with units (90s, 15m, 1h30m) or Slurm's MM:SS, HH:MM:SS, \
     D-HH, D-HH:MM or D-HH:MM:SS: whole numbers, a clock's minutes and seconds below 60 and its \
     hours below 24 after a day (90:00 is 90 minutes; 90:99 is no time)";

/// Parses a duration: unit sums (`90s`, `500 ms`, `250us`, `15m`, `2h`, `1h30m`, `1.5h`, `2d`;
/// units in any case, spaces allowed) or Slurm's time formats (`MM:SS`, `HH:MM:SS`, `D-HH`,
/// `D-HH:MM`, `D-HH:MM:SS`). A bare number is refused: its unit would be a guess.
pub fn parse_duration(flag: &str, s: &str) -> InputResult<Seconds> {
    let t = s.trim();
    let total = if t.contains(':') || t.contains('-') {
        slurm_time(t).ok_or_else(|| bad(flag, CLOCK_FORMS, s))?
    } else {
        unit_sum(t).ok_or_else(|| bad(flag, DURATION_FORMS, s))?
    };
    if total > 0.0 && total.is_finite() {
        Ok(Seconds(total))
    } else {
        Err(bad(flag, "a duration > 0, like 90s, 15m, 2h or 1h30m", s))
    }
}

/// `1h30m`, `500 ms`, `250us`: a sum of numbers each followed by a unit.
fn unit_sum(t: &str) -> Option<f64> {
    let mut rest = t;
    let mut total = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let v: f64 = rest[..num_end].parse().ok()?;
        let after = rest[num_end..].trim_start();
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(after.len());
        let scale = match after[..unit_end].to_lowercase().as_str() {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hrs" => 3600.0,
            "d" | "day" | "days" => 86400.0,
            _ => return None,
        };
        total += v * scale;
        rest = after[unit_end..].trim_start();
    }
    Some(total)
}

/// Slurm's `--time` forms with a colon or a day: `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`,
/// `D-HH:MM:SS`. The leading field may be any whole number (`90:00` is 90 minutes, as Slurm
/// reads it); a clock's minutes and seconds are below 60 and its hours below 24 after a day
/// (`90:99` and `1-25` are no times).
fn slurm_time(t: &str) -> Option<f64> {
    let whole = |x: &str| -> Option<f64> {
        (!x.is_empty() && x.chars().all(|c| c.is_ascii_digit())).then(|| x.parse().ok())?
    };
    let below = |x: f64, limit: f64| (x < limit).then_some(x);
    let (days, clock) = match t.split_once('-') {
        Some((d, rest)) => (whole(d)?, Some(rest)),
        None => (0.0, Some(t)),
    };
    let parts: Vec<f64> = clock?.split(':').map(whole).collect::<Option<_>>()?;
    let with_day = t.contains('-');
    let hours = |h: f64| if with_day { below(h, 24.0) } else { Some(h) };
    let secs = match (with_day, parts.as_slice()) {
        (false, &[m, s]) => m * 60.0 + below(s, 60.0)?,
        (_, &[h, m, s]) => hours(h)? * 3600.0 + below(m, 60.0)? * 60.0 + below(s, 60.0)?,
        (true, &[h]) => hours(h)? * 3600.0,
        (true, &[h, m]) => hours(h)? * 3600.0 + below(m, 60.0)? * 60.0,
        _ => return None,
    };
    Some(days * 86400.0 + secs)
}

/// Parses an energy: `500J`, `500 j`, `130mJ`, `12kJ`, `3.5MJ`, `2kWh`, `0.5kwh` (also `GJ`,
/// `Wh`, `mWh`, `MWh`). Units are case-insensitive where that is unambiguous; an `m` is milli
/// and an `M` mega as SI writes them (`mJ`, as `plan` prints a GPU kernel's energy, and `MJ`),
/// and `mj`, `Mj`, `mwh` (which?) are refused.
pub fn parse_energy(flag: &str, s: &str) -> InputResult<Joules> {
    const EXPECTED: &str = "an energy with units, like 500J, 12kJ, 3.5MJ or 2kWh";
    let (v, unit) = number_and_unit(s).ok_or_else(|| bad(flag, EXPECTED, s))?;
    let scale = match unit {
        "mJ" => 1e-3,
        "mWh" => 3.6,
        "MJ" => 1e6,
        "MWh" => 3.6e9,
        _ => match unit.to_lowercase().as_str() {
            "j" => 1.0,
            "kj" => 1e3,
            "gj" => 1e9,
            "wh" => 3600.0,
            "kwh" => 3.6e6,
            "mj" | "mwh" => {
                return Err(bad(
                    flag,
                    "mJ (millijoules) or MJ (megajoules), mWh or MWh, as SI writes them: a \
                     lower-case m is milli, an upper-case M mega",
                    s,
                ));
            }
            _ => return Err(bad(flag, EXPECTED, s)),
        },
    };
    let j = v * scale;
    if j > 0.0 && j.is_finite() {
        Ok(Joules(j))
    } else {
        Err(bad(flag, "an energy > 0", s))
    }
}

/// Parses a size in bytes with `bytesize`: `4096`, `64KiB`, `16MiB`, `1GiB` (also `kB`, `MB`,
/// `GB`, powers of ten; units in any case), at most 1 GiB (the ping-pong holds one buffer of
/// it).
pub fn parse_bytes(flag: &str, s: &str) -> InputResult<u64> {
    const EXPECTED: &str = "a size in bytes, like 4096, 64KiB or 16MiB (at most 1GiB)";
    let b = s
        .trim()
        .parse::<bytesize::ByteSize>()
        .map_err(|_| bad(flag, EXPECTED, s))?
        .as_u64();
    if (1..=1 << 30).contains(&b) {
        Ok(b)
    } else {
        Err(bad(flag, EXPECTED, s))
    }
}

/// Parses a slowdown: a fraction (`0.1`) or a percentage (`10%`). A bare number above 1 is
/// refused with the percentage it probably meant (`--slowdown 10` is not 1000%).
pub fn parse_slowdown(flag: &str, s: &str) -> InputResult<f64> {
    let v = parse_fraction(flag, s)?;
    if v > 1.0 && !s.trim().ends_with('%') {
        // The percentage it would be, suggested only where it is a number a person writes.
        let hint = match v <= 1e6 {
            true => format!(
                ": did you mean {}%? (write {}% for a {}-fold slowdown)",
                s.trim(),
                v * 100.0,
                v + 1.0
            ),
            false => String::new(),
        };
        return Err(bad(
            flag,
            format!("a fraction up to 1 (0.1 = 10% slower), or a percentage{hint}"),
            s,
        ));
    }
    // `-0` is 0 (it printed as "-0% slower").
    Ok(v + 0.0)
}

/// An interval's nominal coverage as people type it: `0.9` or `90%`, from 0.5 to 0.999.
pub fn parse_coverage(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if (0.5..=0.999).contains(&v) => Ok(v),
        _ => Err(format!(
            "a coverage from 0.5 to 0.999 (0.8, 0.9 or 90%), not `{t}`"
        )),
    }
}

/// Parses a slowdown allowance: a fraction (`0.1`) or a percentage (`10%`).
pub fn parse_fraction(flag: &str, s: &str) -> InputResult<f64> {
    const EXPECTED: &str = "a fraction >= 0 like 0.1, or a percentage like 10%";
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(p) => (p, 0.01),
        None => (t, 1.0),
    };
    number(num, Bound::NonNegative)
        .map(|v| v * scale)
        .map_err(|_| bad(flag, EXPECTED, s))
}

/// The one checked reading of a number a flag takes: a decimal number within `bound`, which
/// is always finite (`NaN`, `inf` and `-inf` are refused with the rest); the error says what
/// was expected and what was given.
pub fn number(s: &str, bound: Bound) -> Result<f64, String> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(v) if bound.check(v) => Ok(v),
        _ => Err(format!("{}, not `{t}`", bound.describe())),
    }
}

/// [`number`] for a flag that takes a finite number above 0 (a clap value parser).
pub fn positive_number(s: &str) -> Result<f64, String> {
    number(s, Bound::Positive)
}

/// A GPU clock as people type it: `975`, `975MHz`, `975 mhz`, in whole MHz as NVML sets it
/// and Slurm's `--gpu-freq` takes it; `None` where `s` is not one ([`not_whole_mhz`] says why
/// for `975.5`).
pub fn parse_mhz(s: &str) -> Option<u32> {
    let t = mhz_number(s);
    // `975.0` is 975 MHz, as `machine init` writes gpu_clocks_mhz; a fraction is refused by
    // [`not_whole_mhz`].
    t.parse().ok().or_else(|| {
        let v: f64 = t.parse().ok()?;
        (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX))
            .then_some(v as u32)
    })
}

/// Why a clock typed with a fraction (`975.5`, `975.5MHz`) is refused; `None` for anything
/// else.
pub fn not_whole_mhz(s: &str) -> Option<String> {
    let v: f64 = mhz_number(s).parse().ok()?;
    (v.is_finite() && v > 0.0 && v.fract() != 0.0).then(|| {
        // A clock in GHz (1.164): no GPU runs below 50 MHz, so it is MHz a thousandfold.
        let write = match v < 50.0 && (50.0..=5000.0).contains(&(v * 1000.0)) {
            true => format!("in GHz? write {} (MHz)", (v * 1000.0).round()),
            false => format!("write {} or {}", v.floor(), v.ceil()),
        };
        format!(
            "GPU clocks in whole MHz (NVML sets whole MHz; Slurm's --gpu-freq takes them): \
             `{}` is not whole; {write}",
            s.trim(),
        )
    })
}

/// `s` without spaces and an `MHz` suffix (any case).
fn mhz_number(s: &str) -> String {
    let t = s.trim().to_ascii_lowercase();
    t.strip_suffix("mhz").unwrap_or(&t).trim().to_string()
}

/// Parses `N,C,GHZ[,G[,MHZ]]`.
pub fn parse_config(flag: &str, s: &str) -> InputResult<Config> {
    const EXPECTED: &str =
        "nodes,cores,GHz[,gpus[,GPU MHz]], like 4,16,2.4 or 2,32,2.0,4 or 1,16,2.1,1,1305";
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if !(3..=5).contains(&parts.len()) {
        return Err(bad(flag, EXPECTED, s));
    }
    let int = |x: &str| x.parse::<u32>().map_err(|_| bad(flag, EXPECTED, s));
    let ghz = parse_ghz(parts[2]).map_err(|why| {
        bad(
            flag,
            format!("{EXPECTED}; the third value is the frequency: {why}"),
            s,
        )
    })?;
    Ok(Config {
        nodes: int(parts[0])?,
        cores: int(parts[1])?,
        freq: Hertz(ghz * 1e9),
        gpus: parts.get(3).map(|g| int(g)).transpose()?.unwrap_or(0),
        gpu_clock_mhz: parts
            .get(4)
            .map(|m| match parse_mhz(m) {
                Some(v) => Ok(f64::from(v)),
                None => Err(match not_whole_mhz(m) {
                    Some(why) => bad(flag, format!("{EXPECTED}; the fifth value: {why}"), s),
                    None => bad(flag, EXPECTED, s),
                }),
            })
            .transpose()?,
    })
}

/// `f` as one of `machine`'s frequencies where it is typed as the tables show one (`2.60` for
/// 2.596 GHz: [`Machine::frequency_as_shown`]); else `f` as typed, for the check that names
/// the machine's frequencies to refuse it.
pub fn frequency_as_shown(machine: &Machine, f: Hertz) -> Hertz {
    machine
        .frequency_as_shown(f)
        .map_or(f, |i| machine.frequencies[i])
}

/// `config` with its frequency as [`frequency_as_shown`] reads it (`--config`, `--reference`).
pub fn config_as_shown(machine: &Machine, config: Config) -> Config {
    Config {
        freq: frequency_as_shown(machine, config.freq),
        ..config
    }
}

/// Parses a list of frequencies in GHz (`2.4,1.8`) for `profile`, in Hz.
pub fn parse_ghz_values(flag: &str, spec: &str) -> InputResult<Vec<f64>> {
    let expected = "frequencies separated by commas (2.4,1.8 or 2400MHz,1.8GHz)";
    spec.split(',')
        .map(|part| {
            parse_ghz(part)
                .map(|g| g * 1e9)
                .map_err(|why| bad(flag, format!("{why}: {expected}"), part.trim()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_energy_takes_milli_and_mega_as_si_writes_them_and_refuses_a_case_that_could_be_either() {
        let j = |s: &str| parse_energy("--budget", s).map(|e| e.0);
        assert!((j("130mJ").unwrap() - 0.13).abs() < 1e-15);
        assert!((j("2mWh").unwrap() - 7.2).abs() < 1e-12);
        assert_eq!(j("3.5MJ").unwrap(), 3.5e6);
        assert_eq!(j("1MWh").unwrap(), 3.6e9);
        for s in ["130mj", "130Mj", "2mwh", "2MWH"] {
            let e = j(s).unwrap_err().to_string();
            assert!(e.contains("a lower-case m is milli"), "{s}: {e}");
        }
    }

    #[test]
    fn a_gpu_clock_with_a_fraction_is_refused_with_the_whole_clock_or_the_mhz_it_meant_in_ghz() {
        let why = |s: &str| not_whole_mhz(s).unwrap();
        assert!(
            why("975.5").ends_with("write 975 or 976"),
            "{}",
            why("975.5")
        );
        assert!(
            why("1.164").ends_with("in GHz? write 1164 (MHz)"),
            "{}",
            why("1.164")
        );
        assert!(why("0.03").ends_with("write 0 or 1"), "{}", why("0.03"));
        assert_eq!(not_whole_mhz("975"), None);
    }

    #[test]
    fn int_specs_mix_values_and_ranges() {
        assert_eq!(
            parse_int_spec("--nodes", "1-4,16,2,32").unwrap(),
            vec![1, 2, 3, 4, 16, 32]
        );
        assert!(parse_int_spec("--nodes", "4-1").is_err());
        assert!(parse_int_spec("--nodes", "").is_err());
        assert!(parse_int_spec("--nodes", "1,,2").is_err());
        assert!(parse_int_spec("--nodes", "-3").is_err());
        let err = parse_int_spec("--nodes", "1-99999999999")
            .unwrap_err()
            .to_string();
        assert!(err.contains("whole numbers up to 4294967295"), "{err}");
    }

    #[test]
    fn energies_take_a_number_in_scientific_notation_whatever_its_unit() {
        // `2.5e3kJ` was read, `1e3J` and `5e-1kJ` refused as energies without units.
        for (s, j) in [
            ("1e3J", 1e3),
            ("1E1J", 10.0),
            ("5e-1kJ", 500.0),
            ("2.5e3kJ", 2.5e6),
            ("1.5e+2 Wh", 5.4e5),
            ("12kJ", 12e3),
        ] {
            assert_eq!(parse_energy("--budget", s).unwrap(), Joules(j), "{s}");
        }
        for s in ["1eJ", "1e-J", "e3J", "1e3"] {
            assert!(parse_energy("--budget", s).is_err(), "{s}");
        }
    }

    #[test]
    fn durations_accept_the_documented_forms() {
        assert_eq!(parse_duration("--deadline", "90s").unwrap(), Seconds(90.0));
        assert_eq!(parse_duration("--deadline", "15m").unwrap(), Seconds(900.0));
        assert_eq!(parse_duration("--deadline", "2h").unwrap(), Seconds(7200.0));
        assert_eq!(
            parse_duration("--deadline", "1h30m").unwrap(),
            Seconds(5400.0)
        );
        assert_eq!(
            parse_duration("--deadline", "1.5h").unwrap(),
            Seconds(5400.0)
        );
        for (text, secs) in [
            ("500 ms", 0.5),
            ("500us", 5e-4),
            ("2 H", 7200.0),
            ("1h 30min", 5400.0),
            ("00:10:00", 600.0),
            ("10:00", 600.0),
            ("1-02:00:00", 93600.0),
            ("2-12", 216000.0),
            ("1-00:30", 88200.0),
        ] {
            let got = parse_duration("--deadline", text).unwrap().0;
            assert!((got - secs).abs() < 1e-9 * secs, "{text}: {got}");
        }
        for bad in [
            "90",
            "10 parsecs",
            "h",
            "",
            "0s",
            "1h30",
            "1:2:3:4",
            "-5s",
            "1-",
            "a:b",
        ] {
            assert!(parse_duration("--deadline", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn energies_accept_the_documented_units() {
        assert_eq!(parse_energy("--budget", "500J").unwrap(), Joules(500.0));
        assert_eq!(parse_energy("--budget", "12kJ").unwrap(), Joules(12e3));
        assert_eq!(parse_energy("--budget", "3.5MJ").unwrap(), Joules(3.5e6));
        assert_eq!(parse_energy("--budget", "2kWh").unwrap(), Joules(7.2e6));
        assert_eq!(parse_energy("--budget", "500 J").unwrap(), Joules(500.0));
        assert_eq!(parse_energy("--budget", "500j").unwrap(), Joules(500.0));
        assert_eq!(parse_energy("--budget", "0.5kwh").unwrap(), Joules(1.8e6));
        assert_eq!(parse_energy("--budget", "12 kj").unwrap(), Joules(12e3));
        for bad in ["500", "5W", "-3J", "NaNJ", "3mj", "2mwh"] {
            assert!(parse_energy("--budget", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn configs_and_fractions() {
        let c = parse_config("--config", "4,16,2.4,2").unwrap();
        assert_eq!((c.nodes, c.cores, c.gpus), (4, 16, 2));
        assert!((c.freq.0 - 2.4e9).abs() < 1.0);
        assert!(parse_config("--config", "4,16").is_err());
        assert!(parse_config("--config", "4,16,2400").is_err());
        for (text, ghz) in [
            ("4,32,0.8GHz", 0.8),
            ("4,32,800MHz", 0.8),
            ("4,32,0.8 ghz", 0.8),
        ] {
            let c = parse_config("--config", text).unwrap();
            assert!((c.freq.0 - ghz * 1e9).abs() < 1.0, "{text}");
        }
        assert_eq!(
            parse_ghz_values("--freqs", "1.1GHz,2400MHz,1.8").unwrap(),
            vec![1.1e9, 2.4e9, 1.8e9]
        );
        let e = parse_ghz_values("--freqs", "2400").unwrap_err().to_string();
        assert!(e.contains("2400MHz"), "{e}");
        assert!(parse_ghz_values("--freqs", "2.4THz").is_err());
        assert_eq!(parse_fraction("--slowdown", "10%").unwrap(), 0.1);
        assert!(parse_fraction("--slowdown", "-0.1").is_err());
        let e = parse_slowdown("--slowdown", "10").unwrap_err().to_string();
        assert!(e.contains("did you mean 10%?"), "{e}");
        // No 309-digit fold nor an `inf%` to write for an absurd value.
        let e = parse_slowdown("--slowdown", "1e308")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("inf") && e.len() < 200, "{e}");
        assert_eq!(parse_slowdown("--slowdown", "150%").unwrap(), 1.5);
        assert!(
            parse_slowdown("--slowdown", "-0")
                .unwrap()
                .is_sign_positive()
        );
        assert_eq!(parse_slowdown("--slowdown", "0.25").unwrap(), 0.25);
        for bad in ["NaN", "nan", "inf", "-inf", "-1", "0", "1e400", "", "2h"] {
            assert!(positive_number(bad).is_err(), "{bad}");
        }
        assert_eq!(positive_number(" 2.5 ").unwrap(), 2.5);
        assert!(parse_fraction("--tolerance", "NaN%").is_err());
    }
}
