//! GPU energy and activity through NVML (nvml-wrapper; `libnvidia-ml.so.1` is loaded at run time).
//!
//! Energy is NVML's total-energy counter (millijoules since the driver loaded, Volta and newer),
//! read before and after each run. Kernel-busy time is NVML's `utilization.gpu` (the share of
//! the last sample period in which a kernel ran), sampled every 100 ms and integrated over the
//! run. The GPUs measured are those the run was given (`CUDA_VISIBLE_DEVICES`, in PCI order).
//! Each sample also reads the SM and memory clocks; a run records their means over the samples
//! in which the GPU was busy, and a bound on the busy time's sampling error.

use super::Sampler;
use super::{Backend, Readings, RunContext, Unsupported};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::Clock;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The NVML backend.
pub struct NvmlGpus {
    interval: Duration,
    nvml: Option<Arc<Nvml>>,
    gpus: Vec<u32>,
    start_mj: Vec<Option<u64>>,
    sampler: Option<Sampler<Samples>>,
}

/// What the sampling thread gathers over one run, per GPU.
#[derive(Debug, Clone, Default)]
struct Samples {
    /// Integrated busy time, seconds.
    busy: Vec<f64>,
    /// Sum of SM clock (MHz) and memory clock (MHz) over busy samples, and their count.
    sm_sum: Vec<f64>,
    mem_sum: Vec<f64>,
    busy_samples: Vec<f64>,
    /// Sum of squared sample lengths (s^2) of the samples that saw the GPU partly busy or
    /// changed state since the last one: the busy time's sampling error comes from these.
    err: Vec<f64>,
    /// Utilisation at the last sample (percent), to see changes.
    last: Vec<Option<u32>>,
}

impl Samples {
    fn new(n: usize) -> Self {
        Samples {
            busy: vec![0.0; n],
            sm_sum: vec![0.0; n],
            mem_sum: vec![0.0; n],
            busy_samples: vec![0.0; n],
            err: vec![0.0; n],
            last: vec![None; n],
        }
    }

    /// Adds one sample of GPU `k`: utilisation `u` percent over `dt` seconds, clocks in MHz.
    fn add(&mut self, k: usize, u: u32, dt: f64, sm: Option<u32>, mem: Option<u32>) {
        self.busy[k] += dt * f64::from(u) / 100.0;
        let straddles = (1..100).contains(&u) || self.last[k].is_some_and(|l| (l == 0) != (u == 0));
        if straddles {
            self.err[k] += dt * dt;
        }
        self.last[k] = Some(u);
        if let (true, Some(sm), Some(mem)) = (u > 0, sm, mem) {
            self.sm_sum[k] += f64::from(sm);
            self.mem_sum[k] += f64::from(mem);
            self.busy_samples[k] += 1.0;
        }
    }

    /// Writes the run's busy times, clocks and error bounds into `out`.
    fn store(self, out: &mut Readings) {
        let mean = |sum: &[f64]| -> Vec<f64> {
            sum.iter()
                .zip(&self.busy_samples)
                .map(|(s, &n)| if n > 0.0 { s / n } else { 0.0 })
                .collect()
        };
        if self.busy_samples.iter().any(|&n| n > 0.0) {
            out.gpu_sm_mhz = mean(&self.sm_sum);
            out.gpu_mem_mhz = mean(&self.mem_sum);
        }
        // A sample straddling a busy/idle change is off by up to its length; taken as uniform
        // over +-dt/2 and independent, n straddles give a standard error of dt sqrt(n/12).
        // On the H100 (100 ms, 40 bursts a run) that was 0.16-0.24 s, against an observed
        // 0.048 s RMS difference from CUDA-event kernel time (max 0.165 s): a cautious estimate.
        out.gpu_busy_err_s = self.err.iter().map(|e| (e / 12.0).sqrt()).collect();
        out.gpu_busy_s = self.busy;
    }
}

impl Default for NvmlGpus {
    fn default() -> Self {
        Self::new()
    }
}

/// NVML's utilisation sampling interval unless `--gpu-sample-ms` says otherwise.
pub const DEFAULT_SAMPLE: Duration = Duration::from_millis(100);

impl NvmlGpus {
    /// A backend that loads NVML on `discover` and samples utilisation every 100 ms.
    pub fn new() -> Self {
        Self::with_interval(DEFAULT_SAMPLE)
    }

    /// A backend that samples utilisation every `interval`.
    ///
    /// The busy time is the integral of sampled utilisation, so its error is about one sample
    /// period per change between busy and idle that a sample straddles, plus NVML's own
    /// averaging window (1/6 s to 1 s depending on the GPU). Measured on the H100 recordings
    /// (`tests/data/fixtures/gpu-h100`, 100 ms, 40 kernel bursts a run): against CUDA-event
    /// kernel time of the same runs, per run -11.4% to +7.0%; the mean of 3 runs within 2.2%.
    pub fn with_interval(interval: Duration) -> Self {
        NvmlGpus {
            interval,
            nvml: None,
            gpus: Vec::new(),
            start_mj: Vec::new(),
            sampler: None,
        }
    }
}

/// How many GPUs NVML sees on this node, or why none can be seen.
pub fn visible_gpus() -> Result<u32, String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML could not be loaded: {e}"))?;
    nvml.device_count()
        .map_err(|e| format!("NVML device count: {e}"))
}

/// The application clocks the node's GPUs support, as `nvidia-smi -q -d SUPPORTED_CLOCKS`
/// lists them: the graphics clocks at the highest supported memory clock (the default one).
#[derive(Debug, Clone, PartialEq)]
pub struct SupportedClocks {
    /// The memory clock the list belongs to, MHz.
    pub memory_mhz: u32,
    /// The graphics (core) clocks, MHz, ascending and distinct.
    pub graphics_mhz: Vec<u32>,
}

/// Reads the supported application clocks of every GPU NVML sees
/// (`nvmlDeviceGetSupportedMemoryClocks`, then `nvmlDeviceGetSupportedGraphicsClocks` at the
/// highest memory clock). An error says why they could not be read: no NVML, no GPU, a GPU
/// that cannot list its clocks (many GeForce boards answer "not supported"), or GPUs of one
/// node that list different clocks.
pub fn supported_clocks() -> Result<SupportedClocks, String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML could not be loaded: {e}"))?;
    let n = nvml
        .device_count()
        .map_err(|e| format!("NVML device count: {e}"))?;
    let mut per_gpu = Vec::new();
    for i in 0..n {
        let d = nvml
            .device_by_index(i)
            .map_err(|e| format!("GPU {i}: {e}"))?;
        let mem = d
            .supported_memory_clocks()
            .map_err(|e| format!("GPU {i}: supported memory clocks: {e}"))?;
        let top = mem
            .iter()
            .copied()
            .max()
            .ok_or_else(|| format!("GPU {i}: NVML lists no supported memory clock"))?;
        let graphics = d
            .supported_graphics_clocks(top)
            .map_err(|e| format!("GPU {i}: supported graphics clocks at {top} MHz memory: {e}"))?;
        per_gpu.push((top, graphics));
    }
    common_clocks(&per_gpu)
}

/// The one list of clocks the GPUs `(memory clock, graphics clocks)` share, sorted and
/// deduplicated; an error names the first GPU whose list differs from GPU 0's.
pub fn common_clocks(per_gpu: &[(u32, Vec<u32>)]) -> Result<SupportedClocks, String> {
    let norm = |(m, g): &(u32, Vec<u32>)| {
        let mut g = g.clone();
        g.sort_unstable();
        g.dedup();
        SupportedClocks {
            memory_mhz: *m,
            graphics_mhz: g,
        }
    };
    let Some(first) = per_gpu.first().map(norm) else {
        return Err("NVML sees no GPU".into());
    };
    if first.graphics_mhz.is_empty() {
        return Err(format!(
            "GPU 0 lists no graphics clock at {} MHz memory",
            first.memory_mhz
        ));
    }
    for (i, other) in per_gpu.iter().enumerate().skip(1) {
        let other = norm(other);
        if other != first {
            return Err(format!(
                "GPU {i} supports other clocks than GPU 0 ({} clocks {}-{} MHz at {} MHz memory \
                 against {} clocks {}-{} MHz at {} MHz memory): a machine file holds one list; \
                 write the clocks every GPU supports by hand",
                other.graphics_mhz.len(),
                other.graphics_mhz.first().unwrap_or(&0),
                other.graphics_mhz.last().unwrap_or(&0),
                other.memory_mhz,
                first.graphics_mhz.len(),
                first.graphics_mhz[0],
                first.graphics_mhz[first.graphics_mhz.len() - 1],
                first.memory_mhz
            ));
        }
    }
    Ok(first)
}

/// The GPUs a sweep with up to `g` GPUs per run uses, in order: the first ones of the user's
/// `CUDA_VISIBLE_DEVICES` where it is set (a Slurm allocation's GPUs, say), else 0, 1, ...
/// `seen` is how many GPUs NVML sees. An error says what is wrong and what to do.
pub fn sweep_gpus(user: Option<&str>, seen: u32, g: u32) -> Result<Vec<u32>, String> {
    let Some(v) = user else {
        return Ok((0..g).collect());
    };
    let v = v.trim();
    if v.is_empty() {
        return Err(
            "CUDA_VISIBLE_DEVICES is set and empty: no GPU is visible to programs. \
                    unset it, or name this node's GPUs (0,1)"
                .into(),
        );
    }
    let mut out = Vec::new();
    for t in v.split(',').map(str::trim) {
        let i: u32 = t.parse().map_err(|_| {
            format!(
                "CUDA_VISIBLE_DEVICES={v} names `{t}`, not a GPU index: jouleplan measures GPUs \
                 by NVML index, so give indices (0,1) or unset it"
            )
        })?;
        if i >= seen {
            return Err(format!(
                "CUDA_VISIBLE_DEVICES={v} names GPU {i}, which is not there: NVML sees {seen} \
                 (indices 0 to {}). unset it, or name GPUs of this node",
                seen.saturating_sub(1)
            ));
        }
        out.push(i);
    }
    if (out.len() as u32) < g {
        return Err(format!(
            "CUDA_VISIBLE_DEVICES={v} makes {} GPUs visible and --gpus asks for {g}",
            out.len()
        ));
    }
    Ok(out)
}

/// The user's `CUDA_VISIBLE_DEVICES`, if set (for `sweep_gpus`).
pub fn user_visible_devices() -> Option<String> {
    std::env::var("CUDA_VISIBLE_DEVICES").ok()
}

/// The GPU indices named by a `CUDA_VISIBLE_DEVICES` value (numbers only).
pub fn visible_devices(value: &str) -> Vec<u32> {
    value
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect()
}

/// One GPU as the profile records it: index, name, memory, power limit and top SM clock
/// (read only; nothing is changed).
fn describe(i: u32, d: &nvml_wrapper::Device<'_>) -> String {
    let mut s = format!("{i}: {}", d.name().unwrap_or_else(|_| "?".into()));
    if let Ok(m) = d.memory_info() {
        s += &format!(", {} MiB", m.total >> 20);
    }
    if let Ok(p) = d.enforced_power_limit() {
        s += &format!(", power limit {} W", p / 1000);
    }
    if let Ok(c) = d.max_clock_info(Clock::SM) {
        s += &format!(", SM clock up to {c} MHz");
    }
    if let Ok(c) = d.max_clock_info(Clock::Memory) {
        s += &format!(", memory clock up to {c} MHz");
    }
    s
}

impl Backend for NvmlGpus {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn discover(&mut self) -> Result<String, Unsupported> {
        let what = "GPU energy and activity (NVML)";
        let nvml = Nvml::init().map_err(|e| {
            Unsupported::new(
                what,
                format!("NVML could not be loaded: {e}"),
                "on nodes with NVIDIA GPUs install the driver (libnvidia-ml.so.1); on CPU-only \
                 nodes there is nothing to measure",
            )
        })?;
        let n = nvml
            .device_count()
            .map_err(|e| Unsupported::new(what, format!("device count: {e}"), ""))?;
        if n == 0 {
            return Err(Unsupported::new(what, "NVML sees no GPU", ""));
        }
        let mut names = Vec::new();
        for i in 0..n {
            let d = nvml
                .device_by_index(i)
                .map_err(|e| Unsupported::new(what, format!("GPU {i}: {e}"), ""))?;
            let mut name = describe(i, &d);
            // Busy time and clocks are still sampled on a GPU without the energy counter.
            if let Err(e) = d.total_energy_consumption() {
                name += &format!(
                    "; GPU energy not measured: no total-energy counter ({e}; NVML needs a \
                     Volta or newer GPU), busy time still sampled"
                );
            }
            names.push(name);
        }
        self.nvml = Some(Arc::new(nvml));
        Ok(format!("{n} GPUs ({})", names.join("; ")))
    }

    fn prepare(&mut self, env: &mut Vec<(String, String)>, _run_dir: &Path) {
        self.gpus = env
            .iter()
            .find(|(k, _)| k == "CUDA_VISIBLE_DEVICES")
            .map(|(_, v)| visible_devices(v))
            .unwrap_or_default();
    }

    fn begin(&mut self) -> Result<(), String> {
        let Some(nvml) = self.nvml.clone() else {
            return Ok(());
        };
        self.start_mj = self
            .gpus
            .iter()
            .map(|&i| {
                nvml.device_by_index(i)
                    .and_then(|d| d.total_energy_consumption())
                    .ok()
            })
            .collect();
        let gpus = self.gpus.clone();
        self.sampler = Some(Sampler::start(
            Samples::new(gpus.len()),
            self.interval,
            move |s: &mut Samples, dt| {
                for (k, &i) in gpus.iter().enumerate() {
                    let Ok(d) = nvml.device_by_index(i) else {
                        continue;
                    };
                    if let Ok(u) = d.utilization_rates() {
                        let sm = d.clock_info(Clock::SM).ok();
                        let mem = d.clock_info(Clock::Memory).ok();
                        s.add(k, u.gpu, dt, sm, mem);
                    }
                }
            },
        ));
        Ok(())
    }

    fn end(&mut self, _ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String> {
        let Some(nvml) = self.nvml.clone() else {
            return Ok(());
        };
        if let Some(samples) = self.sampler.take().and_then(Sampler::stop) {
            samples.store(out);
        }
        for (k, &i) in self.gpus.iter().enumerate() {
            let now = nvml
                .device_by_index(i)
                .and_then(|d| d.total_energy_consumption());
            match (self.start_mj.get(k).copied().flatten(), now) {
                (Some(a), Ok(b)) if b >= a => {
                    out.energy_j
                        .insert(format!("gpu-{i}"), (b - a) as f64 * 1e-3);
                }
                (_, r) => out
                    .warnings
                    .push(format!("GPU {i}: energy counter not read ({r:?})")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_share_one_sorted_clock_list_or_are_refused_naming_the_odd_one() {
        let a = (3505, vec![1164, 595, 633, 633]);
        let got = common_clocks(&[a.clone(), (3505, vec![595, 633, 1164])]).unwrap();
        assert_eq!(got.graphics_mhz, vec![595, 633, 1164]);
        assert_eq!(got.memory_mhz, 3505);
        let e = common_clocks(&[a.clone(), (3505, vec![595, 1164])]).unwrap_err();
        assert!(e.contains("GPU 1 supports other clocks than GPU 0"), "{e}");
        let e = common_clocks(&[a, (810, vec![595, 633, 1164])]).unwrap_err();
        assert!(e.contains("810 MHz memory"), "{e}");
        assert!(common_clocks(&[]).unwrap_err().contains("no GPU"));
        assert!(common_clocks(&[(3505, vec![])]).is_err());
    }

    #[test]
    fn the_users_visible_devices_are_used_and_bad_ones_refused() {
        assert_eq!(sweep_gpus(None, 4, 2), Ok(vec![0, 1]));
        assert_eq!(sweep_gpus(Some("2,3"), 4, 2), Ok(vec![2, 3]));
        assert_eq!(sweep_gpus(Some(" 3 , 1"), 4, 1), Ok(vec![3, 1]));
        let e = sweep_gpus(Some("7"), 1, 1).unwrap_err();
        assert!(
            e.contains("names GPU 7, which is not there: NVML sees 1"),
            "{e}"
        );
        let e = sweep_gpus(Some("GPU-1d40"), 1, 1).unwrap_err();
        assert!(e.contains("not a GPU index"), "{e}");
        assert!(sweep_gpus(Some(""), 1, 1).unwrap_err().contains("empty"));
        let e = sweep_gpus(Some("0"), 2, 2).unwrap_err();
        assert!(
            e.contains("makes 1 GPUs visible and --gpus asks for 2"),
            "{e}"
        );
    }

    #[test]
    fn clocks_are_averaged_over_busy_samples_and_straddles_set_the_error() {
        let mut s = Samples::new(1);
        // idle, two partial samples (a burst starts and ends), a full one, idle again.
        s.add(0, 0, 0.1, Some(345), Some(2619));
        s.add(0, 40, 0.1, Some(1980), Some(2619));
        s.add(0, 100, 0.1, Some(1700), Some(2619));
        s.add(0, 60, 0.1, Some(1800), Some(2619));
        s.add(0, 0, 0.1, Some(345), Some(2619));
        let mut out = Readings::default();
        s.store(&mut out);
        assert!((out.gpu_busy_s[0] - 0.2).abs() < 1e-12);
        assert_eq!(out.gpu_sm_mhz, vec![(1980.0 + 1700.0 + 1800.0) / 3.0]);
        assert_eq!(out.gpu_mem_mhz, vec![2619.0]);
        // Straddles: 40 (partial), 60 (partial), then 0 after 60 (a change): three.
        let want = (3.0 * 0.01 / 12.0_f64).sqrt();
        assert!((out.gpu_busy_err_s[0] - want).abs() < 1e-12);
    }

    #[test]
    fn a_gpu_never_busy_records_no_clocks() {
        let mut s = Samples::new(2);
        s.add(0, 0, 0.1, Some(345), Some(2619));
        s.add(1, 0, 0.1, None, None);
        let mut out = Readings::default();
        s.store(&mut out);
        assert!(out.gpu_sm_mhz.is_empty() && out.gpu_mem_mhz.is_empty());
        assert_eq!(out.gpu_busy_s, vec![0.0, 0.0]);
        assert_eq!(out.gpu_busy_err_s, vec![0.0, 0.0]);
    }
}
