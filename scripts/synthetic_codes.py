#!/usr/bin/env python3
"""SYNTHETIC strong-scaling codes of known shape, for the node axis's design study
(docs/NODE_AXIS.md). Nothing here is a measurement: every time and energy is computed from a
stated law with seeded run-to-run noise, so that the rule that carries measured node counts to
unmeasured ones can be judged on regimes the public runs do not hold.

    python3 scripts/synthetic_codes.py OUT_DIR [--seeds 45,46,47,48]

writes, under OUT_DIR, one measured-run CSV per code (`REGIME-K.csv`, jouleplan's `fit
--measured` format, labelled synthetic in its `source` note below) and `synthetic.toml`, a machine
file whose nodes reach the farthest prediction. `codes()` gives the same codes to a script that
imports this one.

Regimes (T0 the time at the fewest counted nodes n0, n the node count, W = T0 n0):
  perfect     T = W/n                                     perfect division
  gaining     T = T0 (n0/n)^p, 2^p in [1.5, 1.7]          gains 1.5-1.7x a doubling, never stops
  amdahl      T = W (1-s)/n + s T0,  s in [1%, 5%]        a serial share
  log         T = W/n + c log2(n/n0), minimum at 8-64 n0  growth of a tree collective
  linear      T = W/n + c (n - n0), minimum at 8-64 n0    growth of an all-to-all
  saturating  T = W / S(n), S = m (1 - exp(-n/m)), m in 4-32 n0   the gain fades away
  slowing     T = W/n + c max(0, n - k), c = W/(2k)^2, k in 3-16 n0   slower beyond some count

Energy of a run on n nodes: every node draws P_busy over the divided work W/n and P_wait over
the rest of the run; P_busy = 200 W + 72 x 5 W, P_wait = 200 W (waiting ranks sleep) or 480 W
(they poll), alternating by code. Each run's time and energy carry multiplicative noise
exp(N(0, sigma)), sigma = 1%, 2%, 3% or 5% by code; two runs per count, 72 ranks a node.
Each code is measured at n0, 2 n0, 4 n0 and 8 n0 (n0 = 1, 1, 4 or 16 by code) and at every
doubling beyond them up to 16, 32, 64 or 128 times 8 n0; its fit sets are the 3 and the 4
smallest counts.
"""

import argparse
import math
import os
import random
import sys

REGIMES = ["perfect", "gaining", "amdahl", "log", "linear", "saturating", "slowing"]
CORES = 72
FREQ_HZ = 2_400_000_000
P_IDLE, P_CORE = 200.0, 5.0
ANCHORS = [1, 1, 4, 16]
NOISE = [0.01, 0.02, 0.03, 0.05]
HORIZONS = [16, 32, 64, 128]


def shape(regime, rnd, n0, t0):
    """The code's time law `T(n)` (seconds) for `regime`, its parameters drawn from `rnd`."""
    w = t0 * n0
    if regime == "perfect":
        return lambda n: w / n
    if regime == "gaining":
        p = math.log2(rnd.uniform(1.5, 1.7))
        return lambda n: t0 * (n0 / n) ** p
    if regime == "amdahl":
        s = rnd.uniform(0.01, 0.05)
        return lambda n: w * (1 - s) / n + s * t0
    if regime == "log":
        nmin = n0 * 2 ** rnd.uniform(3, 6)
        c = w * math.log(2) / nmin
        return lambda n: w / n + c * math.log2(n / n0)
    if regime == "linear":
        nmin = n0 * 2 ** rnd.uniform(3, 6)
        c = w / nmin ** 2
        return lambda n: w / n + c * (n - n0)
    if regime == "saturating":
        m = n0 * 2 ** rnd.uniform(2, 5)
        scale = w / (m * (1 - math.exp(-n0 / m))) / t0
        return lambda n: w / (m * (1 - math.exp(-n / m))) / scale
    if regime == "slowing":
        k = n0 * 2 ** rnd.uniform(math.log2(3), 4)
        c = w / k ** 2 / 4
        return lambda n: w / n + c * max(0.0, n - k)
    raise ValueError(regime)


class Code:
    """One synthetic code: its rows and its fit sets."""

    def __init__(self, regime, k, rnd, tag=""):
        self.regime, self.name = regime, f"{regime}-{tag}{k}"
        self.n0 = ANCHORS[k % len(ANCHORS)]
        self.noise = NOISE[(k + 1) % len(NOISE)]
        beyond = HORIZONS[(k + 2) % len(HORIZONS)]
        self.p_wait = P_IDLE if k % 2 == 0 else 480.0
        t0 = rnd.uniform(600, 3000)
        self.law = shape(regime, rnd, self.n0, t0)
        self.work = t0 * self.n0
        small = [self.n0 * 2 ** i for i in range(4)]
        far = [small[-1] * 2 ** i for i in range(1, int(math.log2(beyond)) + 1)]
        self.counts = small + far
        self.rows = []
        for n in self.counts:
            for _ in range(2):
                t = self.law(n)
                p_busy = P_IDLE + CORES * P_CORE
                e = n * (self.work / n * p_busy + (t - self.work / n) * self.p_wait)
                t *= math.exp(rnd.gauss(0, self.noise))
                e *= math.exp(rnd.gauss(0, self.noise))
                self.rows.append((n, t, e))
        self.fit_sets = [(f"{m} smallest", small[:m], [n for n in self.counts if n not in small[:m]])
                         for m in (3, 4)]

    def csv(self, keep=None):
        out = ["nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope"]
        for n, t, e in self.rows:
            if keep is None or n in keep:
                out.append(f"{n},{CORES},{FREQ_HZ},0,{t:.6g},{e:.7g},{n * CORES},node")
        return "\n".join(out) + "\n"


SEEDS = [45, 46, 47, 48]


def codes(seeds=SEEDS, per_regime=4):
    """Every synthetic code, regime by regime, `per_regime` from each seed. The codes of seed 45
    keep the names they had when the set was that seed alone (`linear-0`); the others name their
    seed (`linear-s46-0`)."""
    out = []
    for seed in seeds:
        rnd = random.Random(seed)
        tag = "" if seed == 45 else f"s{seed}-"
        out += [Code(r, k, rnd, tag) for r in REGIMES for k in range(per_regime)]
    return out


MACHINE = f"""# SYNTHETIC: the machine of the synthetic codes of scripts/synthetic_codes.py (not a real
# machine). Its power is what `fit` writes from the synthetic runs.
[machine]
name = "synthetic"
description = "SYNTHETIC machine for the node axis's design study"
nodes = {16 * 8 * max(HORIZONS)}
cores_per_node = {CORES}
frequencies_ghz = [{FREQ_HZ / 1e9}]

[network]
latency_s = 1e-6
bandwidth_bytes_per_s = 12.5e9
"""


def write(out, seeds=SEEDS):
    os.makedirs(out, exist_ok=True)
    for c in codes(seeds):
        with open(os.path.join(out, c.name + ".csv"), "w") as f:
            f.write(c.csv())
    with open(os.path.join(out, "synthetic.toml"), "w") as f:
        f.write(MACHINE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)),
                    help="the seeds, four codes a regime each (45 alone: the set before 2026-11-28)")
    args = ap.parse_args()
    write(args.out, [int(x) for x in args.seeds.split(",")])


if __name__ == "__main__":
    sys.exit(main())
