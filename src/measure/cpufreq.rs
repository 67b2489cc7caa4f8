//! Core frequency control through cpufreq (`scaling_setspeed` under the `userspace` governor, or
//! `scaling_min_freq`/`scaling_max_freq` limits), restored when the guard drops: after the sweep,
//! on error, on Ctrl-C (the sweep stops and unwinds) and on panic. The sysfs root is injectable.

use std::path::{Path, PathBuf};

/// How the frequency of a point is set.
#[derive(Debug)]
pub enum Control {
    /// Written to cpufreq files; the guard restores them.
    Sysfs(FreqGuard),
    /// Passed to `srun --cpu-freq=<kHz>` (inside a Slurm job).
    Srun,
    /// Cannot be set: the runs go at the machine's frequency, recorded as measured.
    Fixed {
        /// The frequency the machine runs at, Hz.
        hz: f64,
        /// Why it cannot be set.
        why: String,
    },
}

/// Saved cpufreq settings of every CPU, put back on drop.
#[derive(Debug)]
pub struct FreqGuard {
    root: PathBuf,
    saved: Vec<(PathBuf, String)>,
    mode: Mode,
    /// Frequencies the driver offers, Hz (empty when it does not list them).
    pub available: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Userspace,
    Limits,
}

fn cpu_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let k: u32 = n.strip_prefix("cpu")?.parse().ok()?;
                    let d = e.path().join("cpufreq");
                    d.is_dir().then_some((k, d))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.into_iter().map(|(_, d)| d).collect()
}

fn writable(p: &Path) -> bool {
    std::fs::OpenOptions::new().write(true).open(p).is_ok()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl FreqGuard {
    /// Takes control of every CPU's frequency under `root` (`/sys/devices/system/cpu`), or says
    /// why it cannot.
    pub fn take(root: &Path) -> Result<FreqGuard, String> {
        let dirs = cpu_dirs(root);
        let Some(first) = dirs.first() else {
            return Err(format!(
                "no cpufreq under {} (a virtual machine, or the driver is not loaded)",
                root.display()
            ));
        };
        let governors = read(&first.join("scaling_available_governors"));
        let mode = if governors.split_whitespace().any(|g| g == "userspace")
            && writable(&first.join("scaling_governor"))
        {
            Mode::Userspace
        } else if writable(&first.join("scaling_max_freq"))
            && writable(&first.join("scaling_min_freq"))
        {
            Mode::Limits
        } else {
            return Err(format!(
                "the cpufreq files under {} are not writable by this user",
                first.display()
            ));
        };
        let files: &[&str] = match mode {
            Mode::Userspace => &["scaling_governor", "scaling_setspeed"],
            Mode::Limits => &["scaling_min_freq", "scaling_max_freq"],
        };
        let mut saved = Vec::new();
        for d in &dirs {
            for f in files {
                let p = d.join(f);
                saved.push((p.clone(), read(&p)));
            }
        }
        let available = read(&first.join("scaling_available_frequencies"))
            .split_whitespace()
            .filter_map(|k| k.parse::<f64>().ok())
            .map(|k| k * 1e3)
            .collect();
        Ok(FreqGuard {
            root: root.to_path_buf(),
            saved,
            mode,
            available,
        })
    }

    /// Sets every CPU to `hz`.
    pub fn set(&self, hz: f64) -> Result<(), String> {
        let khz = format!("{}", (hz / 1e3).round() as u64);
        let w = |p: PathBuf, v: &str| {
            std::fs::write(&p, v).map_err(|e| format!("writing {v} to {}: {e}", p.display()))
        };
        for d in cpu_dirs(&self.root) {
            match self.mode {
                Mode::Userspace => {
                    w(d.join("scaling_governor"), "userspace")?;
                    w(d.join("scaling_setspeed"), &khz)?;
                }
                Mode::Limits => {
                    // Order so that min <= max holds after each write.
                    let cur_max: f64 = read(&d.join("scaling_max_freq")).parse().unwrap_or(0.0);
                    if hz / 1e3 > cur_max {
                        w(d.join("scaling_max_freq"), &khz)?;
                        w(d.join("scaling_min_freq"), &khz)?;
                    } else {
                        w(d.join("scaling_min_freq"), &khz)?;
                        w(d.join("scaling_max_freq"), &khz)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// How the frequency is set (for provenance).
    pub fn describe(&self) -> &'static str {
        match self.mode {
            Mode::Userspace => "cpufreq userspace governor, scaling_setspeed",
            Mode::Limits => "cpufreq scaling_min_freq = scaling_max_freq",
        }
    }

    fn restore(&mut self) {
        // Limits first widened, then narrowed, so each write is accepted.
        for (p, v) in self.saved.iter().rev() {
            if !v.is_empty() {
                let _ = std::fs::write(p, v);
            }
        }
        for (p, v) in &self.saved {
            if !v.is_empty() {
                let _ = std::fs::write(p, v);
            }
        }
        self.saved.clear();
    }
}

impl Drop for FreqGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// The frequency the machine runs at when it cannot be set: cpufreq's current frequency of the
/// first CPU, else the mean `cpu MHz` of `/proc/cpuinfo`, rounded to 1 MHz.
pub fn current_hz(root: &Path, cpuinfo_mhz: &[f64]) -> Option<f64> {
    if let Some(d) = cpu_dirs(root).first()
        && let Ok(k) = read(&d.join("scaling_cur_freq")).parse::<f64>()
    {
        return Some(k * 1e3);
    }
    if cpuinfo_mhz.is_empty() {
        return None;
    }
    let mean = cpuinfo_mhz.iter().sum::<f64>() / cpuinfo_mhz.len() as f64;
    Some(mean.round() * 1e6)
}
