//! The analytical time/energy model (MODEL.md sections 3, 4 and 6; `docs/MODEL.md`).
//!
//! A [`Model`] binds a machine to a workload profile. For each `(c, f, g)` it precomputes a
//! [`Group`]: every term of the model is then `constant / n` or a function of the message count
//! at `n` nodes, so one group evaluates any node count in a few dozen floating-point operations.
//! [`Group::eval`] is the only implementation of the equations: `predict`, the search and the
//! tests all go through it, so a number is the same wherever it is printed.

pub mod baseline;
pub mod device;
pub mod energy_scope;
pub mod evidence;
pub mod gpu_clock;
pub mod gpu_power;
pub mod host_tree;
pub mod kernel;
pub mod layout;
pub mod machine;
pub mod node_law;
pub mod overhead;
pub mod plausible;
pub mod sweep_facts;
pub mod terms;
pub mod workload;

use crate::error::{InputError, InputResult};
use crate::units::{Hertz, Joules, Seconds};
use device::device_scaling;
use machine::Machine;
pub use terms::{EnergyTerms, Eval, TimeTerms};
use workload::{BaselinePoint, Profile};

/// A configuration `x = (n, c, f, g)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Nodes `n`.
    pub nodes: u32,
    /// Cores per node `c`.
    pub cores: u32,
    /// Core clock frequency `f`.
    pub freq: Hertz,
    /// GPUs per node `g`.
    pub gpus: u32,
    /// The GPU core clock `fg`, MHz, where the profile has a GPU clock law and `g > 0`
    /// (MODEL.md 6e); `None`: the clock the profile was measured at.
    pub gpu_clock_mhz: Option<f64>,
}

impl Config {
    /// The configuration as messages name it: `(nodes, cores, f GHz, GPUs)`, and the GPU
    /// clock where it has one.
    pub fn label(&self) -> String {
        let clock = self
            .gpu_clock_mhz
            .map_or(String::new(), |m| format!(", {m} MHz"));
        format!(
            "({}, {}, {} GHz, {}{clock})",
            self.nodes,
            self.cores,
            self.freq.ghz(),
            self.gpus
        )
    }
}

/// The predicted device tree (METRICS.md section 2) and host offload efficiency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceTree {
    /// Parallel efficiency = load balance x communication x orchestration.
    pub parallel_efficiency: f64,
    /// Device load balance (as measured on the baseline).
    pub load_balance: f64,
    /// Device communication efficiency (as measured on the baseline).
    pub communication_efficiency: f64,
    /// Device orchestration efficiency: busiest GPU's active time over `T`.
    pub orchestration_efficiency: f64,
    /// Host device offload efficiency: host time not blocked on GPUs over host time.
    pub offload_efficiency: f64,
}

/// One evaluated configuration with every term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The configuration.
    pub config: Config,
    /// `T`.
    pub time: Seconds,
    /// `E`.
    pub energy: Joules,
    /// Useful Computation Ratio `T_CPU / T`.
    pub ucr: f64,
    /// Network utilisation `rho` at the switch.
    pub rho: f64,
    /// Time terms.
    pub t: TimeTerms,
    /// Energy terms.
    pub e: EnergyTerms,
    /// Device tree, for configurations with GPUs doing device work.
    pub device: Option<DeviceTree>,
    /// Efficiencies measured beside the baseline and carried into the host tree (see
    /// [`host_tree::HostTree::of`]).
    pub carried: host_tree::Carried,
    /// The interval beyond the largest measured node count (MODEL.md 6c d), `None` within.
    pub interval: Option<evidence::Interval>,
    /// No power was measured ([`machine::Machine::time_only`]): `energy` is node-seconds, and
    /// every output shows node-hours and says energy is unavailable.
    pub time_only: bool,
    /// The profile's times are whole runs alone ([`baseline::BaselinePoint::whole_run`]):
    /// `T_CPU` is the run at its reference GPU clock (host and GPUs together), `T_gpu` what a
    /// slower clock adds, and the efficiency trees are not predicted.
    pub whole_run: bool,
}

/// The result of evaluating one configuration.
// One per predicted configuration, returned and consumed at once (the search's hot path
// works on `Eval`, never on a collection of these): boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// A finite prediction.
    Finite(Prediction),
    /// `rho >= 1`: the network queue is unstable and the model has no finite time.
    Saturated {
        /// The configuration.
        config: Config,
        /// Its network utilisation.
        rho: f64,
    },
}

/// Everything about one `(c, f, g)` that does not depend on `n`.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Cores per node.
    pub cores: u32,
    /// Index of the frequency in the machine's set.
    pub freq_index: usize,
    /// Frequency.
    pub freq: Hertz,
    /// GPUs per node.
    pub gpus: u32,
    /// The GPU core clock, MHz, where the profile has a clock law and `g > 0`.
    pub gpu_clock_mhz: Option<f64>,
    /// The clock's place in the searched space's GPU clocks counted down from the highest (0
    /// there and without a clock axis): the search's key, whose ties keep the highest clock.
    pub clock_index: u32,
    /// `n T_CPU = k (w_s + b_s) / (c f)`.
    a: f64,
    /// `n T_mem = k m_s / (c f)`.
    bm: f64,
    /// `n T_gpu`: host time blocked on the device.
    gh: f64,
    /// `n` x the host's spin-wait time inside the busy terms (see [`TimeTerms::gpu_spin`]).
    gspin: f64,
    /// Efficiencies measured beside the baseline (TALP, a trace), carried into the host tree.
    carried: host_tree::Carried,
    /// `n` x busiest GPU's kernel time, `n` x busiest GPU's active time, `n` x mean active time.
    dev_kernel_max: f64,
    dev_active_max: f64,
    dev_active_mean: f64,
    dev_load_balance: f64,
    has_device_work: bool,
    /// `T_ser` and `T_wait` (MODEL.md 6b): `k X_ser`, `k X_wait`, the same at every `n`.
    ex_serial: f64,
    ex_wait: f64,
    /// `T_ser + T_idle`, summed once.
    ex_total: f64,
    one_minus_u: f64,
    /// `eta S`: messages per node over the run, before the growth factor.
    msgs: f64,
    nu_over_b: f64,
    y: f64,
    /// `rho = kr factor n^2` (`y eta S / a`).
    kr: f64,
    /// `T_w,net = kw factor rho / (1 - rho)` (`eta S W / y`).
    kw: f64,
    /// The part of `E` that does not depend on `n`: CPU, memory and GPU kernel energy.
    e_fixed: f64,
    /// `P_idle + P_gpu,time`: the node's power over the whole run.
    p_time: f64,
    /// `n (T_CPU + T_mem + T_gpu)`.
    t_num: f64,
    /// `(1 - u) n T_CPU`.
    u_a: f64,
    /// `T_s,net` of the messages before the growth factor: `eta S nu / B`.
    msg_serv: f64,
    p_act: f64,
    p_stall: f64,
    p_mem: f64,
    p_net: f64,
    p_idle: f64,
    /// `g (P_gpu_act - P_gap)`: the node's GPU power above the gap power while kernels run.
    p_gpu_busy: f64,
    /// `g P_gap + (g_max - g) P_gpu_off`: the node's GPU power over the whole run (`P_gap` the
    /// power of a used GPU between its kernels, MODEL.md 6b; `P_gpu_off` of an unused one).
    p_gpu_time: f64,
    /// The node law, and the iteration ratio `k` its time scales by.
    law: node_law::Law,
    law_k: f64,
    /// The energy law's weights `(u, h)` (`E = u E_d(n) + (1 - u) E_d(n0) (1 + h(n))` above
    /// the anchor), `None` without one.
    energy_law: Option<(f64, node_law::Law)>,
    /// `E_d(n0)`: this group's derived energy at the anchor (0 without an energy law).
    pub(crate) e_anchor: f64,
    /// The node-axis evidence the intervals come from (shared: it is the profile's, and
    /// large beside the hot path's coefficients).
    evidence: std::sync::Arc<evidence::Evidence>,
    /// Weak scaling: each rank keeps the baseline's work per core (MODEL.md 6c e).
    weak: bool,
    /// The machine's power-fit residual (0 where its file does not state one).
    power_rel: f64,
    /// The machine has no power ([`machine::Machine::time_only`]).
    time_only: bool,
    /// The group's baseline point is a whole run alone ([`Prediction::whole_run`]).
    whole_run: bool,
    /// The GPU clock's relative half-widths `(time, energy)` at this group's clock (MODEL.md
    /// 6e); `(0, 0)` at a measured clock or without a clock law.
    clock_half_width: (f64, f64),
}

/// The node law's waiting time at `n` nodes: `k X(n)`. The one expression both the search's
/// table and [`Group::eval`] use, so that they give the same bits.
#[inline(always)]
pub fn node_wait(law: &node_law::Law, k: f64, n: u32) -> f64 {
    if n == 1 {
        0.0
    } else {
        k * law.at(f64::from(n))
    }
}

/// How a configuration's work is laid out over its nodes ([`Group::layout`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// The divided terms' factor: `1/n` (strong scaling, `c` ranks a node), `c/R` (strong, `R`
    /// ranks), 1 (weak: each rank keeps its work).
    pub inv: f64,
    /// The problem's work in units of the baseline's: 1 (strong), `n` or `R/c` (weak).
    pub work: f64,
    /// Strong scaling with `c` ranks on every node: the paper's layout, whose terms the
    /// search's table computes in the same order.
    pub even: bool,
}

/// Relative safety margin on the pruning bounds, far above floating-point rounding.
const BOUND_MARGIN: f64 = 1e-9;

impl Group {
    /// Network utilisation at `n` nodes with growth factor `factor` (`eta(n) / eta`).
    #[inline(always)]
    pub fn rho(&self, n: u32, factor: f64) -> f64 {
        self.kr * self.queue_factor(factor, f64::from(n))
    }

    /// `rho / kr`: `factor n^2` in strong scaling (the messages of `n` nodes arrive in a time
    /// divided by `n`), `factor n` in weak scaling (the time does not shrink).
    #[inline(always)]
    pub fn queue_factor(&self, factor: f64, nf: f64) -> f64 {
        if self.weak {
            factor * nf
        } else {
            kernel::sq(factor, nf)
        }
    }

    /// How the work is laid out at `n` nodes with `ranks` ranks (`None`: `c` on every node).
    pub fn layout(&self, n: u32, ranks: Option<u32>) -> Layout {
        let (nf, c) = (f64::from(n), f64::from(self.cores));
        let (inv, work) = match (self.weak, ranks.filter(|&r| r > 0)) {
            (false, None) => (1.0 / nf, 1.0),
            (false, Some(r)) => (c / f64::from(r), 1.0),
            (true, None) => (1.0, nf),
            (true, Some(r)) => (1.0, f64::from(r) / c),
        };
        Layout {
            inv,
            work,
            even: !self.weak && ranks.is_none_or(|r| r == 0),
        }
    }

    /// Evaluates the model at `n` nodes; `factor` is the message growth factor at `n`.
    /// Returns `None` when the network is saturated (`rho >= 1`).
    #[inline(always)]
    pub fn eval(&self, n: u32, factor: f64) -> Option<Eval> {
        if self.weak {
            return self.eval_spread(n, factor, self.layout(n, None));
        }
        // The paper's layout built without `layout`'s match: measured 3.8-5.1 ms against 9.7 ms
        // for the bench's 640,000 evaluations (the search's seeds run here).
        let at = Layout {
            inv: 1.0 / f64::from(n),
            work: 1.0,
            even: true,
        };
        self.eval_spread(n, factor, at)
    }

    /// As [`Group::eval`] with the work laid out as `at` says ([`Group::layout`]): in strong
    /// scaling each of `R` ranks holds `1/R` of the work (the node energy of busy cores is the
    /// work's, however spread); in weak scaling each rank holds the baseline's share per core.
    #[inline(always)]
    pub fn eval_spread(&self, n: u32, factor: f64, at: Layout) -> Option<Eval> {
        let nf = f64::from(n);
        let (inv, work) = (at.inv, at.work);
        let x = node_wait(&self.law, self.law_k, n);
        let spread = if at.even { 1.0 } else { inv * nf / work };
        let q = self.queue_factor(factor, nf);
        let c = kernel::core(self, nf, (inv, work), factor, q, x);
        if c.rho >= 1.0 || c.rho.is_nan() {
            return None;
        }
        let (t_cpu, t_mem, t_wait, t_serv) = (c.t_cpu, c.t_mem, c.t_wait, c.t_serv);
        let time = c.time;
        let k_busy = self.dev_active_mean / nf;
        let e_cpu = (self.p_act * t_cpu + self.p_stall * t_mem) * f64::from(self.cores);
        let e_mem = self.p_mem * t_mem;
        let e_net = self.p_net * (t_wait + t_serv);
        let e_idle = self.p_idle * time;
        let e_gpu = self.p_gpu_busy * k_busy + self.p_gpu_time * time;
        let (ew, eh) = self.mix(nf);
        let energy = ew * c.energy + eh * self.e_anchor;
        // Every energy term carries the energy law's share, so that any scope sees it.
        let share = if c.energy > 0.0 {
            energy / c.energy
        } else {
            1.0
        };
        Some(Eval {
            time,
            energy,
            derived_energy: c.energy,
            rho: c.rho,
            t: TimeTerms {
                cpu: t_cpu,
                mem: t_mem,
                wait_net: t_wait,
                serv_net: t_serv,
                gpu: c.t_gpu,
                serial: self.ex_serial,
                wait: self.ex_wait,
                nodes: c.t_nodes,
                gpu_spin: if at.even {
                    self.gspin / nf
                } else {
                    self.gspin * inv
                },
            },
            e: EnergyTerms {
                // Busy core-seconds are the work's, however the ranks are spread.
                cpu: share * nf * e_cpu / spread,
                mem: share * nf * e_mem / spread,
                net: share * nf * e_net,
                idle: share * nf * e_idle,
                gpu: share * nf * e_gpu,
            },
        })
    }

    /// The energy law's weights of `E_d(n)` and `E_d(n0)` at `n` nodes (1 and 0 without one).
    #[inline(always)]
    fn mix(&self, nf: f64) -> (f64, f64) {
        match &self.energy_law {
            Some((u, h)) if nf > f64::from(h.anchor()) => (*u, (1.0 - u) * (1.0 + h.at(nf))),
            _ => (1.0, 0.0),
        }
    }

    /// The coefficients the hot path uses, folded from the others once (`wait_coef`: the
    /// M/G/1 wait coefficient `y^2 (1 + cv^2) / 2`).
    /// Sets the GPU's power in kernels to `p_act` W (a clock law's `P_act(fg)`), `gap` W being
    /// the power between kernels the group was built with.
    fn set_gpu_active(&mut self, p_act: f64, gap: f64) {
        let busy = f64::from(self.gpus) * (p_act - gap);
        self.e_fixed += (busy - self.p_gpu_busy) * self.dev_active_mean;
        self.p_gpu_busy = busy;
    }

    fn folded(mut self, wait_coef: f64) -> Group {
        self.kr = self.y * self.msgs / self.a;
        // Without messages (or with messages that take no time) there is no wait: kw is 0, so
        // the hot path needs no branch on the message count.
        self.kw = if self.msgs > 0.0 && self.y > 0.0 {
            self.msgs * wait_coef / self.y
        } else {
            0.0
        };
        self.e_fixed = f64::from(self.cores) * (self.p_act * self.a + self.p_stall * self.bm)
            + self.p_mem * self.bm
            + self.p_gpu_busy * self.dev_active_mean;
        self.p_time = self.p_idle + self.p_gpu_time;
        self.t_num = self.a + self.bm + self.gh;
        self.u_a = self.one_minus_u * self.a;
        self.msg_serv = self.msgs * self.nu_over_b;
        self
    }

    /// Lower bounds on `(T, E)` over every node count from `n1` to `n2` (`n1 <= n2`), whose
    /// growth factor at `n1` is `factor1`. Every term of `T` is `>= 0`, the `1/n` terms are at
    /// least their value at `n2`, and `T_s,net` at least its message part at `n1` (message counts
    /// never fall with `n`); `E` is an `n`-independent part plus `n` times non-negative power
    /// times time. Used to discard whole blocks that a front point strictly dominates.
    pub fn lower_bounds(&self, n1: u32, n2: u32, factor1: f64) -> (f64, f64) {
        let t_num = self.t_num;
        // As the hot path computes the message part of `T_s,net`.
        let serv_msg = self.msg_serv * factor1;
        let t_extra = self.ex_total;
        // Each term of the node law is monotone in n: its least over [n1, n2] is at an end.
        let x_lb = self.law_k * self.law.lower_bound(f64::from(n1), f64::from(n2));
        let n1f = f64::from(n1);
        // Strong scaling: the divided terms at least their value at n2, `n T` at least
        // `t_num`; weak: they do not shrink, and the busy energy grows with n.
        let (t_div, nt_div, work1) = if self.weak {
            (t_num, n1f * t_num, n1f)
        } else {
            (t_num / f64::from(n2), t_num, 1.0)
        };
        let t_lb = f64::max(t_div, serv_msg) + t_extra + x_lb;
        let (e_fixed, p_time) = (self.e_fixed, self.p_time);
        let nx = if x_lb < 0.0 { f64::from(n2) } else { n1f } * x_lb;
        let e_lb = e_fixed * work1
            + p_time * (f64::max(nt_div, n1f * serv_msg) + n1f * t_extra + nx)
            + self.p_net * n1f * serv_msg;
        // The energy law: above the anchor, the derived energy's share and the anchor's
        // energy times the least of its direct law; at or below it, the derived energy.
        let e_lb = match &self.energy_law {
            Some((u, h)) => {
                let direct = ((1.0 - u) * (1.0 + h.lower_bound(n1f, f64::from(n2)))).max(0.0);
                e_lb.min(u * e_lb + direct * self.e_anchor)
            }
            None => e_lb,
        };
        (t_lb * (1.0 - BOUND_MARGIN), e_lb * (1.0 - BOUND_MARGIN))
    }

    /// Packages an evaluation with its configuration and efficiencies.
    pub fn prediction(&self, n: u32, ev: &Eval) -> Prediction {
        let nf = f64::from(n);
        let device = (self.gpus > 0 && self.has_device_work).then(|| {
            let active_max = self.dev_active_max / nf;
            let comm = if self.dev_active_max > 0.0 {
                self.dev_kernel_max / self.dev_active_max
            } else {
                0.0
            };
            let orch = if ev.time > 0.0 {
                active_max / ev.time
            } else {
                0.0
            };
            DeviceTree {
                parallel_efficiency: self.dev_load_balance * comm * orch,
                load_balance: self.dev_load_balance,
                communication_efficiency: comm,
                orchestration_efficiency: orch,
                // One value per prediction: the host tree's, node law included.
                offload_efficiency: self.host_tree(n, ev).device_offload_efficiency,
            }
        });
        Prediction {
            config: Config {
                nodes: n,
                cores: self.cores,
                freq: self.freq,
                gpus: self.gpus,
                gpu_clock_mhz: self.gpu_clock_mhz,
            },
            time: Seconds(ev.time),
            energy: Joules(ev.energy),
            ucr: ev.t.cpu / ev.time,
            rho: ev.rho,
            t: ev.t,
            e: ev.e,
            device,
            carried: self.carried,
            interval: self.interval(n, ev),
            time_only: self.time_only,
            whole_run: self.whole_run,
        }
    }

    /// The interval of an evaluation at `n` nodes ([`evidence::Evidence::interval`]).
    pub fn interval(&self, n: u32, ev: &Eval) -> Option<evidence::Interval> {
        let nf = f64::from(n);
        let largest = f64::from(self.evidence.largest.max(1));
        let undivided = self.t_num * (1.0 / largest - 1.0 / nf);
        let node = self.evidence.interval(
            n,
            (ev.time, ev.energy),
            self.law_k,
            undivided,
            (nf * self.p_time, nf * self.p_idle, self.power_rel),
            (ev.derived_energy, self.e_anchor),
        );
        self.evidence
            .with_gpu_clock(node, (ev.time, ev.energy), self.clock_widths(ev))
    }

    /// The clock law's half-widths `(time, energy)` for an evaluation: its own, the energy's
    /// weighted by the parts where the host's energy (which follows the time) is added to the
    /// GPU's (MODEL.md 6e, Intervals).
    fn clock_widths(&self, ev: &Eval) -> (f64, f64) {
        let (ht, he) = self.clock_half_width;
        let host = (ev.energy - ev.e.gpu).max(0.0);
        match ev.energy > 0.0 && host > 0.0 {
            true => (ht, (he * ev.e.gpu.max(0.0) + ht * host) / ev.energy),
            false => (ht, he),
        }
    }

    /// The predicted host tree at `n` nodes (the OpenMP efficiency carried from TALP where
    /// the profile holds it).
    #[inline]
    pub fn host_tree(&self, n: u32, ev: &Eval) -> host_tree::HostTree {
        host_tree::HostTree::from_terms(n, ev.time, &ev.t, self.carried)
    }
}

/// A machine bound to a workload profile.
#[derive(Debug, Clone)]
pub struct Model<'a> {
    /// The machine.
    pub machine: &'a Machine,
    /// The workload.
    pub profile: &'a Profile,
    /// Power of a used GPU between kernels (fitted from the baseline's GPU energy, or the
    /// machine's context-idle power).
    pub gpu_gap: gpu_power::GapPower,
    /// The baseline points holding a measured tree: (cores, GPUs, OpenMP efficiency, MPI load
    /// balance), gathered once (a group looks up the nearest; most profiles have none).
    trees: Vec<TreePoint>,
    /// Weak scaling (MODEL.md 6c e): each rank keeps the baseline's work per core, so the
    /// problem grows with the ranks; set by the profile's node law, or [`Model::set_weak`].
    weak: bool,
    /// The profile's node-axis evidence, shared by its groups.
    evidence: std::sync::Arc<evidence::Evidence>,
    /// Whether a GPU clock outside the clock law's measured range is predicted (the law
    /// carried beyond it, for `validate`) instead of refused ([`Model::extrapolate_gpu_clocks`]).
    clock_extrapolation: bool,
    /// Whether the GPUs draw `gpu_gap`'s power all run long, kernels included: the power the
    /// runs drew, where the machine gives none and no clock law carries it
    /// ([`gpu_power::fit_drawn`]).
    gpu_drawn: bool,
}

/// A baseline point's measured tree as the model carries it: (cores, GPUs, OpenMP
/// efficiency, MPI load balance).
type TreePoint = (u32, u32, Option<f64>, Option<f64>);

impl<'a> Model<'a> {
    /// Binds a machine and a profile, checking that the profile's frequencies exist on the machine.
    pub fn new(machine: &'a Machine, profile: &'a Profile) -> InputResult<Self> {
        for p in &profile.baseline {
            if machine.frequency_index(p.freq).is_none() {
                return Err(InputError::Mismatch(format!(
                    "{}: baseline point ({} cores, {} GHz) uses a frequency that machine `{}` ({}) \
                     does not have; its frequencies are {} GHz",
                    profile.file.display(),
                    p.cores,
                    p.freq.ghz(),
                    machine.name,
                    machine.file.display(),
                    machine.frequency_list_ghz()
                )));
            }
        }
        // No machine power and no clock law: the GPUs draw what the runs measured, all along.
        let gpu_drawn = machine.lacks.power_from_workload && profile.gpu_clock.is_none();
        let gpu_gap = match gpu_drawn {
            true => gpu_power::fit_drawn(profile),
            false => gpu_power::fit_gap(machine, profile),
        };
        let trees = profile
            .baseline
            .iter()
            .filter_map(|p| {
                let (_, eff) = p.measured_tree.as_ref()?;
                let get = |k: &str| eff.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
                Some((
                    p.cores,
                    p.gpus,
                    get("ompParallelEfficiency"),
                    get("mpiLoadBalance"),
                ))
            })
            .collect();
        Ok(Model {
            machine,
            profile,
            gpu_gap,
            trees,
            weak: profile.node_law.as_ref().is_some_and(|f| f.weak),
            evidence: std::sync::Arc::new(evidence::Evidence::of(profile)),
            clock_extrapolation: false,
            gpu_drawn,
        })
    }

    /// Predicts GPU clocks outside the clock law's measured range too, the law carried beyond
    /// it (its time residual held at the end's, its power law extended, its interval growing
    /// with the distance): what `validate` scores; `plan` never extrapolates.
    pub fn extrapolate_gpu_clocks(&mut self) {
        self.clock_extrapolation = true;
    }

    /// Whether `config` is at a GPU clock outside the profile's clock law's measured range.
    pub fn beyond_clock_range(&self, config: &Config) -> bool {
        match (&self.profile.gpu_clock, config.gpu_clock_mhz) {
            (Some(l), Some(c)) => config.gpus > 0 && !l.covers(c),
            _ => false,
        }
    }

    /// Whether the model answers weak-scaling questions.
    pub fn is_weak(&self) -> bool {
        self.weak
    }

    /// Answers weak-scaling questions (`true`) or strong (`false`). Refused where the
    /// profile's node law was fitted under the other: its waiting time means something else.
    pub fn set_weak(&mut self, weak: bool) -> InputResult<()> {
        if let Some(f) = &self.profile.node_law
            && f.weak != weak
        {
            let name = |w: bool| if w { "weak" } else { "strong" };
            return Err(InputError::Mismatch(format!(
                "{}: its node law was fitted on {}-scaling runs, so it cannot answer {}-scaling \
                 questions; fit the {} runs (`jouleplan fit{}`)",
                self.profile.file.display(),
                name(f.weak),
                name(weak),
                name(weak),
                if weak { " --weak" } else { "" }
            )));
        }
        self.weak = weak;
        Ok(())
    }

    /// Sets the nominal coverage of the intervals (in (0, 1); 0.8 unless set).
    pub fn set_coverage(&mut self, coverage: f64) {
        let mut e = (*self.evidence).clone();
        e.set_coverage(coverage);
        self.evidence = std::sync::Arc::new(e);
    }

    /// The intervals' nominal coverage.
    pub fn coverage(&self) -> f64 {
        self.evidence.coverage
    }

    /// The largest node count the profile measured (1 without multi-node runs).
    pub fn largest_measured(&self) -> u32 {
        self.evidence.largest
    }

    /// The node law's waiting time at `n` nodes (0 without a law): see [`node_wait`].
    pub fn node_wait(&self, n: u32) -> f64 {
        let k = self.profile.target_iterations / self.profile.baseline_iterations;
        match &self.profile.node_law {
            Some(f) => node_wait(&f.law(), k, n),
            None => 0.0,
        }
    }

    /// `eta(n) / eta`: the growth factor of the message count at `n` nodes.
    pub fn growth_factor(&self, n: u32) -> f64 {
        self.profile.communication.growth.factor(n)
    }

    /// Precomputes the `n`-independent part of the model for `(c, f, g)` at the profile's
    /// reference GPU clock.
    pub fn group(&self, cores: u32, freq_index: usize, gpus: u32) -> InputResult<Group> {
        self.group_at(cores, freq_index, gpus, None)
    }

    /// As [`Model::group`] at the GPU clock `clock` MHz (`None`: the profile's reference
    /// clock); a clock the profile's law does not cover is an error naming its range.
    pub fn group_at(
        &self,
        cores: u32,
        freq_index: usize,
        gpus: u32,
        clock: Option<f64>,
    ) -> InputResult<Group> {
        let m = self.machine;
        let freq = *m.frequencies.get(freq_index).ok_or_else(|| {
            InputError::Mismatch(format!(
                "frequency index {freq_index} is outside the machine's set"
            ))
        })?;
        let p = self.profile.point(cores, freq, gpus)?;
        let k = self.profile.target_iterations / self.profile.baseline_iterations;
        let clock = self.clock_of(gpus, clock)?;
        let Some((mhz, law)) = clock.zip(self.profile.gpu_clock.as_ref()) else {
            let mut g = self.group_from_point(p, (cores, freq_index, freq, gpus), k);
            // The one clock a profile without a law was measured at: its points' own.
            g.gpu_clock_mhz = clock;
            self.drawn_power(&mut g, p);
            return Ok(g);
        };
        let at = gpu_clock::at_clock(p, law, mhz);
        let mut g = self.group_from_point(&at, (cores, freq_index, freq, gpus), k);
        g.gpu_clock_mhz = Some(mhz);
        g.clock_half_width = law.half_width(mhz);
        // Without the machine's power every "energy" is node-seconds (one watt a node): the
        // law's GPU watts would count as node-hours there.
        if let Some(pw) = law.power_at(mhz).filter(|_| !self.machine.time_only()) {
            g.set_gpu_active(pw, self.gpu_gap.at(p));
        }
        Ok(g)
    }

    /// The GPU clock a group with `gpus` GPUs is evaluated at: none without GPUs, the one
    /// clock a profile without a law was measured at (none where it names none), the law's
    /// reference where none is asked; an error for a clock outside the law's measured range, or
    /// any other clock without a law.
    fn clock_of(&self, gpus: u32, clock: Option<f64>) -> InputResult<Option<f64>> {
        let law = self.profile.gpu_clock.as_ref();
        match (gpus, law, clock) {
            (0, _, _) => Ok(None),
            (_, None, None) => Ok(self.profile.measured_gpu_clock_mhz),
            // The one clock the profile was measured at, without a law: its own points.
            (_, None, Some(c)) if self.profile.measured_at_clock(c) => Ok(Some(c)),
            (_, Some(l), None) => Ok(Some(l.reference_mhz)),
            (_, Some(l), Some(c)) if l.covers(c) || self.clock_extrapolation => Ok(Some(c)),
            (_, Some(l), Some(c)) => Err(InputError::Argument {
                flag: "GPU clock".into(),
                expected: format!(
                    "a GPU clock within the profile's measured range {}: nothing is \
                     extrapolated; measure the clock to plan it",
                    l.range_text()
                ),
                got: format!("{c} MHz"),
            }),
            (_, None, Some(c)) => Err(InputError::Argument {
                flag: "GPU clock".into(),
                expected: format!(
                    "{}: {} has no GPU clock law (measure 3 or more clocks: a measured CSV \
                     with gpu_clock_mhz, then `jouleplan fit`)",
                    match self.profile.measured_gpu_clock_mhz {
                        Some(m) =>
                            format!("the one GPU clock the profile was measured at, {m} MHz"),
                        None => "no GPU clock".into(),
                    },
                    self.profile.file.display()
                ),
                got: format!("{c} MHz"),
            }),
        }
    }

    /// The group of `(c, f, g)` evaluated with the baseline's own iteration count (`k = 1`):
    /// what the model says of the baseline run itself (MODEL.md 6b a).
    pub fn baseline_group(&self, p: &BaselinePoint) -> InputResult<Group> {
        let fi = self.machine.frequency_index(p.freq).ok_or_else(|| {
            InputError::Mismatch(format!(
                "baseline frequency {} GHz is not in the machine's set",
                p.freq.ghz()
            ))
        })?;
        let mut g = self.group_from_point(p, (p.cores, fi, p.freq, p.gpus), 1.0);
        self.drawn_power(&mut g, p);
        g.gpu_clock_mhz = self.clock_of(p.gpus, None)?;
        if let (Some(law), true) = (&self.profile.gpu_clock, p.gpus > 0)
            && let Some(pw) =
                (law.power_at(law.reference_mhz)).filter(|_| !self.machine.time_only())
        {
            g.set_gpu_active(pw, self.gpu_gap.at(p));
        }
        Ok(g)
    }

    /// What the GPUs' power between kernels (or, drawn all run long, in them too) rests on,
    /// where measured GPU energy gave it.
    pub fn gpu_power_note(&self) -> Option<String> {
        match self.gpu_drawn {
            false => self.gpu_gap.note(self.machine),
            true => self.gpu_gap.drawn_note(),
        }
    }

    /// Where the GPUs draw the power the runs drew ([`Model`]'s `gpu_drawn`): the group's GPU
    /// power in kernels set to its power between them, so its GPUs draw it all run long.
    fn drawn_power(&self, g: &mut Group, p: &BaselinePoint) {
        if self.gpu_drawn && p.gpus > 0 {
            let w = self.gpu_gap.at(p);
            g.set_gpu_active(w, w);
        }
    }

    fn group_from_point(
        &self,
        p: &BaselinePoint,
        (cores, freq_index, freq, gpus): (u32, usize, Hertz, u32),
        k: f64,
    ) -> Group {
        let m = self.machine;
        let prof = self.profile;
        let cf = f64::from(cores) * freq.0;
        let a = k * (p.work_cycles() + p.other_stall_cycles()) / cf;
        let bm = k * p.mem_stall_cycles / cf;
        let dev = device_scaling(p, k, gpus, a + bm);
        let gap = self.gpu_gap.at(p);
        let net = &m.network;
        let y = net.latency.0 + prof.communication.bytes_per_message / net.switch_bytes_per_s;
        let g = Group {
            cores,
            freq_index,
            freq,
            gpus,
            gpu_clock_mhz: None,
            clock_index: 0,
            a,
            bm,
            gh: dev.host_blocked,
            gspin: dev.host_spin,
            carried: self.carried(cores, gpus),
            dev_kernel_max: dev.kernel_max,
            dev_active_max: dev.active_max,
            dev_active_mean: dev.active_mean,
            dev_load_balance: dev.load_balance,
            has_device_work: dev.active_max > 0.0,
            ex_serial: k * p.extra.serial,
            ex_wait: k * p.extra.wait,
            ex_total: k * (p.extra.serial + p.extra.wait),
            one_minus_u: 1.0 - p.utilisation,
            msgs: prof.communication.messages_per_iteration * prof.target_iterations,
            nu_over_b: prof.communication.bytes_per_message / net.bandwidth_bytes_per_s,
            y,
            kr: 0.0,
            kw: 0.0,
            e_fixed: 0.0,
            p_time: 0.0,
            t_num: 0.0,
            u_a: 0.0,
            msg_serv: 0.0,
            p_act: m.power.core_active[freq_index].0,
            p_stall: m.power.core_stall[freq_index].0,
            p_mem: m.power.memory.0,
            p_net: m.power.network.0,
            p_idle: m.power.idle[freq_index].0,
            p_gpu_busy: f64::from(gpus) * (m.power.gpu_active.0 - gap),
            p_gpu_time: f64::from(gpus) * gap
                + f64::from(m.gpus_per_node.saturating_sub(gpus))
                    * m.power.gpu_nocontext.map_or(0.0, |w| w.0),
            law: prof
                .node_law
                .as_ref()
                .map_or(node_law::Law::default(), |f| f.law()),
            law_k: k,
            energy_law: None,
            e_anchor: 0.0,
            evidence: self.evidence.clone(),
            weak: self.weak,
            power_rel: m
                .power
                .fit_residual_rms
                .or(m.power.fit_residual_rel)
                .unwrap_or(0.0),
            time_only: m.time_only(),
            whole_run: p.whole_run(),
            clock_half_width: (0.0, 0.0),
        };
        self.with_energy_law(g.folded(y * y * (1.0 + net.cv2) / 2.0))
    }

    /// The group with the profile's energy law and its own derived energy at the anchor (none
    /// where the derived energy is used alone).
    fn with_energy_law(&self, mut g: Group) -> Group {
        let Some(e) = self
            .profile
            .node_law
            .as_ref()
            .and_then(|f| f.energy.as_ref())
        else {
            return g;
        };
        let n0 = e.law.anchor();
        if e.derived_use >= 1.0 {
            return g;
        }
        // Where the anchor saturates the network, so does every count above it: no energy.
        g.e_anchor = g
            .eval(n0, self.growth_factor(n0))
            .map_or(0.0, |ev| ev.derived_energy);
        g.energy_law = Some((e.derived_use, e.law));
        g
    }

    /// The energy law's weights of `E_d(n)` and `E_d(n0)` at `n` nodes, the same for every
    /// group (1 and 0 without one): [`node_law::EnergyLaw::mix`].
    pub fn energy_mix(&self, n: u32) -> (f64, f64) {
        match self
            .profile
            .node_law
            .as_ref()
            .and_then(|f| f.energy.as_ref())
        {
            Some(e) => e.mix(f64::from(n)),
            None => (1.0, 0.0),
        }
    }

    /// What was measured beside the baseline point with `gpus` GPUs nearest to `cores` (fewer
    /// on a tie), for each efficiency separately.
    fn carried(&self, cores: u32, gpus: u32) -> host_tree::Carried {
        let nearest = |pick: fn(&TreePoint) -> Option<f64>| {
            self.trees
                .iter()
                .filter(|t| t.1 == gpus)
                .filter_map(|t| pick(t).map(|v| (v, t.0)))
                .min_by_key(|(_, c)| (c.abs_diff(cores), *c))
        };
        host_tree::Carried {
            openmp: nearest(|t| t.2),
            load_balance: nearest(|t| t.3),
        }
    }

    /// Predicts one configuration, checking it against the machine's limits.
    pub fn predict(&self, config: Config) -> InputResult<Outcome> {
        self.predict_ranks(config, None)
    }

    /// As [`Model::predict`] for `ranks` MPI ranks spread over the configuration's nodes, at
    /// most `cores` on one (`None`: `cores` on every node).
    pub fn predict_ranks(&self, config: Config, ranks: Option<u32>) -> InputResult<Outcome> {
        let m = self.machine;
        let fi = m
            .frequency_index(config.freq)
            .ok_or_else(|| InputError::Argument {
                flag: "--config".into(),
                expected: format!(
                    "a frequency of machine `{}`: {} GHz{}",
                    m.name,
                    m.frequency_list_ghz(),
                    m.ambiguous_frequency(config.freq)
                        .map_or(String::new(), |w| format!("; {w}")),
                ),
                got: format!("{} GHz", config.freq.ghz()),
            })?;
        let limits = [
            ("nodes", config.nodes, 1, m.max_nodes),
            ("cores", config.cores, 1, m.cores_per_node),
            ("GPUs", config.gpus, 0, m.gpus_per_node),
        ];
        for (what, v, lo, hi) in limits {
            if !(lo..=hi).contains(&v) {
                return Err(InputError::Argument {
                    flag: "--config".into(),
                    expected: format!("{what} from {lo} to {hi} on machine `{}`", m.name),
                    got: v.to_string(),
                });
            }
        }
        if config.nodes > 1 && self.profile.facts.single_process {
            return Err(InputError::Argument {
                flag: "--config".into(),
                expected: format!(
                    "1 node: {} was profiled as one process without MPI (1 rank, no launcher)",
                    self.profile.file.display()
                ),
                got: format!("{} nodes", config.nodes),
            });
        }
        let g = self.group_at(config.cores, fi, config.gpus, config.gpu_clock_mhz)?;
        let factor = self.growth_factor(config.nodes);
        let at = g.layout(config.nodes, ranks);
        Ok(match g.eval_spread(config.nodes, factor, at) {
            Some(ev) if !(ev.time.is_finite() && ev.energy.is_finite() && ev.time > 0.0) => {
                return Err(InputError::Mismatch(format!(
                    "{} (with {}): the model gives {} s and {} J at ({}, {}, {} GHz, {}): the \
                     inputs hold values the model cannot evaluate (a node law that takes away \
                     more time than there is: check the profile's node_law and baseline points)",
                    self.profile.file.display(),
                    m.file.display(),
                    ev.time,
                    ev.energy,
                    config.nodes,
                    config.cores,
                    config.freq.ghz(),
                    config.gpus
                )));
            }
            Some(ev) => Outcome::Finite(g.prediction(config.nodes, &ev)),
            None => Outcome::Saturated {
                config,
                rho: g.rho(config.nodes, factor),
            },
        })
    }
}
