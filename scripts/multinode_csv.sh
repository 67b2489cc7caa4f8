#!/bin/sh
# Converts the PMBS'23 SPEChpc fixture (Afzal, Hager, Wellein; RRZE-HPC/PMBS23-AD, GPL-3.0) to
# jouleplan's measured-run CSV, one file per code of the `small` (strong-scaling) workload:
#   scripts/multinode_csv.sh "${JOULEPLAN_FIXTURES:-../shared/fixtures}/multinode/pmbs23-icelake.csv" OUT_DIR
# (public data: its output is never committed; the tests make the same files at test time with
# tests/common/public.rs, its Rust twin).
# cores = the most ranks on one node (max_ranks_per_host), ranks = total MPI ranks,
# energy_j = pkg_energy_j + dram_energy_j (RAPL of the sockets with ranks: energy_scope cpu).
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 PMBS23_CSV OUT_DIR" >&2
  exit 2
fi
src=$1
out=$2
# A missing input would otherwise leave OUT_DIR empty and exit 0 (the loop's list is empty).
if [ ! -r "$src" ]; then
  echo "$0: cannot read $src: the public data is not there; fetch it with scripts/public-data.sh DIR and set JOULEPLAN_FIXTURES=DIR (README, \"Public data\")" >&2
  exit 2
fi
mkdir -p "$out"
for b in $(awk -F, 'NR > 1 && $2 == "small" { print $1 }' "$src" | sort -u); do
  awk -F, -v b="$b" 'BEGIN { OFS = "," }
    NR == 1 { print "nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope"; next }
    $1 == b && $2 == "small" {
      printf "%d,%d,%s,0,%s,%.7g,%d,cpu\n", $3, $5, $6, $7, $8 + $9, $4
    }' "$src" > "$out/$b.csv"
done
# LULESH weak scaling (RRZE-HPC/LULESH-AD, GPL-3.0): the cluster runs (n^3 ranks on up to 31
# nodes) of each size per rank, as lulesh-SIZE.csv; time is LIKWID's runtime (slowest rank).
lulesh=$(dirname "$src")/lulesh-icelake.csv
if [ -f "$lulesh" ]; then
  for size in $(awk -F, 'NR > 1 && $1 == "5-MPI-ICL-cluster" { print $6 }' "$lulesh" | sort -un); do
    awk -F, -v s="$size" 'BEGIN { OFS = "," }
      NR == 1 { print "nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope"; next }
      $1 == "5-MPI-ICL-cluster" && $6 == s {
        cores = int(($4 + $3 - 1) / $3)
        printf "%d,%d,%s,0,%s,%.7g,%d,cpu\n", $3, cores, $2 * 1000, $10, $11 + $12, $4
      }' "$lulesh" > "$out/lulesh-$size.csv"
  done
fi
