#!/usr/bin/env python3
"""The GPU clock law and chooser on coarser clock lists and the clocks an outsider would fit
(docs/GPU_CLOCK.md, "Coarser lists and the chooser").

Mirrors the binary (MODEL.md 6e): per case (kernel x memory clock of the public GTX Titan X
sweeps), fit time and power on 3 clocks of the machine's list, plan every listed clock between
the lowest and highest fitted one, and choose the least predicted energy whose predicted time is
within the cap of the fastest predicted time; the oracle chooses among the listed clocks only.
Lists: all 16 clocks, 10 and 5 of them spaced evenly by index; fitted clocks: the rule of
MODEL.md 6e (lowest, ~0.85, top) and an outsider's (~0.5, ~0.75, 1.0 of the top).

Prints aggregates only (nothing per kernel): where the energy above the best clock comes from
(the fitted time or power replaced by the measured one), each time law, power law and chooser of
a small family, and the family's setting chosen nested (leave one kernel group out; chosen on the
microbenchmarks and scored once on the real benchmarks).

    python3 scripts/gpu_clock_lists.py        (standard library only; a few minutes)
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_clock_study as S  # noqa: E402

CAPS = (0.05, 0.10)


def cases():
    out = []
    for real, f in ((True, "gtxtitanx-real.csv"), (False, "gtxtitanx-micro.csv")):
        for name, by_mem in S.load(os.path.join(S.DATA, f)).items():
            for mem, rows in by_mem.items():
                runs = {}
                for c, t, p in rows:  # a clock measured twice counts as the mean, as fit does
                    runs.setdefault(c, []).append((t, t * p))
                f_ = sorted(runs)
                out.append({"name": name, "real": real, "mem": mem, "group": S.group_of(name, real),
                            "f": f_, "T": [statistics.mean(r[0] for r in runs[c]) for c in f_],
                            "E": [statistics.mean(r[1] for r in runs[c]) for c in f_]})
    return out


def time_law(form, fs, ts):
    """fs in MHz. sum+r: `a/f + m` with its residuals (linear in 1/f between the clocks); bendX:
    the same, but between two measured clocks where the time falls less steeply in 1/f than
    below them, the slope taken X of the way from the chord's to the one below, until the time
    reaches the upper clock's (MODEL.md 6e; X = 0 is sum+r, 1 the roofline corner); b2: a/f^2 + m
    with residuals (a curvier law)."""
    if form == "sum+r":
        law, _ = S.fit_time("sum+r", [f / 1000.0 for f in fs], ts)
        return lambda f: law(f / 1000.0)
    if form.startswith("bend"):
        share, _, low = form[4:].partition("/")
        share, low = float(share), float(low or 0.0)
        chord = time_law("sum+r", fs, ts)
        pts = sorted(zip(fs, ts))

        def bent(f):
            for (f0, t0), (f1, t1), (f2, t2) in zip(pts, pts[1:], pts[2:]):
                below, here = (t0 - t1) / (1 / f0 - 1 / f1), (t1 - t2) / (1 / f1 - 1 / f2)
                if f1 < f < f2 and below > here:
                    return max(t2, t1 + (here + share * (below - here)) * (1 / f - 1 / f1))
                if f0 < f < f1 and below > here and low > 0 and (f0, t0) == pts[0]:
                    # Below the middle clock: the chord, taken `low` of the way to the roofline
                    # corner that the segment above and the lowest clock allow (the flatter slope
                    # above carried down, or all of the lowest clock's time following the clock).
                    c = chord(f)
                    corner = min(c, max(t1 + here * (1 / f - 1 / f1), t0 * f0 / f))
                    return c - low * (c - corner)
            return chord(f)
        return bent
    beta = float(form[1:])
    (a, m), _ = S.nnls([[(1000.0 / f) ** beta, 1.0] for f in fs], ts)
    return S.with_residuals(lambda f: a * (1000.0 / f) ** beta + m, fs, ts)


def power_law(form, fs, ps):
    law, _ = S.fit_power(form, [f / 1000.0 for f in fs], ps)
    return lambda f: law(f / 1000.0)


def run(c, lst, fit, tform="bend0.25", pform="afit", chooser=0.0, cap=0.05, true_t=False, true_p=False):
    """One case: the chosen clock's measured energy above the oracle, its measured slowdown, and
    the errors at the unfitted planned clocks at or above half the top. `chooser`: a margin
    added to the cap in the choice (0: the binary's point prediction)."""
    i = {f: k for k, f in enumerate(c["f"])}
    fs = sorted(fit)
    tl = time_law(tform, fs, [c["T"][i[f]] for f in fs])
    pl = power_law(pform, fs, [c["E"][i[f]] / c["T"][i[f]] for f in fs])
    plan = [f for f in lst if fs[0] <= f <= fs[-1]]
    th = {f: c["T"][i[f]] if true_t else tl(f) for f in plan}
    ph = {f: c["E"][i[f]] / c["T"][i[f]] if true_p else pl(f) for f in plan}
    tref = min(th.values())
    pick = min((f for f in plan if th[f] <= (1 + cap + chooser) * tref * (1 + 1e-12)),
               key=lambda f: (th[f] * ph[f], f))
    ttop = c["T"][i[max(lst)]]
    best = min(c["E"][i[f]] for f in lst if c["T"][i[f]] <= (1 + cap) * ttop)
    errs = [(abs(tl(f) / c["T"][i[f]] - 1), abs(tl(f) * pl(f) / c["E"][i[f]] - 1))
            for f in plan if f not in fs and f >= 0.5 * max(lst)]
    return {"above": c["E"][i[pick]] / best - 1, "slow": c["T"][i[pick]] / ttop - 1, "errs": errs}


def row(label, rs, cap=0.05):
    ab = [r["above"] for r in rs]
    te = [e[0] for r in rs for e in r["errs"]] or [0.0]
    ee = [e[1] for r in rs for e in r["errs"]] or [0.0]
    p = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    br = sum(r["slow"] > cap + 1e-12 for r in rs)
    brp = sum(r["slow"] > cap + 0.01 for r in rs)
    print(f"| {label} | {len(rs)} | {p(statistics.mean(ab))} | {p(max(ab))} | {br} ({brp}) | "
          f"{p(statistics.mean(te))} | {p(max(te))} | {p(statistics.mean(ee))} | {p(max(ee))} |")


HEAD = ("| {} | cases | energy above the best clock within the cap: mean | max | caps broken (by over "
        "1 point) | time err mean | time err max | energy err mean | energy err max |\n"
        "|---|---|---|---|---|---|---|---|---|")


def main():
    cs = cases()
    every = cs[0]["f"]
    pick = lambda n: [every[round(k * (len(every) - 1) / (n - 1))] for k in range(n)]  # noqa: E731
    near = lambda lst, x: min(lst, key=lambda f: abs(f - x))  # noqa: E731
    scen = []
    for n in (16, 10, 5):
        lst = pick(n)
        top = max(lst)
        outsider = sorted({near(lst, 0.5 * top), near(lst, 0.75 * top), top})
        rule = sorted({lst[0], near(lst, 0.85 * top), top})
        for label, fit in (("rule", rule), ("outsider", outsider)):
            tag = f"{n} clocks, fitted {'/'.join(f'{f:.0f}' for f in fit)} ({label})"
            if all(tag.split(",")[1] != s[0].split(",")[1] or s[1] != lst for s in scen):
                scen.append((tag, lst, fit))
    print("Lists: " + "; ".join(f"{n}: {', '.join(f'{f:.0f}' for f in pick(n))}" for n in (10, 5)))

    print("\n## Where the energy above the best clock comes from (5% cap, all 328 cases)\n")
    print(HEAD.format("setting"))
    for tag, lst, fit in scen:
        for what, kw in (("as fitted, chord (sum+r)", {"tform": "sum+r"}), ("as fitted", {}),
                         ("measured time", {"true_t": True}), ("measured power", {"true_p": True})):
            row(f"{tag}, {what}", [run(c, lst, fit, **kw) for c in cs])

    forms = ["sum+r", "bend0.25", "bend0.5", "bend0.75", "bend1", "b2"]
    if "--lower" in sys.argv:
        forms = [f"bend{u}/{lo}" for u in ("0", "0.25", "0.5", "0.75", "1")
                 for lo in ("0", "0.25", "0.5", "0.75", "1")] + ["b2"]
    family = [(t, p, m) for t in forms
              for p in ("a3", "a4", "a5", "afit") for m in (0.0, 0.005, 0.01)]
    res = {s: [{(tag, cap): run(c, lst, fit, s[0], s[1], s[2], cap) for tag, lst, fit in scen
                for cap in CAPS} for c in cs] for s in family}

    def objective(rows):
        """The study's objective over every list and both caps: mean time and energy error, energy
        above the oracle, and 100 points a broken cap."""
        tot = n = 0
        for o in rows:
            for (tag, cap), r in o.items():
                if cap == CAPS[0] and r["errs"]:
                    tot += statistics.mean(e[0] + e[1] for e in r["errs"])
                tot += max(0.0, r["above"]) + (r["slow"] > cap + 1e-12)
                n += 1
        return 100.0 * tot / n

    name = lambda s: f"time {s[0]}, power {s[1]}, chooser margin {100 * s[2]:.1f}%"  # noqa: E731
    print("\n## The family on every list (objective over all 328 cases, for the record)\n")
    print("| setting | objective |\n|---|---|")
    for s in sorted(family, key=lambda s: objective(res[s])):
        print(f"| {name(s)} | {objective(res[s]):.2f} |")

    groups = sorted({c["group"] for c in cs})
    fold = {g: min(family, key=lambda s: objective([res[s][k] for k, c in enumerate(cs) if c["group"] != g]))
            for g in groups}
    chosen = min(family, key=lambda s: objective([res[s][k] for k, c in enumerate(cs) if not c["real"]]))
    print("\n## Chosen nested\n")
    for g in groups:
        print(f"- {g}: {name(fold[g])}")
    print(f"- on the microbenchmarks (scored on the real benchmarks): {name(chosen)}")
    for cap in CAPS:
        print(f"\nNested leave-one-group-out (all 328 cases) and chosen on micro, scored on real "
              f"(48 cases), cap {cap:.0%}:\n")
        print(HEAD.format("list, fitted clocks, procedure"))
        for tag, lst, fit in scen:
            row(f"{tag}, nested", [res[fold[c['group']]][k][(tag, cap)] for k, c in enumerate(cs)], cap)
            row(f"{tag}, held-out real", [res[chosen][k][(tag, cap)] for k, c in enumerate(cs) if c["real"]], cap)


if __name__ == "__main__":
    main()
