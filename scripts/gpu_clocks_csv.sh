#!/bin/sh
# Turns one kernel of the public GTX Titan X clock sweeps (hpc-ulisboa/gpuPTXModel, BSD-3-Clause;
# the fixtures' gpu-clocks/README.md) into jouleplan's inputs, in OUT_DIR:
#   scripts/gpu_clocks_csv.sh "${JOULEPLAN_FIXTURES:-../shared/fixtures}/gpu-clocks/gtxtitanx-real.csv" KERNEL MEMORY_MHZ OUT_DIR
# - OUT_DIR/KERNEL.csv: the kernel's run at every core clock at that memory clock, as the
#   measured-run CSV `fit` and `validate` read: one GPU, time_s and energy_j from the sweep's
#   milliseconds and millijoules, energy_scope gpu, gpu_clock_mhz last. The sweeps measured the
#   GPU alone: the host columns (1 core at 2 GHz) are placeholders that nothing is planned over.
# - OUT_DIR/machine.toml: a one-GPU machine whose gpu_clocks_mhz are the sweep's core clocks at
#   that memory clock, with no [network] and no [power] (GPU energy comes from the clock law).
# (Public data: its outputs are never committed; scripts/gpu_clock_check.sh runs every kernel.)
set -eu
if [ $# -ne 4 ]; then
  echo "usage: $0 SWEEPS_CSV KERNEL MEMORY_MHZ OUT_DIR" >&2
  exit 2
fi
src=$1
kernel=$2
mem=$3
out=$4
file=$(printf '%s' "$kernel" | tr '#' '-')
if [ ! -r "$src" ]; then
  echo "$0: cannot read $src: the public data is not there; fetch it with scripts/public-data.sh DIR and set JOULEPLAN_FIXTURES=DIR (README, \"Public data\")" >&2
  exit 2
fi
# A name given to several blocks (the real set holds two different stencil2d kernels) is never
# merged: the K-th block is KERNEL#K, and the bare name is refused.
blocks=$(awk -F, -v k="${kernel%%#*}" 'NF == 1 && $1 == k { n++ } END { print n + 0 }' "$src")
case $kernel in
  *#*) ;;
  *) if [ "$blocks" -gt 1 ]; then
       echo "$0: $src holds $blocks different kernels named '$kernel' (lines $(awk -F, -v k="$kernel" 'NF == 1 && $1 == k { printf "%s%d", s, NR; s = ", " }' "$src")): give $kernel#1 to $kernel#$blocks" >&2
       exit 2
     fi ;;
esac
rows=$(awk -F, -v k="$kernel" -v m="$mem" '
  NF == 1 { seen[$1]++; name = (seen[$1] == 1 && k !~ /#/) ? $1 : $1 "#" seen[$1] }
  NF == 5 && name == k && $1 == m { printf "1,1,2e9,1,%.9g,%.9g,gpu,%d\n", $3 / 1000, $5 / 1000, $2 }' "$src")
if [ -z "$rows" ]; then
  echo "$0: no runs of kernel '$kernel' at memory clock $mem MHz in $src; its kernels:" >&2
  awk -F, 'NF == 1 && !seen[$1]++ { printf " %s", $1 } END { print "" }' "$src" >&2
  echo "and its memory clocks:$(awk -F, 'NF == 5 { print $1 }' "$src" | sort -un | tr '\n' ' ' | sed 's/^/ /')" >&2
  exit 2
fi
mkdir -p "$out"
{
  echo "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope,gpu_clock_mhz"
  echo "$rows"
} > "$out/$file.csv"
clocks=$(echo "$rows" | cut -d, -f8 | sort -n | uniq | paste -sd, - | sed 's/,/, /g')
cat > "$out/machine.toml" <<EOF
# One GTX Titan X as the public clock sweeps measured it (hpc-ulisboa/gpuPTXModel), written by
# scripts/gpu_clocks_csv.sh: the GPU's core clocks at memory clock $mem MHz. The host (1 core at
# 2 GHz) is a placeholder: the sweeps measured the GPU alone. No [network], no [power].
[machine]
name = "gtx-titan-x"
description = "one GTX Titan X (public clock sweeps); host a placeholder, GPU energy only"
nodes = 1
cores_per_node = 1
frequencies_ghz = [2.0]
gpus_per_node = 1
gpu_clocks_mhz = [$clocks]
gpu_memory_clock_mhz = $mem
EOF
