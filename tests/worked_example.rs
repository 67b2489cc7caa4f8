//! A worked example: every term of MODEL.md sections 3 and 4 derived by hand here, compared with
//! the library and with `jouleplan predict --json`.

mod common;

use assert_cmd::Command;
use common::{MACHINE, close, profile_json, write};
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::units::Hertz;
use std::path::Path;

struct Hand {
    t_cpu: f64,
    t_mem: f64,
    t_wait: f64,
    t_serv: f64,
    t: f64,
    e_cpu: f64,
    e_mem: f64,
    e_net: f64,
    e_idle: f64,
    e: f64,
    ucr: f64,
    rho: f64,
}

/// (n, c, f, g) = (4, 4, 2 GHz, 0); baseline point C_s = 8e10, st_s = 3e10, m_s = 2e10, U_s = 0.9;
/// S_s = 10, S = 100; eta = 4 messages of nu = 1e5 bytes (constant growth);
/// L = 1e-5 s, B = 1e9 B/s, B_sw = 2e9 B/s, cv2 = 1; P_act = 10 W, P_stall = 4 W at 2 GHz,
/// P_mem = 6 W, P_net = 3 W, P_idle = 50 W.
fn by_hand() -> Hand {
    let (n, c, f): (f64, f64, f64) = (4.0, 4.0, 2.0e9);
    let k = 100.0 / 10.0;
    let w = k * (8.0e10 - 3.0e10); // 5e11
    let b = k * (3.0e10 - 2.0e10); // 1e11
    let m = k * 2.0e10; // 2e11
    let t_cpu = (w + b) / (n * c * f); // 18.75 s
    let t_mem = m / (n * c * f); // 6.25 s
    assert!((t_cpu - 18.75).abs() < 1e-12 && (t_mem - 6.25).abs() < 1e-12);
    let big_n = 4.0 * 100.0; // messages per node over the run
    let t_serv = f64::max((1.0 - 0.9) * t_cpu, big_n * 1.0e5 / 1.0e9); // max(1.875, 0.04)
    let y = 1.0e-5 + 1.0e5 / 2.0e9; // 6e-5 s
    let lambda = n * big_n / t_cpu; // 85.33 /s
    let rho = lambda * y; // 0.00512
    let t_wait = big_n * lambda * y * y * (1.0 + 1.0) / 2.0 / (1.0 - rho);
    let t = t_cpu + t_wait + t_serv + t_mem;
    let e_cpu = (10.0 * t_cpu + 4.0 * t_mem) * c;
    let e_mem = 6.0 * t_mem;
    let e_net = 3.0 * (t_wait + t_serv);
    let e_idle = 50.0 * t;
    let e = n * (e_cpu + e_mem + e_net + e_idle);
    Hand {
        t_cpu,
        t_mem,
        t_wait,
        t_serv,
        t,
        e_cpu: n * e_cpu,
        e_mem: n * e_mem,
        e_net: n * e_net,
        e_idle: n * e_idle,
        e,
        ucr: t_cpu / t,
        rho,
    }
}

#[test]
fn library_reproduces_every_hand_derived_term() {
    let machine = Machine::from_toml(Path::new("m.toml"), MACHINE).unwrap();
    let profile = Profile::from_json(Path::new("p.json"), &profile_json()).unwrap();
    let model = Model::new(&machine, &profile).unwrap();
    let cfg = Config {
        nodes: 4,
        cores: 4,
        freq: Hertz(2.0e9),
        gpus: 0,
        gpu_clock_mhz: None,
    };
    let Outcome::Finite(p) = model.predict(cfg).unwrap() else {
        panic!("not saturated")
    };
    let h = by_hand();
    let pairs = [
        ("t_cpu", p.t.cpu, h.t_cpu),
        ("t_mem", p.t.mem, h.t_mem),
        ("t_wait", p.t.wait_net, h.t_wait),
        ("t_serv", p.t.serv_net, h.t_serv),
        ("T", p.time.0, h.t),
        ("e_cpu", p.e.cpu, h.e_cpu),
        ("e_mem", p.e.mem, h.e_mem),
        ("e_net", p.e.net, h.e_net),
        ("e_idle", p.e.idle, h.e_idle),
        ("E", p.energy.0, h.e),
        ("UCR", p.ucr, h.ucr),
        ("rho", p.rho, h.rho),
    ];
    for (name, got, want) in pairs {
        assert!(close(got, want, 1e-12), "{name}: got {got}, by hand {want}");
    }
    assert_eq!(p.t.gpu, 0.0);
    assert_eq!(p.e.gpu, 0.0);
    assert!(p.device.is_none());
    // The terms add up to the totals.
    assert!(close(
        p.t.cpu + p.t.mem + p.t.wait_net + p.t.serv_net,
        p.time.0,
        1e-12
    ));
    assert!(close(
        p.e.cpu + p.e.mem + p.e.net + p.e.idle + p.e.gpu,
        p.energy.0,
        1e-12
    ));
}

#[test]
fn predict_json_from_the_binary_matches_the_hand_derivation() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    let p = write(dir.path(), "p.json", &profile_json());
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .args(["predict", "--config", "4,4,2.0", "--json", "--machine"])
        .arg(&m)
        .arg("--profile")
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = by_hand();
    for (key, want) in [
        ("time_s", h.t),
        ("energy_j", h.e),
        ("ucr", h.ucr),
        ("rho", h.rho),
    ] {
        let got = v[key].as_f64().unwrap();
        assert!(close(got, want, 1e-12), "{key}: {got} vs {want}");
    }
    let b = &v["breakdown"];
    for (key, want) in [
        ("t_cpu_s", h.t_cpu),
        ("t_mem_s", h.t_mem),
        ("t_wait_net_s", h.t_wait),
        ("t_serv_net_s", h.t_serv),
        ("e_cpu_j", h.e_cpu),
        ("e_mem_j", h.e_mem),
        ("e_net_j", h.e_net),
        ("e_idle_j", h.e_idle),
        ("e_gpu_j", 0.0),
    ] {
        let got = b[key].as_f64().unwrap();
        assert!(close(got, want, 1e-12), "{key}: {got} vs {want}");
    }
    assert_eq!(v["nodes"], 4);
    assert_eq!(v["cores"], 4);
    assert_eq!(v["freq_hz"], 2.0e9);
    assert_eq!(v["gpus"], 0);
}

#[test]
fn a_single_node_sends_no_messages() {
    let machine = Machine::from_toml(Path::new("m.toml"), MACHINE).unwrap();
    let profile = Profile::from_json(Path::new("p.json"), &profile_json()).unwrap();
    let model = Model::new(&machine, &profile).unwrap();
    let Outcome::Finite(p) = model
        .predict(Config {
            nodes: 1,
            cores: 4,
            freq: Hertz(2.0e9),
            gpus: 0,
            gpu_clock_mhz: None,
        })
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(p.rho, 0.0);
    assert_eq!(p.t.wait_net, 0.0);
    // T_s,net = max((1 - U) T_CPU, 0): the paper's non-overlapped CPU time remains.
    assert!(close(p.t.serv_net, 0.1 * p.t.cpu, 1e-12));
}
