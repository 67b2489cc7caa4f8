#!/usr/bin/env bash
# The GPU clock axis's NVML side on a real GPU node, reading only: nothing here sets a clock.
# - `machine init` reads the supported application clocks through NVML (gpu_clocks_mhz),
#   compared with what nvidia-smi lists;
# - `profile --gpu-clocks` with a clock no GPU supports: as root (NVML chosen), then as an
#   unprivileged user without and with a Slurm job id; each must be refused before anything
#   runs, naming the supported clocks or why no clock can be set;
# - the application clocks read before and after, to show nothing changed.
# Run on the lent device machine with the binary built here (carried as target/release/jouleplan);
# writes what it saw under $OUT. Never pass a supported clock to --gpu-clocks here: the lent
# machines' GPU settings are only read.
set -u
B="$PWD/target/release/jouleplan"
W=$(mktemp -d)
chmod 1777 "$W"
cp "$B" "$W/jouleplan" && chmod 755 "$W/jouleplan"
B="$W/jouleplan"
cd "$W"
apps() { nvidia-smi --query-gpu=index,name,clocks.applications.graphics,clocks.applications.memory,clocks.default_applications.graphics,clocks.max.sm --format=csv,noheader; }
echo "== host"; nproc; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== application clocks before"; apps | tee before.txt
nvidia-smi -q -d SUPPORTED_CLOCKS > supported.txt; echo "rc=$? ($(grep -c 'Graphics' supported.txt) graphics lines)"
nvidia-smi -q -d CLOCK > clock.txt
echo "== machine init"; "$B" machine init --output node.toml; echo "rc=$?"
grep -n "gpu_clocks_mhz\|gpu_memory_clock\|gpu_model\|gpus_per_node" node.toml | cut -c1-400
echo "== nvidia-smi's graphics clocks at the first memory clock vs machine init's"
python3 - <<'PY'
import re
text = open("supported.txt").read()
blocks = re.split(r"\n\s*Memory\s*:\s*", text)[1:]
mem = blocks[0].split()[0]
smi = sorted({int(x) for x in re.findall(r"Graphics\s*:\s*(\d+) MHz", blocks[0])})
toml = open("node.toml").read()
m = re.search(r"gpu_clocks_mhz = \[([^\]]*)\]", toml)
jp = sorted(int(float(x)) for x in m.group(1).split(",")) if m else []
print(f"memory clocks listed: {len(blocks)}; first {mem} MHz: nvidia-smi {len(smi)} clocks "
      f"{smi[:1]}..{smi[-1:]}; machine init {len(jp)} clocks {jp[:1]}..{jp[-1:]}; equal: {smi == jp}")
PY
CMD=(python3 -c pass)
echo "== profile --gpu-clocks 4999 as root (NVML chosen; 4999 MHz is no GPU's clock)"
"$B" profile --gpus 1 --gpu-clocks 4999 --output p_root.json --measured-out r_root.csv -- "${CMD[@]}"; echo "rc=$?"
ls p_root.json r_root.csv 2>&1
echo "== the same with --machine node.toml (as machine init wrote it: no [network], no [power])"
"$B" profile --gpus 1 --gpu-clocks 4999 --machine node.toml --output p_m.json -- "${CMD[@]}"; echo "rc=$?"
U="setpriv --reuid=65534 --regid=65534 --clear-groups"
echo "== as an unprivileged user (uid 65534), no Slurm"
$U env HOME="$W" "$B" profile --gpus 1 --gpu-clocks 4999 --output "$W/p_user.json" -- "${CMD[@]}"; echo "rc=$?"
echo "== as that user with SLURM_JOB_ID=1 (no srun here)"
$U env HOME="$W" SLURM_JOB_ID=1 "$B" profile --gpus 1 --gpu-clocks 4999 --output "$W/p_slurm.json" -- "${CMD[@]}"; echo "rc=$?"
echo "== application clocks after"; apps | tee after.txt
cmp -s before.txt after.txt && echo "unchanged" || echo "CHANGED"
mkdir -p "$OUT"; cp node.toml supported.txt clock.txt before.txt after.txt "$OUT"/ 2>/dev/null; true
