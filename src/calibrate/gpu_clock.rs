//! The GPU clock law fitted on one configuration measured at 3 or more GPU core clocks
//! (MODEL.md section 6e): `T(fg) = a/fg + m` with its residuals, and the GPU's power in kernels
//! `P0 + k (fg / 1 GHz)^alpha`, alpha from a grid by least residual, or the machine's where it
//! sets one (`[power] gpu_clock_exponent`). Both are least squares on
//! relative residuals with every parameter held `>= 0`; a law that does not reproduce its
//! points is refused with the clock and what to measure.

use crate::model::gpu_clock::{ClockInterval, ClockPower, ClockTime, GpuClockLaw};

/// The exponents the power law is chosen from (docs/GPU_CLOCK.md: `afit`).
pub const ALPHAS: [f64; 7] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0];
/// The power law is refused above this residual at a measured clock.
pub use crate::artefact::gpu_clock::POWER_RESIDUAL_MAX;
/// The time law is refused above this residual at a measured clock (a profile's law is read
/// within it).
pub use crate::artefact::gpu_clock::TIME_RESIDUAL_MAX;

/// One measured clock of one configuration (repeats averaged).
#[derive(Debug, Clone, PartialEq)]
pub struct ClockPoint {
    /// The requested core clock, MHz.
    pub mhz: f64,
    /// Wall time, s.
    pub time_s: f64,
    /// GPU energy of the run, J, where measured.
    pub gpu_energy_j: Option<f64>,
}

/// Fits the law on `points` (one per clock, any order) of a configuration with `gpus` GPUs;
/// `at` names the configuration in messages; `alpha`, the power law's exponent where the
/// machine sets it (`None`: chosen from [`ALPHAS`]). An error says why and what to measure.
pub fn fit_law(
    points: &[ClockPoint],
    gpus: u32,
    at: &str,
    alpha: Option<f64>,
) -> Result<GpuClockLaw, String> {
    let mut pts = points.to_vec();
    pts.sort_by(|a, b| a.mhz.total_cmp(&b.mhz));
    let mhz: Vec<f64> = pts.iter().map(|p| p.mhz).collect();
    let list = || crate::model::gpu_clock::mhz_list(&mhz);
    if pts.len() < 3 {
        return Err(format!(
            "the GPU clock law needs 3 or more clocks (measured: {} MHz at {at}); measure the \
             lowest clock to plan, one near 0.85 of the top, and the top",
            list()
        ));
    }
    let times: Vec<f64> = pts.iter().map(|p| p.time_s).collect();
    let time = fit_time(&mhz, &times);
    if let Some((j, r)) = worst(&mhz, &times, |f| time.law(f))
        && r > TIME_RESIDUAL_MAX
    {
        return Err(format!(
            "the time at {} MHz is {:.1}% off `a/f + m` through the clocks {} MHz at {at}: \
                 a kernel whose time does not follow the clock; measure a clock between its \
                 neighbours",
            mhz[j],
            100.0 * r,
            list()
        ));
    }
    no_clock_faster_than_the_top(&mhz, &times, at)?;
    let power = fit_power_from(&pts, (gpus, alpha), at, &list())?;
    let interval = left_out(&pts, gpus, alpha);
    let top = pts[pts.len() - 1].clone();
    Ok(GpuClockLaw {
        memory_clock_mhz: None,
        reference_mhz: top.mhz,
        measured_mhz: mhz,
        kernel_max_s: top.time_s,
        time,
        power,
        source: String::new(),
        interval: Some(interval),
    })
}

/// A measured clock below the top may not run more than this share faster than the top one
/// (a profile's law is read within it).
pub use crate::artefact::gpu_clock::FASTER_THAN_TOP_MAX;

/// Refuses a clock (ascending `mhz`, their `times`) whose run was more than
/// [`FASTER_THAN_TOP_MAX`] faster than the top clock's: the host and every GPU are taken busy
/// for the whole run at the top clock (the profile's baseline), so no clock is predicted
/// faster, and that clock would be planned at the top clock's time, not its own.
fn no_clock_faster_than_the_top(mhz: &[f64], times: &[f64], at: &str) -> Result<(), String> {
    let (Some(&top), Some(&t_top)) = (mhz.last(), times.last()) else {
        return Ok(());
    };
    let fastest = (0..times.len()).min_by(|&i, &j| times[i].total_cmp(&times[j]));
    match fastest {
        Some(j) if times[j] < t_top * (1.0 - FASTER_THAN_TOP_MAX) => Err(format!(
            "the time at {} MHz, {} s, is {:.1}% shorter than at the top clock, {top} MHz, {t_top} \
             s, at {at}: the model takes the run at the top clock as the host's and the GPUs' \
             busy time, so it predicts no clock faster, and would plan {} MHz at {t_top} s; a \
             top clock that delivers less than its nominal speed (throttled): fit the clocks up \
             to {} MHz, or measure the top clock again",
            mhz[j],
            times[j],
            100.0 * (1.0 - times[j] / t_top),
            mhz[j],
            mhz[j]
        )),
        _ => Ok(()),
    }
}

/// The interval's half-widths (MODEL.md 6e): the largest error of each interior clock (sorted
/// `pts`) predicted from the others, by `a/f + m` and the cube law (the fewest parameters two
/// clocks hold; the machine's exponent `alpha` where it sets one), at least the floors. The
/// energy's is the time's where no energy was measured.
fn left_out(pts: &[ClockPoint], gpus: u32, alpha: Option<f64>) -> ClockInterval {
    let g = f64::from(gpus.max(1));
    let alpha = alpha.unwrap_or(3.0);
    let (mut t_err, mut e_err) = (0.0f64, 0.0f64);
    for j in 1..pts.len().saturating_sub(1) {
        let rest: Vec<&ClockPoint> = pts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != j)
            .map(|(_, p)| p)
            .collect();
        let mhz: Vec<f64> = rest.iter().map(|p| p.mhz).collect();
        let times: Vec<f64> = rest.iter().map(|p| p.time_s).collect();
        let time = fit_time(&mhz, &times);
        let (f, t) = (pts[j].mhz, pts[j].time_s);
        let t_pred = time.law(f);
        t_err = t_err.max((t_pred / t - 1.0).abs());
        let watts: Option<Vec<f64>> = rest
            .iter()
            .map(|p| p.gpu_energy_j.map(|e| e / (g * p.time_s)))
            .collect();
        if let (Some(w), Some(e)) = (watts, pts[j].gpu_energy_j) {
            let rows: Vec<[f64; 2]> = mhz
                .iter()
                .map(|&m| [1.0, (m / 1000.0).powf(alpha)])
                .collect();
            let ([p0, k], _) = nnls2(&rows, &w);
            let e_pred = g * (p0 + k * (f / 1000.0).powf(alpha)) * t_pred;
            e_err = e_err.max((e_pred / e - 1.0).abs());
        } else {
            e_err = e_err.max(t_err);
        }
    }
    ClockInterval {
        time_rel: t_err.max(ClockInterval::TIME_FLOOR),
        energy_rel: e_err.max(ClockInterval::ENERGY_FLOOR),
    }
}

/// The power law of `gpus` GPUs where every point has GPU energy, at the exponent `alpha` where
/// the machine sets it; none where no point has energy; an error for a mix or a law off its
/// points.
fn fit_power_from(
    pts: &[ClockPoint],
    (gpus, alpha): (u32, Option<f64>),
    at: &str,
    list: &str,
) -> Result<Option<ClockPower>, String> {
    let with: Vec<&ClockPoint> = pts.iter().filter(|p| p.gpu_energy_j.is_some()).collect();
    if with.is_empty() {
        return Ok(None);
    }
    if with.len() != pts.len() {
        return Err(format!(
            "GPU energy at {} of the {} clocks at {at}: the power law needs GPU energy at \
             every clock, or none (time only)",
            with.len(),
            pts.len()
        ));
    }
    let g = f64::from(gpus.max(1));
    let mhz: Vec<f64> = pts.iter().map(|p| p.mhz).collect();
    let watts: Vec<f64> = pts
        .iter()
        .map(|p| p.gpu_energy_j.unwrap_or(0.0) / (g * p.time_s))
        .collect();
    let power = match alpha {
        Some(a) => fit_power(&mhz, &watts, &[a]),
        None => fit_power(&mhz, &watts, &ALPHAS),
    };
    if let Some((j, r)) = worst(&mhz, &watts, |f| power.at(f))
        && r > POWER_RESIDUAL_MAX
    {
        let exponent = match alpha {
            Some(_) => "the machine's [power] gpu_clock_exponent; leave it out to let fit \
                        choose one"
                .to_string(),
            None => format!("the best exponent of {ALPHAS:?}"),
        };
        return Err(format!(
            "the GPU power at {} MHz is {:.1}% off `P0 + k f^{}` through the clocks {list} \
                 MHz at {at} ({exponent}): the GPU's power does not follow the clock there; \
                 check that every clock's energy is GPU energy of the same run",
            mhz[j],
            100.0 * r,
            power.alpha,
        ));
    }
    Ok(Some(power))
}

/// The index and size of the largest relative residual of `law` at the points.
fn worst(x: &[f64], y: &[f64], law: impl Fn(f64) -> f64) -> Option<(usize, f64)> {
    x.iter()
        .zip(y)
        .map(|(&f, &v)| ((law(f) - v) / v).abs())
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// `a/f + m`, `a, m >= 0`, and its residuals.
pub fn fit_time(mhz: &[f64], times: &[f64]) -> ClockTime {
    let rows: Vec<[f64; 2]> = mhz.iter().map(|&f| [1.0 / f, 1.0]).collect();
    let ([a, m], _) = nnls2(&rows, times);
    let law = |f: f64| a / f + m;
    let residuals_s: Vec<f64> = mhz.iter().zip(times).map(|(&f, &t)| t - law(f)).collect();
    let law_residual_max = worst(mhz, times, law).map_or(0.0, |w| w.1);
    ClockTime {
        a_s_mhz: a,
        m_s: m,
        residuals_s,
        law_residual_max,
    }
}

/// `P0 + k (f / 1 GHz)^alpha`, `P0, k >= 0`, alpha from `alphas` (ascending; [`ALPHAS`], or
/// the one the machine sets) by least cost (the lower exponent on a tie).
pub fn fit_power(mhz: &[f64], watts: &[f64], alphas: &[f64]) -> ClockPower {
    let mut best: Option<(ClockPower, f64)> = None;
    for &alpha in alphas {
        let rows: Vec<[f64; 2]> = mhz
            .iter()
            .map(|&f| [1.0, (f / 1000.0).powf(alpha)])
            .collect();
        let ([p0, k], cost) = nnls2(&rows, watts);
        if best.as_ref().is_none_or(|b| cost < b.1 - 1e-15) {
            let law = ClockPower {
                p0_w: p0,
                k_w: k,
                alpha,
                residual_max: 0.0,
                residuals_w: Vec::new(),
                alpha_from: None,
            };
            best = Some((law, cost));
        }
    }
    let (mut law, _) = best.unwrap_or((
        ClockPower {
            p0_w: 0.0,
            k_w: 0.0,
            alpha: 3.0,
            residual_max: 0.0,
            residuals_w: Vec::new(),
            alpha_from: None,
        },
        0.0,
    ));
    law.residual_max = worst(mhz, watts, |f| law.at(f)).map_or(0.0, |w| w.1);
    law.residuals_w = mhz
        .iter()
        .zip(watts)
        .map(|(&f, &w)| w - law.at(f))
        .collect();
    law
}

/// Least squares of `y` on two basis functions, on relative residuals, both coefficients
/// `>= 0`: each subset of them held at 0 is tried and the feasible fit of least cost kept.
fn nnls2(rows: &[[f64; 2]], y: &[f64]) -> ([f64; 2], f64) {
    let cost = |c: [f64; 2]| -> f64 {
        rows.iter()
            .zip(y)
            .map(|(r, &v)| ((c[0] * r[0] + c[1] * r[1] - v) / v).powi(2))
            .sum()
    };
    // Normal equations of the relative residuals: sum r_i r_j / y^2, sum r_i / y.
    let mut a = [[0.0; 2]; 2];
    let mut b = [0.0; 2];
    for (r, &v) in rows.iter().zip(y) {
        for i in 0..2 {
            b[i] += r[i] / v;
            for j in 0..2 {
                a[i][j] += r[i] * r[j] / (v * v);
            }
        }
    }
    let mut cands: Vec<[f64; 2]> = Vec::new();
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    if det.abs() > 1e-300 * a[0][0].abs().max(1.0) {
        let c0 = (b[0] * a[1][1] - b[1] * a[0][1]) / det;
        let c1 = (a[0][0] * b[1] - a[1][0] * b[0]) / det;
        if c0 >= 0.0 && c1 >= 0.0 {
            cands.push([c0, c1]);
        }
    }
    for i in 0..2 {
        if a[i][i] > 0.0 {
            let mut c = [0.0; 2];
            c[i] = (b[i] / a[i][i]).max(0.0);
            cands.push(c);
        }
    }
    cands
        .into_iter()
        .map(|c| (c, cost(c)))
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or(([0.0, 0.0], f64::INFINITY))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of a law chosen by the test (illustrative, not a measurement).
    fn points(a: f64, m: f64, p0: f64, k: f64, alpha: f64) -> Vec<ClockPoint> {
        [600.0, 1000.0, 1200.0]
            .iter()
            .map(|&f| {
                let t = a / f + m;
                ClockPoint {
                    mhz: f,
                    time_s: t,
                    gpu_energy_j: Some((p0 + k * (f / 1000.0_f64).powf(alpha)) * t),
                }
            })
            .collect()
    }

    #[test]
    fn a_law_through_its_points_is_recovered() {
        let law = fit_law(&points(6000.0, 2.0, 60.0, 80.0, 4.0), 1, "here", None).unwrap();
        assert!((law.time.a_s_mhz - 6000.0).abs() < 1e-6, "{law:?}");
        assert!((law.time.m_s - 2.0).abs() < 1e-9);
        let p = law.power.unwrap();
        assert_eq!(p.alpha, 4.0);
        assert!(
            (p.p0_w - 60.0).abs() < 1e-6 && (p.k_w - 80.0).abs() < 1e-6,
            "{p:?}"
        );
        assert_eq!(law.reference_mhz, 1200.0);
        assert!((law.kernel_max_s - 7.0).abs() < 1e-12);
    }

    #[test]
    fn an_exponent_the_machine_sets_is_kept_and_p0_and_k_fitted_to_it() {
        let p = points(6000.0, 2.0, 60.0, 80.0, 4.0);
        let fitted = fit_law(&p, 1, "here", None).unwrap().power.unwrap();
        assert_eq!(fitted.alpha, 4.0);
        let set = fit_law(&p, 1, "here", Some(3.5)).unwrap().power.unwrap();
        assert_eq!(set.alpha, 3.5);
        assert!(
            set.residual_max > 1e-6 && set.residual_max < POWER_RESIDUAL_MAX,
            "{set:?}"
        );
        assert!((set.p0_w - fitted.p0_w).abs() > 1.0, "{set:?}");
        // An exponent the points do not follow is refused, naming where it came from.
        let e = fit_law(&p, 1, "here", Some(1.0)).unwrap_err();
        assert!(
            e.contains("off `P0 + k f^1`") && e.contains("[power] gpu_clock_exponent"),
            "{e}"
        );
    }

    #[test]
    fn the_interval_is_the_middle_clocks_left_out_error_at_least_the_floors() {
        // On a law a/f + m and a cube power law the middle clock is predicted exactly from the
        // others: the floors remain.
        let law = fit_law(&points(6000.0, 2.0, 60.0, 80.0, 3.0), 1, "here", None).unwrap();
        let i = law.interval.unwrap();
        assert_eq!((i.time_rel, i.energy_rel), (0.01, 0.02));
        // A middle time 10% above the law through the others: 10% either side.
        let mut p = points(6000.0, 2.0, 60.0, 80.0, 3.0);
        p[1].time_s *= 1.1;
        p[1].gpu_energy_j = p[1].gpu_energy_j.map(|e| e * 1.1);
        let i = fit_law(&p, 1, "here", None).unwrap().interval.unwrap();
        assert!((i.time_rel - 1.0 / 1.1 * 0.1).abs() < 1e-9, "{i:?}");
        assert!((i.energy_rel - i.time_rel).abs() < 1e-9, "{i:?}");
    }

    #[test]
    fn two_clocks_are_refused_with_what_to_measure() {
        let mut p = points(6000.0, 2.0, 60.0, 80.0, 3.0);
        p.remove(1);
        let e = fit_law(&p, 1, "1 node", None).unwrap_err();
        assert!(
            e.contains("3 or more clocks (measured: 600, 1200 MHz at 1 node)"),
            "{e}"
        );
    }

    #[test]
    fn a_time_off_its_law_is_refused_naming_the_clock() {
        let mut p = points(6000.0, 2.0, 60.0, 80.0, 3.0);
        p.push(ClockPoint {
            mhz: 800.0,
            time_s: 30.0,
            gpu_energy_j: Some(3000.0),
        });
        let e = fit_law(&p, 1, "x", None).unwrap_err();
        assert!(
            e.contains("the time at 800 MHz is") && e.contains("a/f + m"),
            "{e}"
        );
    }

    #[test]
    fn a_power_off_every_exponent_is_refused() {
        let mut p = points(6000.0, 2.0, 60.0, 80.0, 3.0);
        // A power that falls, then rises: no P0 + k f^alpha with P0, k >= 0 goes through it.
        p[1].gpu_energy_j = Some(10.0 * p[1].time_s);
        let e = fit_law(&p, 1, "x", None).unwrap_err();
        assert!(e.contains("the GPU power at") && e.contains("% off"), "{e}");
        p[1].gpu_energy_j = None;
        let e = fit_law(&p, 1, "x", None).unwrap_err();
        assert!(e.contains("GPU energy at 2 of the 3 clocks"), "{e}");
    }
}
