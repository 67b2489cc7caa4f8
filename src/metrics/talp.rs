//! TALP (DLB) outputs: JSON of DLB 3.5, 3.6, 3.7 and later (every region of `Application`, and
//! `Process` when present), and TALP's CSV (`-pop.csv` per region, `-process.csv` per rank).
//! Fields that changed between versions are optional; times are integer nanoseconds.

use super::tree::{DeviceTimes, HostTimes, LegacyHostTimes};
use crate::error::{InputError, InputResult};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How the host times of a region are given.
#[derive(Debug, Clone, PartialEq)]
pub enum HostSource {
    /// DLB 3.6 and later: state times and `minMpiNormd*` (hybrid-v2).
    Modern(HostTimes),
    /// DLB 3.5: normalised useful times.
    Legacy(LegacyHostTimes),
}

/// One monitoring region.
#[derive(Debug, Clone, PartialEq)]
pub struct TalpRegion {
    /// Region name (`Global` is always there).
    pub name: String,
    /// MPI ranks.
    pub ranks: u32,
    /// Nodes.
    pub nodes: u32,
    /// Elapsed time, seconds.
    pub elapsed: f64,
    /// Host times.
    pub host: HostSource,
    /// Device times, when the region saw GPUs.
    pub device: Option<DeviceTimes>,
    /// Cycles in useful time (0 without counters).
    pub cycles: f64,
    /// Instructions in useful time (0 without counters).
    pub instructions: f64,
    /// Useful time, seconds (for IPC and frequency).
    pub useful: f64,
    /// TALP's own printed efficiencies, by their JSON names.
    pub printed: Vec<(String, f64)>,
}

/// One rank of one region (the `Process` section or `-process.csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct TalpProcess {
    /// Region name.
    pub region: String,
    /// MPI rank.
    pub rank: u32,
    /// Node id.
    pub node: u32,
    /// Elapsed, useful and MPI time, seconds.
    pub elapsed: f64,
    /// Useful time, seconds.
    pub useful: f64,
    /// MPI time, seconds.
    pub mpi: f64,
}

/// A TALP output file.
#[derive(Debug, Clone, PartialEq)]
pub struct TalpFile {
    /// Where it was read.
    pub source: PathBuf,
    /// `dlbVersion`, when given.
    pub version: Option<String>,
    /// The regions, in file order.
    pub regions: Vec<TalpRegion>,
    /// Per-rank records, when given.
    pub processes: Vec<TalpProcess>,
}

/// The efficiencies TALP prints, by JSON name.
pub const PRINTED: &[&str] = &[
    "parallelEfficiency",
    "mpiParallelEfficiency",
    "mpiCommunicationEfficiency",
    "mpiLoadBalance",
    "mpiLoadBalanceIn",
    "mpiLoadBalanceOut",
    "ompParallelEfficiency",
    "ompLoadBalance",
    "ompSchedulingEfficiency",
    "ompSerializationEfficiency",
    "deviceOffloadEfficiency",
    "gpuParallelEfficiency",
    "gpuLoadBalance",
    "gpuCommunicationEfficiency",
    "gpuOrchestrationEfficiency",
];

struct Obj<'a> {
    file: &'a Path,
    path: String,
    map: &'a Map<String, Value>,
}

impl Obj<'_> {
    fn err(&self, key: &str, expected: &str, got: String) -> InputError {
        InputError::Key {
            file: self.file.to_path_buf(),
            key: format!("{}.{key}", self.path),
            expected: expected.into(),
            got,
        }
    }

    /// The number at `key` (JSON numbers, and numbers in strings as TALP's CSV holds them), not
    /// yet checked; `None` where the key is absent or null.
    fn raw(&self, key: &str) -> InputResult<Option<f64>> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .map(Some)
                .ok_or_else(|| self.err(key, "a number", v.to_string())),
        }
    }

    fn opt(&self, key: &str) -> InputResult<Option<f64>> {
        let Some(x) = self.raw(key)? else {
            return Ok(None);
        };
        if is_time(key) {
            // Times (integer nanoseconds) go through the range every reader of a time shares:
            // 0, or a nanosecond to a year; never subnormal, negative or infinite.
            return crate::limits::Reading::PartTime
                .check_in(x, 1e-9, "ns")
                .map(|_| Some(x))
                .map_err(|expected| self.err(key, &expected, crate::limits::shown(x)));
        }
        // Counts are never negative; TALP's own printed efficiencies can be slightly (a real
        // oversubscribed run printed mpiLoadBalanceIn -0.02): those are kept and flagged as
        // implausible by the metrics, not refused.
        if x.is_finite() && (x >= 0.0 || PRINTED.contains(&key)) {
            Ok(Some(x))
        } else if x.is_finite() {
            Err(self.err(key, "a number >= 0", crate::limits::shown(x)))
        } else {
            Err(self.err(key, "a finite number", crate::limits::shown(x)))
        }
    }

    /// An elapsed time at `key`, s: a region's or a rank's, never 0 ([`Reading::RegionTime`]).
    ///
    /// [`Reading::RegionTime`]: crate::limits::Reading::RegionTime
    fn elapsed(&self, key: &str) -> InputResult<f64> {
        let ns = self
            .raw(key)?
            .ok_or_else(|| self.err(key, "a number", "nothing (the key is missing)".into()))?;
        crate::limits::Reading::RegionTime
            .check_in(ns, 1e-9, "ns")
            .map_err(|expected| self.err(key, &expected, crate::limits::shown(ns)))
    }

    /// A count at `key` (ranks, CPUs, nodes, GPUs, a rank or node id): a whole number from
    /// `min` to `u32::MAX`, or `None` where the key is absent. A fraction or a count past
    /// `u32` would otherwise be cut silently to another count.
    fn count(&self, key: &str, min: u32) -> InputResult<Option<u32>> {
        let Some(x) = self.opt(key)? else {
            return Ok(None);
        };
        if x.fract() == 0.0 && x >= f64::from(min) && x <= f64::from(u32::MAX) {
            Ok(Some(x as u32))
        } else {
            Err(self.err(
                key,
                &format!("a whole number from {min} to {}", u32::MAX),
                crate::limits::shown(x),
            ))
        }
    }

    /// A count that must be there ([`Obj::count`]).
    fn req_count(&self, key: &str, min: u32) -> InputResult<u32> {
        self.count(key, min)?
            .ok_or_else(|| self.err(key, "a number", "nothing (the key is missing)".into()))
    }

    fn req(&self, key: &str) -> InputResult<f64> {
        self.opt(key)?
            .ok_or_else(|| self.err(key, "a number", "nothing (the key is missing)".into()))
    }

    fn ns(&self, key: &str) -> InputResult<f64> {
        Ok(self.opt(key)?.unwrap_or(0.0) / 1e9)
    }
}

/// Whether a TALP key holds a time in nanoseconds: `*Time`, and the normalised useful and MPI
/// times (`minMpiNormdProc`, DLB 3.5's `usefulNomrdApp`, `maxUsefulNormdNode`).
fn is_time(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("time") || k.contains("normd") || k.contains("nomrd")
}

fn region(
    file: &Path,
    path: String,
    name: &str,
    map: &Map<String, Value>,
) -> InputResult<TalpRegion> {
    let o = Obj { file, path, map };
    let elapsed = o.elapsed("elapsedTime")?;
    let useful = o.req("usefulTime")? / 1e9;
    let host = if o.opt("minMpiNormdProc")?.is_some()
        || o.opt("usefulNomrdApp")?.is_none() && o.opt("usefulNormdApp")?.is_none()
    {
        // MPI time is normalised by the CPUs: TALP writes numCpus in every region, and no
        // count stands in for it.
        let cpus = f64::from(o.req_count("numCpus", 1)?);
        HostSource::Modern(HostTimes {
            elapsed,
            useful,
            mpi: o.ns("mpiTime")?,
            mpi_worker_idle: o.ns("mpiWorkerIdleTime")?,
            omp_load_imbalance: o.ns("ompLoadImbalanceTime")?,
            omp_scheduling: o.ns("ompSchedulingTime")?,
            omp_serialization: o.ns("ompSerializationTime")?,
            gpu_runtime: o.ns("gpuRuntimeTime")?,
            cpus,
            min_mpi_normd_proc: o.ns("minMpiNormdProc")?,
            min_mpi_normd_node: o.ns("minMpiNormdNode")?,
        })
    } else {
        // DLB 3.5 spells it `usefulNomrdApp`; accept the corrected spelling too.
        let app = match o.opt("usefulNomrdApp")? {
            Some(v) => v,
            None => o.req("usefulNormdApp")?,
        };
        HostSource::Legacy(LegacyHostTimes {
            elapsed,
            useful_normd_app: app / 1e9,
            max_useful_normd_proc: o.req("maxUsefulNormdProc")? / 1e9,
            max_useful_normd_node: o.req("maxUsefulNormdNode")? / 1e9,
        })
    };
    let gpus = f64::from(o.count("numGpus", 0)?.unwrap_or(0));
    let gpu_useful = o.ns("gpuUsefulTime")?;
    let device = if gpus > 0.0 || gpu_useful > 0.0 {
        Some(DeviceTimes {
            elapsed,
            gpus,
            gpu_useful,
            max_gpu_useful: o.ns("maxGpuUsefulTime")?,
            max_gpu_active: o.ns("maxGpuActiveTime")?,
        })
    } else {
        None
    };
    let mut printed = Vec::new();
    for k in PRINTED {
        if let Some(v) = o.opt(k)? {
            printed.push(((*k).to_string(), v));
        }
    }
    Ok(TalpRegion {
        name: name.to_string(),
        ranks: o.count("numMpiRanks", 0)?.unwrap_or(0),
        nodes: o.count("numNodes", 1)?.unwrap_or(1),
        elapsed,
        host,
        device,
        cycles: o.opt("cycles")?.unwrap_or(0.0),
        instructions: o.opt("instructions")?.unwrap_or(0.0),
        useful,
        printed,
    })
}

fn process(
    file: &Path,
    path: String,
    region: &str,
    map: &Map<String, Value>,
    keys: [&str; 5],
) -> InputResult<TalpProcess> {
    let o = Obj { file, path, map };
    Ok(TalpProcess {
        region: region.to_string(),
        rank: o.req_count(keys[0], 0)?,
        node: o.count(keys[1], 0)?.unwrap_or(0),
        elapsed: o.elapsed(keys[2])?,
        useful: o.req(keys[3])? / 1e9,
        mpi: o.opt(keys[4])?.unwrap_or(0.0) / 1e9,
    })
}

/// Reads a TALP JSON document.
pub fn from_json(file: &Path, text: &str) -> InputResult<TalpFile> {
    let doc = crate::input::parse_json(file, text)?;
    let top = doc.as_object().ok_or_else(|| InputError::Key {
        file: file.to_path_buf(),
        key: "(top level)".into(),
        expected: "a TALP JSON object".into(),
        got: "something else".into(),
    })?;
    let app = top
        .get("Application")
        .and_then(Value::as_object)
        .ok_or_else(|| InputError::Key {
            file: file.to_path_buf(),
            key: "Application".into(),
            expected: "a table of regions (TALP's --talp-summary=pop-metrics output)".into(),
            got: "nothing".into(),
        })?;
    let mut regions = Vec::new();
    for (name, v) in app {
        let map = v.as_object().ok_or_else(|| InputError::Key {
            file: file.to_path_buf(),
            key: format!("Application.{name}"),
            expected: "a region object".into(),
            got: v.to_string(),
        })?;
        regions.push(region(file, format!("Application.{name}"), name, map)?);
    }
    if regions.is_empty() {
        return Err(InputError::Key {
            file: file.to_path_buf(),
            key: "Application".into(),
            expected: "at least one region (TALP always writes Global)".into(),
            got: "no region".into(),
        });
    }
    let processes = json_processes(file, top, &regions)?;
    Ok(TalpFile {
        source: file.to_path_buf(),
        version: top
            .get("dlbVersion")
            .and_then(Value::as_str)
            .map(String::from),
        regions,
        processes,
    })
}

/// The `Process` section: per region, one object per rank, each rank once, and as many as
/// the region's `numMpiRanks` where it gives them. A rank listed twice or missing would change
/// the load balance computed from them without a word.
fn json_processes(
    file: &Path,
    top: &Map<String, Value>,
    regions: &[TalpRegion],
) -> InputResult<Vec<TalpProcess>> {
    let key_err = |key: String, expected: &str, got: String| InputError::Key {
        file: file.to_path_buf(),
        key,
        expected: expected.into(),
        got,
    };
    let mut processes = Vec::new();
    let Some(section) = top.get("Process") else {
        return Ok(processes);
    };
    let procs = section.as_object().ok_or_else(|| {
        key_err(
            "Process".into(),
            "a table of regions, each a list of ranks",
            section.to_string(),
        )
    })?;
    let mut seen = HashMap::new();
    for (name, list) in procs {
        let items = list.as_array().ok_or_else(|| {
            key_err(
                format!("Process.{name}"),
                "a list of ranks",
                list.to_string(),
            )
        })?;
        for (i, p) in items.iter().enumerate() {
            let path = format!("Process.{name}[{i}]");
            let map = p
                .as_object()
                .ok_or_else(|| key_err(path.clone(), "a rank object", p.to_string()))?;
            let keys = ["rank", "nodeId", "elapsedTime", "usefulTime", "mpiTime"];
            let rec = process(file, path.clone(), name, map, keys)?;
            if let Some(first) = seen.insert((name.clone(), rec.rank), i) {
                return Err(key_err(
                    format!("{path}.rank"),
                    &format!(
                        "each rank once a region (Process.{name}[{first}] is rank {} already)",
                        rec.rank
                    ),
                    format!("rank {} again", rec.rank),
                ));
            }
            processes.push(rec);
        }
        let want = regions
            .iter()
            .find(|r| &r.name == name)
            .map_or(0, |r| r.ranks);
        if want > 0 && items.len() != want as usize {
            return Err(key_err(
                format!("Process.{name}"),
                &format!("one entry per rank: Application.{name}.numMpiRanks is {want}"),
                format!("{} entries", items.len()),
            ));
        }
    }
    Ok(processes)
}

/// Reads TALP's CSV: the pop-metrics table (`name,numCpus,...`) or the process table
/// (`Region,Rank,PID,...`), told apart by the header.
pub fn from_csv(file: &Path, text: &str) -> InputResult<TalpFile> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| syntax(file, e))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect::<Vec<_>>();
    once_each(file, &headers)?;
    let pop = headers.first().is_some_and(|h| h == "name");
    // DLB writes `Region,Rank,...,ElapsedTime,MPITime` up to 3.6 and camelCase
    // (`region,rank,...,elapsedTime,mpiTime`) in 3.7: process tables are read by lower-case name.
    let proc_table = headers
        .first()
        .is_some_and(|h| h.eq_ignore_ascii_case("region"));
    if !pop && !proc_table {
        return Err(InputError::Key {
            file: file.to_path_buf(),
            key: "line 1".into(),
            expected:
                "a TALP CSV header starting with `name,` (pop metrics) or `Region,` (processes)"
                    .into(),
            got: headers.join(","),
        });
    }
    let mut out = TalpFile {
        source: file.to_path_buf(),
        version: None,
        regions: Vec::new(),
        processes: Vec::new(),
    };
    let mut seen = HashMap::new();
    let mut regions_seen = HashMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| syntax(file, e))?;
        let line = i + 2;
        let mut map = Map::new();
        for (h, v) in headers.iter().zip(rec.iter()) {
            let key = if proc_table {
                h.to_ascii_lowercase()
            } else {
                h.clone()
            };
            map.insert(key, Value::String(v.trim().to_string()));
        }
        let name = rec.get(0).unwrap_or("").to_string();
        if pop {
            region_once(file, line, &mut regions_seen, &name)?;
            out.regions
                .push(region(file, format!("line {line}"), &name, &map)?);
        } else {
            let keys = ["rank", "nodeid", "elapsedtime", "usefultime", "mpitime"];
            let p = process(file, format!("line {line}"), &name, &map, keys)?;
            not_again(file, line, &mut seen, &p)?;
            out.processes.push(p);
        }
    }
    Ok(out)
}

/// Refuses a process row of a rank its region has already (line `line`): TALP appends a run's
/// rows to a CSV that exists, and a second run's ranks would be read as more ranks of the first.
fn not_again(
    file: &Path,
    line: usize,
    seen: &mut HashMap<(String, u32), usize>,
    p: &TalpProcess,
) -> InputResult<()> {
    let Some(first) = seen.insert((p.region.clone(), p.rank), line) else {
        return Ok(());
    };
    Err(InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: format!(
            "each rank once a region (line {} holds rank {} of {} already): TALP appends a \
             run's rows to a CSV that exists, so give each run's file on its own",
            first, p.rank, p.region
        ),
        got: format!("rank {} of {} again", p.rank, p.region),
    })
}

/// Refuses a pop-metrics row of a region an earlier line (`seen`) holds already: TALP appends
/// a run's rows to a CSV that exists, and a second run would be read as a second region of one
/// name, shown as two runs of one file.
fn region_once(
    file: &Path,
    line: usize,
    seen: &mut HashMap<String, usize>,
    name: &str,
) -> InputResult<()> {
    let Some(first) = seen.insert(name.to_string(), line) else {
        return Ok(());
    };
    Err(InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: format!(
            "each region once (line {first} holds region {name} already): TALP appends a \
             run's rows to a CSV that exists, so give each run's file on its own"
        ),
        got: format!("region {name} again"),
    })
}

/// Refuses a CSV header naming a column twice (case aside, as process tables are read): the
/// second would silently replace the first's cells.
fn once_each(file: &Path, headers: &[String]) -> InputResult<()> {
    for (i, h) in headers.iter().enumerate() {
        if headers[..i].iter().any(|g| g.eq_ignore_ascii_case(h)) {
            return Err(InputError::Key {
                file: file.to_path_buf(),
                key: "line 1".into(),
                expected: format!("each column once: `{h}` is there twice"),
                got: headers.join(","),
            });
        }
    }
    Ok(())
}

fn syntax(file: &Path, e: csv::Error) -> InputError {
    InputError::Syntax {
        file: file.to_path_buf(),
        format: "CSV",
        detail: e.to_string(),
    }
}

/// Reads a TALP output by its extension (`.json` or `.csv`).
pub fn read(file: &Path, text: &str) -> InputResult<TalpFile> {
    match file.extension().and_then(|e| e.to_str()) {
        Some("csv") => from_csv(file, text),
        _ => from_json(file, text),
    }
}
