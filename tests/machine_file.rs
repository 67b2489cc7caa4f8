//! `jouleplan machine init` on a sysfs/procfs layout (the file layout the Linux cpufreq and
//! topology drivers expose; the values are illustrative, chosen by the test: two logical CPUs
//! of one physical core, three cpufreq steps) and `machine check` on what it writes.

mod common;

use common::{jouleplan, write};
use std::path::Path;

fn tree(root: &Path) {
    let cpu = root.join("cpu");
    for c in 0..2 {
        let t = cpu.join(format!("cpu{c}/topology"));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("physical_package_id"), "0\n").unwrap();
        std::fs::write(t.join("core_id"), "0\n").unwrap();
    }
    let f = cpu.join("cpu0/cpufreq");
    std::fs::create_dir_all(&f).unwrap();
    std::fs::write(
        f.join("scaling_available_frequencies"),
        "2400000 1800000 1200000 \n",
    )
    .unwrap();
    let proc = root.join("proc");
    std::fs::create_dir_all(proc.join("sys/kernel")).unwrap();
    std::fs::write(proc.join("sys/kernel/hostname"), "node017\n").unwrap();
    std::fs::write(
        proc.join("meminfo"),
        "MemTotal:       263856128 kB\nMemFree: 1 kB\n",
    )
    .unwrap();
    std::fs::write(
        proc.join("cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n\
         model name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 2000.000\n\n",
    )
    .unwrap();
}

#[test]
fn init_writes_what_the_node_says_and_check_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let out = dir.path().join("node.toml");
    let cpu = dir.path().join("cpu");
    let proc = dir.path().join("proc");
    let args = [
        "machine",
        "init",
        "--output",
        out.to_str().unwrap(),
        "--cpu-root",
        cpu.to_str().unwrap(),
        "--proc-root",
        proc.to_str().unwrap(),
    ];
    let (code, stdout, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(stdout, "", "the note goes to stderr");
    assert!(err.contains("1 core, 1.2, 1.8, 2.4 GHz"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    for want in [
        "name = \"node017\"",
        "cores_per_node = 1",
        "frequencies_ghz = [1.2, 1.8, 2.4]",
        "memory_per_node_gib = 251.6",
        "cpu_model = \"Intel(R) Xeon(R) Platinum 8480+\"",
        "\"machine.frequencies_ghz\" = \"measured: ",
        "power = \"missing: ",
    ] {
        assert!(text.contains(want), "{want} not in\n{text}");
    }
    // It never overwrites.
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 2, "{err}");
    // check names both missing sections; plan refuses the file the same way.
    let (code, _, err) = jouleplan(&["machine", "check", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("[network] section") && err.contains("[power] section"),
        "{err}"
    );
    // Without [power] and [network] plan would rank one node by time and node-hours; the
    // bundled profile was measured on another machine, which is what it refuses for.
    let (code, _, err) = jouleplan(&["plan", "--machine", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not on machine `node017`"), "{err}");
    // Filled in (before its [sources] table), it checks.
    let full = text.replace(
        "[sources]",
        "[network]\nlatency_s = 1.5e-6\nbandwidth_bytes_per_s = 1.2e10\n\n\
         [power]\nidle_w = 90.0\ncore_active_w = [3.0, 4.0, 5.5]\ncore_stall_w = 2.0\n\
         memory_w = 10.0\nnetwork_w = 5.0\n\n[sources]",
    );
    let m = write(dir.path(), "full.toml", &full);
    let (code, out, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("machine `node017` is complete"), "{out}");
    assert!(
        out.contains("1 node x 1 core at 1.2, 1.8, 2.4 GHz, 0 GPUs per node"),
        "{out}"
    );
}

#[test]
fn a_misspelt_key_is_named_with_the_known_key_it_is_closest_to_never_as_missing() {
    let d = tempfile::tempdir().unwrap();
    let head = "[machine]\nname = \"g\"\nnodes = 1\ncores_per_node = 1\nfrequencies_ghz = [2.0]\n\
                gpus_per_node = 1\n";
    // Each slip beside keys that share its first four letters (gpu_model, gpus_per_node,
    // gpu_clocks_mhz, gpu_memory_clock_mhz): the closest known key is named, and the optional
    // key is not said to be missing.
    for (line, known) in [
        ("gpu_clock_mhz = [1000, 2000]", "machine.gpu_clocks_mhz"),
        ("gpu_mem_clock_mhz = 3505", "machine.gpu_memory_clock_mhz"),
        ("cpu_modle = \"x\"", "machine.cpu_model"),
    ] {
        let m = write(d.path(), "m.toml", &format!("{head}{line}\n"));
        let (code, _, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        let slip = line.split(' ').next().unwrap();
        assert!(
            err.contains(&format!("key `{known}`"))
                && err.contains(&format!("the unknown key `{slip}` in its place")),
            "{err}"
        );
        assert!(!err.contains("is missing"), "{err}");
    }
}
