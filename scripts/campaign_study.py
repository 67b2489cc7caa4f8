#!/usr/bin/env python3
"""The measurement campaign judged by replay (README, "How many nodes to measure?";
docs/NODE_AXIS.md), against a model-free reference rule.

1. The Ice Lake codes (public data, ${JOULEPLAN_FIXTURES:-../shared/fixtures}; Afzal, Hager and
   Wellein, PMBS'23): `jouleplan profile --nodes auto --replay CODE.csv --machine
   icelake-8360y.toml --max-nodes 16 --measured-out RUNS.csv` (with `--cores 72` where the code
   was recorded at 72 ranks a node on most counts), then `plan` on the campaign's profile and
   fitted machine file as its end line says (`--nodes N` where the fitted model picks another
   count than the best measured one, else `--nodes 1-16`), and on `fit --measured RUNS.csv`,
   both checked to give the campaign's recommendation.
   The recommendation's (and the model's pick's) measured energy is compared with the
   cheapest measured count within 5% of its measured time (72 ranks a node), and the cost
   (node-runs: a run on n nodes costs n) with the reference rule and measuring 1-16.
2. The SYNTHETIC codes of known shape (scripts/synthetic_codes.py; nothing there is measured),
   one table row a regime: regret is the energy-delay product of the recommendation (and of
   the fitted model's pick) over the
   least among the recorded counts, each count judged by the mean of its recorded runs (by
   its noise-free law where the recommendation was not recorded); node-runs are the
   campaign's, against measuring every recorded run. `noisy` is the `log` codes with the
   first run at the count above the best replaced by one 40% faster and the second by one 40%
   slower (their mean unchanged), as one Sapphire Rapids code's two runs at one count took
   432.6 s and 1011.3 s. The same again with time only (no energy column: node-hours x
   time, as the planner ranks runs without energy).

The reference rule (no model): start at the 3 smallest counts, measure the count nearest
twice the best whenever the best measured count is also the largest measured, and measure the
best count a second time; it recommends the best measured count (mean of its runs).

With `--node-hours H`, each Ice Lake campaign is given that measuring budget and the table
adds what it spent and how it stopped (`budget` where its rules' next count could not be
paid for, or a run was stopped at its limit).

    python3 scripts/campaign_study.py [--bin target/release/jouleplan] [--only icelake|regimes]
        [--node-hours H]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_axis_study as S  # noqa: E402
import synthetic_codes as Y  # noqa: E402

FULL = {"hpgmgfv", "lbm", "soma", "weather", "sweep"}


def campaign(binary, tmp, name, replay, machine, max_nodes, extra=()):
    """The campaign's JSON, or None and why it failed."""
    runs = os.path.join(tmp, f"{name}-runs.csv")
    prof = os.path.join(tmp, f"{name}.json")
    for p in (runs, prof, os.path.join(tmp, f"{name}.machine.toml")):
        if os.path.exists(p):
            os.remove(p)
    cmd = [binary, "profile", "--nodes", "auto", "--replay", replay, "--machine", machine,
           "--max-nodes", str(max_nodes), "--measured-out", runs, "-o", prof, "--json", *extra]
    rc, out, err = S.run(cmd)
    if rc != 0:
        return None, err.strip()[-160:]
    return json.loads(out), runs


def recommend(binary, tmp, runs, cores, nodes="1-16", campaign=None):
    """`plan --nodes NODES` on the campaign's profile and machine file, as its end line says
    (`campaign`, its JSON), or on `fit` of its runs: the count."""
    if campaign is not None:
        prof = campaign["profile_file"]
        mach = campaign["machine_file"] or S.MACHINE
    else:
        prof, mach = os.path.join(tmp, "p.json"), os.path.join(tmp, "m.toml")
        rc, _, err = S.run([binary, "fit", "--measured", runs, "--machine", S.MACHINE,
                            "--profile-out", prof, "--machine-out", mach])
        if rc != 0:
            return None
    cmd = [binary, "plan", "--machine", mach, "--profile", prof, "--nodes", nodes, "--json"]
    if cores:
        cmd += ["--cores", "72"]
    rc, out, err = S.run(cmd)
    if rc != 0:
        return None
    return json.loads(out)["recommendation"]["nodes"]


def by_count(rows):
    """`{n: [(time, energy), ...]}` in file order."""
    out = {}
    for n, t, e in rows:
        out.setdefault(n, []).append((t, e))
    return out


def edp(runs, n, time_only=False):
    t = statistics.mean(t for t, _ in runs)
    e = n * t if time_only else statistics.mean(e for _, e in runs)
    return t * e


def reference_rule(rows, max_nodes, time_only=False):
    """The model-free rule on `rows` [(n, t, e)]: (recommended count, node-runs)."""
    rec = {n: v for n, v in by_count(rows).items() if n <= max_nodes}
    counts = sorted(rec)
    taken = {}

    def take(n):
        k = len(taken.get(n, []))
        if k < len(rec[n]):
            taken.setdefault(n, []).append(rec[n][k])
            return True
        return False

    for n in counts[:3]:
        take(n)
    while True:
        best = min(taken, key=lambda n: edp(taken[n], n, time_only))
        larger = [n for n in counts if n > max(taken) and n not in taken]
        if best == max(taken) and larger:
            take(min(larger, key=lambda n: (abs(math.log(n / (2 * best))), n)))
            continue
        if len(taken[best]) == 1 and take(best):
            continue
        break
    cost = sum(n * len(v) for n, v in taken.items())
    return best, cost


def icelake(binary, tmp, node_hours=None):
    budget = [] if node_hours is None else ["--node-hours", str(node_hours)]
    spent_head = "" if node_hours is None else f" node-hours spent (of {node_hours}), stop |"
    print("| code | campaign measured | node-runs | steps | recommended | waste | the model's "
          "pick, waste | reference rule: node-runs, recommended, waste | every run: "
          f"node-runs |{spent_head}")
    print("|---|---|---|---|---|---|---|---|---|" + ("" if node_hours is None else "---|"))
    costs, ref_costs, wastes, ref_wastes = [], [], [], []
    data = S.icelake_dir(tmp)
    for code in S.CODES:
        cores = code in FULL
        d, runs = campaign(binary, tmp, code, os.path.join(data, code + ".csv"), S.MACHINE, 16,
                           (["--cores", "72"] if cores else []) + budget)
        if d is None:
            print(f"| {code} | campaign failed: {runs} |")
            continue
        case = S.Case(tmp, os.path.join(data, code + ".csv"), code, S.ICELAKE, "campaign", [], [],
                      S.MACHINE)
        if d["recommendation"] is None:
            print(f"| {code}{'' if cores else ' (any layout)'} | "
                  f"{','.join(map(str, d['measured_nodes']))} | {d['node_runs']} | "
                  f"{len(d['steps'])} | none |||||{spent(d, node_hours)}")
            continue
        rec, pick = d["recommendation"]["nodes"], d["model_pick"]["nodes"]
        # plan as the end line says (`--nodes N` where the model's pick differs), on the
        # campaign's profile, then on fit of its runs.
        nodes = "1-16" if rec == pick else str(rec)
        planned = recommend(binary, tmp, runs, cores, nodes, d)
        again = recommend(binary, tmp, runs, cores, nodes)
        if planned != rec or again != rec:
            print(f"| {code} | plan on its profile gives {planned}, fit + plan {again}, "
                  f"the campaign {rec} |")
            continue
        _, rows = S.read_csv(os.path.join(data, code + ".csv"))
        rows = [(int(r[0]), float(r[4]), float(r[5])) for r in rows
                if int(r[0]) <= 16 and (not cores or int(r[1]) == 72)]
        ref, ref_cost = reference_rule(rows, 16)
        every = sum(n for n, _, _ in rows)
        w, rw = case.waste(rec) if rec else None, case.waste(ref)
        costs.append(d["node_runs"])
        ref_costs.append(ref_cost)
        wastes += [w] if w is not None else []
        ref_wastes += [rw] if rw is not None else []
        pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"  # noqa: E731
        print(f"| {code}{'' if cores else ' (any layout)'} | "
              f"{','.join(map(str, d['measured_nodes']))} | {d['node_runs']} | "
              f"{len(d['steps'])} | {rec} | {pct(w)} | {pick}, "
              f"{pct(case.waste(pick))} | {ref_cost}, {ref}, {pct(rw)} | {every} |"
              f"{spent(d, node_hours)}")
    print(f"\ncampaign: {statistics.mean(costs):.1f} node-runs mean, {max(costs)} max; waste "
          f"max {100 * max(wastes):.1f}%. Reference rule: {statistics.mean(ref_costs):.1f} "
          f"node-runs mean, {max(ref_costs)} max; waste max {100 * max(ref_wastes):.1f}%.")


def spent(d, node_hours):
    """The table's last column under a budget: node-hours spent and the stop's rule."""
    if node_hours is None:
        return ""
    return f" {d['node_hours']:.2f}, {d['stopped'].split(':')[0]} |"


def truth(code, n, rows, time_only=False):
    """A count's energy-delay product (node-hours x time where time only): the mean of its
    recorded runs, else its law."""
    at = by_count(rows).get(n)
    if at:
        return edp(at, n, time_only)
    t = code.law(n)
    p_busy = Y.P_IDLE + Y.CORES * Y.P_CORE
    e = n * t if time_only else n * (code.work / n * p_busy + (t - code.work / n) * code.p_wait)
    return t * e


def noisy(code):
    """`code`'s rows with the runs at the count above its best made 40% faster and slower."""
    at = by_count(code.rows)
    best = min(at, key=lambda n: edp(at[n], n))
    above = [n for n in sorted(at) if n > best]
    if not above:
        return code.rows
    n, seen, out = above[0], 0, []
    for m, t, e in code.rows:
        if m == n:
            f = 0.6 if seen == 0 else 1.4
            seen += 1
            t, e = t * f, e * f
        out.append((m, t, e))
    return out


def write_rows(path, rows, time_only=False):
    with open(path, "w") as f:
        if time_only:
            f.write("nodes,cores,freq_hz,gpus,time_s,ranks\n")
        else:
            f.write("nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope\n")
        for n, t, e in rows:
            if time_only:
                f.write(f"{n},{Y.CORES},{Y.FREQ_HZ},0,{t:.6g},{n * Y.CORES}\n")
            else:
                f.write(f"{n},{Y.CORES},{Y.FREQ_HZ},0,{t:.6g},{e:.7g},{n * Y.CORES},node\n")


def regimes(binary, tmp, time_only=False):
    machine = os.path.join(tmp, "synthetic.toml")
    with open(machine, "w") as f:
        f.write(Y.MACHINE)
    groups = {}
    for code in Y.codes([45]):
        groups.setdefault(code.regime, []).append((code, code.rows))
        if code.regime == "log":
            groups.setdefault("noisy", []).append((code, noisy(code)))
    print("| regime | codes | campaign: regret mean, max | the model's pick: regret mean, max | "
          "node-runs | of every run | reference rule: regret mean, max | node-runs | of every "
          "run | ended by themselves |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    total = {"c": [], "b": [], "r": [], "cn": 0, "rn": 0, "every": 0}
    for regime, cases in groups.items():
        reg, breg, ref_reg, cost, ref_cost, every, ended = [], [], [], 0, 0, 0, 0
        for code, rows in cases:
            csv = os.path.join(tmp, f"{regime}-{code.name}.csv")
            write_rows(csv, rows, time_only)
            top = max(n for n, _, _ in rows)
            best = min(truth(code, n, rows, time_only) for n in by_count(rows))
            d, _ = campaign(binary, tmp, f"{regime}-{code.name}", csv, machine, top)
            if d is not None and d["recommendation"]:
                ended += d["stopped"].startswith("stable")
                reg.append(truth(code, d["recommendation"]["nodes"], rows, time_only) / best - 1)
                breg.append(truth(code, d["model_pick"]["nodes"], rows, time_only) / best - 1)
                cost += d["node_runs"]
            ref, rc = reference_rule(rows, top, time_only)
            ref_reg.append(truth(code, ref, rows, time_only) / best - 1)
            ref_cost += rc
            every += sum(n for n, _, _ in rows)
        total["c"] += reg
        total["b"] += breg
        total["r"] += ref_reg
        total["cn"] += cost
        total["rn"] += ref_cost
        total["every"] += every
        row(regime, len(cases), (reg, breg), cost, ref_reg, ref_cost, every, ended)
    row("all", len(total["c"]), (total["c"], total["b"]), total["cn"], total["r"], total["rn"],
        total["every"], "")


def row(name, k, regs, cost, ref_reg, ref_cost, every, ended):
    f = lambda x: f"{100 * statistics.mean(x):.1f}%, {100 * max(x):.1f}%" if x else "-"  # noqa
    reg, breg = regs
    print(f"| {name} | {k} | {f(reg)} | {f(breg)} | {cost} | {100 * cost / every:.0f}% | {f(ref_reg)} | "
          f"{ref_cost} | {100 * ref_cost / every:.0f}% | {ended} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(S.ROOT, "target", "release", "jouleplan"))
    ap.add_argument("--only", choices=["icelake", "regimes"])
    ap.add_argument("--node-hours", type=float, help="the Ice Lake campaigns' budget")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="campaign-study-")
    if args.only != "regimes":
        icelake(args.bin, tmp, args.node_hours)
    if args.only != "icelake":
        print()
        regimes(args.bin, tmp)
        print("\nTime only (no energy column: node-hours x time):\n")
        regimes(args.bin, tmp, time_only=True)


if __name__ == "__main__":
    sys.exit(main())
