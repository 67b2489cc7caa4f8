#!/usr/bin/env bash
# The GPU path end to end on a real GPU node, short: `machine init`, `profile` of
# examples/gpu/gpu_mix.py with NVML at 2 and 8 host cores with the GPU used, then `plan` on
# that profile with the machine file machine init wrote (time only there: no [power]). Reads GPU
# settings only: no --gpu-clocks, nothing set. Run on the lent device machine from the
# repository root with the binary built here (carried as target/release/jouleplan); writes the
# profile, the machine file and the log under $OUT.
set -uo pipefail
B="$PWD/target/release/jouleplan"
prog="$PWD/examples/gpu/gpu_mix.py"
W=$(mktemp -d)
cd "$W"
export PYTHONUNBUFFERED=1
t0=$(date +%s)
stamp() { echo "== $(($(date +%s) - t0)) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.applications.graphics --format=csv,noheader
stamp "machine init"; "$B" machine init --output node.toml; echo "rc=$?"
python3 "$prog" --iters 2 >/dev/null 2>&1
stamp "profile"
timeout 300 "$B" profile --gpus 1 --cores 2,8 --repeat 2 --iterations 15 --output p.json \
    --measured-out runs.csv -- python3 "$prog" --iters 15 --log runs.jsonl; echo "rc=$?"
cat runs.csv
stamp "plan (time only: machine init's file has no [power])"
"$B" plan --machine node.toml --profile p.json 2>&1 | head -30; echo "rc=$?"
stamp "done"
nvidia-smi --query-gpu=clocks.applications.graphics --format=csv,noheader
mkdir -p "$OUT"; cp node.toml p.json runs.csv runs.jsonl "$OUT"/ 2>/dev/null; true
