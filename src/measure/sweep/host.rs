//! The node the sweep runs on: its physical cores, its name and CPU, programs on PATH.

use crate::measure::cpu;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

pub(super) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub(super) fn read_trim(p: &str) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// One logical CPU per physical core, from the CPUs this process may use.
pub fn core_cpus(cpu_root: &Path) -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data filled by sched_getaffinity.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
            == 0;
    let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| ok && unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    let mut seen = BTreeSet::new();
    allowed
        .into_iter()
        .filter(|&c| {
            let t = cpu_root.join(format!("cpu{c}/topology"));
            let pkg = read_trim(&t.join("physical_package_id").to_string_lossy());
            let core = read_trim(&t.join("core_id").to_string_lossy());
            if pkg.is_empty() && core.is_empty() {
                return true;
            }
            seen.insert((pkg, core))
        })
        .collect()
}

pub(super) fn host_info(cpu: &cpu::CpuId, cores: usize) -> BTreeMap<String, String> {
    let mut h = BTreeMap::new();
    h.insert("hostname".into(), read_trim("/proc/sys/kernel/hostname"));
    h.insert("kernel".into(), read_trim("/proc/sys/kernel/osrelease"));
    h.insert("cpu".into(), cpu.to_string());
    h.insert("physical cores available".into(), cores.to_string());
    h
}

/// Finds `name` as the shell would: a path when it holds a `/`, else the first executable
/// file of that name on `PATH`.
pub fn resolve_program(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = Path::new(name);
        return executable(p).then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| executable(p))
    })
}
