//! Property tests: on random small spaces the search's front equals the non-dominated set of
//! every configuration evaluated one by one, each query equals a brute-force scan, and the
//! invariants of MODEL.md hold on the front. Machines and profiles here are random test data.

use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::search::plan::plan;
use jouleplan::search::query::Query;
use jouleplan::search::search;
use jouleplan::search::space::Space;
use jouleplan::units::{Joules, Seconds};
use proptest::prelude::*;
use std::path::Path;

/// A small deterministic generator, so one proptest seed describes a whole machine and profile.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.next()).exp()
    }
}

struct Case {
    machine: Machine,
    profile: Profile,
}

fn case(seed: u64, max_nodes: u32, cores: u32, nfreq: usize, gpus: u32) -> Case {
    case_with(seed, max_nodes, cores, nfreq, gpus, 100.0)
}

/// `max_msgs`: the most messages per process and iteration (small values keep most of a large
/// space below network saturation).
fn case_with(
    seed: u64,
    max_nodes: u32,
    cores: u32,
    nfreq: usize,
    gpus: u32,
    max_msgs: f64,
) -> Case {
    let mut r = Rng(seed);
    let freqs: Vec<f64> = (0..nfreq).map(|i| 1.0 + 0.4 * i as f64).collect();
    let list = |r: &mut Rng, lo: f64, hi: f64| -> String {
        (0..nfreq)
            .map(|_| format!("{:.4}", r.range(lo, hi)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let machine = format!(
        "[machine]\nname = \"random\"\nnodes = {max_nodes}\ncores_per_node = {cores}\nfrequencies_ghz = [{}]\ngpus_per_node = {gpus}\n\
         [network]\nlatency_s = {:e}\nbandwidth_bytes_per_s = {:e}\ncv2 = {}\n\
         [power]\nidle_w = [{}]\ncore_active_w = [{}]\ncore_stall_w = [{}]\nmemory_w = {}\nnetwork_w = {}\ngpu_active_w = {}\ngpu_idle_w = {}\n",
        freqs
            .iter()
            .map(|f| format!("{f:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
        r.log_range(1e-7, 1e-3),
        r.log_range(1e7, 1e10),
        r.range(0.0, 2.0),
        list(&mut r, 10.0, 200.0),
        list(&mut r, 0.5, 20.0),
        list(&mut r, 0.1, 10.0),
        r.range(0.0, 10.0),
        r.range(0.0, 10.0),
        r.range(50.0, 500.0),
        r.range(10.0, 80.0),
    );
    let growth = ["constant", "log2", "all_to_all", "neighbours"][(r.next() * 4.0) as usize % 4];
    let mut points = Vec::new();
    for c in 1..=cores {
        for &f in &freqs {
            for g in 0..=gpus {
                let cycles = r.log_range(1e9, 1e13);
                let st = cycles * r.range(0.0, 0.8);
                let m = st * r.range(0.0, 1.0);
                let mut p = serde_json::json!({
                    "cores": c, "freq_hz": f * 1e9, "gpus": g,
                    "cycles": cycles, "stall_cycles": st, "mem_stall_cycles": m,
                    "utilisation": r.range(0.3, 1.0), "wall_time_s": cycles / (f64::from(c) * f * 1e9),
                });
                if g > 0 {
                    let k: Vec<f64> = (0..g).map(|_| r.log_range(0.01, 100.0)).collect();
                    let t: Vec<f64> = (0..g).map(|_| r.range(0.0, 5.0)).collect();
                    p["device"] = serde_json::json!({
                        "kernel_s": k, "transfer_s": t, "host_runtime_s": r.range(0.0, 10.0)
                    });
                }
                points.push(p);
            }
        }
    }
    let profile = serde_json::json!({
        "format": "jouleplan-profile/1",
        "program": "random",
        "iterations": { "baseline": r.range(1.0, 10.0), "target": r.range(1.0, 1000.0) },
        "communication": {
            "messages_per_iteration": r.range(0.0, max_msgs),
            "bytes_per_message": r.log_range(10.0, 1e7),
            "growth": growth,
            "neighbours": 1 + (r.next() * 6.0) as u32,
        },
        "baseline": points,
    });
    let profile = serde_json::to_string(&profile).unwrap();
    // `neighbours` is only allowed with growth = neighbours.
    let profile = if growth == "neighbours" {
        profile
    } else {
        let mut v: serde_json::Value = serde_json::from_str(&profile).unwrap();
        v["communication"]
            .as_object_mut()
            .unwrap()
            .remove("neighbours");
        v.to_string()
    };
    Case {
        machine: Machine::from_toml(Path::new("random.toml"), &machine).unwrap(),
        profile: Profile::from_json(Path::new("random.json"), &profile).unwrap(),
    }
}

type Point = (f64, f64, (u32, u32, usize, u32, u32), u64);
/// `(T, E, key)` of one configuration.
type Evaluated = (f64, f64, (u32, u32, usize, u32, u32));

/// Every configuration of the space, predicted one by one: the finite ones as `(T, E, key)`,
/// and how many are saturated.
fn every_config(model: &Model<'_>, space: &Space) -> (Vec<Evaluated>, u64) {
    let mut all = Vec::new();
    let mut saturated = 0;
    for &n in &space.nodes {
        for &c in &space.cores {
            for &fi in &space.freqs {
                for &g in &space.gpus {
                    let cfg = Config {
                        nodes: n,
                        cores: c,
                        freq: model.machine.frequencies[fi],
                        gpus: g,
                        gpu_clock_mhz: None,
                    };
                    match model.predict(cfg).unwrap() {
                        Outcome::Finite(p) => all.push((p.time.0, p.energy.0, (n, c, fi, g, 0))),
                        Outcome::Saturated { .. } => saturated += 1,
                    }
                }
            }
        }
    }
    (all, saturated)
}

/// Every configuration one by one, and the non-dominated set by definition.
fn brute(model: &Model<'_>, space: &Space) -> (Vec<Point>, u64, Vec<(f64, f64)>) {
    let (all, saturated) = every_config(model, space);
    let mut front: Vec<Point> = Vec::new();
    for &(t, e, key) in &all {
        let dominated = all
            .iter()
            .any(|&(t2, e2, _)| t2 <= t && e2 <= e && (t2, e2) != (t, e));
        if dominated {
            continue;
        }
        match front.iter_mut().find(|p| p.0 == t && p.1 == e) {
            Some(p) => {
                p.3 += 1;
                p.2 = p.2.min(key);
            }
            None => front.push((t, e, key, 1)),
        }
    }
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let te = all.iter().map(|p| (p.0, p.1)).collect();
    (front, saturated, te)
}

fn subset(mask: u32, max: u32, from: u32) -> Vec<u32> {
    let v: Vec<u32> = (from..=max).filter(|i| mask & (1 << i) != 0).collect();
    if v.is_empty() { vec![from] } else { v }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Hundreds of node counts: ranges split many times, evaluated in blocks and chunks, and
    /// checked against the seed's staircase, with and without the bounds.
    #[test]
    fn a_front_over_hundreds_of_node_counts_equals_brute_force(
        seed in any::<u64>(), max_msgs in prop_oneof![Just(0.01), Just(1.0), Just(100.0)],
        weak in any::<bool>(),
    ) {
        let c = case_with(seed, 700, 3, 2, 1, max_msgs);
        let mut model = Model::new(&c.machine, &c.profile).unwrap();
        // Weak scaling too: the bounds and the table take the other layout.
        model.set_weak(weak).unwrap();
        let space = Space {
            nodes: (1..=700).collect(),
            cores: vec![1, 3],
            freqs: vec![0, 1],
            gpus: vec![0, 1],
            gpu_clocks: Vec::new(),
        };
        let (want, saturated, _) = brute(&model, &space);
        for got in [search(&model, &space).unwrap(), jouleplan::search::search_unpruned(&model, &space).unwrap()] {
            prop_assert_eq!(got.saturated, saturated);
            let got_pts: Vec<Point> = got.front.iter().map(|p| (p.time, p.energy, p.key, p.ties)).collect();
            prop_assert_eq!(got_pts, want.clone());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn front_equals_brute_force_non_dominated_set(
        seed in any::<u64>(), node_mask in any::<u32>(), core_mask in any::<u32>(),
        nfreq in 1usize..4, gpus in 0u32..3,
    ) {
        let c = case(seed, 24, 4, nfreq, gpus);
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let space = Space {
            nodes: subset(node_mask, 24, 1),
            cores: subset(core_mask, 4, 1),
            freqs: (0..nfreq).collect(),
            gpus: (0..=gpus).collect(),
            gpu_clocks: Vec::new(),
        };
        let got = search(&model, &space).unwrap();
        let (want, saturated, _) = brute(&model, &space);
        prop_assert_eq!(got.saturated, saturated);
        prop_assert_eq!(got.evaluated, space.size());
        let got_pts: Vec<Point> = got.front.iter().map(|p| (p.time, p.energy, p.key, p.ties)).collect();
        prop_assert_eq!(got_pts, want.clone());
        // With the bounds off every configuration is evaluated: the same front and counts.
        let all = jouleplan::search::search_unpruned(&model, &space).unwrap();
        prop_assert_eq!(&all.front, &got.front);
        prop_assert_eq!(all.saturated, saturated);
        prop_assert_eq!(all.pruned, 0);
        // Invariants on the front (MODEL.md: T > 0, E > 0, 0 < UCR <= 1, rho < 1).
        for p in &got.front {
            let g = got.group_of(p.key).unwrap();
            let ev = g.eval(p.key.0, model.growth_factor(p.key.0)).unwrap();
            let pred = g.prediction(p.key.0, &ev);
            prop_assert!(pred.time.0 > 0.0 && pred.energy.0 > 0.0);
            prop_assert!(pred.ucr > 0.0 && pred.ucr <= 1.0);
            prop_assert!(pred.rho < 1.0);
            prop_assert!(pred.e.gpu >= 0.0 && pred.e.idle > 0.0);
        }
    }

    #[test]
    fn queries_equal_brute_force_scans(
        seed in any::<u64>(), gpus in 0u32..2, a in 0.0f64..1.5, b in 0.0f64..1.5, th in 0.0f64..3.0,
    ) {
        let c = case(seed, 16, 3, 2, gpus);
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let space = Space::full(&c.machine, &c.profile);
        let (_, _, all) = brute(&model, &space);
        prop_assume!(!all.is_empty());
        let tmin = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let tmax = all.iter().map(|p| p.0).fold(0.0, f64::max);
        let emin = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let emax = all.iter().map(|p| p.1).fold(0.0, f64::max);
        let deadline = tmin * 0.5 + a * (tmax - tmin * 0.5);
        let budget = emin * 0.5 + b * (emax - emin * 0.5);
        // min E with T <= D (ties on E broken by the smaller T)
        let best_under_time = |d: f64| all.iter().filter(|p| p.0 <= d)
            .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.total_cmp(&y.0))).copied();
        let best_under_energy = |e: f64| all.iter().filter(|p| p.1 <= e)
            .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1))).copied();
        let rec = |q: Query| {
            let p = plan(&model, &space, q, None).unwrap();
            p.recommendation().map(|f| (f.prediction.time.0, f.prediction.energy.0))
        };
        let q = Query { deadline: Some(Seconds(deadline)), ..Query::default() };
        prop_assert_eq!(rec(q), best_under_time(deadline));
        let q = Query { budget: Some(Joules(budget)), ..Query::default() };
        prop_assert_eq!(rec(q), best_under_energy(budget));
        let q = Query { slowdown: Some(th), ..Query::default() };
        prop_assert_eq!(rec(q), best_under_time((1.0 + th) * tmin));
        // Deadline and budget together: least energy with both met.
        let both = all.iter().filter(|p| p.0 <= deadline && p.1 <= budget)
            .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.total_cmp(&y.0))).copied();
        let q = Query { deadline: Some(Seconds(deadline)), budget: Some(Joules(budget)), ..Query::default() };
        prop_assert_eq!(rec(q), both);
    }
}

#[test]
fn the_result_does_not_depend_on_the_thread_count() {
    let c = case(7, 200, 8, 3, 0);
    let model = Model::new(&c.machine, &c.profile).unwrap();
    let space = Space::full(&c.machine, &c.profile);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| search(&model, &space).unwrap())
    };
    let one = run(1);
    let two = run(2);
    assert_eq!(one.front, two.front);
    assert_eq!(one.saturated, two.saturated);
}

/// A 2 GHz-only machine with 100 W idle power and the given other `[power]` lines (test data).
fn one_frequency_machine(nodes: u32, cores: u32, power: &str) -> Machine {
    let text = format!(
        "[machine]\nname = \"one-f\"\nnodes = {nodes}\ncores_per_node = {cores}\nfrequencies_ghz = [2.0]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n[power]\nidle_w = 100.0\n{power}\n"
    );
    Machine::from_toml(Path::new("one-f.toml"), &text).unwrap()
}

#[test]
fn ties_keep_the_smallest_configuration_and_count_the_others() {
    // Core power 0 and a baseline whose 2-core point has exactly twice the cycles of the 1-core
    // point: (n, 1, f) and (n, 2, f) then have identical T and E, bit for bit.
    let machine = one_frequency_machine(
        4,
        2,
        "core_active_w = 0.0\ncore_stall_w = 0.0\nmemory_w = 0.0\nnetwork_w = 0.0",
    );
    let point = |c: u32, k: f64| {
        serde_json::json!({"cores": c, "freq_hz": 2e9, "cycles": 1e10 * k, "stall_cycles": 2e9 * k,
            "mem_stall_cycles": 1e9 * k, "utilisation": 1.0, "wall_time_s": 5.0})
    };
    let profile = serde_json::json!({
        "format": "jouleplan-profile/1", "program": "tie",
        "iterations": {"baseline": 1, "target": 1},
        "baseline": [point(1, 1.0), point(2, 2.0)],
    });
    let profile = Profile::from_json(Path::new("tie.json"), &profile.to_string()).unwrap();
    let model = Model::new(&machine, &profile).unwrap();
    let out = search(&model, &Space::full(&machine, &profile)).unwrap();
    assert!(!out.front.is_empty());
    for p in &out.front {
        assert_eq!(p.ties, 2, "{p:?}");
        assert_eq!(p.key.1, 1, "the representative uses fewer cores: {p:?}");
    }
}

/// An energy law anchored at `anchor` using the derived energy at weight `u` and the direct law
/// `1 + lin (n - n0) + sat (1 - n0/n)` for the rest (SYNTHETIC coefficients: they exercise the
/// search, they describe no code).
fn energy_law(
    anchor: u32,
    u: f64,
    (lin, sat): (f64, f64),
) -> jouleplan::model::node_law::EnergyLaw {
    use jouleplan::model::node_law::{Basis, EnergyLaw, Law};
    let h = Law::anchored(
        anchor,
        &[
            (Basis { i: 1.0, j: 0 }, lin),
            (Basis { i: -1.0, j: 0 }, -sat * f64::from(anchor)),
        ],
    );
    EnergyLaw {
        derived_use: u,
        law: h,
        derived_weight: u,
        derived_folds: Vec::new(),
        candidates: Vec::new(),
        folds: Vec::new(),
        per_doubling_rel: 0.0,
    }
}

/// Non-dominated set by sorting on (T, E) and sweeping: independent of the search's pruning.
fn sweep_front(model: &Model<'_>, space: &Space) -> Vec<Point> {
    let (mut all, _) = every_config(model, space);
    all.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    let mut front: Vec<Point> = Vec::new();
    let mut best = f64::INFINITY;
    for (t, e, key) in all {
        match front.last_mut() {
            Some(last) if last.0 == t && last.1 == e => last.3 += 1,
            _ if e < best => {
                best = e;
                front.push((t, e, key, 1));
            }
            _ => {}
        }
    }
    front
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn pruning_on_large_node_ranges_keeps_the_front_exact(seed in any::<u64>(), gpus in 0u32..2) {
        let c = case_with(seed, 600, 4, 3, gpus, 0.05);
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let space = Space::full(&c.machine, &c.profile);
        let got = search(&model, &space).unwrap();
        let want = sweep_front(&model, &space);
        let got_pts: Vec<Point> = got.front.iter().map(|p| (p.time, p.energy, p.key, p.ties)).collect();
        prop_assert_eq!(got_pts, want);
    }

    /// With an energy law the search's table and each configuration's own evaluation give the
    /// same front.
    #[test]
    fn an_energy_law_keeps_the_front_exact(seed in any::<u64>(), u in 0.0f64..1.0, lin in -0.0005f64..0.02, sat in -0.3f64..0.3, anchor in 1u32..6) {
        use jouleplan::model::node_law::{Law, NodeFit, Spread};
        let mut c = case_with(seed, 600, 4, 3, 0, 0.05);
        c.profile.node_law = Some(NodeFit {
            law: Law::anchored(anchor, &[]),
            candidates: Vec::new(),
            folds: Vec::new(),
            rule: String::new(),
            spread: Spread::default(),
            measured_nodes: vec![anchor, anchor + 1],
            residuals: Vec::new(),
            compared: 1,
            weak: false,
            energy: Some(energy_law(anchor, u, (lin, sat))),
        });
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let space = Space::full(&c.machine, &c.profile);
        let got = search(&model, &space).unwrap();
        let want = sweep_front(&model, &space);
        let got_pts: Vec<Point> = got.front.iter().map(|p| (p.time, p.energy, p.key, p.ties)).collect();
        prop_assert_eq!(got_pts, want);
    }
}

#[test]
fn large_random_spaces_do_exercise_the_pruning() {
    let mut pruned = 0;
    for seed in 0..16 {
        let c = case_with(seed, 600, 4, 3, 1, 0.05);
        let model = Model::new(&c.machine, &c.profile).unwrap();
        pruned += search(&model, &Space::full(&c.machine, &c.profile))
            .unwrap()
            .pruned;
    }
    assert!(pruned > 5_000, "pruned only {pruned}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The pruning bounds are below every evaluated point of their node range. With U = 1 and no
    /// messages the bounds are attained (up to the safety margin), so any inflation fails here.
    #[test]
    fn lower_bounds_hold_over_their_node_range(seed in any::<u64>(), gpus in 0u32..3, n1 in 1u32..300, len in 0u32..300, msgs in prop_oneof![Just(0.0), 0.0f64..0.5], weak in any::<bool>(), law in (-0.05f64..0.05, -0.01f64..0.01), anchor in 1u32..6, energy in proptest::option::of((0.0f64..1.0, -0.0005f64..0.02, -0.3f64..0.3))) {
        let mut c = case_with(seed, 600, 3, 2, gpus, msgs);
        // A node law of either sign on each term: the bounds take its least.
        use jouleplan::model::node_law::{Basis, Candidate, Law, NodeFit, Spread};
        let law = Law::anchored(anchor, &[(Basis { i: -1.0, j: 0 }, law.0), (Basis { i: 0.5, j: 1 }, law.1)]);
        c.profile.node_law = Some(NodeFit {
            law,
            candidates: vec![Candidate { law, form: String::new(), weight: 1.0, folds: Vec::new() }],
            folds: Vec::new(),
            rule: String::new(),
            spread: Spread::default(),
            measured_nodes: vec![anchor, anchor + 1],
            residuals: Vec::new(),
            compared: 1,
            weak,
            // An energy law of either sign: the bounds take the least of the derived energy and
            // of the mix.
            energy: energy.map(|(u, lin, sat)| energy_law(anchor, u, (lin, sat))),
        });
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let n2 = n1 + len;
        for g in Space::full(&c.machine, &c.profile).groups(&model).unwrap() {
            if g.rho(n2, model.growth_factor(n2)) >= 1.0 {
                continue;
            }
            let (t_lb, e_lb) = g.lower_bounds(n1, n2, model.growth_factor(n1));
            for n in n1..=n2 {
                let Some(ev) = g.eval(n, model.growth_factor(n)).filter(|e| e.time > 0.0) else {
                    continue;
                };
                prop_assert!(t_lb <= ev.time, "T bound {} > T({}) = {}", t_lb, n, ev.time);
                prop_assert!(e_lb <= ev.energy, "E bound {} > E({}) = {}", e_lb, n, ev.energy);
            }
        }
    }
}

#[test]
fn lower_bounds_are_attained_without_messages_and_idle_cpu() {
    // U = 1, no communication: T(n) = (T_CPU + T_mem) at n, E constant in n: the bounds are exact
    // at n2 (time) and everywhere (energy), up to the safety margin.
    let machine = one_frequency_machine(
        64,
        1,
        "core_active_w = 10.0\ncore_stall_w = 5.0\nmemory_w = 2.0\nnetwork_w = 1.0",
    );
    let profile = serde_json::json!({
        "format": "jouleplan-profile/1", "program": "b", "iterations": {"baseline": 1, "target": 1},
        "baseline": [{"cores": 1, "freq_hz": 2e9, "cycles": 1e10, "stall_cycles": 4e9,
            "mem_stall_cycles": 3e9, "utilisation": 1.0, "wall_time_s": 5.0}],
    });
    let profile = Profile::from_json(Path::new("b.json"), &profile.to_string()).unwrap();
    let model = Model::new(&machine, &profile).unwrap();
    let g = model.group(1, 0, 0).unwrap();
    let (t_lb, e_lb) = g.lower_bounds(4, 16, model.growth_factor(4));
    let at16 = g.eval(16, model.growth_factor(16)).unwrap();
    let at4 = g.eval(4, model.growth_factor(4)).unwrap();
    assert!(t_lb <= at16.time && t_lb > at16.time * (1.0 - 1e-8));
    assert!(e_lb <= at4.energy && e_lb > at4.energy * (1.0 - 1e-8));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// `--min-efficiency`: the search's front equals the non-dominated set of the configurations
    /// whose predicted host parallel efficiency reaches the minimum, found one by one.
    #[test]
    fn filtered_front_equals_brute_force_over_efficient_configurations(
        seed in any::<u64>(), node_mask in any::<u32>(), min in 0.0f64..1.0, gpus in 0u32..2,
    ) {
        use jouleplan::model::host_tree::HostTree;
        let c = case(seed, 24, 4, 2, gpus);
        let model = Model::new(&c.machine, &c.profile).unwrap();
        let space = Space {
            nodes: subset(node_mask, 24, 1),
            cores: (1..=4).collect(),
            freqs: (0..2).collect(),
            gpus: (0..=gpus).collect(),
            gpu_clocks: Vec::new(),
        };
        let got = jouleplan::search::search_filtered(&model, &space, Some(min)).unwrap();
        let mut ok: Vec<(f64, f64)> = Vec::new();
        for &n in &space.nodes {
            for &cores in &space.cores {
                for &fi in &space.freqs {
                    for &g in &space.gpus {
                        let cfg = Config { nodes: n, cores, freq: model.machine.frequencies[fi], gpus: g, gpu_clock_mhz: None };
                        if let Outcome::Finite(p) = model.predict(cfg).unwrap()
                            && HostTree::of(&p).parallel_efficiency >= min
                        {
                            ok.push((p.time.0, p.energy.0));
                        }
                    }
                }
            }
        }
        let mut want: Vec<(f64, f64)> = ok
            .iter()
            .copied()
            .filter(|&(t, e)| !ok.iter().any(|&(t2, e2)| t2 <= t && e2 <= e && (t2, e2) != (t, e)))
            .collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        want.dedup();
        let got_pts: Vec<(f64, f64)> = got.front.iter().map(|p| (p.time, p.energy)).collect();
        prop_assert_eq!(got_pts, want);
    }
}
