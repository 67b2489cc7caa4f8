#!/usr/bin/env python3
"""The node axis's design study and held-out figures (docs/NODE_AXIS.md).

Two kinds of codes, scored alike:
- the nine SPEChpc 2021 strong-scaling codes on the Ice Lake cluster (real runs, Afzal, Hager
  and Wellein, PMBS'23, GPL-3.0), read from `${JOULEPLAN_FIXTURES:-../shared/fixtures}/multinode`
  and converted by `scripts/multinode_csv.sh` into a temporary folder, each fitted on a few node
  counts (`1,2,4,8`, `1,2,4`, its 3 and its 4 smallest) and predicted at every other count;
- SYNTHETIC codes of known shape (`scripts/synthetic_codes.py`, seeded; never measurements),
  seven regimes of four codes, each fitted on its 3 and its 4 smallest counts and predicted up
  to 128 times beyond.

Each case is fitted with `jouleplan fit`, predicted with `jouleplan validate --json`, and (Ice
Lake) asked for a node count with `jouleplan plan`. Beside it, the plain reference: one of 7 laws
`a/n + b + c g(n)` (`g` in log2 n, sqrt n, n; `b` or `c` may be absent) fitted by least squares
on relative residuals to the measured time, and another to the energy, chosen by
leave-one-node-count-out error.

Every setting of the node law's rule is chosen nested: each synthetic regime, and each Ice Lake
code, is scored with the settings chosen on all the others (the other regimes and every Ice Lake
code; every synthetic regime and the other Ice Lake codes). The objective, over the regimes it
sees, is the mean of (time + energy) / 2 plus how far each is worse than the plain reference;
the law setting is the most regular one within one standard error of the least objective
(`--select 1se`; `--select min`: the least objective, as before 2026-11-27); then the interval
settings whose coverage comes nearest 80% in every regime and fit set.

    python3 scripts/node_axis_study.py [--bin target/release/jouleplan] [--quick]
        [--center median|relative|median,relative] [--refute off|R] [--axis KEY=V1/V2 ...]
        [--select 1se|min]
"""

import argparse
import atexit
import collections
import csv
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import synthetic_codes  # noqa: E402

FIXTURES = os.environ.get("JOULEPLAN_FIXTURES") or os.path.join(ROOT, "..", "shared", "fixtures")
MACHINE = os.path.join(ROOT, "tests", "data", "machines", "icelake-8360y.toml")
CODES = ["clvleaf", "hpgmgfv", "lbm", "pot3d", "soma", "sph_exa", "sweep", "tealeaf", "weather"]
LULESH = ["lulesh-150", "lulesh-120", "lulesh-90", "lulesh-60"]
ICELAKE = "icelake"
REGIMES = [ICELAKE] + synthetic_codes.REGIMES
SETS = ["1,2,4,8", "1,2,4", "3 smallest", "4 smallest"]
# What the choice weighs alike: each synthetic regime, and the Ice Lake codes of each fit set.
GROUPS = [(ICELAKE, s) for s in SETS] + synthetic_codes.REGIMES
RANKS_A_NODE = 72
# Results kept between runs of one binary (`--cache FILE`); None: none kept.
DISK = None


def icelake_dir(tmp):
    """The Ice Lake codes' measured-run CSVs, made from the public fixture in `tmp`."""
    out = os.path.join(tmp, "multinode")
    src = os.path.join(FIXTURES, "multinode", "pmbs23-icelake.csv")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: set JOULEPLAN_FIXTURES to the public fixtures")
    subprocess.run(["sh", os.path.join(HERE, "multinode_csv.sh"), src, out], check=True)
    return out


def read_csv(path):
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        return header, [row for row in r]


def icelake_sets(rows):
    """The fit sets of an Ice Lake code: (name, counts fitted, counts predicted)."""
    counts = sorted({int(r[0]) for r in rows})
    n0 = counts[0]
    sets = []
    a = sorted({n for n in counts if n in (1, 2, 4, 8)} | {n0})
    b = sorted({n for n in counts if n in (1, 2, 4)} | {n0})
    if len(a) >= 2:
        sets.append(("1,2,4,8", a, [n for n in counts if n not in a and n <= 16]))
    if len(b) >= 2 and b != a:
        sets.append(("1,2,4", b, [n for n in counts if n not in b and n <= 16]))
    for k in (3, 4):
        if len(counts) > k + 2:
            sets.append((f"{k} smallest", counts[:k], counts[k:]))
    return sets


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------------
# The plain reference: one of 7 laws a/x + b + c g(x), chosen by leave-one-count-out error.

G = {"log": lambda x: math.log2(x), "sqrt": math.sqrt, "lin": lambda x: x}
PLAIN = [("b",)] + [(g,) for g in G] + [("b", g) for g in G]


def columns(form, x):
    return [1.0 / x] + [1.0 if t == "b" else G[t](x) for t in form]


def solve(a, b):
    """Gauss-Jordan with partial pivoting; None when singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        if abs(m[i][i]) < 1e-300:
            return None
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def lsq(form, pts):
    """Least squares on relative residuals of `y ~ form(x)` over pts [(x, y)]."""
    rows = [[c / y for c in columns(form, x)] for x, y in pts]
    k = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    b = [sum(r[i] for r in rows) for i in range(k)]
    return solve(a, b)


def at(form, c, x):
    return sum(p * q for p, q in zip(columns(form, x), c))


def plain_law(pts, targets):
    """The plain reference's prediction function fitted on pts [(x, y)]: the law of least
    leave-one-count-out error among those the counts allow (p parameters need p + 1 counts)
    that stays positive at every target."""
    xs = sorted({x for x, _ in pts})
    best = None
    for form in PLAIN:
        k = len(form) + 1
        if len(xs) < k + 1:
            continue
        c = lsq(form, pts)
        if c is None or any(at(form, c, x) <= 0 for x in targets):
            continue
        errs = []
        for m in xs:
            cc = lsq(form, [p for p in pts if p[0] != m])
            if cc is None:
                errs = None
                break
            errs += [abs(at(form, cc, x) / y - 1.0) for x, y in pts if x == m]
        if errs is None:
            continue
        e = statistics.mean(errs)
        if best is None or e < best[0]:
            best = (e, form, c)
    if best is None:
        return None
    _, form, c = best
    return lambda x: at(form, c, x)


# ---------------------------------------------------------------------------------------------


class Case:
    """One code fitted on one set of counts."""

    def __init__(self, tmp, src, code, regime, name, fit, held, machine, weak=False):
        self.code, self.regime, self.name = code, regime, name
        self.fit, self.held, self.machine, self.weak = fit, held, machine, weak
        header, rows = read_csv(src)
        self.rows = rows
        self.dir = os.path.join(tmp, f"{code}-{name.replace(',', '_').replace(' ', '_')}")
        os.makedirs(self.dir, exist_ok=True)
        self.fit_csv = os.path.join(self.dir, "fit.csv")
        self.held_csv = os.path.join(self.dir, "held.csv")
        write_csv(self.fit_csv, header, [r for r in rows if int(r[0]) in fit])
        write_csv(self.held_csv, header, [r for r in rows if int(r[0]) in held])
        self.cache = {}

    @property
    def group(self):
        """What the choice weighs alike ([`GROUPS`])."""
        return (ICELAKE, self.name) if self.regime == ICELAKE else self.regime

    @property
    def unit(self):
        """What the nested choice holds out together: an Ice Lake code, or a synthetic regime."""
        return self.code if self.regime == ICELAKE else self.regime

    def evaluate(self, binary, design, coverage=0.8, plan=False):
        key = (design, coverage, plan)
        if key not in self.cache:
            disk = f"{self.code}|{self.name}|{design}|{coverage}|{plan}"
            if DISK is not None and disk in DISK:
                self.cache[key] = DISK[disk]
            else:
                self.cache[key] = self._evaluate(binary, design, coverage, plan)
                if DISK is not None:
                    DISK[disk] = self.cache[key]
        return self.cache[key]

    def _evaluate(self, binary, design, coverage, plan):
        tag = str(abs(hash(design)))
        prof = os.path.join(self.dir, f"p-{tag}.json")
        mach = os.path.join(self.dir, f"m-{tag}.toml")
        cmd = [binary, "fit", "--measured", self.fit_csv, "--machine", self.machine,
               "--profile-out", prof, "--machine-out", mach]
        if design:
            cmd += ["--design", design]
        if self.weak:
            cmd.append("--weak")
        rc, out, err = run(cmd)
        res = {"fit_rc": rc, "fit_err": err.strip()[-400:]}
        if rc != 0 and "refused by `plan`" in err:
            # Scored anyway, to see the error it would have had; counted as refused.
            rc, out, err = run(cmd + ["--accept-model-error"])
        if rc != 0:
            return res
        v = [binary, "validate", "--machine", mach, "--profile", prof, "--measured",
             self.held_csv, "--json", "--coverage", str(coverage)]
        rc, out, err = run(v)
        res["validate_rc"] = rc
        if rc != 0:
            res["validate_err"] = err.strip()[-300:]
            return res
        doc = json.loads(out)
        if doc.get("model_problems"):
            res["validate_err"] = "; ".join(doc["model_problems"])[-300:]
        res["points"] = [
            {"nodes": p["nodes"], "t": p["time_error"], "e": p["energy_error"],
             "ti": p["time_interval_s"], "ei": p["energy_interval_j"],
             "tm": p["time_s"], "em": p["energy_j"]}
            for p in doc["validations"][0]["points"] if p["time_error"] is not None
        ]
        if plan:
            rc, out, err = run([binary, "plan", "--machine", mach, "--profile", prof,
                                "--nodes", "1-16", "--cores", "72", "--json"])
            res["plan_rc"] = rc
            if rc == 0:
                rec = json.loads(out).get("recommendation")
                res["recommended"] = rec and rec["nodes"]
            else:
                res["plan_err"] = err.strip()[-300:]
        return res

    def plain(self):
        """The plain reference's held-out errors and its recommendation (least E x T among
        1-16 nodes at 72 ranks a node)."""
        if "plain" in self.cache:
            return self.cache["plain"]
        fit = [r for r in self.rows if int(r[0]) in self.fit]
        held = [r for r in self.rows if int(r[0]) in self.held]
        x = lambda r: int(r[6]) / RANKS_A_NODE  # noqa: E731
        targets = sorted({x(r) for r in held} | set(range(1, 17)))
        tl = plain_law([(x(r), float(r[4])) for r in fit], targets)
        el = plain_law([(x(r), float(r[5])) for r in fit if r[5]], targets)
        pts = []
        for r in held:
            t = tl(x(r)) / float(r[4]) - 1.0 if tl else None
            e = el(x(r)) / float(r[5]) - 1.0 if el and r[5] else None
            pts.append({"nodes": int(r[0]), "t": t, "e": e, "ti": None, "ei": None})
        rec = None
        if tl and el:
            rec = min(range(1, 17), key=lambda n: tl(n) * el(n))
        self.cache["plain"] = {"points": pts, "recommended": rec}
        return self.cache["plain"]

    def waste(self, n):
        """Measured energy at `n` nodes (72 ranks a node) above the cheapest measured count
        within 5% of its measured time; None where `n` was not measured that way."""
        full = {}
        for r in self.rows:
            if int(r[1]) == 72 and int(r[0]) <= 16:
                full.setdefault(int(r[0]), []).append((float(r[4]), float(r[5])))
        if n not in full:
            return None
        mean = {k: (statistics.mean(t for t, _ in v), statistics.mean(e for _, e in v))
                for k, v in full.items()}
        t, e = mean[n]
        best = min(em for tm, em in mean.values() if tm <= 1.05 * t)
        return e / best - 1.0


def mape(xs):
    return 100.0 * statistics.mean(abs(x) for x in xs) if xs else float("nan")


def case_scores(res):
    """A case's mean absolute time and energy error (%; 100 where nothing was predicted),
    its largest time error, and its interval counts."""
    pts = res.get("points") or []
    ts = [p["t"] for p in pts if p["t"] is not None]
    es = [p["e"] for p in pts if p["e"] is not None]
    held = lambda iv, m: iv is not None and m is not None and iv[0] <= m <= iv[1]  # noqa: E731
    return {
        "t": mape(ts) if ts else 100.0,
        "e": mape(es) if es else 100.0,
        "max": max([abs(x) * 100 for x in ts] or [100.0]),
        "tc": sum(held(p["ti"], p.get("tm")) for p in pts),
        "tn": sum(p["ti"] is not None for p in pts),
        "ec": sum(held(p["ei"], p.get("em")) for p in pts),
        "en": sum(p["ei"] is not None and p.get("em") is not None for p in pts),
        "ok": res.get("fit_rc") == 0 and not res.get("validate_err"),
    }


def pooled(scores):
    """Mean over cases of each case's errors; coverage pooled over points."""
    if not scores:
        return None
    tn, en = sum(s["tn"] for s in scores), sum(s["en"] for s in scores)
    return {
        "t": statistics.mean(s["t"] for s in scores),
        "e": statistics.mean(s["e"] for s in scores),
        "max": max(s["max"] for s in scores),
        "cov_t": sum(s["tc"] for s in scores) / tn if tn else float("nan"),
        "cov_e": sum(s["ec"] for s in scores) / en if en else float("nan"),
        "n": len(scores),
        "refused": sum(not s["ok"] for s in scores),
    }


class Study:
    def __init__(self, binary, cases):
        self.binary, self.cases = binary, cases
        self.plain = {c: case_scores(c.plain()) for c in cases}

    def run_all(self, designs, plan=False):
        jobs = [(c, d) for c in self.cases for d in designs]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            list(ex.map(lambda j: j[0].evaluate(self.binary, j[1], plan=plan), jobs))

    def scores(self, design, cases):
        return {c: case_scores(c.evaluate(self.binary, design)) for c in cases}

    def law_parts(self, design, cases):
        """Each group's (a synthetic regime, or the Ice Lake codes of one fit set) time and
        energy error as a share of the plain reference's there, and four times more where it is
        worse than plain, summed over time and energy: one value per group seen."""
        s = self.scores(design, cases)
        parts = []
        for group in GROUPS:
            cs = [c for c in cases if c.group == group]
            if not cs:
                continue
            me, pl = pooled([s[c] for c in cs]), pooled([self.plain[c] for c in cs])
            total = 0.0
            for key in ("t", "e"):
                r = me[key] / max(pl[key], 0.1)
                total += r + 4.0 * max(0.0, r - 1.0)
            parts.append(total)
        return parts

    def law_objective(self, design, cases):
        """The mean over the groups seen of [`law_parts`]."""
        return statistics.mean(self.law_parts(design, cases))

    def interval_objective(self, design, cases):
        """How far each regime's and fit set's coverage lies from 80%, time and energy."""
        s = self.scores(design, cases)
        total, k = 0.0, 0
        for regime in REGIMES:
            for name in SETS:
                cs = [c for c in cases if c.regime == regime and c.name == name]
                if not cs:
                    continue
                p = pooled([s[c] for c in cs])
                for key in ("cov_t", "cov_e"):
                    if p[key] == p[key]:
                        total += abs(p[key] - 0.8)
                        k += 1
        return total / max(k, 1)

    def choose(self, grid, objective, exclude):
        cases = [c for c in self.cases if c.unit != exclude]
        return min(grid, key=lambda d: objective(d, cases))

    def choose_law(self, grid, exclude, select):
        """The law setting of least objective (`min`), or by the one-standard-error rule
        (`1se`, Breiman et al., Classification and Regression Trees, 1984, 3.4.3): among the
        settings whose mean objective exceeds the least one's by at most the standard error of
        that difference over the groups (paired, one value a group), the most regular one."""
        if select == "min":
            return self.choose(grid, self.law_objective, exclude)
        cases = [c for c in self.cases if c.unit != exclude]
        parts = {d: self.law_parts(d, cases) for d in grid}
        best = min(grid, key=lambda d: statistics.mean(parts[d]))
        near = []
        for d in grid:
            diff = [a - b for a, b in zip(parts[d], parts[best])]
            se = statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else 0.0
            if statistics.mean(diff) <= se:
                near.append(d)
        return min(near, key=lambda d: (regularity(d), statistics.mean(parts[d])))


def regularity(design):
    """How far a law setting departs from the most regular one (smaller: more regular), fixed
    before the one-standard-error rule was scored: the derived energy before energy laws fitted
    per code; then the flattest evidence weights (the largest `K` of `evidence:K`: the weights
    nearest the prior's); then the highest bar for growth (a growing law needs the most
    evidence); then the highest bar for the plain reference's method over the family's
    (`methodbar`)."""
    keys = dict(kv.split("=", 1) for kv in design.split(","))
    energy = 0 if keys.get("energy", "derived") == "derived" else 1
    weigh = keys.get("weigh", "")
    k = float(weigh.split(":")[1]) if weigh.startswith("evidence:") else 0.0
    return (energy, -k, -float(keys.get("growth", "0")), -float(keys.get("methodbar", "0")))


def fmt(x):
    return "-" if x is None or x != x else f"{x:.1f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "jouleplan"))
    ap.add_argument("--quick", action="store_true", help="a small grid")
    ap.add_argument("--cache", help="keep results in FILE between runs of the same binary")
    ap.add_argument("--center", default="median",
                    help="the law the model uses: median, relative, or both to choose among")
    ap.add_argument("--refute", default="off",
                    help="rule out a law faster than a count by R spreads (off or R)")
    ap.add_argument("--axis", action="append", default=[], metavar="KEY=V1/V2",
                    help="a law key's values in the grid (replaces the key's own; repeatable)")
    ap.add_argument("--select", default="1se", choices=["min", "1se"],
                    help="the law setting by the one-standard-error rule (the default), or the "
                         "one of least objective (the figures before 2026-11-27)")
    ap.add_argument("--seeds", default=",".join(map(str, synthetic_codes.SEEDS)),
                    help="the synthetic codes' seeds, four codes a regime each (45 alone: the "
                         "design set before 2026-11-28)")
    args = ap.parse_args()
    seeds = [int(x) for x in args.seeds.split(",")]
    global DISK
    if args.cache:
        stamp = str(os.path.getmtime(args.bin))
        DISK = {}
        if os.path.exists(args.cache):
            with open(args.cache) as f:
                saved = json.load(f)
            if saved.get("binary") == stamp:
                DISK = saved["results"]
        atexit.register(lambda: json.dump({"binary": stamp, "results": DISK}, open(args.cache, "w")))
    tmp = tempfile.mkdtemp(prefix="node-axis-study-")
    multinode = icelake_dir(tmp)
    synth = os.path.join(tmp, "synthetic")
    synthetic_codes.write(synth, seeds)
    cases = []
    for code in CODES:
        src = os.path.join(multinode, code + ".csv")
        for name, fit, held in icelake_sets(read_csv(src)[1]):
            cases.append(Case(tmp, src, code, ICELAKE, name, fit, held, MACHINE))
    for sc in synthetic_codes.codes(seeds):
        src = os.path.join(synth, sc.name + ".csv")
        for name, fit, held in sc.fit_sets:
            cases.append(Case(tmp, src, sc.name, sc.regime, name, fit, held,
                              os.path.join(synth, "synthetic.toml")))
    study = Study(args.bin, cases)
    units = sorted({c.unit for c in cases})

    # Each key of the grid has a stated reason; the keys whose other values never won a nested
    # choice in a wider grid (docs/NODE_AXIS.md) are fixed: prior 1 (no prior for growth beyond
    # its evidence), span 5%, the weighted median, the serial time of either sign.
    # - weigh: the code's own evidence at 1, 2 or 4 times its scale (one floor for all codes,
    #   what jouleplan did before, is not offered: the weights are to come from each code's own
    #   evidence);
    # - growth: a growing law needs a left-out count slower than every law without growth by at
    #   least the code's run-to-run spread (1) or twice it (2): less is no evidence, as noise
    #   gives it half the time;
    # - energy: derived, or judged per code against direct laws of n (median:1).
    if args.quick:
        axes = {"weigh": ["evidence:1", "evidence:4"], "growth": ["1"],
                "energy": ["derived", "median:1"]}
    else:
        axes = {"weigh": ["evidence:1", "evidence:2", "evidence:4"], "growth": ["1", "2"],
                "energy": ["derived", "median:1"]}
    axes = {"weigh": axes["weigh"], "growth": axes["growth"], "prior": ["1"], "span": ["0.05"],
            "center": args.center.split(","), "energy": axes["energy"], "serial": ["free"]}
    if args.refute != "off":
        axes["refute"] = [args.refute]
    for a in args.axis:
        key, _, values = a.partition("=")
        axes[key] = values.split("/")
    law_grid = [",".join(f"{k}={v}" for k, v in zip(axes, vs))
                for vs in itertools.product(*axes.values())]
    study.run_all(law_grid)

    print("## Each law setting over every regime (for the record; the choice is nested)\n")
    names = [g[1] if isinstance(g, tuple) else g for g in GROUPS]
    print("| setting | " + " | ".join(names) + " | objective |")
    print("|---|" + "---|" * (len(GROUPS) + 1))
    for d in sorted(law_grid, key=lambda d: study.law_objective(d, cases)):
        s = study.scores(d, cases)
        cells = []
        for g in GROUPS:
            p = pooled([s[c] for c in cases if c.group == g])
            cells.append(f"{p['t']:.1f} / {p['e']:.1f}")
        print(f"| {d} | " + " | ".join(cells) + f" | {study.law_objective(d, cases):.2f} |")
    cells = []
    for g in GROUPS:
        p = pooled([study.plain[c] for c in cases if c.group == g])
        cells.append(f"{p['t']:.1f} / {p['e']:.1f}")
    print("| plain 7-law pick | " + " | ".join(cells) + " | |")

    chosen_law = {u: study.choose_law(law_grid, u, args.select) for u in units}
    overall_law = study.choose_law(law_grid, None, args.select)
    if args.quick:
        iv = [("0.01", "0", "0.2"), ("0.02", "0.02", "0.1")]
    else:
        iv = [(r, d, u) for r in ("0.01", "0.02", "0.03") for d in ("0", "0.02", "0.05", "0.1")
              for u in ("0.05", "0.1", "0.2")]
    def iv_of(law):
        """The law setting with each interval setting in place of its own (each key once)."""
        keys = dict(kv.split("=", 1) for kv in law.split(","))
        out = []
        for r, d, u in iv:
            keys.update(repeat=r, doubling=d, unvalidated=u)
            out.append(",".join(f"{k}={v}" for k, v in keys.items()))
        return out
    laws = sorted(set(chosen_law.values()) | {overall_law})
    study.run_all([d for law in laws for d in iv_of(law)])
    chosen = {u: study.choose(iv_of(chosen_law[u]), study.interval_objective, u) for u in units}
    overall = study.choose(iv_of(overall_law), study.interval_objective, None)

    # The nested figures: each case with the settings chosen without its unit.
    ice = [c for c in cases if c.regime == ICELAKE]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        list(ex.map(lambda c: c.evaluate(args.bin, chosen[c.unit], plan=True), ice))
    final = {c: case_scores(c.evaluate(args.bin, chosen[c.unit], plan=c.regime == ICELAKE))
             for c in cases}

    print("\n## Nested: each regime (each Ice Lake code) scored with the settings chosen on the others\n")
    print("| regime | cases | time | energy | max time | plain time | plain energy | "
          "80% intervals held: time, energy | worse than plain by more than 2 points |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in REGIMES:
        cs = [c for c in cases if c.regime == r]
        me, pl = pooled([final[c] for c in cs]), pooled([study.plain[c] for c in cs])
        bad = [k for k in ("t", "e") if me[k] > pl[k] + 2.0]
        print(f"| {r}{' (synthetic)' if r != ICELAKE else ''} | {me['n']} | {fmt(me['t'])} | {fmt(me['e'])} | "
              f"{me['max']:.0f}% | {fmt(pl['t'])} | {fmt(pl['e'])} | "
              f"{100 * me['cov_t']:.0f}%, {100 * me['cov_e']:.0f}% | "
              f"{', '.join({'t': 'time', 'e': 'energy'}[k] for k in bad) or 'no'} |")

    print("\n## Coverage by regime and fit set (nested)\n")
    print("| regime | fit set | cases | time | energy | plain time | plain energy | held: time, energy |")
    print("|---|---|---|---|---|---|---|---|")
    for r in REGIMES:
        for name in SETS:
            cs = [c for c in cases if c.regime == r and c.name == name]
            if not cs:
                continue
            me, pl = pooled([final[c] for c in cs]), pooled([study.plain[c] for c in cs])
            print(f"| {r} | {name} | {me['n']} | {fmt(me['t'])} | {fmt(me['e'])} | {fmt(pl['t'])} | "
                  f"{fmt(pl['e'])} | {100 * me['cov_t']:.0f}%, {100 * me['cov_e']:.0f}% |")

    print("\n## Synthetic codes by run-to-run noise and fit set (nested): time error\n")
    print("The mean of a regime is decided by its few codes whose left-out counts cannot tell a "
          "law that keeps gaining from one that stops; the median and the share within 20% show "
          "the rest.\n")
    noise = {sc.name: sc.noise for sc in synthetic_codes.codes(seeds)}
    print("| regime | fit set | noise | codes | time: mean | median | within 20% | largest |")
    print("|---|---|---|---|---|---|---|---|")
    for r in REGIMES[1:]:
        for name in SETS:
            for sigma in sorted(set(noise.values())):
                cs = [c for c in cases if c.regime == r and c.name == name
                      and noise.get(c.code) == sigma]
                if not cs:
                    continue
                ts = [final[c]["t"] for c in cs]
                print(f"| {r} | {name} | {100 * sigma:.0f}% | {len(cs)} | {fmt(statistics.mean(ts))} | "
                      f"{fmt(statistics.median(ts))} | {sum(t <= 20.0 for t in ts)}/{len(ts)} | "
                      f"{fmt(max(ts))} |")

    print("\n## Ice Lake by fit set, with the recommendation's waste (plan --nodes 1-16 --cores 72)\n")
    print("| fit set | cases | time | energy | plain time | plain energy | held: time, energy | "
          "waste: mean, max (scored) | plain's waste: mean, max |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in SETS:
        cs = [c for c in ice if c.name == name]
        me, pl = pooled([final[c] for c in cs]), pooled([study.plain[c] for c in cs])
        w, wp = [], []
        for c in cs:
            rec = c.evaluate(args.bin, chosen[c.unit], plan=True).get("recommended")
            prec = c.plain()["recommended"]
            a, b = (c.waste(rec) if rec else None), (c.waste(prec) if prec else None)
            if a is not None and b is not None:
                w.append(100 * a)
                wp.append(100 * b)
        ws = f"{statistics.mean(w):.1f}%, {max(w):.1f}% ({len(w)})" if w else "-"
        wps = f"{statistics.mean(wp):.1f}%, {max(wp):.1f}%" if wp else "-"
        print(f"| {name} | {me['n']} | {fmt(me['t'])} | {fmt(me['e'])} | {fmt(pl['t'])} | {fmt(pl['e'])} | "
              f"{100 * me['cov_t']:.0f}%, {100 * me['cov_e']:.0f}% | {ws} | {wps} |")

    print("\n## Ice Lake per code and fit set (nested; docs/ACCURACY.md)\n")
    print("| code | fit set | points | time | energy | max time | 80% intervals held (time, energy) |")
    print("|---|---|---|---|---|---|---|")
    for c in sorted(ice, key=lambda c: (c.code, SETS.index(c.name))):
        f = final[c]
        print(f"| {c.code} | {c.name} | {f['tn']} | {fmt(f['t'])} | {fmt(f['e'])} | "
              f"{f['max']:.0f}% | {f['tc']}/{f['tn']}, {f['ec']}/{f['en']} |")

    print("\n## Settings chosen without each unit\n")
    for u in units:
        print(f"- {u}: {chosen[u]}")
    refused = [f"{c.code} {c.name}" for c in cases if not final[c]["ok"]]
    print(f"\nrefused by fit or validate: {len(refused)} {refused}")
    print(f"\nchosen on everything: {overall}")

    print("\n## LULESH weak scaling, fitted on up to 8 nodes (held out of every choice)\n")
    print("| size | points | time | energy | max time | intervals held (time, energy) |")
    print("|---|---|---|---|---|---|")
    for code in LULESH:
        src = os.path.join(multinode, code + ".csv")
        header, rows = read_csv(src)
        counts = sorted({int(x[0]) for x in rows})
        c = Case(tmp, src, code, "weak", "weak", [n for n in counts if n <= 8],
                 [n for n in counts if n > 8], MACHINE, weak=True)
        # Two-socket runs only: RAPL's CPU scope on a one-socket run is half a node's.
        write_csv(c.fit_csv, header,
                  [r for r in rows if int(r[0]) <= 8 and (int(r[0]) > 1 or int(r[1]) > 36)])
        s = case_scores(c.evaluate(args.bin, overall))
        p = pooled([s])
        print(f"| {code} | {s['tn']} | {fmt(s['t'])} | {fmt(s['e'])} | {s['max']:.0f}% | "
              f"{100 * p['cov_t']:.0f}%, {100 * p['cov_e']:.0f}% |")


if __name__ == "__main__":
    sys.exit(main())
