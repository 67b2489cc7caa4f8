#!/usr/bin/env bash
# Profiles examples/gpu/gpu_mix.py on a GPU node with jouleplan, the GPU used and unused, then
# (when DLB is built there with its CUDA plugin) attaches TALP's device times, and checks the
# held-out core counts. Run from the repository root on the GPU node, with the jouleplan binary
# built elsewhere and carried along:
#   examples/gpu/run-on-device.sh target/release/jouleplan [DLB_PREFIX] [OUTDIR]
# Reads GPU settings only (NVML): it never changes clocks, power limits or MIG.
set -euo pipefail
jp=${1:?usage: run-on-device.sh JOULEPLAN [DLB_PREFIX] [OUTDIR]}
dlb=${2:-}
out=${3:-gpu-run}
mkdir -p "$out"
cores=1,2,4,8,16
"$jp" profile --gpus 0,1 --cores "$cores" --repeat 3 --warmup 1 --iterations 40 \
    --output "$out/gpu_mix.json" -- python3 examples/gpu/gpu_mix.py --iters 40 --log "$out/runs.jsonl"
if [ -n "$dlb" ] && [ -f "$dlb/lib/libdlb.so" ]; then
    talp=()
    for c in ${cores//,/ }; do
        # DLB preloaded into the program itself, not into a wrapper.
        OMP_NUM_THREADS=$c CUDA_VISIBLE_DEVICES=0 DLB_AUTO_INIT=1 \
            DLB_ARGS="--talp --talp-output-file=$out/talp_c$c.json" \
            LD_PRELOAD="$dlb/lib/libdlb.so" python3 examples/gpu/gpu_mix.py --iters 40
        talp+=(--talp "$c=$out/talp_c$c.json")
    done
    "$jp" profile --output "$out/gpu_mix.json" "${talp[@]}"
fi
"$jp" machine init --output "$out/node.toml" || true
"$jp" validate --machine models/h100-node.toml --profile "$out/gpu_mix.json" --use-cores 1,4,16 --loo \
    --other-machine | tee "$out/validate.txt"
