#!/usr/bin/env python3
"""Rebuild the multi-node fixture CSVs from the authors' published LIKWID outputs.

    public_data_csv.py pmbs23 ROOT OUT.csv < paths   # RRZE-HPC/PMBS23-AD, cluster A
    public_data_csv.py lulesh ROOT OUT.csv < paths   # RRZE-HPC/LULESH-AD, Ice Lake runs

ROOT is a checkout (or cache) of the repository at its pinned commit; stdin lists the artifact
files to read, one path a line, relative to ROOT. One row is written per run, files in C
(byte) order of their path, runs in file order; every figure is the text LIKWID or LULESH
printed, copied unchanged. Standard library only; called by scripts/public-data.sh.

Columns (see multinode/README.md in the fixtures):
- pmbs23: bench, workload, nodes, ranks, max_ranks_per_host, freq_hz (fixed 2.4 GHz), time_s
  (Runtime (RDTSC), slowest rank), pkg_energy_j and dram_energy_j (RAPL, sum over the
  hardware threads that read it), sockets_with_energy (threads with a non-zero package
  reading), clock_avg_mhz, source_file.
- lulesh: experiment, cpu_freq_req_kHz, nodes, ntasks, ntasks_per_node (as srun was given
  them), size_per_rank, iters (LULESH's -s and -i), elapsed_app_s, FOM_z_per_s (LULESH's own
  report), likwid_runtime_max_s, pkg_energy_sum_J, dram_energy_sum_J, clock_avg_MHz,
  sockets_with_energy, file. A run that printed no result keeps its launch columns only.
"""

import csv
import re
import sys

PMBS_HEADER = ["bench", "workload", "nodes", "ranks", "max_ranks_per_host", "freq_hz",
               "time_s", "pkg_energy_j", "dram_energy_j", "sockets_with_energy",
               "clock_avg_mhz", "source_file"]
LULESH_HEADER = ["experiment", "cpu_freq_req_kHz", "nodes", "ntasks", "ntasks_per_node",
                 "size_per_rank", "iters", "elapsed_app_s", "FOM_z_per_s",
                 "likwid_runtime_max_s", "pkg_energy_sum_J", "dram_energy_sum_J",
                 "clock_avg_MHz", "sockets_with_energy", "file"]
# The SPEChpc runs of cluster A ran with turbo off at the nominal clock (README of PMBS23-AD).
PMBS_FREQ_HZ = "2400000000"


class ParseError(Exception):
    """A file that does not hold what the parser expects; the message names it."""


def kind_of(header):
    """Which LIKWID table a header row opens: raw, raw_stat, metric or metric_stat."""
    first = "raw" if header[0] == "Event" else "metric"
    stat = header[2 if first == "raw" else 1] == "Sum"
    return first + ("_stat" if stat else "")


def ascii_tables(lines):
    """LIKWID's boxed tables (`| a | b |` rows between `+---+` rules) as lists of cells."""
    tables, current = {}, None
    for line in lines:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = [cells]
                tables.setdefault(kind_of(cells), current)
            else:
                current.append(cells)
        elif not line.startswith("+"):
            current = None
        elif current is not None and len(current) > 1:
            current = None
    return tables


def csv_tables(lines):
    """likwid-perfctr -O tables (`TABLE,Group 1 Raw,...` then rows) as lists of cells."""
    tables, current = {}, None
    for line in lines:
        if line.startswith("TABLE,"):
            name = line.split(",")[1]
            kind = ("raw" if " Raw" in name else "metric") + ("_stat" if name.endswith(" STAT") else "")
            current = tables.setdefault(kind, [])
        elif current is not None and "," in line and not line.startswith("_"):
            cells = line.rstrip("\n").split(",")
            while cells and cells[-1] == "":
                cells.pop()
            current.append(cells)
        else:
            current = None
    return tables


def row(table, name, path):
    """The cells of the row named `name` (its first cell)."""
    for cells in table[1:]:
        if cells[0] == name:
            return cells
    raise ParseError(f"{path}: no '{name}' row in a LIKWID table")


def likwid_figures(tables, path):
    """Threads (host:thread columns), slowest runtime, RAPL sums, sockets read, mean clock."""
    if "raw" not in tables or "metric" not in tables:
        raise ParseError(f"{path}: no LIKWID Raw and Metric tables")
    raw, metric = tables["raw"], tables["metric"]
    threads = raw[0][2:]
    pkg = row(raw, "PWR_PKG_ENERGY", path)[2:]
    sockets = sum(1 for v in pkg if float(v) != 0.0)
    if "metric_stat" in tables:
        stat, rstat = tables["metric_stat"], tables["raw_stat"]
        # STAT columns: Sum, Min, Max, Avg, ...
        time = row(stat, "Runtime (RDTSC) [s] STAT", path)[3]
        clock = row(stat, "Clock [MHz] STAT", path)[4]
        pkg_sum = row(rstat, "PWR_PKG_ENERGY STAT", path)[2]
        dram_sum = row(rstat, "PWR_DRAM_ENERGY STAT", path)[2]
    else:
        if len(threads) != 1:
            raise ParseError(f"{path}: {len(threads)} threads but no STAT tables")
        time = row(metric, "Runtime (RDTSC) [s]", path)[1]
        clock = row(metric, "Clock [MHz]", path)[1]
        pkg_sum = pkg[0]
        dram_sum = row(raw, "PWR_DRAM_ENERGY", path)[2]
    return threads, time, pkg_sum, dram_sum, str(sockets), clock


def pmbs23_row(root, path):
    """One SPEChpc run: Output_<workload>_ClusterA/<group>/<bench>-FritzRank<n>-<group>.txt."""
    m = re.fullmatch(r"Output_(tiny|small)_ClusterA/[^/]+/(.+)-FritzRank\d+-[^/]+\.txt", path)
    if not m:
        raise ParseError(f"{path}: not a cluster A SPEChpc output path")
    with open(f"{root}/{path}", encoding="utf-8", errors="replace") as f:
        tables = ascii_tables(f)
    threads, time, pkg, dram, sockets, clock = likwid_figures(tables, path)
    per_host = {}
    for t in threads:
        host = t.split(":")[0]
        per_host[host] = per_host.get(host, 0) + 1
    return [m.group(2), m.group(1), str(len(per_host)), str(len(threads)),
            str(max(per_host.values())), PMBS_FREQ_HZ, time, pkg, dram, sockets, clock, path]


def option(text, flag, path, required=True):
    """The value of `flag=V` or `flag V` in a command line; '' where absent and not required."""
    m = re.search(r"(?:^|\s)" + re.escape(flag) + r"[= ](\S+)", text)
    if m:
        return m.group(1)
    if required:
        raise ParseError(f"{path}: no {flag} in '{text.strip()[:80]}'")
    return ""


def lulesh_block(lines, experiment, path):
    """One LULESH run of an output file: launch options, LULESH's report, LIKWID's tables."""
    exe = next((l for l in lines if l.startswith("DEBUG: Executable given")), "")
    mpi = next((l for l in lines if l.startswith("DEBUG: MPI options given")), "")
    srun = next((l for l in lines if l.startswith("EXEC: srun")), None)
    if srun is None:
        raise ParseError(f"{path}: a run without its 'EXEC: srun' line")
    freq = option(mpi, "--cpu-freq", path).split("-")[0]
    launch = [experiment, freq, option(srun, "--nodes", path), option(srun, "--ntasks", path),
              option(srun, "--ntasks-per-node", path, required=False),
              option(exe, "-s", path), option(exe, "-i", path)]
    elapsed = next((l.split("=")[1].split()[0] for l in lines if l.startswith("Elapsed time")), None)
    if elapsed is None:
        return launch + [""] * 7 + [path]
    fom = next(l.split("=")[1].split()[0] for l in lines if l.startswith("FOM"))
    _, time, pkg, dram, sockets, clock = likwid_figures(csv_tables(lines), path)
    return launch + [elapsed, fom, time, pkg, dram, clock, sockets, path]


def lulesh_rows(root, path):
    """Every run of one LULESH-AD output file (runs begin at 'DEBUG: Executable given')."""
    m = re.fullmatch(r"output-data-perf-power-energy/FullApplicationAnalysis/([^/]+)/.+\.csv", path)
    if not m:
        raise ParseError(f"{path}: not a LULESH-AD FullApplicationAnalysis output path")
    with open(f"{root}/{path}", encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith("DEBUG: Executable given")]
    if not starts:
        raise ParseError(f"{path}: no run in the file")
    ends = starts[1:] + [len(lines)]
    return [lulesh_block(lines[s:e], m.group(1), path) for s, e in zip(starts, ends)]


def main(argv):
    if len(argv) != 4 or argv[1] not in ("pmbs23", "lulesh"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kind, root, out = argv[1:]
    paths = sorted(p.strip() for p in sys.stdin if p.strip())
    try:
        if kind == "pmbs23":
            rows = [PMBS_HEADER] + [pmbs23_row(root, p) for p in paths]
        else:
            rows = [LULESH_HEADER] + [r for p in paths for r in lulesh_rows(root, p)]
    except (ParseError, OSError, ValueError, IndexError, StopIteration) as e:
        print(f"public_data_csv.py: {kind}: {e}", file=sys.stderr)
        return 1
    with open(out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)  # the fixtures' CSVs end lines with CRLF, as csv does
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
