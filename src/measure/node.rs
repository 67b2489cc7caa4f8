//! What a machine file can take from the node it runs on (`jouleplan machine init`): physical
//! cores (sysfs topology), frequencies (cpufreq's available frequencies, or its min and max,
//! or the running frequency), memory (`/proc/meminfo`), CPU model (`/proc/cpuinfo`), GPUs and
//! their model (NVML), and the node count of the Slurm cluster (`sinfo`) when there is one.
//! Each value comes with where it was read; what cannot be read here (network, power) is
//! named with how to get it. Roots are injectable for tests.

use super::{cpu, cpufreq, sweep};
use crate::artefact::machine::{MACHINE_FORMAT, NodeSection};
use std::path::{Path, PathBuf};

/// A value read from the node, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// `measured: ...` or `assumed: ...`.
    pub source: String,
}

/// What the node says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    /// Host name.
    pub hostname: String,
    /// Physical cores.
    pub cores: Sourced<u32>,
    /// Frequencies, GHz, ascending.
    pub frequencies_ghz: Sourced<Vec<f64>>,
    /// Memory, GiB.
    pub memory_gib: Option<Sourced<f64>>,
    /// CPU model name.
    pub cpu_model: Sourced<String>,
    /// GPUs and their model, when NVML sees any.
    pub gpus: Option<(Sourced<u32>, String)>,
    /// The GPUs' supported application clocks (NVML), or why they could not be read (`None`
    /// without GPUs).
    pub gpu_clocks: Option<Result<super::nvml::SupportedClocks, String>>,
    /// Nodes of the cluster.
    pub nodes: Sourced<u32>,
}

/// Where to read from.
#[derive(Debug, Clone)]
pub struct NodeRoots {
    /// `/sys/devices/system/cpu`.
    pub cpu: PathBuf,
    /// `/proc`.
    pub proc: PathBuf,
}

impl Default for NodeRoots {
    fn default() -> Self {
        NodeRoots {
            cpu: PathBuf::from("/sys/devices/system/cpu"),
            proc: PathBuf::from("/proc"),
        }
    }
}

/// Reads the node, and the GPUs' supported clocks where NVML sees GPUs.
pub fn read(roots: &NodeRoots) -> NodeFacts {
    let mut facts = read_cpu_side(roots);
    if facts.gpus.is_some() {
        facts.gpu_clocks = Some(super::nvml::supported_clocks());
    }
    facts
}

/// Reads the node's CPU side, memory, node count and the GPUs' count and model.
fn read_cpu_side(roots: &NodeRoots) -> NodeFacts {
    let cpuinfo = std::fs::read_to_string(roots.proc.join("cpuinfo")).unwrap_or_default();
    let id = cpu::parse_cpuinfo(&cpuinfo);
    let n = sweep::core_cpus(&roots.cpu).len().max(1) as u32;
    NodeFacts {
        hostname: std::fs::read_to_string(roots.proc.join("sys/kernel/hostname"))
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "this-node".into()),
        cores: Sourced {
            value: n,
            source: format!(
                "measured: {} (one logical CPU per physical core)",
                roots.cpu.join("cpu*/topology").display()
            ),
        },
        frequencies_ghz: frequencies(&roots.cpu, &id.mhz),
        memory_gib: memory(&roots.proc),
        cpu_model: Sourced {
            value: id.model_name.clone(),
            source: format!("measured: {}", roots.proc.join("cpuinfo").display()),
        },
        gpus: gpus(),
        gpu_clocks: None,
        nodes: nodes(),
    }
}

fn first_cpu(root: &Path) -> PathBuf {
    root.join("cpu0/cpufreq")
}

fn read_khz_list(p: &Path) -> Vec<f64> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|k| k.parse::<f64>().ok())
        .map(|k| k / 1e6)
        .collect()
}

fn frequencies(root: &Path, mhz: &[f64]) -> Sourced<Vec<f64>> {
    let dir = first_cpu(root);
    let mut avail = read_khz_list(&dir.join("scaling_available_frequencies"));
    avail.sort_by(f64::total_cmp);
    avail.dedup();
    if !avail.is_empty() {
        return Sourced {
            value: avail,
            source: format!(
                "measured: {}",
                dir.join("scaling_available_frequencies").display()
            ),
        };
    }
    let lo = read_khz_list(&dir.join("cpuinfo_min_freq"));
    let hi = read_khz_list(&dir.join("cpuinfo_max_freq"));
    if let (Some(&lo), Some(&hi)) = (lo.first(), hi.first())
        && hi > lo
    {
        return Sourced {
            value: vec![lo, hi],
            source: format!(
                "measured: cpufreq's cpuinfo_min_freq and cpuinfo_max_freq in {} (the driver \
                 lists no steps between them: add the ones your centre allows)",
                dir.display()
            ),
        };
    }
    let now = cpufreq::current_hz(root, mhz).unwrap_or(0.0) / 1e9;
    Sourced {
        value: vec![(now * 1e3).round() / 1e3],
        source: "measured: the running frequency (/proc/cpuinfo); no cpufreq here, so no \
                 other frequency can be set"
            .into(),
    }
}

fn memory(proc_root: &Path) -> Option<Sourced<f64>> {
    let text = std::fs::read_to_string(proc_root.join("meminfo")).ok()?;
    let kib: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(Sourced {
        value: (kib / 1024.0 / 1024.0 * 10.0).floor() / 10.0,
        source: format!(
            "measured: MemTotal of {}",
            proc_root.join("meminfo").display()
        ),
    })
}

fn gpus() -> Option<(Sourced<u32>, String)> {
    let nvml = nvml_wrapper::Nvml::init().ok()?;
    let n = nvml.device_count().ok().filter(|&n| n > 0)?;
    let name = nvml.device_by_index(0).ok()?.name().ok()?;
    Some((
        Sourced {
            value: n,
            source: "measured: NVML device count".into(),
        },
        name,
    ))
}

fn nodes() -> Sourced<u32> {
    let sinfo = std::process::Command::new("sinfo")
        .args(["-h", "-o", "%D"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().parse::<u32>().ok())
                .reduce(|a, b| a + b)
        });
    match sinfo {
        Some(n) if n > 0 => Sourced {
            value: n,
            source: "measured: `sinfo -h -o %D`, nodes of the Slurm cluster".into(),
        },
        _ => Sourced {
            value: 1,
            source: "assumed: this one node (no Slurm here); set your cluster's node count".into(),
        },
    }
}

/// The machine file text for the facts: what was read, with `[sources]` for every key, and the
/// `[network]` and `[power]` sections that could not be measured here left as comments that
/// say how to get them (`jouleplan machine check` lists them as missing). The sections are
/// the machine file's own type, written by `toml`.
pub fn machine_toml(f: &NodeFacts) -> String {
    let clocks = f.gpu_clocks.as_ref().and_then(|r| r.as_ref().ok());
    let node = NodeSection {
        name: f.hostname.clone(),
        description: format!("{} as `jouleplan machine init` read it", f.hostname),
        nodes: f.nodes.value,
        cores_per_node: f.cores.value,
        frequencies_ghz: f.frequencies_ghz.value.clone(),
        gpus_per_node: f.gpus.as_ref().map_or(0, |(n, _)| n.value),
        memory_per_node_gib: f.memory_gib.as_ref().map(|m| m.value),
        cpu_model: Some(f.cpu_model.value.clone()),
        gpu_model: f.gpus.as_ref().map(|(_, model)| model.clone()),
        gpu_clocks_mhz: clocks.map(|c| c.graphics_mhz.iter().map(|&m| f64::from(m)).collect()),
        gpu_memory_clock_mhz: clocks.map(|c| f64::from(c.memory_mhz)),
    };
    let mut s = format!(
        "# Written by `jouleplan machine init` on {host}: what this node says about itself.\n\
         # Not measured here: [network] and [power] below; `jouleplan machine check` lists what\n\
         # is missing. Until they are filled, plan ranks by time and node-hours (no energy)\n\
         # and stays on one node without [network].\n\n\
         format = \"{MACHINE_FORMAT}\"\n\n",
        host = f.hostname,
    );
    s += &section("machine", &node);
    if let Some(Err(why)) = &f.gpu_clocks {
        s += &format!(
            "\n# gpu_clocks_mhz: not read ({why}); without it plan has no GPU clock axis.\n\
             # Add the supported application clocks by hand (`nvidia-smi -q -d SUPPORTED_CLOCKS`)\n\
             # to plan the GPU clock: gpu_clocks_mhz = [...]\n"
        );
    }
    s += "\n# [network]: an MPI ping-pong between two nodes (NetPIPE, or OSU osu_latency and\n\
          # osu_bw), fitted as latency + bytes / bandwidth:\n\
          # latency_s = ...\n# bandwidth_bytes_per_s = ...\n\n\
          # [power], in watts, per node and per core state (one value, or one per frequency):\n\
          # measured with RAPL or Slurm's energy accounting at several core counts (a line\n\
          # P = idle_w + c x core_active_w per frequency), or the vendor's figures labelled so:\n\
          # idle_w = ...\n# core_active_w = ...\n# core_stall_w = ...\n# memory_w = ...\n\
          # network_w = ...\n";
    if f.gpus.is_some() {
        s += "# gpu_active_w = ...   (kernels running; NVML's energy counter)\n\
              # gpu_idle_w = ...     (a CUDA context, no kernel)\n\
              # gpu_nocontext_w = ... (no CUDA context)\n";
    }
    s += "\n";
    s += &section("sources", &sources(f));
    s
}

/// `[name]` and its keys, as `toml` writes them.
fn section<T: serde::Serialize>(name: &str, v: &T) -> String {
    let mut t = std::collections::BTreeMap::new();
    t.insert(name, v);
    // Strings, numbers and lists of numbers: nothing `toml` cannot write.
    toml::to_string(&t).unwrap_or_default()
}

/// Where each value of the facts came from.
fn sources(f: &NodeFacts) -> std::collections::BTreeMap<String, String> {
    let mut src = vec![
        ("machine.nodes", f.nodes.source.clone()),
        ("machine.cores_per_node", f.cores.source.clone()),
        ("machine.frequencies_ghz", f.frequencies_ghz.source.clone()),
        ("machine.cpu_model", f.cpu_model.source.clone()),
    ];
    if let Some(m) = &f.memory_gib {
        src.push(("machine.memory_per_node_gib", m.source.clone()));
    }
    if let Some((n, _)) = &f.gpus {
        src.push(("machine.gpus_per_node", n.source.clone()));
        src.push(("machine.gpu_model", "measured: NVML device 0 name".into()));
    }
    if let Some(Ok(c)) = &f.gpu_clocks {
        src.push((
            "machine.gpu_clocks_mhz",
            format!(
                "measured: NVML nvmlDeviceGetSupportedGraphicsClocks at the highest supported \
                 memory clock ({} MHz), every GPU of the node alike (the list `nvidia-smi -q -d \
                 SUPPORTED_CLOCKS` prints)",
                c.memory_mhz
            ),
        ));
        src.push((
            "machine.gpu_memory_clock_mhz",
            "measured: NVML nvmlDeviceGetSupportedMemoryClocks, the highest".into(),
        ));
    }
    src.push((
        "network",
        "missing: not measurable from one node; see the comment above".into(),
    ));
    src.push((
        "power",
        "missing: machine init does not measure power; see the comment above".into(),
    ));
    src.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artefact::machine::MachineFile;
    use crate::measure::nvml::SupportedClocks;

    fn facts(clocks: Option<Result<SupportedClocks, String>>) -> NodeFacts {
        let s = |v: u32| Sourced {
            value: v,
            source: "measured: test".into(),
        };
        NodeFacts {
            hostname: "n1".into(),
            cores: s(16),
            frequencies_ghz: Sourced {
                value: vec![2.1],
                source: "measured: test".into(),
            },
            memory_gib: None,
            cpu_model: Sourced {
                value: "cpu".into(),
                source: "measured: test".into(),
            },
            gpus: Some((s(1), "gpu".into())),
            gpu_clocks: clocks,
            nodes: s(1),
        }
    }

    #[test]
    fn clocks_nvml_lists_are_written_with_their_source_and_read_back() {
        let c = SupportedClocks {
            memory_mhz: 3505,
            graphics_mhz: vec![595, 975, 1164],
        };
        let text = machine_toml(&facts(Some(Ok(c))));
        let f = MachineFile::parse(Path::new("m.toml"), &text).unwrap();
        assert_eq!(f.machine.gpu_clocks_mhz, Some(vec![595.0, 975.0, 1164.0]));
        assert_eq!(f.machine.gpu_memory_clock_mhz, Some(3505.0));
        let src = &f.sources["machine.gpu_clocks_mhz"];
        assert!(
            src.contains("nvmlDeviceGetSupportedGraphicsClocks"),
            "{src}"
        );
    }

    #[test]
    fn clocks_nvml_cannot_list_are_left_out_and_the_reason_written() {
        let text = machine_toml(&facts(Some(Err("GPU 0: Not Supported".into()))));
        let f = MachineFile::parse(Path::new("m.toml"), &text).unwrap();
        assert_eq!(f.machine.gpu_clocks_mhz, None);
        assert!(
            text.contains("gpu_clocks_mhz: not read (GPU 0: Not Supported)"),
            "{text}"
        );
        assert!(!f.sources.contains_key("machine.gpu_clocks_mhz"));
    }
}
