"""`torch._int_mm` (cuBLAS's int8 GEMM: int8 inputs, int32 sums) at square sizes, timed as
`bench int8` times the INT8 lesson's kernel: each of --runs whole runs does 3 warm-ups and
--reps timed calls (CUDA events); a run's figure is its median call, the table the median over
runs and the spread, in TOP/s (2·n³). Inputs are seeded int8 in −127..=127; every run is
checked exactly against an int64 product of 64 sampled rows (first and last included).
    python3 crates/bench/torch_int_mm.py --sizes 1024,4096 [--runs 3] [--reps 5] [--out FILE]
"""
import argparse, statistics, torch

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="1024,4096")
p.add_argument("--runs", type=int, default=3)
p.add_argument("--reps", type=int, default=5)
p.add_argument("--out")
a = p.parse_args()
dev = "cuda"
print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__)
print("| kernel | n | TOP/s | min-max | ms | verified |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
rows_tsv = ["path\tkernel\tsize\ttops_median\ttops_min\ttops_max\tms_median"]
for n in (int(s) for s in a.sizes.split(",")):
    g = torch.Generator(device="cpu").manual_seed(n)
    A = torch.randint(-127, 128, (n, n), generator=g, dtype=torch.int8).to(dev)
    B = torch.randint(-127, 128, (n, n), generator=g, dtype=torch.int8).to(dev)
    rows = torch.cat([torch.tensor([0, n - 1]), torch.randint(0, n, (62,), generator=g)]).unique()
    tops, ms = [], []
    for _ in range(a.runs):
        for _ in range(3):
            C = torch._int_mm(A, B)
        torch.cuda.synchronize()
        ts = []
        for _ in range(a.reps):
            s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
            s.record(); C = torch._int_mm(A, B); e.record(); torch.cuda.synchronize()
            ts.append(s.elapsed_time(e))
        # CUDA has no int64 matmul: the exact reference is taken on the CPU.
        want = A[rows.to(dev)].cpu().to(torch.int64) @ B.cpu().to(torch.int64)
        if not torch.equal(C[rows.to(dev)].cpu().to(torch.int64), want):
            raise SystemExit(f"_int_mm at {n}: not exact")
        t = statistics.median(ts)
        ms.append(t); tops.append(2 * n ** 3 / (t * 1e9))
    med = statistics.median(tops)
    print(f"| torch._int_mm | {n} | {med:.2f} | {min(tops):.2f}-{max(tops):.2f} | {statistics.median(ms):.3f} | yes (exact) |")
    rows_tsv.append(f"cublas\ttorch-int-mm\t{n}\t{med:.4f}\t{min(tops):.4f}\t{max(tops):.4f}\t{statistics.median(ms):.5f}")
if a.out:
    open(a.out, "w").write("\n".join(rows_tsv) + "\n")
