#!/usr/bin/env python3
"""How the node law's rule fares where one fitted count's two runs disagree wildly
(docs/NODE_AXIS.md, "Rule 5 adopted"). A sensitivity check, not a choice: nothing here picks a
setting.

Every SYNTHETIC code of the design set (scripts/synthetic_codes.py; nothing there is measured)
is fitted on its 3 and its 4 smallest counts as in scripts/node_axis_study.py, once as it is and
once with the two runs at its largest fitted count set to 0.6 and 1.4 times their mean (time
and energy; the mean kept), as one Sapphire Rapids code's two runs at one count took 432.6 s
and 1011.3 s. The code's run-to-run spread is then about 40%. Each rule given by `--design`
(`fit --design` strings; empty: the default) is scored on the counts not fitted, on every case
(not nested: the rules are compared, not chosen).

    python3 scripts/wild_pair_check.py [--bin target/release/jouleplan]
        [--design "" --design "growth=1,plaingrowth=free"]
"""

import argparse
import csv
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_axis_study as S  # noqa: E402
import synthetic_codes as Y  # noqa: E402


def wild(case):
    """`case` with the runs at its largest fitted count 0.6 and 1.4 times their mean."""
    with open(case.fit_csv) as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    last = max(int(r[0]) for r in body)
    at = [r for r in body if int(r[0]) == last]
    t = statistics.mean(float(r[4]) for r in at)
    e = statistics.mean(float(r[5]) for r in at)
    for r, f in zip(at, (0.6, 1.4)):
        r[4], r[5] = f"{t * f:.6g}", f"{e * f:.7g}"
    case.fit_csv = os.path.join(case.dir, "fit-wild.csv")
    case.name += " (wild pair)"  # its own key in a results cache
    S.write_csv(case.fit_csv, header, body)
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(S.ROOT, "target", "release", "jouleplan"))
    ap.add_argument("--design", action="append", default=None)
    args = ap.parse_args()
    designs = args.design if args.design is not None else ["", "growth=1,plaingrowth=free"]
    tmp = tempfile.mkdtemp(prefix="wild-pair-")
    synth = os.path.join(tmp, "synthetic")
    Y.write(synth, Y.SEEDS)
    machine = os.path.join(synth, "synthetic.toml")
    sets = {"as measured": [], "wild pair": []}
    for sc in Y.codes(Y.SEEDS):
        src = os.path.join(synth, sc.name + ".csv")
        for name, fit, held in sc.fit_sets:
            for label, sub in (("as measured", ""), ("wild pair", "wild")):
                c = S.Case(os.path.join(tmp, sub), src, sc.name, sc.regime, name, fit, held,
                           machine)
                sets[label].append(wild(c) if sub else c)
    jobs = [(c, d) for cs in sets.values() for c in cs for d in designs]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        list(ex.map(lambda j: j[0].evaluate(args.bin, j[1]), jobs))
    head = " | ".join(f"`{d or 'default'}`: time / energy (held)" for d in designs)
    print(f"| regime | fit runs | {head} |")
    print("|---|---|" + "---|" * len(designs))
    for regime in Y.REGIMES:
        for label, cs in sets.items():
            cells = []
            for d in designs:
                p = S.pooled([S.case_scores(c.evaluate(args.bin, d)) for c in cs
                              if c.regime == regime])
                cells.append(f"{S.fmt(p['t'])} / {S.fmt(p['e'])} "
                             f"({100 * p['cov_t']:.0f}%, {100 * p['cov_e']:.0f}%)")
            print(f"| {regime} | {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
