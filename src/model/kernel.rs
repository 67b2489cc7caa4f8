//! The model's arithmetic for one group `(c, f, g)` at many node counts: the search's hot path.
//!
//! Everything that depends on `n` alone (`n`, `1/n`, the message growth factor)
//! is computed once per node count in a [`NodeTable`] and shared by every group; what depends
//! on the group alone is folded into its coefficients when it is built (`n (T_CPU + T_mem +
//! T_gpu)` summed once, `(1 - u) n T_CPU`, the messages' service time before growth). What is
//! left per configuration is seventeen multiplications and additions, one maximum and one
//! division, with no branch (`rho >= 1` becomes a mask, and no messages a zero coefficient),
//! over arrays of node counts, so the compiler vectorises it; on x86_64 CPUs with AVX2 the same
//! code runs four node counts per instruction. (Folding the sums cut the unprunable space's
//! sweep from 477 to 393 ms on 2 threads; the least of each chunk in 256-bit registers, to 303.)
//! [`Group::eval`] runs the same arithmetic for one node count, so both give the same bits.

use super::Group;

/// What every group needs of each node count of a space.
#[derive(Debug, Clone, Default)]
pub struct NodeTable {
    nf: Vec<f64>,
    inv: Vec<f64>,
    /// The problem's work in units of the baseline's (1; `n` in weak scaling).
    work: Vec<f64>,
    /// `rho / kr` ([`super::Group::queue_factor`]).
    q: Vec<f64>,
    factor: Vec<f64>,
    /// `X(n)`: the node law's waiting time (MODEL.md 6c b), the same for every group.
    x: Vec<f64>,
    /// The energy law's weights of the derived energy and of the anchor's energy
    /// ([`super::node_law::EnergyLaw::mix`]): 1 and 0 without one.
    ew: Vec<f64>,
    eh: Vec<f64>,
}

impl NodeTable {
    /// The table of `nodes`, whose message growth factor is `factor(n)` and whose node-law
    /// waiting time is `x(n)` ([`super::Model::node_wait`]), in weak scaling when `weak`.
    pub fn new(
        nodes: &[u32],
        factor: impl Fn(u32) -> f64,
        x: impl Fn(u32) -> f64,
        weak: bool,
    ) -> Self {
        let nf: Vec<f64> = nodes.iter().map(|&n| f64::from(n)).collect();
        let factor: Vec<f64> = nodes.iter().map(|&n| factor(n)).collect();
        let (inv, work, q) = if weak {
            (
                vec![1.0; nf.len()],
                nf.clone(),
                factor.iter().zip(&nf).map(|(f, n)| f * n).collect(),
            )
        } else {
            (
                nf.iter().map(|&x| 1.0 / x).collect(),
                vec![1.0; nf.len()],
                factor.iter().zip(&nf).map(|(&f, &n)| sq(f, n)).collect(),
            )
        };
        NodeTable {
            inv,
            work,
            q,
            x: nodes.iter().map(|&n| x(n)).collect(),
            ew: vec![1.0; nf.len()],
            eh: vec![0.0; nf.len()],
            factor,
            nf,
        }
    }

    /// The table with the energy law's weights at each node count (`mix(n)`:
    /// [`super::Model::energy_mix`]).
    pub fn with_energy(mut self, mix: impl Fn(u32) -> (f64, f64)) -> Self {
        for (i, &n) in self.nf.iter().enumerate() {
            (self.ew[i], self.eh[i]) = mix(n as u32);
        }
        self
    }

    /// The node law's waiting time at index `i`.
    pub fn node_wait(&self, i: usize) -> f64 {
        self.x[i]
    }

    /// The growth factor at index `i`.
    pub fn factor(&self, i: usize) -> f64 {
        self.factor[i]
    }
}

/// `factor n^2`, in the one order every caller uses.
#[inline(always)]
pub(super) fn sq(factor: f64, nf: f64) -> f64 {
    factor * nf * nf
}

/// The time terms, `T`, `E` and `rho` of one configuration.
#[derive(Debug, Clone, Copy)]
pub(super) struct Core {
    pub t_cpu: f64,
    pub t_mem: f64,
    pub t_gpu: f64,
    pub t_serv: f64,
    pub t_wait: f64,
    pub t_nodes: f64,
    pub time: f64,
    pub energy: f64,
    pub rho: f64,
}

/// The model at one node count (`nf`; the divided terms' factor and the work, see
/// [`super::Layout`]; growth factor; `rho / kr`; the node law's waiting time `x`).
#[inline(always)]
pub(super) fn core(
    g: &Group,
    nf: f64,
    (inv, work): (f64, f64),
    factor: f64,
    q: f64,
    x: f64,
) -> Core {
    let t_cpu = g.a * inv;
    let t_mem = g.bm * inv;
    let t_gpu = g.gh * inv;
    let rho = g.kr * q;
    // The larger of the two by comparison (`f64::max` also sorts out NaNs, which none of these
    // is, at two more instructions in the hot loop: 303 -> 280 ms on the unprunable space).
    let (t_busy, t_msg) = (g.u_a * inv, g.msg_serv * factor);
    let t_serv = if t_busy > t_msg { t_busy } else { t_msg };
    // M/G/1 wait: n_msgs lambda W / (1 - rho) with lambda = rho / y folded into kw (0 without
    // messages: kw or the growth factor is 0).
    let t_wait = g.kw * factor * rho / (1.0 - rho);
    let net = t_wait + t_serv;
    // The node law's time is waiting: charged at the node's power over time, no core busy.
    let time = (g.t_num * inv + g.ex_total) + net + x;
    // The n-independent energy (CPU, memory, GPU kernels) plus n x power x time.
    let energy = g.e_fixed * work + nf * (g.p_net * net + g.p_time * time);
    Core {
        t_cpu,
        t_mem,
        t_gpu,
        t_serv,
        t_wait,
        t_nodes: x,
        time,
        energy,
        rho,
    }
}

/// Node counts per chunk whose least `T` and least `E` [`Group::eval_chunks`] also gives.
pub const CHUNK: usize = 64;

/// `(T, E)` at node counts `lo..lo + t.len()` of `tab`; saturated ones get `+inf` for both.
/// With `least`, also the least `T` and least `E` of each [`CHUNK`] of them.
#[inline(always)]
fn range(g: &Group, tab: &NodeTable, lo: usize, out: Out<'_>, min_of: impl Fn(&[f64]) -> f64) {
    let Out { t, e, least } = out;
    let hi = lo + t.len();
    let (nf, inv, factor) = (&tab.nf[lo..hi], &tab.inv[lo..hi], &tab.factor[lo..hi]);
    let (x, q, work) = (&tab.x[lo..hi], &tab.q[lo..hi], &tab.work[lo..hi]);
    let (ew, eh) = (&tab.ew[lo..hi], &tab.eh[lo..hi]);
    let e = &mut e[..t.len()];
    for i in 0..t.len() {
        let c = core(g, nf[i], (inv[i], work[i]), factor[i], q[i], x[i]);
        let ok = c.rho < 1.0;
        t[i] = if ok { c.time } else { f64::INFINITY };
        // The energy law: the derived energy and the anchor's, weighted (1 and 0 without).
        e[i] = if ok {
            ew[i] * c.energy + eh[i] * g.e_anchor
        } else {
            f64::INFINITY
        };
    }
    for ((m, tc), ec) in least.iter_mut().zip(t.chunks(CHUNK)).zip(e.chunks(CHUNK)) {
        *m = [min_of(tc), min_of(ec)];
    }
}

/// The least of `v` (none NaN), four lanes at a time so that it vectorises.
#[inline(always)]
fn min_of(v: &[f64]) -> f64 {
    let lesser = |a: f64, b: f64| if b < a { b } else { a };
    let mut m = [f64::INFINITY; 4];
    let mut chunks = v.chunks_exact(4);
    for c in &mut chunks {
        for j in 0..4 {
            m[j] = lesser(m[j], c[j]);
        }
    }
    for &x in chunks.remainder() {
        m[0] = lesser(m[0], x);
    }
    lesser(lesser(m[0], m[1]), lesser(m[2], m[3]))
}

/// Where [`range`] writes.
struct Out<'a> {
    t: &'a mut [f64],
    e: &'a mut [f64],
    least: &'a mut [[f64; 2]],
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn range_avx2(g: &Group, tab: &NodeTable, lo: usize, out: Out<'_>) {
    range(g, tab, lo, out, |v| min_of_avx2(v))
}

/// [`min_of`] in 256-bit registers (the compiler kept that loop in 128-bit ones, and it took a
/// fifth of the sweep's time).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn min_of_avx2(v: &[f64]) -> f64 {
    use std::arch::x86_64::*;
    let mut chunks = v.chunks_exact(4);
    let mut m = _mm256_set1_pd(f64::INFINITY);
    for c in &mut chunks {
        // SAFETY: `c` holds four values. `min(c, m)` keeps `m` unless `c < m`, as `lesser`.
        m = _mm256_min_pd(unsafe { _mm256_loadu_pd(c.as_ptr()) }, m);
    }
    let mut lanes = [0.0; 4];
    // SAFETY: `lanes` holds four values.
    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), m) };
    let lesser = |a: f64, b: f64| if b < a { b } else { a };
    let mut least = lesser(lesser(lanes[0], lanes[1]), lesser(lanes[2], lanes[3]));
    for &x in chunks.remainder() {
        least = lesser(least, x);
    }
    least
}

impl Group {
    /// `T` and `E` at the node counts `lo..lo + t.len()` of `tab` into `t` and `e` (as long),
    /// `+inf` for both where the network saturates (`rho >= 1`); the same values as
    /// [`Group::eval`].
    pub fn eval_range(&self, tab: &NodeTable, lo: usize, t: &mut [f64], e: &mut [f64]) {
        self.eval_chunks(tab, lo, t, e, &mut []);
    }

    /// As [`Group::eval_range`], and the least `T` and least `E` of each [`CHUNK`] of the node
    /// counts into `least` (as many as it holds).
    pub fn eval_chunks(
        &self,
        tab: &NodeTable,
        lo: usize,
        t: &mut [f64],
        e: &mut [f64],
        least: &mut [[f64; 2]],
    ) {
        let out = Out { t, e, least };
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { range_avx2(self, tab, lo, out) };
        }
        range(self, tab, lo, out, min_of)
    }
}
