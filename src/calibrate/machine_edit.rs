//! Writes calibrated values into a machine file: one section's keys replaced, every other line
//! (comments included) kept, and a `[sources]` line per key saying how and when it was
//! measured (toml_edit keeps the document's formatting).

use crate::error::{InputError, InputResult};
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table};

/// A calibrated value: one number or one per frequency.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    /// A single number.
    One(f64),
    /// One per machine frequency.
    PerFrequency(Vec<f64>),
}

/// Rounds to 6 significant digits (what a measurement can carry).
fn round6(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let mag = 10f64.powi(5 - v.abs().log10().floor() as i32);
    (v * mag).round() / mag
}

/// A TOML float literal: plain between 1e-3 and 1e6, exponent form outside.
fn literal(v: f64) -> String {
    let v = round6(v);
    let s = if v == 0.0 || (1e-3..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    };
    if s.contains(['.', 'e', 'i', 'n']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn toml_value(n: &Number) -> toml_edit::Value {
    let text = match n {
        Number::One(v) => literal(*v),
        Number::PerFrequency(vs) => format!(
            "[{}]",
            vs.iter()
                .map(|v| literal(*v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    text.parse()
        .unwrap_or_else(|_| toml_edit::Value::from(f64::NAN))
}

/// Sets `key` in `t`, keeping the comments around an existing value.
fn set_keep_decor(t: &mut Table, key: &str, mut v: toml_edit::Value) {
    if let Some(old) = t.get_mut(key).and_then(Item::as_value_mut) {
        *v.decor_mut() = old.decor().clone();
        *old = v;
    } else {
        t.insert(key, Item::Value(v));
    }
}

/// Replaces (or adds) `keys` in `[section]` of the machine file text `text`, and sets
/// `[sources]."section.key"` to `source` for each, or `[sources]."section"` when `keys` covers
/// the whole section (`whole_section`; per-key lines of the keys written are then removed).
/// Keys of the section not named are kept.
pub fn update(
    file: &Path,
    text: &str,
    section: &str,
    keys: &[(&str, Number)],
    source: &str,
    whole_section: bool,
) -> InputResult<String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| InputError::Key {
            file: file.to_path_buf(),
            key: "(file)".into(),
            expected: "a TOML machine file".into(),
            got: e.to_string().lines().next().unwrap_or("").to_string(),
        })?;
    let not_table = |key: &str| InputError::Key {
        file: file.to_path_buf(),
        key: key.into(),
        expected: "a table".into(),
        got: "another kind of value".into(),
    };
    {
        let t = doc
            .entry(section)
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| not_table(section))?;
        for (k, n) in keys {
            set_keep_decor(t, k, toml_value(n));
        }
    }
    let sources = doc
        .entry("sources")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| not_table("sources"))?;
    if whole_section {
        set_keep_decor(sources, section, source.into());
        // Per-key lines for the keys written would contradict the section's line.
        for (k, _) in keys {
            sources.remove(&format!("{section}.{k}"));
        }
    } else {
        for (k, _) in keys {
            set_keep_decor(sources, &format!("{section}.{k}"), source.into());
        }
    }
    Ok(doc.to_string())
}

pub use crate::units::today_utc;

/// The `[sources]` key of a machine file written together with a profile by `fit`: the fit's
/// id, which the profile carries as its `fit_id`.
pub const FIT_ID_KEY: &str = "fit_id";

/// Gives a profile and the machine file written with it one fit id, a hash of both (the
/// profile's `fit_id`, the machine file's `[sources] fit_id`), so that a pair from two
/// different fits can be told; returns the machine file's text with it.
pub fn stamp_pair(
    profile: &mut crate::artefact::profile::ProfileFile,
    path: &Path,
    machine_text: &str,
) -> InputResult<String> {
    profile.fit_id = None;
    let seed = serde_json::to_string(profile).unwrap_or_default() + "\n" + machine_text;
    let id = crate::input::sha256_hex(&seed)[..16].to_string();
    let mut doc: DocumentMut =
        machine_text
            .parse()
            .map_err(|e: toml_edit::TomlError| InputError::Key {
                file: path.to_path_buf(),
                key: "(file)".into(),
                expected: "a TOML machine file".into(),
                got: e.to_string().lines().next().unwrap_or("").to_string(),
            })?;
    let sources = doc
        .entry("sources")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| InputError::Key {
            file: path.to_path_buf(),
            key: "sources".into(),
            expected: "a table".into(),
            got: "another kind of value".into(),
        })?;
    set_keep_decor(sources, FIT_ID_KEY, id.as_str().into());
    profile.fit_id = Some(id);
    Ok(doc.to_string())
}

/// The machine file's text with `[power]` keys from `power` (core_stall_w = core_active_w,
/// memory_w = 0: time and energy alone cannot separate them) and `residual` as its
/// fit_residual_rel (and `rms` as fit_residual_rms, the residual itself where the fit gives no
/// other), each key's source `source`; checked by reading it back.
pub fn write_power(
    path: &Path,
    text: &str,
    machine: &crate::model::machine::Machine,
    power: &crate::model::machine::Power,
    (residual, rms): (f64, Option<f64>),
    source: &str,
) -> InputResult<String> {
    let w = |v: &[crate::units::Watts]| Number::PerFrequency(v.iter().map(|x| x.0).collect());
    let keys = [
        ("idle_w", w(&power.idle)),
        ("core_active_w", w(&power.core_active)),
        ("core_stall_w", w(&power.core_stall)),
        ("memory_w", Number::One(0.0)),
        ("fit_residual_rel", Number::One(residual.min(1.0))),
        (
            "fit_residual_rms",
            Number::One(rms.unwrap_or(residual).min(residual).min(1.0)),
        ),
    ];
    let new = update(path, text, "power", &keys, source, false)?;
    let (back, _) = crate::model::machine::Machine::from_toml_for_plan(path, &new)?;
    if back.frequencies != machine.frequencies {
        return Err(InputError::Mismatch(format!(
            "{}: the rewritten machine file lost its frequencies",
            path.display()
        )));
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_keys_keeps_comments_and_records_the_source() {
        let text = "# my cluster\n[network]\n# fitted last year\nlatency_s = 2e-6 # old\ncv2 = 1.0\n\n[sources]\n\"network\" = \"guess\"\n";
        let out = update(
            Path::new("m.toml"),
            text,
            "network",
            &[("latency_s", Number::One(1.234_567_89e-6))],
            "measured: ping-pong",
            true,
        )
        .unwrap();
        assert!(
            out.contains("# my cluster") && out.contains("# fitted last year"),
            "{out}"
        );
        assert!(out.contains("latency_s = 1.23457e-6"), "{out}");
        assert!(out.contains("cv2 = 1.0"), "{out}");
        assert!(
            out.contains("\"network\" = \"measured: ping-pong\""),
            "{out}"
        );
        assert!(update(Path::new("m.toml"), "x = [", "network", &[], "s", true).is_err());
        let d = today_utc();
        assert!(d.len() == 10 && d.starts_with("20"), "{d}");
    }
}
