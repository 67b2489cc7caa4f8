#!/usr/bin/env python3
"""The measurement campaign judged by replay on the Ice Lake fixture (README, "How many nodes to
measure?"; docs/NODE_AXIS.md).

For each strong-scaling code of the Ice Lake fixture (public data, ../shared/fixtures; Afzal, Hager and Wellein, PMBS'23):
`jouleplan profile --nodes auto --replay CODE.csv --machine icelake-8360y.toml --max-nodes 16
--measured-out RUNS.csv` (with `--cores 72` where the code was recorded at 72 ranks a node on
most counts), then `fit --measured RUNS.csv` and `plan --nodes 1-16`, as a user would. The
recommendation's measured energy is compared with the cheapest measured count within 5% of its
measured time (72 ranks a node), and the campaign's cost (node-runs: a run on n nodes costs n)
with the fixed sweeps 1, 2, 4, 8 and 1-16 over the same recording.

    python3 scripts/campaign_study.py [--bin target/release/jouleplan] [--repeat 1]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_axis_study as S  # noqa: E402

FULL = {"hpgmgfv", "lbm", "soma", "weather", "sweep"}


def recommend(binary, tmp, runs, cores):
    prof, mach = os.path.join(tmp, "p.json"), os.path.join(tmp, "m.toml")
    rc, _, err = S.run([binary, "fit", "--measured", runs, "--machine", S.MACHINE,
                        "--profile-out", prof, "--machine-out", mach])
    if rc != 0:
        return None, "fit refused: " + err.strip()[-120:]
    cmd = [binary, "plan", "--machine", mach, "--profile", prof, "--nodes", "1-16", "--json"]
    if cores:
        cmd += ["--cores", "72"]
    rc, out, err = S.run(cmd)
    if rc != 0:
        return None, "plan refused: " + err.strip()[-120:]
    return json.loads(out)["recommendation"]["nodes"], ""


def fixed(code, counts, repeat):
    """The runs of a fixed sweep over `counts` (`repeat` a count, file order) as a CSV, and
    its cost in node-runs."""
    header, rows = S.read_rows(code)
    taken, cost = [], 0
    for n in counts:
        at = [r for r in rows if int(r[0]) == n and (code not in FULL or int(r[1]) == 72)]
        taken += at[:repeat]
        cost += n * len(at[:repeat])
    return header, taken, cost


def waste(case, n):
    w = case.waste(n) if n else None
    return "-" if w is None else f"{100 * w:.1f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(S.ROOT, "target", "release", "jouleplan"))
    ap.add_argument("--repeat", default="1")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="campaign-study-")
    print("| code | campaign measured | cost | steps | recommended | waste | 1,2,4,8: cost, "
          "recommended, waste | 1-16: cost |")
    print("|---|---|---|---|---|---|---|---|")
    for code in S.CODES:
        cores = code in FULL
        runs = os.path.join(tmp, f"{code}-runs.csv")
        cmd = [args.bin, "profile", "--nodes", "auto", "--replay",
               os.path.join(S.DATA, code + ".csv"), "--machine", S.MACHINE, "--max-nodes", "16",
               "--repeat", args.repeat, "--measured-out", runs,
               "-o", os.path.join(tmp, f"{code}.json"), "--json"]
        if cores:
            cmd += ["--cores", "72"]
        rc, out, err = S.run(cmd)
        if rc != 0:
            print(f"| {code} | campaign failed: {err.strip()[-160:]} |")
            continue
        d = json.loads(out)
        case = S.Case(tmp, code, "campaign", [], [])
        rec, why = recommend(args.bin, tmp, runs, cores)
        header, rows, cost8 = fixed(code, [n for n in (1, 2, 4, 8)], int(args.repeat))
        f8 = os.path.join(tmp, f"{code}-fixed.csv")
        S.write_csv(f8, header, rows)
        rec8, _ = recommend(args.bin, tmp, f8, cores)
        _, _, cost16 = fixed(code, range(1, 17), int(args.repeat))
        print(f"| {code}{'' if cores else ' (any layout)'} | {','.join(map(str, d['measured_nodes']))} | "
              f"{d['node_runs']} | {len(d['steps'])} | {rec or why} | {waste(case, rec)} | "
              f"{cost8}, {rec8}, {waste(case, rec8)} | {cost16} |")


if __name__ == "__main__":
    sys.exit(main())
