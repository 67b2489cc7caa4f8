#!/usr/bin/env bash
# Seeds the fuzz corpora from the repository's real inputs (tests/data, models), then e.g.
#   cargo +nightly fuzz run -O machine_toml corpus/machine_toml -- -runs=1000000 -max_len=4096
# (cargo install cargo-fuzz; the nightly toolchain). Crashes land in artifacts/.
set -euo pipefail
cd "$(dirname "$0")"
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
for t in ../tests/data/fixtures/paraver/epoch/epoch_2proc.prv.gz ../tests/data/fixtures/paraver/epoch/epoch_1proc.prv.gz; do
  for sel in '\000' '\020' '\040' '\100'; do
    { printf "$sel"; gunzip -c "$t" 2>/dev/null | head -300 || true; } > "corpus/paraver/s$i"; i=$((i + 1))
  done
done
for t in ../tests/data/fixtures/paraver/legacy/*.prv; do
  [ -f "$t" ] && { printf '\000'; head -300 "$t"; } > "corpus/paraver/l$(basename "$t")"
done
cp ../examples/measured/*.csv ../tests/data/pingpong/*.json corpus/calibrate_inputs/
# Multi-node runs (ranks, energy_scope columns) and past Slurm jobs .
cp ../tests/data/multinode/soma.csv ../tests/data/multinode/lulesh-150.csv \
  ../tests/data/sacct/localhost-sleep.txt corpus/calibrate_inputs/
mkdir -p corpus/machine_rewrite && cp ../models/*.toml corpus/machine_rewrite/
# A profile with a combined node law (weights, folds, anchor, interval parts): fitted by this
# jouleplan from the Ice Lake fixture's hpgmgfv runs on 1, 2, 4, 8 nodes, sweep record left out.
seed_dir=$(mktemp -d)
awk -F, 'NR == 1 || $1 == 1 || $1 == 2 || $1 == 4 || $1 == 8' ../tests/data/multinode/hpgmgfv.csv \
  > "$seed_dir/fit.csv"
cargo run -q --release --manifest-path ../Cargo.toml -- fit --measured "$seed_dir/fit.csv" \
  --machine ../tests/data/multinode/icelake-8360y.toml --profile-out "$seed_dir/law.json" \
  --machine-out "$seed_dir/law.toml" > /dev/null 2>&1
cp "$seed_dir/law.json" corpus/profile_json/node_law.json
rm -rf "$seed_dir"
