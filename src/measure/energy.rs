//! CPU and DRAM energy from RAPL: the powercap files (`/sys/class/powercap/intel-rapl:*`), or,
//! where those cannot be read, the perf `power` PMU (`/sys/bus/event_source/devices/power`).
//! Both roots are injectable so tests can read a fixture tree.
//!
//! Powercap counters wrap at `max_energy_range_uj` (a few minutes at full power): a sampler
//! thread reads them every second and adds wrap-corrected deltas, so long runs count right.

use super::Sampler;
use super::{Backend, Readings, RunContext, Unsupported};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One powercap zone whose energy is summed: a package or its DRAM.
#[derive(Debug, Clone, PartialEq)]
pub struct Zone {
    /// Domain name in the readings (`package-0`, `dram-0`).
    pub domain: String,
    /// Its `energy_uj` file.
    pub energy_file: PathBuf,
    /// `max_energy_range_uj`: the counter wraps past this.
    pub max_range_uj: u64,
}

fn read_u64(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim().parse().map_err(|_| {
        format!(
            "{}: expected an integer, got {:?}",
            path.display(),
            text.trim()
        )
    })
}

/// Energy between two readings of a counter that wraps past `max`: `now - before`, or, after a
/// wrap, the rest of the range plus `now`.
pub fn wrapped_delta(before: u64, now: u64, max: u64) -> u64 {
    if now >= before {
        now - before
    } else {
        max.saturating_sub(before) + now
    }
}

/// The package and DRAM zones under a powercap root (`core`, `uncore` and `psys` are left out:
/// the first two are parts of the package, `psys` overlaps everything).
pub fn find_zones(root: &Path) -> Result<Vec<Zone>, Unsupported> {
    let what = "CPU energy (RAPL powercap)";
    let entries = std::fs::read_dir(root).map_err(|e| {
        Unsupported::new(
            what,
            format!("{} cannot be read: {e}", root.display()),
            "this kernel or machine exposes no RAPL (virtual machines usually do not); use \
             Slurm's energy accounting or a node with RAPL",
        )
    })?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("intel-rapl:"))
        .collect();
    names.sort();
    let mut zones = Vec::new();
    for n in names {
        let dir = root.join(&n);
        let parts: Vec<&str> = n["intel-rapl:".len()..].split(':').collect();
        let zone_name = std::fs::read_to_string(dir.join("name"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let domain = match (parts.as_slice(), zone_name.as_str()) {
            ([pkg], z) if z.starts_with("package") => format!("package-{pkg}"),
            ([pkg, _], "dram") => format!("dram-{pkg}"),
            _ => continue,
        };
        let max_range_uj = read_u64(&dir.join("max_energy_range_uj"))
            .map_err(|e| Unsupported::new(what, e, "check the powercap driver (intel_rapl_msr)"))?;
        zones.push(Zone {
            domain,
            energy_file: dir.join("energy_uj"),
            max_range_uj,
        });
    }
    if zones.is_empty() {
        return Err(Unsupported::new(
            what,
            format!("no package or dram zone under {}", root.display()),
            "load the intel_rapl_msr (or AMD rapl) driver, or use Slurm's energy accounting",
        ));
    }
    for z in &zones {
        if let Err(e) = std::fs::read_to_string(&z.energy_file) {
            let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!(
                    "{} is readable by root only (Linux >= 5.10, after CVE-2020-8694)",
                    z.energy_file.display()
                )
            } else {
                format!("{}: {e}", z.energy_file.display())
            };
            return Err(Unsupported::new(
                what,
                why,
                "run as root, have the admins grant read access to energy_uj (a udev rule), or \
                 use Slurm's energy accounting",
            ));
        }
    }
    Ok(zones)
}

/// Accumulated energy per zone, in microjoules, with the last raw reading.
#[derive(Debug, Default)]
struct Accum {
    last: Vec<Option<u64>>,
    total_uj: Vec<u64>,
    errors: Vec<String>,
}

fn sample(zones: &[Zone], acc: &mut Accum) {
    for (i, z) in zones.iter().enumerate() {
        match read_u64(&z.energy_file) {
            Ok(now) => {
                if let Some(before) = acc.last[i] {
                    acc.total_uj[i] += wrapped_delta(before, now, z.max_range_uj);
                }
                acc.last[i] = Some(now);
            }
            Err(e) => {
                if acc.errors.len() < 5 {
                    acc.errors.push(e);
                }
            }
        }
    }
}

/// A system-wide perf `power` PMU event on one package.
struct PmuEvent {
    domain: String,
    counter: perf_event::Counter,
    scale: f64,
}

enum Source {
    None,
    Powercap(Vec<Zone>),
    PerfPower(Vec<PmuEvent>),
}

/// The RAPL energy backend.
pub struct RaplEnergy {
    powercap_root: PathBuf,
    event_source_root: PathBuf,
    sample_every: Duration,
    source: Source,
    running: Option<Sampler<Accum>>,
}

impl RaplEnergy {
    /// A backend over the given sysfs roots (`/sys/class/powercap`,
    /// `/sys/bus/event_source/devices`).
    pub fn new(powercap_root: &Path, event_source_root: &Path) -> Self {
        RaplEnergy {
            powercap_root: powercap_root.to_path_buf(),
            event_source_root: event_source_root.to_path_buf(),
            sample_every: Duration::from_secs(1),
            source: Source::None,
            running: None,
        }
    }

    /// The machine's own roots.
    pub fn system() -> Self {
        Self::new(
            Path::new("/sys/class/powercap"),
            Path::new("/sys/bus/event_source/devices"),
        )
    }

    fn open_perf_power(&self) -> Result<Vec<PmuEvent>, Unsupported> {
        let what = "CPU energy (perf power PMU)";
        let dir = self.event_source_root.join("power");
        let ty = read_u64(&dir.join("type")).map_err(|e| {
            Unsupported::new(
                what,
                format!("no power PMU: {e}"),
                "this kernel or machine exposes no RAPL",
            )
        })?;
        let packages = first_cpu_per_package();
        let mut out = Vec::new();
        for (ev, dom) in [("energy-pkg", "package"), ("energy-ram", "dram")] {
            let Ok(spec) = std::fs::read_to_string(dir.join("events").join(ev)) else {
                continue;
            };
            let config = spec
                .trim()
                .strip_prefix("event=")
                .and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
                .ok_or_else(|| Unsupported::new(what, format!("cannot read {ev}: {spec:?}"), ""))?;
            let scale: f64 =
                std::fs::read_to_string(dir.join("events").join(format!("{ev}.scale")))
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(2.3283064365386963e-10);
            for &(pkg, cpu) in &packages {
                let mut b = perf_event::Builder::new().any_pid().one_cpu(cpu);
                b.attrs_mut().type_ = ty as u32;
                b.attrs_mut().config = config;
                let counter = b.build().map_err(|e| {
                    let (why, hint) = super::counters::explain_errno(&e);
                    Unsupported::new(what, why, hint)
                })?;
                out.push(PmuEvent {
                    domain: format!("{dom}-{pkg}"),
                    counter,
                    scale,
                });
            }
        }
        if out.is_empty() {
            return Err(Unsupported::new(what, "no energy-pkg event", ""));
        }
        Ok(out)
    }
}

fn first_cpu_per_package() -> Vec<(u64, usize)> {
    let mut seen = std::collections::BTreeMap::new();
    for cpu in 0..4096usize {
        let p = format!("/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id");
        match read_u64(Path::new(&p)) {
            Ok(pkg) => {
                seen.entry(pkg).or_insert(cpu);
            }
            Err(_)
                if cpu > 0 && !Path::new(&format!("/sys/devices/system/cpu/cpu{cpu}")).exists() =>
            {
                break;
            }
            Err(_) => {}
        }
    }
    seen.into_iter().collect()
}

impl Backend for RaplEnergy {
    fn name(&self) -> &'static str {
        "rapl"
    }

    fn discover(&mut self) -> Result<String, Unsupported> {
        match find_zones(&self.powercap_root) {
            Ok(z) => {
                let names: Vec<&str> = z.iter().map(|z| z.domain.as_str()).collect();
                let what = format!("powercap {}", names.join(", "));
                self.source = Source::Powercap(z);
                Ok(what)
            }
            Err(powercap) => match self.open_perf_power() {
                Ok(ev) => {
                    let names: Vec<&str> = ev.iter().map(|e| e.domain.as_str()).collect();
                    let what = format!("perf power PMU {}", names.join(", "));
                    self.source = Source::PerfPower(ev);
                    Ok(what)
                }
                Err(pmu) => Err(Unsupported::new(
                    "CPU energy (RAPL)",
                    format!("{}; {}", powercap.why, pmu.why),
                    powercap.hint,
                )),
            },
        }
    }

    fn begin(&mut self) -> Result<(), String> {
        match &mut self.source {
            Source::None => Ok(()),
            Source::PerfPower(ev) => {
                for e in ev.iter_mut() {
                    e.counter.reset().map_err(|x| x.to_string())?;
                    e.counter.enable().map_err(|x| x.to_string())?;
                }
                Ok(())
            }
            Source::Powercap(zones) => {
                let zones = zones.clone();
                let mut acc = Accum {
                    last: vec![None; zones.len()],
                    total_uj: vec![0; zones.len()],
                    errors: Vec::new(),
                };
                sample(&zones, &mut acc);
                self.running = Some(Sampler::start(acc, self.sample_every, move |a, _| {
                    sample(&zones, a)
                }));
                Ok(())
            }
        }
    }

    fn end(&mut self, _ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String> {
        match &mut self.source {
            Source::None => {}
            Source::PerfPower(ev) => {
                for e in ev.iter_mut() {
                    e.counter.disable().map_err(|x| x.to_string())?;
                    let v = e.counter.read().map_err(|x| x.to_string())?;
                    out.energy_j.insert(e.domain.clone(), v as f64 * e.scale);
                }
            }
            Source::Powercap(zones) => {
                let mut g = self
                    .running
                    .take()
                    .and_then(Sampler::stop)
                    .ok_or("the energy sampler was not running")?;
                sample(zones, &mut g);
                for (i, z) in zones.iter().enumerate() {
                    out.energy_j
                        .insert(z.domain.clone(), g.total_uj[i] as f64 * 1e-6);
                }
                out.warnings.extend(g.errors.iter().cloned());
            }
        }
        Ok(())
    }
}
