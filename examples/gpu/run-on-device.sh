#!/usr/bin/env bash
# Measures examples/gpu/gpu_mix.py on a GPU node with jouleplan, in two phases, from the
# repository root, with the jouleplan binary built elsewhere and carried along:
#   examples/gpu/run-on-device.sh measure JOULEPLAN OUTDIR [DLB_SOURCE]
#   examples/gpu/run-on-device.sh heldout JOULEPLAN OUTDIR DLB_PREFIX SYNC_CORES SHARE_CORES
#   examples/gpu/run-on-device.sh onemachine JOULEPLAN OUTDIR DLB_PREFIX ALL_CORES TALP_CORES
# measure: the H100 fixture's workload with the GPU used (g = 1) at 1-16 host cores, a
#   small-device-share variant with the GPU used and unused (g = 0 and 1), then (given DLB's
#   sources with `configure` generated) DLB built with its CUDA plugin into OUTDIR/dlb.
# heldout: the fixture's workload at core counts that `measure` did not run (predicted
#   beforehand from its profile), and a sweep with TALP preloaded into the same runs that NVML
#   measures (`--mpi-profiler talp`).
# Reads GPU settings only (NVML, nvidia-smi -q): it never changes clocks, power limits or MIG.
set -uo pipefail
phase=${1:?usage: run-on-device.sh measure|heldout JOULEPLAN OUTDIR ...}
jp=${2:?JOULEPLAN}
out=${3:?OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
prog=examples/gpu/gpu_mix.py
t0=$(date +%s)
stamp() { echo "== $(($(date +%s) - t0)) s: $*"; }

case "$phase" in
measure)
    dlb_src=${4:-}
    nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
    lscpu >"$out/lscpu.txt" 2>&1
    # Warm the interpreter's and CUDA's files once; not recorded.
    python3 "$prog" --iters 2 >/dev/null 2>&1
    stamp "g=1 sweep, fixture workload"
    "$jp" profile --gpus 1 --cores 1,2,4,8,16 --repeat 3 --iterations 40 \
        --output "$out/sync.json" -- python3 "$prog" --iters 40 --log "$out/sync_runs.jsonl"
    stamp "g=0,1 sweep, small device share"
    "$jp" profile --gpus 0,1 --cores 2,8,16 --repeat 2 --iterations 20 \
        --output "$out/share.json" -- python3 "$prog" --iters 20 --dev-n 2048 --dev-reps 8 \
        --log "$out/share_runs.jsonl"
    if [ -n "$dlb_src" ] && [ -x "$dlb_src/configure" ]; then
        stamp "DLB build"
        b=$(mktemp -d)
        src=$(cd "$dlb_src" && pwd)
        (cd "$b" && "$src/configure" --prefix="$out/dlb" \
            --with-cuda=/usr/local/cuda --without-mpi >configure.log 2>&1 &&
            make -j16 >make.log 2>&1 && make install >install.log 2>&1) ||
            { echo "DLB build failed"; tail -30 "$b"/*.log; }
        tail -25 "$b/configure.log"
    fi
    ;;
heldout)
    dlb=${4:?DLB_PREFIX}
    sync_cores=${5:?SYNC_CORES}
    share_cores=${6:?SHARE_CORES}
    python3 "$prog" --iters 2 >/dev/null 2>&1
    stamp "held-out: $sync_cores cores, g=1, fixture workload"
    "$jp" profile --gpus 1 --cores "$sync_cores" --repeat 3 --iterations 40 \
        --output "$out/sync_heldout.json" -- python3 "$prog" --iters 40 \
        --log "$out/sync_heldout_runs.jsonl"
    stamp "held-out: $share_cores cores, g=0,1, small device share"
    "$jp" profile --gpus 0,1 --cores "$share_cores" --repeat 2 --iterations 20 \
        --output "$out/share_heldout.json" -- python3 "$prog" --iters 20 --dev-n 2048 \
        --dev-reps 8 --log "$out/share_heldout_runs.jsonl"
    if [ -f "$dlb/lib/libdlb.so" ]; then
        stamp "TALP check: one run by hand"
        OMP_NUM_THREADS=4 CUDA_VISIBLE_DEVICES=0 DLB_AUTO_INIT=1 \
            DLB_ARGS="--talp --talp-output-file=$out/talp_manual_c4.json" \
            LD_PRELOAD="$dlb/lib/libdlb.so" python3 "$prog" --iters 40
        stamp "TALP preloaded into the NVML-measured runs"
        # DLB preloaded into the program itself (env execs python3), not into a wrapper.
        "$jp" profile --gpus 1 --cores 1,2,4,8,16 --repeat 3 --iterations 40 \
            --mpi-profiler talp --output "$out/talp_nvml.json" -- \
            env DLB_AUTO_INIT=1 LD_PRELOAD="$dlb/lib/libdlb.so" \
            python3 "$prog" --iters 40 --log "$out/talp_nvml_runs.jsonl"
    fi
    ;;
onemachine)
    # Every core count on one machine (a fresh machine's start-up differs from another's),
    # and TALP at core counts its own sweep did not measure.
    dlb=${4:?DLB_PREFIX}
    python3 "$prog" --iters 2 >/dev/null 2>&1
    stamp "g=1 sweep at $5 cores on one machine"
    "$jp" profile --gpus 1 --cores "$5" --repeat 3 --iterations 40 \
        --output "$out/sync_all.json" -- python3 "$prog" --iters 40 --log "$out/sync_all_runs.jsonl"
    stamp "TALP preloaded, held-out $6 cores"
    "$jp" profile --gpus 1 --cores "$6" --repeat 3 --iterations 40 \
        --mpi-profiler talp --output "$out/talp_heldout.json" -- \
        env DLB_AUTO_INIT=1 LD_PRELOAD="$dlb/lib/libdlb.so" \
        python3 "$prog" --iters 40 --log "$out/talp_heldout_runs.jsonl"
    ;;
*)
    echo "unknown phase $phase" >&2
    exit 2
    ;;
esac
stamp done
