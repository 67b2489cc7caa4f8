#!/usr/bin/env bash
# The time-only path on a real GPU node (no RAPL readable, no MPI, no [power]/[network] in the
# machine file): machine init, profile a CPU program at three core counts, fit, predict.
# Run on the lent device machine with the binary built here (carried as target/release/jouleplan).
set -u
B="$PWD/target/release/jouleplan"
W=$(mktemp -d)
cd "$W"
echo "== host"; nproc; uname -r; ldd --version | head -1; ls /sys/class/powercap 2>&1 | head -3
echo "== machine init"; "$B" machine init --output node.toml; echo "rc=$?"; cat node.toml
PROG='import numpy as np, time; a = np.random.rand(1200, 1200); t = time.time()
for _ in range(25): a = (a @ a) / 1200.0
print(time.time() - t)'
echo "== profile"; timeout 400 "$B" profile --cores 1,4,16 --repeat 2 --timeout 60s --output p.json --measured-out runs.csv -- python3 -c "$PROG"; echo "rc=$?"
cat runs.csv
echo "== fit (time only)"; "$B" fit --measured runs.csv --machine node.toml --profile-out f.json; echo "rc=$?"
echo "== predict"; "$B" predict --machine node.toml --profile f.json --config "1,8,$(grep -o 'frequencies_ghz = \[[0-9.]*' node.toml | grep -o '[0-9.]*$')" 2>&1 | tail -5; echo "rc=$?"
mkdir -p "$OUT"; cp node.toml runs.csv p.json f.json "$OUT"/ 2>/dev/null; true
