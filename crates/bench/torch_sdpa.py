"""PyTorch's scaled_dot_product_attention as the fused-attention anchor (issue 39), timed as
`bench attention` times its kernels: fp32, causal, `--bh` problems (batch 1 × heads) of head
width `--d`, each sequence length; per backend that accepts fp32 (`math` writes the scores,
`efficient` is fused), `--runs` whole runs of 3 warm-ups and `--reps` timed calls (CUDA
events), a run's figure the median call; TFLOP/s counted as 4·bh·n²·d / 2 (the causal half).
TF32 is off, so fp32 means fp32. Each backend's output is checked against the math backend's
(largest difference printed), and its extra peak memory is reported.

    python3 crates/bench/torch_sdpa.py --seqs 1024,2048,4096 [--bh 32] [--d 64] [--out FILE]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

p = argparse.ArgumentParser()
p.add_argument("--seqs", default="64,256,1024,2048,4096")
p.add_argument("--bh", type=int, default=32)
p.add_argument("--d", type=int, default=64)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--reps", type=int, default=10)
p.add_argument("--out")
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__)
print("| backend | n | TFLOP/s | min–max | ms | extra MiB | max diff vs math |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
rows = ["backend\tn\ttflops_median\ttflops_min\ttflops_max\tms_median\textra_bytes"]
for n in (int(s) for s in a.seqs.split(",")):
    g = torch.Generator(device="cuda").manual_seed(n)
    q, k, v = (torch.rand(1, a.bh, n, a.d, device="cuda", generator=g) * 3 - 1.5 for _ in range(3))
    flops = 2.0 * a.bh * n * n * a.d
    ref = None
    for name, backend in (("math", SDPBackend.MATH), ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
        call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        try:
            with sdpa_kernel(backend):
                out = call()
                torch.cuda.synchronize()
                diff = 0.0 if ref is None else (out - ref).abs().max().item()
                ref = out if ref is None else ref
                per_run = []
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                for _ in range(a.runs):
                    for _ in range(3):
                        call()
                    times = []
                    for _ in range(a.reps):
                        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        s.record(); call(); e.record(); torch.cuda.synchronize()
                        times.append(s.elapsed_time(e))
                    per_run.append(statistics.median(times))
                extra = torch.cuda.max_memory_allocated() - base
        except RuntimeError as err:
            print(f"| {name} | {n} | refused: {str(err).splitlines()[0][:70]} |")
            continue
        tf = [flops / (ms * 1e9) for ms in per_run]
        ms = statistics.median(per_run)
        print(f"| {name} | {n} | {statistics.median(tf):.2f} | {min(tf):.2f}–{max(tf):.2f} | {ms:.3f} | {extra / 2**20:.0f} | {diff:.1e} |")
        rows.append(f"{name}\t{n}\t{statistics.median(tf):.4f}\t{min(tf):.4f}\t{max(tf):.4f}\t{ms:.5f}\t{extra}")
    del q, k, v, ref
    torch.cuda.empty_cache()
if a.out:
    open(a.out, "w").write("\n".join(rows) + "\n")
