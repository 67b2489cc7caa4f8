#!/usr/bin/env bash
# Seeds the fuzz corpora from the repository's real inputs (tests/data, models), then e.g.
#   cargo +nightly fuzz run -O machine_toml corpus/machine_toml -- -runs=1000000 -max_len=4096
# (cargo install cargo-fuzz; the nightly toolchain). Crashes land in artifacts/.
set -euo pipefail
cd "$(dirname "$0")"
# Public data (never in the repository): ../shared/fixtures beside the checkout, or the folder
# JOULEPLAN_FIXTURES names (scripts/public-data.sh fetches it). Seeds made from it stay in
# corpus/, which is not committed.
public=${JOULEPLAN_FIXTURES:-../../shared/fixtures}
[ -d "$public/multinode" ] || { echo "no public data at $public: run scripts/public-data.sh DIR and set JOULEPLAN_FIXTURES=DIR" >&2; exit 2; }
multinode=$(mktemp -d)
../scripts/multinode_csv.sh "$public/multinode/pmbs23-icelake.csv" "$multinode"
mkdir -p corpus/machine_toml corpus/profile_json corpus/metrics_text corpus/flag_values
cp ../models/*.toml corpus/machine_toml/
cp ../tests/data/sleep/sleep_1.json corpus/profile_json/
for f in ../tests/data/fixtures/cpu-16core/heat_8192.json ../tests/data/fixtures/gpu-h100/sync.json; do
  # Without the sweep record, so the seeds stay small.
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("sweep",None); json.dump(d,open(sys.argv[2],"w"))' \
    "$f" "corpus/profile_json/$(basename "$f" .json)_nosweep.json"
done
cp ../tests/data/fixtures/talp/*.json ../tests/data/fixtures/mpip/*.mpiP ../tests/data/perfstat/*.csv corpus/metrics_text/
i=0
for s in 90s "500 ms" 00:10:00 1-02:00:00 12kJ 0.5kwh 10% 0.25 1-8,16,32 4,16,2.4,2 \
  4,32,0.8GHz 2400MHz,1.1GHz 64KiB 16MB; do
  printf '%s' "$s" > "corpus/flag_values/s$i"; i=$((i + 1))
done
# Paraver: the first byte picks the options (see fuzz_targets/paraver.rs), then the head of
# real traces (header and a few hundred records).
mkdir -p corpus/paraver corpus/calibrate_inputs
i=0
for t in $public/paraver/epoch/epoch_2proc.prv.gz $public/paraver/epoch/epoch_1proc.prv.gz; do
  for sel in '\000' '\020' '\040' '\100'; do
    { printf "$sel"; gunzip -c "$t" 2>/dev/null | head -300 || true; } > "corpus/paraver/s$i"; i=$((i + 1))
  done
done
for t in $public/paraver/legacy/*.prv; do
  [ -f "$t" ] && { printf '\000'; head -300 "$t"; } > "corpus/paraver/l$(basename "$t")"
done
cp ../tests/data/pingpong/*.json corpus/calibrate_inputs/
# Multi-node runs (ranks, energy_scope columns) and past Slurm jobs .
cp "$multinode/soma.csv" "$multinode/lulesh-150.csv" \
  ../tests/data/sacct/localhost-sleep.txt corpus/calibrate_inputs/
mkdir -p corpus/machine_rewrite && cp ../models/*.toml corpus/machine_rewrite/
# A profile with a combined node law (weights, folds, anchor, interval parts): fitted by this
# jouleplan from the Ice Lake fixture's hpgmgfv runs on 1, 2, 4, 8 nodes, sweep record left out.
seed_dir=$(mktemp -d)
awk -F, 'NR == 1 || $1 == 1 || $1 == 2 || $1 == 4 || $1 == 8' "$multinode/hpgmgfv.csv" \
  > "$seed_dir/fit.csv"
cargo run -q --release --manifest-path ../Cargo.toml -- fit --measured "$seed_dir/fit.csv" \
  --machine ../tests/data/machines/icelake-8360y.toml --profile-out "$seed_dir/law.json" \
  --machine-out "$seed_dir/law.toml" > /dev/null 2>&1
cp "$seed_dir/law.json" corpus/profile_json/node_law.json
rm -rf "$seed_dir"
# sacct -P output: the real localhost file (a job-completion log: no steps, no energy), and
# hand-written lines in the two shapes jouleplan reads: `-n -P -o JobID,ConsumedEnergyRaw`
# (profile, after each step) and a header naming the fields (validate --sacct), with Slurm's
# NO_VAL64 and INFINITE64 markers, an overflowing 1e400, empty fields, governor names and the
# elapsed forms D-HH:MM:SS, HH:MM:SS, MM:SS.mmm. Frequencies are the bundled machines' (the
# target reads on h100-node, 2.1 GHz, and xeon-e5-2603-cluster, 1.2/1.5/1.8 GHz).
mkdir -p corpus/sacct corpus/measured_csv
cp ../tests/data/sacct/localhost-sleep.txt corpus/sacct/
printf '4242|\n4242.batch|\n4242.extern|0\n4242.0|81234\n4242.1|18446744073709551614\n4242.2|18446744073709551615\n4242.3|1e400\n4242.4|\n' \
  > corpus/sacct/steps-energy.txt
printf '4242.0|5000|extra\n4242.1|  \n4242.2|nine\n|\n' > corpus/sacct/steps-odd.txt
printf '%s\n' 'JobID|State|NNodes|NCPUS|NTasks|Elapsed|ConsumedEnergyRaw|ReqCPUFreq' \
  '9|COMPLETED|3|216|216|00:18:07||' '9.batch|COMPLETED|1|72||00:18:07|18446744073709551614|' \
  '9.0|COMPLETED|3|216|216|00:18:07|18446744073709551614|1800000' \
  '9.1|COMPLETED|3|216|216|1-00:18:07|18446744073709551615|1.5G' \
  '9.2|COMPLETED|3|216|216|18:07.250|1e400|1200000' \
  '9.3|COMPLETED|3|216|108|00:18:07|4294967295|Performance' \
  '9.4|CANCELLED by 0|2|144|144|00:00:00||' '9.5|COMPLETED|1|72|72|00:05:00|90000|1800000' \
  > corpus/sacct/validate-markers.txt
printf '%s\n' 'JobID|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw|ReqCPUFreq' \
  '7.0|1|2|00:00:02|412|2100000' '7.1|1|2|00:01:00|18446744073709551614|Unknown' \
  '7.2|1|2|00:00:1e-320||' '7.3|1|2|00:00:00.5|0|2.1G' > corpus/sacct/validate-one-freq.txt
# The measured CSV: the examples, the small multi-node sets (ranks, energy_scope), and rows at
# the edges of the range checks (1e-320, 1e400, 0, empty energies, mJ and wrapped energies).
for f in soma lulesh-150 sweep weather hpgmgfv; do
  cp "$multinode/$f.csv" corpus/measured_csv/
done
cp ../tests/data/gpu-h100-run2/sync_heldout.csv corpus/measured_csv/
printf '%s\n' 'nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope' \
  '1,72,2.4e9,0,100,50000,72,CPU' '2,72,2.4e9,0,100,,144,node' '1,72,2.4e9,0,1e-320,50000,,' \
  '1,72,2.4e9,0,100,1e400,,' '1,72,2.4e9,0,100,0,,gpu' '1,72,2.4e9,0,100,18446744073709551614,,' \
  '1,72,2.4e9,0,1e-6,0.001,72,' > corpus/measured_csv/edges.csv
printf '%s\n' 'Nodes, Cores, Freq_Hz, GPUs, Time_S, GPU_Energy_J' ' 1, 8, 2.1e9, 1, 12.5, 4100' \
  > corpus/measured_csv/gpu-spaces.csv
rm -rf "$multinode"
