#!/usr/bin/env python3
"""Energy over node counts: derived from the predicted time and the fitted node power, or a law
of its own? (docs/NODE_AXIS.md, "Energy: derived, or a law of its own").

For each strong-scaling code of the Ice Lake fixture and each fit set of the node-axis study,
`jouleplan fit` fits the code, `jouleplan validate --json` predicts its fitted runs (in sample)
and every other measured count (held out). An energy law is then fitted on the in-sample
relative residuals r(n) = ln(E_measured / E_derived) and applied to the held-out predictions:

  derived   r = 0: energy derived from time and node power (what jouleplan does);
  const     a constant r: the energy level recalibrated on the code's own runs;
  fam0      the derived form and four anchored laws c (1 - n0/n), c (g(n) - g(n0)) with g in
            log2 n, sqrt n, n, weighted by leave-one-count-out error as the time law is;
  famc      the derived form and laws with an intercept: e, e + f (g(n) - g(n0));
  famall    both families together; fam0nz: fam0 without the derived form.

Each setting is scored by the mean absolute held-out energy error per case; the setting used for
each code is the one with the least error over the *other* eight codes (nested, so no figure is
scored on a point that chose it).

    python3 scripts/energy_law_study.py [--bin target/release/jouleplan]
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_axis_study as S  # noqa: E402

G = {"log": math.log2, "sqrt": math.sqrt, "lin": lambda n: float(n)}
FAMILIES = {
    "derived": [()],
    "const": [("c",)],
    "fam0": [(), ("sat",), ("log",), ("sqrt",), ("lin",)],
    "famc": [(), ("c",), ("c", "log"), ("c", "sqrt"), ("c", "lin"), ("c", "sat")],
    "famall": [(), ("sat",), ("log",), ("sqrt",), ("lin",), ("c",), ("c", "log"),
               ("c", "sqrt"), ("c", "lin")],
    "fam0nz": [("sat",), ("log",), ("sqrt",), ("lin",)],
}
FLOORS = [None, 0.01, 0.03, 0.1, 1.0]
SETS = ["1,2,4,8", "1,2,4", "3 smallest", "4 smallest"]


def columns(form, n, n0):
    out = []
    for t in form:
        if t == "c":
            out.append(1.0)
        elif t == "sat":
            out.append(1.0 - n0 / n)
        else:
            out.append(G[t](n) - G[t](n0))
    return out


def solve(a, b):
    """Gauss-Jordan with partial pivoting (at most three unknowns)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        if abs(m[i][i]) < 1e-300:
            return [0.0] * n
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit_form(form, pts, n0):
    if not form:
        return []
    xs = [columns(form, n, n0) for n, _ in pts]
    k = len(form)
    a = [[sum(x[i] * x[j] for x in xs) for j in range(k)] for i in range(k)]
    b = [sum(x[i] * r for x, (_, r) in zip(xs, pts)) for i in range(k)]
    return solve(a, b)


def at(form, c, n, n0):
    return sum(x * y for x, y in zip(columns(form, n, n0), c)) if form else 0.0


def energy_law(forms, floor, pts, n0):
    """The weighted law over `forms` fitted on `pts` [(n, r)]; a form with k parameters needs
    k + 1 informative counts (beyond n0 without an intercept) so that one can be left out."""
    counts = sorted({n for n, _ in pts})
    beyond = [n for n in counts if n > n0]
    laws = []
    for form in forms:
        info = counts if "c" in form else beyond
        if form and len(info) < len(form) + 1:
            continue
        c = fit_form(form, pts, n0)
        errs = []
        for m in info:
            rest = [p for p in pts if p[0] != m]
            cc = fit_form(form, rest, n0)
            errs.append(statistics.mean(at(form, cc, n, n0) - r for n, r in pts if n == m))
        e = math.sqrt(statistics.mean(x * x for x in errs)) if errs else 0.0
        laws.append((form, c, e))
    if not laws:
        return lambda n: 0.0
    if floor is None:
        best = min(laws, key=lambda law: law[2])
        ws = [1.0 if law is best else 0.0 for law in laws]
    else:
        ws = [1.0 / (law[2] ** 2 + floor ** 2) for law in laws]
    total = sum(ws)
    return lambda n: sum(w / total * at(f, c, n, n0) for w, (f, c, _) in zip(ws, laws))


def predicted(binary, prof, mach, csv_path):
    rc, out, _ = S.run([binary, "validate", "--machine", mach, "--profile", prof,
                        "--measured", csv_path, "--json"])
    if rc != 0:
        return None
    return [(p["nodes"], p["energy_j"], p["predicted_energy_j"])
            for p in json.loads(out)["validations"][0]["points"]
            if p["energy_j"] and p["predicted_energy_j"]]


def run_case(binary, case):
    prof, mach = os.path.join(case.dir, "p.json"), os.path.join(case.dir, "m.toml")
    rc, _, _ = S.run([binary, "fit", "--measured", case.fit_csv, "--machine", S.MACHINE,
                      "--profile-out", prof, "--machine-out", mach, "--accept-model-error"])
    if rc != 0:
        return None
    inside = predicted(binary, prof, mach, case.fit_csv)
    held = predicted(binary, prof, mach, case.held_csv)
    return (inside, held) if inside and held else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(S.ROOT, "target", "release", "jouleplan"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="energy-law-study-")
    cases = []
    for code in S.CODES:
        _, rows = S.read_rows(code)
        for name, fit, held in S.fit_sets(rows):
            cases.append(S.Case(tmp, code, name, fit, held))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        runs = list(ex.map(lambda c: run_case(args.bin, c), cases))
    scores = {}
    for fam in FAMILIES:
        for floor in FLOORS:
            per = {}
            for case, r in zip(cases, runs):
                if r is None:
                    continue
                inside, held = r
                n0 = min(case.fit)
                law = energy_law(FAMILIES[fam], floor,
                                 [(n, math.log(em / ep)) for n, em, ep in inside], n0)
                errs = [abs(ep * math.exp(law(n)) / em - 1.0) for n, em, ep in held]
                if errs:
                    per[(case.code, case.name)] = statistics.mean(errs)
            scores[(fam, floor)] = per
    print("## Each energy setting over every case (for the record)\n")
    print("| setting | " + " | ".join(SETS) + " | all |")
    print("|---|" + "---|" * (len(SETS) + 1))
    for (fam, floor), per in scores.items():
        cells = [100 * statistics.mean(v for (_, s), v in per.items() if s == fs) for fs in SETS]
        whole = 100 * statistics.mean(per.values())
        print(f"| {fam}, floor={floor or 'best'} | " + " | ".join(f"{x:.1f}%" for x in cells)
              + f" | {whole:.1f}% |")

    def score(key, exclude):
        return statistics.mean(v for (c, _), v in scores[key].items() if c != exclude)

    chosen = {c: min(scores, key=lambda k: score(k, c)) for c in S.CODES}
    print("\n## Nested: each code scored with the setting chosen on the other eight\n")
    print("chosen: " + ", ".join(f"{c} {k[0]}" for c, k in chosen.items()) + "\n")
    print("| fit set | nested | derived (today) |")
    print("|---|---|---|")
    base = scores[("derived", None)]
    for fs in SETS:
        nest = [scores[chosen[c]][(c, fs)] for c in S.CODES if (c, fs) in scores[chosen[c]]]
        der = [v for (c, s), v in base.items() if s == fs]
        print(f"| {fs} | {100 * statistics.mean(nest):.1f}% | {100 * statistics.mean(der):.1f}% |")


if __name__ == "__main__":
    sys.exit(main())
