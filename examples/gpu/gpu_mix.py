"""A host+device iteration loop: CPU matmuls on OMP_NUM_THREADS threads, then GPU bf16 matmuls.

The program measured on an H100 node for tests/data/fixtures/gpu-h100 (gpu_mix.py there, as
it ran), with one change: when no CUDA device is visible (jouleplan profile --gpus 0 sets
CUDA_VISIBLE_DEVICES to nothing) the device phase runs on the host's threads instead (fp32),
so the same work can be profiled with the GPU used and unused. The host/device share is
tunable: --host-reps and --host-n size the host phase, --dev-reps and --dev-n the device phase.

Per iteration: host phase (torch CPU fp32 matmuls), device phase (bf16 matmuls on the GPU),
synchronised (or, with --overlap, the device phase launched before the host phase and waited
on after it). Writes one JSON line per run to --log with in-process reference measurements:
host-phase time, CUDA-event kernel time, wall time of the loop, NVML energy before/after.
"""
import argparse, json, os, sys, time

t_start = time.time()
import torch

p = argparse.ArgumentParser()
p.add_argument("--iters", type=int, default=40)
p.add_argument("--host-n", type=int, default=1024)
p.add_argument("--host-reps", type=int, default=6)
p.add_argument("--dev-n", type=int, default=8192)
p.add_argument("--dev-reps", type=int, default=40)
p.add_argument("--overlap", action="store_true")
p.add_argument("--log", default=None)
a = p.parse_args()

threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
torch.set_num_threads(threads)
gpu = torch.cuda.is_available()
dev = "cuda" if gpu else "cpu"
if not gpu:
    print("gpu_mix: no CUDA device visible: the device phase runs on the host (fp32)", file=sys.stderr)

try:
    import pynvml
    pynvml.nvmlInit()
    vis = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    h = pynvml.nvmlDeviceGetHandleByIndex(int(vis) if vis.isdigit() else 0)
    energy = lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
except Exception as e:  # reference only
    print("gpu_mix: no pynvml:", e, file=sys.stderr)
    energy = lambda: None

ha = torch.randn(a.host_n, a.host_n)
hb = torch.randn(a.host_n, a.host_n)
dtype = torch.bfloat16 if gpu else torch.float32
da = torch.randn(a.dev_n, a.dev_n, device=dev, dtype=dtype)
db = torch.randn(a.dev_n, a.dev_n, device=dev, dtype=dtype)
# warm-up
for _ in range(2):
    torch.mm(ha, hb)
    torch.mm(da, db)
sync = torch.cuda.synchronize if gpu else (lambda: None)
sync()


class HostEvents:
    """CUDA-event stand-ins when the device phase runs on the host: wall time."""

    def __init__(self):
        self.t = time.perf_counter()

    def elapsed_ms(self, other):
        return (other.t - self.t) * 1e3


def device_phase():
    if not gpu:
        ev0 = HostEvents()
        for _ in range(a.dev_reps):
            torch.mm(da, db)
        return ev0, HostEvents()
    ev0 = torch.cuda.Event(enable_timing=True)
    ev1 = torch.cuda.Event(enable_timing=True)
    ev0.record()
    for _ in range(a.dev_reps):
        torch.mm(da, db)
    ev1.record()
    return ev0, ev1


def elapsed_s(ev):
    if gpu:
        return ev[0].elapsed_time(ev[1]) / 1e3
    return ev[0].elapsed_ms(ev[1]) / 1e3

def host_phase():
    t = time.perf_counter()
    for _ in range(a.host_reps):
        torch.mm(ha, hb)
    return time.perf_counter() - t

e0 = energy()
t0 = time.perf_counter()
host_s = kern_s = wait_s = 0.0
for _ in range(a.iters):
    if a.overlap:
        ev = device_phase()
        host_s += host_phase()
        tw = time.perf_counter()
        sync()
        wait_s += time.perf_counter() - tw
    else:
        host_s += host_phase()
        ev = device_phase()
        tw = time.perf_counter()
        sync()
        wait_s += time.perf_counter() - tw
    kern_s += elapsed_s(ev)
loop_s = time.perf_counter() - t0
e1 = energy()
rec = dict(threads=threads, gpu=gpu, overlap=a.overlap, iters=a.iters, host_s=host_s, kernel_s=kern_s,
           wait_s=wait_s, loop_s=loop_s, process_s=time.time() - t_start,
           gpu_energy_j=None if e0 is None else (e1 - e0) / 1e3,
           cpu_time_s=sum(os.times()[:2]))
if a.log:
    with open(a.log, "a") as f:
        f.write(json.dumps(rec) + "\n")
print(json.dumps(rec))
