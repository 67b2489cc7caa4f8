#!/usr/bin/env python3
"""The node axis's design study and held-out figures (docs/NODE_AXIS.md).

Fits each strong-scaling code of the Ice Lake fixture (public data, ../shared/fixtures; Afzal, Hager and
Wellein, PMBS'23) on a few node counts with `jouleplan fit`, predicts every other measured count
with `jouleplan validate --json`, and asks `jouleplan plan` for a node count. Every setting of the
node law's rule is chosen by leaving whole codes out: for each code, the setting with the least
error on the other eight is used to score it, so no figure is scored on a point that chose it.

    python3 scripts/node_axis_study.py [--bin target/release/jouleplan] [--quick]

Prints the design table (each setting's error over all codes, for the record), the nested
held-out figures per code and fit set, the intervals' coverage, the recommendation's waste, and
LULESH weak scaling (never used in the design).
"""

import argparse
import csv
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Public data, never in the repository: ../shared/fixtures beside the checkout, or the folder
# JOULEPLAN_FIXTURES names (scripts/public-data.sh fetches it). The per-code CSVs are made from
# it by scripts/multinode_csv.sh into a temporary folder.
PUBLIC = os.environ.get("JOULEPLAN_FIXTURES") or os.path.join(ROOT, "..", "shared", "fixtures")


def _multinode_csvs():
    src = os.path.join(PUBLIC, "multinode", "pmbs23-icelake.csv")
    if not os.path.exists(src):
        sys.exit(f"no public data at {PUBLIC}: run scripts/public-data.sh DIR and set JOULEPLAN_FIXTURES=DIR")
    out = tempfile.mkdtemp(prefix="multinode-")
    subprocess.run([os.path.join(HERE, "multinode_csv.sh"), src, out], check=True)
    return out


DATA = _multinode_csvs()
MACHINE = os.path.join(ROOT, "tests", "data", "machines", "icelake-8360y.toml")
CODES = ["clvleaf", "hpgmgfv", "lbm", "pot3d", "soma", "sph_exa", "sweep", "tealeaf", "weather"]
LULESH = ["lulesh-150", "lulesh-120", "lulesh-90", "lulesh-60"]


def read_rows(code):
    with open(os.path.join(DATA, code + ".csv")) as f:
        r = csv.reader(f)
        header = next(r)
        return header, [row for row in r]


def fit_sets(rows):
    """The fit sets of a code: (name, counts fitted, counts predicted)."""
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


class Case:
    """One code fitted on one set of counts."""

    def __init__(self, tmp, code, name, fit, held, weak=False):
        self.code, self.name, self.fit, self.held, self.weak = code, name, fit, held, weak
        header, rows = read_rows(code)
        self.rows = rows
        self.dir = os.path.join(tmp, f"{code}-{name.replace(',', '_').replace(' ', '_')}")
        os.makedirs(self.dir, exist_ok=True)
        self.fit_csv = os.path.join(self.dir, "fit.csv")
        self.held_csv = os.path.join(self.dir, "held.csv")
        write_csv(self.fit_csv, header, [r for r in rows if int(r[0]) in fit])
        write_csv(self.held_csv, header, [r for r in rows if int(r[0]) in held])

    def evaluate(self, binary, design, coverage=0.8, plan=False):
        tag = design.replace(",", "_").replace("=", "-") or "default"
        prof = os.path.join(self.dir, f"p-{tag}.json")
        mach = os.path.join(self.dir, f"m-{tag}.toml")
        cmd = [binary, "fit", "--measured", self.fit_csv, "--machine", MACHINE,
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
        if json.loads(out).get("model_problems"):
            res["validate_err"] = "; ".join(json.loads(out)["model_problems"])[-300:]
        pts = json.loads(out)["validations"][0]["points"]
        res["points"] = [
            {
                "nodes": p["nodes"],
                "t": p["time_error"],
                "e": p["energy_error"],
                "ti": p["time_interval_s"],
                "ei": p["energy_interval_j"],
                "tm": p["time_s"],
                "em": p["energy_j"],
            }
            for p in pts
            if p["time_error"] is not None
        ]
        if plan:
            rc, out, err = run([binary, "plan", "--machine", mach, "--profile", prof,
                                "--nodes", "1-16", "--cores", "72", "--json"])
            res["plan_rc"] = rc
            if rc == 0:
                rec = json.loads(out).get("recommendation")
                res["recommended"] = rec and rec["nodes"]
                front = json.loads(out)["front"]
                # The rule this replaced: the least E x T at the prediction itself.
                res["point_edp"] = min(front, key=lambda p: p["time_s"] * p["energy_j"])["nodes"]
            else:
                res["plan_err"] = err.strip()[-300:]
        return res

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


def summary(results):
    """Mean over cases of each case's mean absolute time and energy error, and pooled
    coverage."""
    t, e, tc, tn, ec, en, mx = [], [], 0, 0, 0, 0, 0.0
    for r in results:
        pts = r.get("points")
        if not pts:
            continue
        t.append(mape([p["t"] for p in pts]))
        es = [p["e"] for p in pts if p["e"] is not None]
        if es:
            e.append(mape(es))
        mx = max([mx] + [abs(p["t"]) * 100 for p in pts])
        for p in pts:
            if p["ti"]:
                tn += 1
                tc += p["ti"][0] <= p["tm"] <= p["ti"][1]
            if p["ei"] and p["em"] is not None:
                en += 1
                ec += p["ei"][0] <= p["em"] <= p["ei"][1]
    return {
        "time": statistics.mean(t) if t else float("nan"),
        "energy": statistics.mean(e) if e else float("nan"),
        "max": mx,
        "cov_t": tc / tn if tn else float("nan"),
        "cov_e": ec / en if en else float("nan"),
        "n_t": tn,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "jouleplan"))
    ap.add_argument("--quick", action="store_true", help="a small grid")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="node-axis-study-")
    cases = []
    for code in CODES:
        _, rows = read_rows(code)
        for name, fit, held in fit_sets(rows):
            cases.append(Case(tmp, code, name, fit, held))
    floors = ["best", "0.01", "0.03", "0.1", "1"] if args.quick else \
        ["best", "0.005", "0.01", "0.02", "0.03", "0.05", "0.1", "1"]
    serials = ["free", "nonneg"]
    law_grid = [f"floor={f},serial={s}" for f, s in itertools.product(floors, serials)]
    iv_grid = [(r, d, u) for r in ("0.01", "0.02", "0.03", "0.05") for d in ("0", "0.01", "0.02", "0.05", "0.08")
               for u in ("0.05", "0.1", "0.15", "0.2")]
    jobs = [(c, g) for c in cases for g in law_grid]

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        law_res = dict(zip(jobs, ex.map(lambda j: j[0].evaluate(args.bin, j[1]), jobs)))

    # Point predictions do not depend on the interval settings: choose the law rule first.
    print("## Design: each law rule over every case (for the record; the choice is nested)\n")
    print("| rule | time | energy | max |")
    print("|---|---|---|---|")
    for g in law_grid:
        s = summary([law_res[(c, g)] for c in cases])
        print(f"| {g} | {s['time']:.1f}% | {s['energy']:.1f}% | {s['max']:.0f}% |")

    def best_rule(exclude):
        def score(g):
            s = summary([law_res[(c, g)] for c in cases if c.code != exclude])
            return s["time"] + s["energy"]
        return min(law_grid, key=score)

    chosen_law = {code: best_rule(code) for code in CODES}
    overall_law = best_rule(None)
    # The interval settings, with each code's law rule, chosen on the other codes' coverage.
    laws = sorted(set(chosen_law.values()) | {overall_law})
    iv_jobs = [(c, f"{law},repeat={r},doubling={d},unvalidated={u}") for c in cases for law in laws for r, d, u in iv_grid]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        iv_res = dict(zip(iv_jobs, ex.map(lambda j: j[0].evaluate(args.bin, j[1]), iv_jobs)))

    def best_iv(exclude, law):
        def score(rd):
            # Each fit set's coverage of time and energy near the nominal 80%; the narrower
            # prior on a tie.
            total = 0.0
            for name in {c.name for c in cases}:
                s = summary([iv_res[(c, f"{law},repeat={rd[0]},doubling={rd[1]},unvalidated={rd[2]}")]
                             for c in cases if c.code != exclude and c.name == name])
                for k in ("cov_t", "cov_e"):
                    if s[k] == s[k]:
                        total += abs(s[k] - 0.8)
            return total + 0.001 * float(rd[1])
        return min(iv_grid, key=score)

    print("\n## Nested held-out figures (each code scored with the settings chosen on the others)\n")
    print("| code | fitted on nodes | points | time | energy | max time | intervals held (time, energy) | rule chosen on the others |")
    print("|---|---|---|---|---|---|---|---|")
    final = {}
    for code in CODES:
        r, d, u = best_iv(code, chosen_law[code])
        design = f"{chosen_law[code]},repeat={r},doubling={d},unvalidated={u}"
        for c in [c for c in cases if c.code == code]:
            res = c.evaluate(args.bin, design, plan=True)
            final[c] = res
            s = summary([res])
            pts = res.get("points", [])
            held_t = sum(1 for p in pts if p["ti"] and p["ti"][0] <= p["tm"] <= p["ti"][1])
            n_t = sum(1 for p in pts if p["ti"])
            held_e = sum(1 for p in pts if p["ei"] and p["em"] is not None and p["ei"][0] <= p["em"] <= p["ei"][1])
            n_e = sum(1 for p in pts if p["ei"] and p["em"] is not None)
            refused = "" if res.get("fit_rc") == 0 else " (fit refused)"
            refused += "" if not res.get("validate_err") else " (model check failed)"
            print(f"| {code} | {','.join(map(str, c.fit))} | {len(pts)} | {s['time']:.1f}% | "
                  f"{s['energy']:.1f}% | {s['max']:.0f}% | {held_t}/{n_t}, {held_e}/{n_e} | {design}{refused} |")
    print("\n## Pooled by fit set (nested)\n")
    print("| fit set | cases | time | energy | max | 80% intervals held: time, energy |")
    print("|---|---|---|---|---|---|")
    for name in ["1,2,4,8", "1,2,4", "3 smallest", "4 smallest"]:
        rs = [final[c] for c in cases if c.name == name]
        if rs:
            s = summary(rs)
            print(f"| {name} | {len(rs)} | {s['time']:.1f}% | {s['energy']:.1f}% | {s['max']:.0f}% | "
                  f"{100 * s['cov_t']:.0f}%, {100 * s['cov_e']:.0f}% |")
    refused = [f"{c.code} {c.name}: {r.get('fit_err') or r.get('validate_err') or r.get('plan_err')}"
               for c, r in final.items()
               if r.get("fit_rc") != 0 or r.get("validate_err") or r.get("plan_rc", 0) != 0]
    print(f"\nrefused by fit, validate or plan: {len(refused)}")
    for x in refused:
        print("  " + x)
    print("\n## Recommendation (fitted on 1,2,4,8; plan --nodes 1-16 --cores 72)\n")
    print("| code | recommended | measured energy above the cheapest count within 5% of its time |")
    print("|---|---|---|")
    for c, r in final.items():
        if c.name == "1,2,4,8" and "recommended" in r:
            w = c.waste(r["recommended"])
            print(f"| {c.code} | {r['recommended']} | {'not measured at 72 ranks a node' if w is None else f'{100 * w:.1f}%'} |")

    print("\n## The default objective on every fit set: waste of the recommendation\n")
    print("Least E x T at each point's high interval ends (now) against least E x T at the "
          "prediction (before); counts measured at 72 ranks a node only.\n")
    print("| fit set | recommendations scored | now: mean, max | before: mean, max |")
    print("|---|---|---|---|")
    for name in ["1,2,4,8", "1,2,4", "3 smallest", "4 smallest"]:
        now, before = [], []
        for c, r in final.items():
            if c.name == name and "recommended" in r:
                w, v = c.waste(r["recommended"]), c.waste(r["point_edp"])
                if w is not None and v is not None:
                    now.append(100 * w)
                    before.append(100 * v)
        if now:
            print(f"| {name} | {len(now)} | {statistics.mean(now):.1f}%, {max(now):.1f}% | "
                  f"{statistics.mean(before):.1f}%, {max(before):.1f}% |")

    print(f"\nrule chosen on all nine codes: {overall_law}, intervals {best_iv(None, overall_law)}")
    # LULESH: weak scaling, never used above.
    print("\n## LULESH weak scaling, fitted on up to 8 nodes (held out of the design)\n")
    r, d, u = best_iv(None, overall_law)
    design = f"{overall_law},repeat={r},doubling={d},unvalidated={u}"
    print("| size | points | time | energy | max time | intervals held (time, energy) |")
    print("|---|---|---|---|---|---|")
    for code in LULESH:
        _, rows = read_rows(code)
        counts = sorted({int(x[0]) for x in rows})
        fit = [n for n in counts if n <= 8]
        c = Case(tmp, code, "weak", fit, [n for n in counts if n > 8], weak=True)
        # Two-socket runs only: RAPL's CPU scope on a one-socket run is half a node's.
        write_csv(c.fit_csv, read_rows(code)[0],
                  [r for r in rows if int(r[0]) <= 8 and (int(r[0]) > 1 or int(r[1]) > 36)])
        res = c.evaluate(args.bin, design)
        s = summary([res])
        if "points" not in res:
            print(f"| {code} | refused: {res.get('fit_err') or res.get('validate_err')} |")
            continue
        print(f"| {code} | {len(res['points'])} | {s['time']:.1f}% | {s['energy']:.1f}% | {s['max']:.0f}% | "
              f"{100 * s['cov_t']:.0f}%, {100 * s['cov_e']:.0f}% |"
              + ("" if res.get("fit_rc") == 0 else " (fit refused)"))


if __name__ == "__main__":
    sys.exit(main())
