//! The CPU: vendor, family and model from `/proc/cpuinfo`, and the raw events that count total
//! and memory-related stall cycles on it.
//!
//! Event encodings come from Linux perf's pmu-events tables (`tools/perf/pmu-events/arch/x86/`,
//! as shipped in perf 6.1; read with `PERF_CPUID=<id> perf list --details`):
//! `haswell`/`haswellx`, `broadwell*`, `skylake*`/`cascadelakex`/`icelake*`, `sapphirerapids`,
//! `amdzen3`. Other CPUs get [`Unsupported`] with a hint to name the events with
//! `--stall-events`.

use super::Unsupported;
use std::fmt;

/// The processor, as `/proc/cpuinfo` names it.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuId {
    /// `GenuineIntel`, `AuthenticAMD`, ...
    pub vendor: String,
    /// `cpu family`.
    pub family: u32,
    /// `model`.
    pub model: u32,
    /// `model name`.
    pub model_name: String,
    /// `cpu MHz` of each logical CPU, in order.
    pub mhz: Vec<f64>,
}

impl fmt::Display for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} family {:#x} model {:#x})",
            self.model_name, self.vendor, self.family, self.model
        )
    }
}

/// Parses `/proc/cpuinfo` text (x86 layout; other architectures leave vendor/family empty).
pub fn parse_cpuinfo(text: &str) -> CpuId {
    let mut id = CpuId {
        vendor: String::new(),
        family: 0,
        model: 0,
        model_name: String::new(),
        mhz: Vec::new(),
    };
    let mut first = true;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim().is_empty() && !id.vendor.is_empty() {
                first = false;
            }
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "cpu MHz" => {
                if let Ok(x) = v.parse() {
                    id.mhz.push(x);
                }
            }
            _ if !first => {}
            "vendor_id" => id.vendor = v.to_string(),
            "cpu family" => id.family = v.parse().unwrap_or(0),
            "model" => id.model = v.parse().unwrap_or(0),
            "model name" => id.model_name = v.to_string(),
            _ => {}
        }
    }
    id
}

/// Reads this machine's `/proc/cpuinfo`.
pub fn this_cpu() -> CpuId {
    parse_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

/// A raw PMU event (`PERF_TYPE_RAW` config) with the name perf gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEvent {
    /// perf's name (`cycle_activity.stalls_total`).
    pub name: &'static str,
    /// The config word: event | umask << 8 | cmask << 24 (AMD: event bits 8-11 at 32-35).
    pub config: u64,
}

/// x86 raw config from event select, unit mask and counter mask.
pub const fn x86_raw(event: u64, umask: u64, cmask: u64) -> u64 {
    (event & 0xff) | ((event & 0xf00) << 24) | (umask << 8) | (cmask << 24)
}

/// The events for total and memory-related stall cycles on one CPU generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallEvents {
    /// Generation name (perf's table).
    pub table: &'static str,
    /// Total stall cycles.
    pub total: RawEvent,
    /// Memory-related stall cycles.
    pub mem: RawEvent,
    /// What the pair measures on this generation, when it is an approximation.
    pub caveat: &'static str,
}

const INTEL_TOTAL: RawEvent = RawEvent {
    name: "cycle_activity.stalls_total",
    config: x86_raw(0xa3, 0x04, 4),
};

/// The stall events of every generation known, in [`stall_events`]'s order.
pub const TABLES: [StallEvents; 5] = [
    StallEvents {
        table: "haswell",
        total: RawEvent {
            name: "cycle_activity.cycles_no_execute",
            config: x86_raw(0xa3, 0x04, 4),
        },
        mem: RawEvent {
            name: "cycle_activity.stalls_ldm_pending",
            config: x86_raw(0xa3, 0x06, 6),
        },
        caveat: "",
    },
    StallEvents {
        table: "broadwell",
        total: INTEL_TOTAL,
        mem: RawEvent {
            name: "cycle_activity.stalls_mem_any",
            config: x86_raw(0xa3, 0x06, 6),
        },
        caveat: "",
    },
    StallEvents {
        table: "skylake/cascadelakex/icelake",
        total: INTEL_TOTAL,
        mem: RawEvent {
            name: "cycle_activity.stalls_mem_any",
            config: x86_raw(0xa3, 0x14, 20),
        },
        caveat: "",
    },
    StallEvents {
        table: "sapphirerapids",
        total: INTEL_TOTAL,
        mem: RawEvent {
            name: "memory_activity.stalls_l1d_miss",
            config: x86_raw(0x47, 0x03, 3),
        },
        caveat: "memory stalls are stalls with an L1D miss outstanding \
                 (Sapphire Rapids has no STALLS_MEM_ANY)",
    },
    StallEvents {
        table: "amdzen3",
        total: RawEvent {
            name: "de_dis_dispatch_token_stalls1 (all)",
            config: x86_raw(0xae, 0xff, 0),
        },
        mem: RawEvent {
            name: "de_dis_dispatch_token_stalls1.load_queue_rsrc_stall+store_queue_rsrc_stall",
            config: x86_raw(0xae, 0x06, 0),
        },
        caveat: "Zen 3 counts backend dispatch stalls by the resource that blocked \
                 dispatch: total = any token stall, memory = load or store queue full",
    },
];

/// The stall events for `cpu`, or why there are none.
pub fn stall_events(cpu: &CpuId) -> Result<StallEvents, Unsupported> {
    let i = match (cpu.vendor.as_str(), cpu.family, cpu.model) {
        ("GenuineIntel", 6, 0x3c | 0x3f | 0x45 | 0x46) => 0,
        ("GenuineIntel", 6, 0x3d | 0x47 | 0x4f | 0x56) => 1,
        (
            "GenuineIntel",
            6,
            0x4e | 0x5e | 0x8e | 0x9e | 0x55 | 0xa5 | 0xa6 | 0x6a | 0x6c | 0x7d | 0x7e,
        ) => 2,
        ("GenuineIntel", 6, 0x8f | 0xcf) => 3,
        ("AuthenticAMD", 0x19, m) if m <= 0x0f || (0x20..=0x5f).contains(&m) => 4,
        (v, f, m) => {
            return Err(Unsupported::new(
                "stall cycles (total and memory)",
                format!(
                    "no stall events known for {v} family {f:#x} model {m:#x} ({})",
                    cpu.model_name
                ),
                "name the raw events with --stall-events TOTAL,MEM (perf's rNNNN codes, see \
                 `perf list --details`), or import a `perf stat -x,` capture with --perf-stat",
            ));
        }
    };
    Ok(TABLES[i])
}

/// Parses a `--stall-events TOTAL,MEM` value: two perf raw codes `rNNNN` (hex).
pub fn parse_stall_override(s: &str) -> Result<StallEvents, String> {
    let parse = |t: &str| -> Result<u64, String> {
        let hex = t
            .trim()
            .strip_prefix('r')
            .ok_or_else(|| format!("`{t}` is not a raw code rNNNN"))?;
        u64::from_str_radix(hex, 16).map_err(|_| format!("`{t}` is not a raw code rNNNN (hex)"))
    };
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| "two raw codes TOTAL,MEM".to_string())?;
    Ok(StallEvents {
        table: "--stall-events",
        total: RawEvent {
            name: "user total stall event",
            config: parse(a)?,
        },
        mem: RawEvent {
            name: "user memory stall event",
            config: parse(b)?,
        },
        caveat: "",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZEN3_KVM: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
        model name\t: AMD EPYC\ncpu MHz\t\t: 2249.998\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n\
        cpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2249.998\n";

    #[test]
    fn cpuinfo_of_this_zen3_guest_maps_to_the_zen3_token_stall_events() {
        let id = parse_cpuinfo(ZEN3_KVM);
        assert_eq!((id.family, id.model, id.mhz.len()), (25, 1, 2));
        let ev = stall_events(&id).unwrap();
        assert_eq!(ev.table, "amdzen3");
        // perf list: cpu/event=0xae,umask=0x6/
        assert_eq!(ev.mem.config, 0x06ae);
    }

    #[test]
    fn skylake_x_events_match_perf_list() {
        // perf list (PERF_CPUID=GenuineIntel-6-55-4): cpu/event=0xa3,cmask=0x14,umask=0x14/
        let id = CpuId {
            vendor: "GenuineIntel".into(),
            family: 6,
            model: 0x55,
            model_name: "Xeon".into(),
            mhz: vec![],
        };
        let ev = stall_events(&id).unwrap();
        assert_eq!(ev.mem.config, 0x1400_14a3);
        assert_eq!(ev.total.config, 0x0400_04a3);
    }

    #[test]
    fn an_unknown_cpu_says_how_to_name_the_events() {
        let id = CpuId {
            vendor: "AuthenticAMD".into(),
            family: 0x1a,
            model: 2,
            model_name: "Zen 5".into(),
            mhz: vec![],
        };
        let u = stall_events(&id).unwrap_err();
        assert!(u.hint.contains("--stall-events"), "{u}");
        assert!(parse_stall_override("r04a3,r14a3").is_ok());
        assert!(parse_stall_override("04a3").is_err());
    }
}
