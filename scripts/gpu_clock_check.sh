#!/usr/bin/env bash
# The GPU clock axis end to end through the jouleplan binary, on the public GTX Titan X clock
# sweeps (docs/GPU_CLOCK.md, "End to end"). Per kernel and memory clock (a case) it writes, in a
# temporary folder that is removed afterwards, FIT.csv (3 clocks, GPU energy), ALL.csv (every
# clock) and M.toml (a one-GPU machine with the sweep's clocks as gpu_clocks_mhz), then runs
#   jouleplan fit --measured FIT.csv --machine M.toml --profile-out P.json --machine-out M2.toml
#   jouleplan plan --machine M2.toml --profile P.json --gpu-clocks all --slowdown 5% --json
#   jouleplan validate --measured ALL.csv --machine M2.toml --profile P.json --json
# and prints aggregates only (nothing per kernel is written anywhere):
#   - the measured energy at the chosen clock over the best measured clock within the cap;
#   - caps broken (the chosen clock measured more than 5% slower than the top clock);
#   - time and energy error at the unfitted clocks at or above half the top clock;
#   - how often validate's interval held the measured time and GPU energy at those clocks;
#   - the same for the rows below the lowest fitted clock, where validate carries the law
#     beyond its clocks (marked extrapolated);
#   - where plan named a clock that may also meet the cap (recommendation.may_also_meet): how
#     often, how often it met the cap measured, and the energy above the best clock had the
#     named clock been measured and taken where it met the cap.
#
#   scripts/gpu_clock_check.sh [FIT_CLOCKS [LIST]]     (default 595,975,1164, every clock)
#
# LIST: the clocks the machine file lists (a coarser GPU's list, e.g. 595,747,899,1013,1164);
# only those are planned, validated and open to the best clock within the cap.
#
# CAP=0.1 plans and judges a 10% slowdown cap instead of 5%.
#
# DIAGNOSE=1 adds, per set, where the energy above the best clock comes from (aggregates only):
# the mean signed time error at each unfitted clock; how often the chosen clock is above, below
# or at the best one, and, where above, whether the best clock's predicted time broke the cap;
# and two counterfactuals: the cap judged on the measured times with the predicted energies
# ranking (what the energy model alone costs), and the cap judged on the predicted times with
# the measured energies ranking (what the time model alone costs).
#
# Reads ${JOULEPLAN_FIXTURES:-../shared/fixtures}/gpu-clocks; builds nothing: set JOULEPLAN to
# the binary (default ${CARGO_TARGET_DIR:-target}/release/jouleplan).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
data="${JOULEPLAN_FIXTURES:-$here/../shared/fixtures}/gpu-clocks"
bin="${JOULEPLAN:-${CARGO_TARGET_DIR:-$here/target}/release/jouleplan}"
clocks="${1:-595,975,1164}"
list="${2:-all}"
[ -d "$data" ] || { echo "no $data: run scripts/public-data.sh DIR and set JOULEPLAN_FIXTURES=DIR" >&2; exit 2; }
[ -x "$bin" ] || { echo "no jouleplan binary at $bin: cargo build --release, or set JOULEPLAN" >&2; exit 2; }
exec python3 - "$data" "$bin" "$clocks" "$list" "${DIAGNOSE:-0}" <<'PY'
import collections, concurrent.futures, json, os, statistics, subprocess, sys, tempfile

data, binary, clocks = sys.argv[1], sys.argv[2], [float(c) for c in sys.argv[3].split(",")]
listed = None if sys.argv[4] == "all" else {float(c) for c in sys.argv[4].split(",")}
diagnose = sys.argv[5] == "1"
CAP = float(os.environ.get("CAP", "0.05"))

def read(path):
    """{(kernel, memory MHz): [(core MHz, s, J), ...]}. A name given to a second block (the real
    set holds two different stencil2d kernels) is that name with `#2`: never merged as repeats."""
    out, cur, seen = {}, None, collections.Counter()
    for line in open(path):
        parts = line.strip().split(",")
        if parts == [""]:
            continue
        if len(parts) == 1:
            seen[parts[0]] += 1
            cur = parts[0] if seen[parts[0]] == 1 else f"{parts[0]}#{seen[parts[0]]}"
            continue
        mem, core, t, p, _ = map(float, parts)
        if listed is not None and core not in listed:
            continue
        # Times in ms and energy in mJ (the fixture's README): seconds and joules here.
        out.setdefault((cur, mem), []).append((core, t / 1e3, t * p / 1e3))
    return out

def machine(mem, sweep):
    return f"""[machine]
name = "gtx-titan-x"
description = "one GTX Titan X as the public sweeps measured it; host power 0: GPU energy only"
nodes = 1
cores_per_node = 1
frequencies_ghz = [2.0]
gpus_per_node = 1
gpu_clocks_mhz = [{", ".join(str(int(c)) for c in sorted({c for c, _, _ in sweep}))}]
gpu_memory_clock_mhz = {int(mem)}

[network]
latency_s = 0.0
bandwidth_bytes_per_s = 1e10

[power]
idle_w = 0.0
core_active_w = 0.0
core_stall_w = 0.0
memory_w = 0.0
network_w = 0.0
gpu_active_w = 0.0
gpu_idle_w = 0.0
"""

def csv(rows):
    s = "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope,gpu_clock_mhz\n"
    return s + "".join(f"1,1,2e9,1,{t!r},{e!r},gpu,{int(c)}\n" for c, t, e in rows)

def run(args, cwd):
    r = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr

def case(item):
    (name, mem), sweep = item
    sweep = sorted(sweep)
    top = sweep[-1]
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "M.toml"), "w").write(machine(mem, sweep))
        open(os.path.join(d, "FIT.csv"), "w").write(csv([r for r in sweep if r[0] in clocks]))
        open(os.path.join(d, "ALL.csv"), "w").write(csv(sweep))
        code, _, err = run(["fit", "--measured", "FIT.csv", "--machine", "M.toml",
                            "--profile-out", "P.json", "--machine-out", "M2.toml"], d)
        if code != 0:
            return {"refused": err.strip().splitlines()[-1]}
        code, out, err = run(["plan", "--machine", "M2.toml", "--profile", "P.json",
                              "--gpu-clocks", "all", "--slowdown", f"{100 * CAP:g}%", "--json"], d)
        if code != 0:
            return {"refused": err.strip().splitlines()[-1]}
        rec = json.loads(out).get("recommendation") or {}
        chosen = rec.get("gpu_clock_mhz")
        chance = (rec.get("may_also_meet") or {}).get("config", {}).get("gpu_clock_mhz")
        code, out, err = run(["validate", "--measured", "ALL.csv", "--machine", "M2.toml",
                              "--profile", "P.json", "--json"], d)
        if code != 0:
            return {"refused": err.strip().splitlines()[-1]}
        points = json.loads(out)["validations"][0]["points"]
    # A clock measured twice (one real kernel) counts as the mean of its runs, as fit takes it.
    runs = {}
    for c, t, e in sweep:
        runs.setdefault(c, []).append((t, e))
    by = {c: (statistics.mean(r[0] for r in v), statistics.mean(r[1] for r in v))
          for c, v in runs.items()}
    sweep = sorted((c, t, e) for c, (t, e) in by.items())
    top = sweep[-1]
    within = [c for c, t, _ in sweep if t <= (1 + CAP) * top[1]]
    best = min(by[c][1] for c in within)
    held = [p for p in points if p.get("time_error") is not None
            and p["gpu_clock_mhz"] not in clocks and p["gpu_clock_mhz"] >= 0.5 * top[0]]
    errs = [(abs(p["time_error"]), abs(p["energy_error"])) for p in held]
    inside = lambda v, iv: iv is not None and iv[0] * (1 - 1e-9) <= v <= iv[1] * (1 + 1e-9)
    cover = [(inside(p["time_s"], p.get("time_interval_s")),
              inside(p["energy_j"], p.get("energy_interval_j"))) for p in held]
    unscored = sum(1 for p in points if p.get("time_error") is None)
    beyond = [p for p in held if p.get("extrapolated")]
    extra = [(abs(p["time_error"]), abs(p["energy_error"]),
              inside(p["time_s"], p.get("time_interval_s")),
              inside(p["energy_j"], p.get("energy_interval_j"))) for p in beyond]
    return {
        "chance": chance_figures(chance, chosen, by, top, best),
        "extra": extra,
        "diag": diagnosis(points, by, within, chosen, top[0]),
        "above": by[chosen][1] / best - 1 if chosen else None,
        "slowdown": by[chosen][0] / top[1] - 1 if chosen else None,
        "saving": 1 - by[chosen][1] / top[2] if chosen else None,
        "oracle_saving": 1 - best / top[2],
        "errs": errs,
        "cover": cover,
        "unscored": unscored,
    }

def chance_figures(chance, chosen, by, top, best):
    """Where plan named a clock that may also meet the cap (`may_also_meet`): whether it met it
    measured, and the energy above the best clock had it been taken instead of the choice."""
    if not chance or not chosen:
        return None
    met = by[chance][0] <= (1 + CAP) * top[1]
    return {"met": met, "above_if_taken": by[chance][1] / best - 1,
            "above": by[chosen][1] / best - 1}

def chance_line(results):
    """Aggregates of chance_figures: how often a chance was named, met the cap, and what taking
    the named clock (had it been measured and met the cap) would leave above the best."""
    cs = [r["chance"] for r in results if r.get("chance")]
    ok = [r for r in results if "refused" not in r and r.get("above") is not None]
    if not ok:
        return
    pct = lambda v: f"{100 * v:.2f}%"
    # Measure the named clock; take it where it met the cap, else keep the choice.
    after = [min(r["above"], r["chance"]["above_if_taken"]) if r.get("chance") and r["chance"]["met"]
             else r["above"] for r in ok]
    print(f"- may_also_meet named a clock in {len(cs)} of {len(ok)} cases; measured, it met the cap "
          f"in {sum(c['met'] for c in cs)}; measuring it and taking it where it met the cap: "
          f"{pct(statistics.mean(after))} above the best on average (max {pct(max(after))}), "
          f"against {pct(statistics.mean(r['above'] for r in ok))}")

TOLERANCES = (0.0025, 0.005, 0.0075, 0.01)

def diagnosis(points, by, within, chosen, top):
    """Where the energy above the best clock comes from (see DIAGNOSE in the header)."""
    pred = collections.defaultdict(list)
    for p in points:
        if p.get("time_error") is not None:
            pred[p["gpu_clock_mhz"]].append((p["time_s"] * (1 + p["time_error"]),
                                             p["energy_j"] * (1 + p["energy_error"])))
    pred = {c: (statistics.mean(v[0] for v in vs), statistics.mean(v[1] for v in vs))
            for c, vs in pred.items()}
    if not chosen or top not in pred:
        return None
    best = min(within, key=lambda c: by[c][1])
    place = (chosen > best) - (chosen < best)
    capped = best in pred and pred[best][0] > (1 + CAP) * pred[top][0]
    by_energy = min((c for c in within if c in pred), key=lambda c: pred[c][1])
    by_time = min((c for c in pred if pred[c][0] <= (1 + CAP) * pred[top][0]),
                  key=lambda c: by[c][1])
    signed = collections.defaultdict(list)
    for p in points:
        if p.get("time_error") is not None and p["gpu_clock_mhz"] not in clocks:
            signed[p["gpu_clock_mhz"]].append(p["time_error"])
    # A tolerance on the predicted slowdown (what a cap read loosely would choose): the energy
    # above the best and whether the measured slowdown broke the cap (by over a point).
    loose = {}
    for tol in TOLERANCES:
        ok = [c for c in pred if pred[c][0] <= (1 + CAP + tol) * pred[top][0]]
        c = min(ok, key=lambda c: pred[c][1])
        slow = by[c][0] / by[top][0] - 1
        loose[tol] = (by[c][1] / by[best][1] - 1, slow > CAP + 1e-12, slow > CAP + 0.01)
    return {"place": place, "capped": place > 0 and capped, "loose": loose,
            "energy_only": by[by_energy][1] / by[best][1] - 1,
            "time_only": by[by_time][1] / by[best][1] - 1,
            "signed": {c: statistics.mean(v) for c, v in signed.items()}}

def diagnose_set(label, results):
    ds = [r["diag"] for r in results if r.get("diag")]
    if not ds:
        return
    pct = lambda v: f"{100 * v:.2f}%"
    places = collections.Counter(d["place"] for d in ds)
    signed = collections.defaultdict(list)
    for d in ds:
        for c, e in d["signed"].items():
            signed[c].append(e)
    print(f"- {label}: chosen above the best clock {places[1]}, at it {places[0]}, below it "
          f"{places[-1]}; of those above, the best clock's predicted time broke the cap in "
          f"{sum(d['capped'] for d in ds)}. Cap on measured times, predicted energies ranking: "
          f"{pct(statistics.mean(d['energy_only'] for d in ds))} above the best on average; cap "
          f"on predicted times, measured energies ranking: "
          f"{pct(statistics.mean(d['time_only'] for d in ds))}. Mean signed time error by "
          "unfitted clock (MHz: %): "
          + ", ".join(f"{c:g}: {100 * statistics.mean(v):+.2f}" for c, v in sorted(signed.items()))
          + ". With a tolerance on the predicted slowdown (above the best on average, caps "
          "broken (by over a point)): "
          + ", ".join(f"{100 * t:g}%: {pct(statistics.mean(d['loose'][t][0] for d in ds))}, "
                      f"{sum(d['loose'][t][1] for d in ds)} ({sum(d['loose'][t][2] for d in ds)})"
                      for t in TOLERANCES))

def summary(label, results):
    ok = [r for r in results if "refused" not in r and r["above"] is not None]
    refused = [r for r in results if "refused" in r]
    if not ok:
        print(f"| {label} | {len(results)} | - | - | - | - | - | - | - | - | - | {len(refused)} |")
        return refused
    above = [r["above"] for r in ok]
    broken = [r for r in ok if r["slowdown"] > CAP + 1e-12]
    by_point = [r for r in broken if r["slowdown"] > CAP + 0.01]
    te = [e[0] for r in ok for e in r["errs"]] or [0.0]
    ee = [e[1] for r in ok for e in r["errs"]] or [0.0]
    cov = [c for r in ok for c in r["cover"]]
    pct = lambda v: f"{100 * v:.1f}%"
    share = lambda i: pct(sum(c[i] for c in cov) / len(cov)) if cov else "-"
    print(f"| {label} | {len(ok)} | {pct(statistics.mean(above))} | {pct(max(above))} "
          f"| {len(broken)} ({len(by_point)}) | {pct(statistics.mean(te))} | {pct(max(te))} "
          f"| {pct(statistics.mean(ee))} | {pct(max(ee))} | {share(0)} | {share(1)} "
          f"| {len(refused)} |")
    return refused

cases = []
for kind, f in (("real", "gtxtitanx-real.csv"), ("micro", "gtxtitanx-micro.csv")):
    for key, sweep in sorted(read(os.path.join(data, f)).items()):
        cases.append((kind, key, sweep))
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(case, [(k, s) for _, k, s in cases]))
print(f"fitted clocks {', '.join(f'{c:g}' for c in clocks)} MHz of "
      f"{'every clock' if listed is None else ', '.join(f'{c:g}' for c in sorted(listed))}; cap {100 * CAP:g}%; "
      "errors and intervals at the unfitted clocks at or above half the top clock")
print()
print("| set | cases | energy above the best clock within the cap: mean | max | caps broken "
      "(by over 1 point) | time err mean | time err max | energy err mean | energy err max "
      "| time within interval | energy within interval | refused |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
refusals = []
for kind in ("real", "micro"):
    for mem in (3505.0, 810.0):
        sel = [r for (k, key, _), r in zip(cases, results) if k == kind and key[1] == mem]
        refusals += summary(f"{kind}, {mem:g} MHz memory", sel) or []
sel_all = [r for (k, _, _), r in zip(cases, results)]
summary("all", sel_all)
if diagnose:
    print()
    for kind in ("real", "micro"):
        for mem in (3505.0, 810.0):
            diagnose_set(f"{kind}, {mem:g} MHz memory",
                         [r for (k, key, _), r in zip(cases, results) if k == kind and key[1] == mem])
print()
for kind in ("real", "micro"):
    print(f"{kind}:")
    chance_line([r for (k, _, _), r in zip(cases, results) if k == kind])
print("all:")
chance_line(results)
unscored = sum(r.get("unscored", 0) for r in results)
print()
print(f"validate left {unscored} rows unpredicted")
extra = [x for r in results for x in r.get("extra", [])]
if extra:
    pct = lambda v: f"{100 * v:.1f}%"
    col = lambda i: [x[i] for x in extra]
    print(f"of the rows above, {len(extra)} at clocks below the lowest fitted one (extrapolated): "
          f"time error {pct(statistics.mean(col(0)))} mean, {pct(max(col(0)))} max; energy "
          f"{pct(statistics.mean(col(1)))} mean, {pct(max(col(1)))} max; intervals held "
          f"{pct(sum(col(2)) / len(extra))} of times and {pct(sum(col(3)) / len(extra))} of energies")
for r in sorted({r["refused"] for r in refusals})[:5]:
    print(f"refused: {r}")
PY
