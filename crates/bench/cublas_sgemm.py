"""cuBLAS SGEMM reference for `bench matmul` / `crates/bench/dawn/run.mjs` (NVIDIA + PyTorch).

FP32 matmul with TF32 off — the same arithmetic as the WGSL ladder — at square sizes, measured
exactly like the WGSL kernels: inputs uniform in [-1, 1), warm-up calls for at least --warm-ms
of GPU time, then --reps timed calls each between its own CUDA events; this run's figure is
the MEDIAN call. The result is checked first: 4,096 sampled elements against an f64 reference,
with the same bound as the WGSL kernels (2·K·2⁻²⁴·Σ|a·b|).
Usage: python3 cublas_sgemm.py --sizes 1024,4096 [--reps 5] [--warm-ms 500] [--out cublas.tsv]
Writes the TSV of `bench summarise` (path "cublas").
"""
import argparse
import math
import statistics

import torch

HEADER = "path\tkernel\tsize\trate\tunit\tms\ttiming\tverified\tpass_ms"


def check(a, b, c, n, gen, samples=4096):
    """Sampled elements of c against f64 products of the same rows and columns."""
    idx = torch.randint(0, n * n, (samples,), generator=gen, device="cpu")
    rows, cols = (idx // n).to(a.device), (idx % n).to(a.device)
    a64, b64 = a.double(), b.double()
    terms = a64[rows, :] * b64[:, cols].T
    ref = terms.sum(dim=1)
    mag = terms.abs().sum(dim=1)
    got = c[rows, cols].double()
    bound = 2.0 * n * 2.0**-24 * mag
    err = (got - ref).abs()
    ok = bool(torch.isfinite(got).all()) and bool((err <= bound).all())
    return ok, float((err / mag.clamp_min(1e-300)).max())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warm-ms", type=float, default=500.0)
    p.add_argument("--out")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, TF32 off")
    rows = [HEADER]
    print("| size | cuBLAS SGEMM GFLOP/s (median call) | best call | ms | warm-up calls | verified (max rel. error) |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for n in [int(s) for s in args.sizes.split(",")]:
        g = torch.Generator(device=dev).manual_seed(1)
        a = torch.rand((n, n), device=dev, generator=g) * 2 - 1
        b = torch.rand((n, n), device=dev, generator=g) * 2 - 1
        c = torch.full((n, n), float("nan"), device=dev)
        torch.mm(a, b, out=c)
        torch.cuda.synchronize()
        ok, rel = check(a, b, c, n, torch.Generator().manual_seed(n))
        # Pilot call, then enough warm-up calls to fill --warm-ms.
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.mm(a, b, out=c)
        e.record()
        torch.cuda.synchronize()
        warm = max(2, min(5000, math.ceil(args.warm_ms / max(s.elapsed_time(e), 1e-3))))
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(args.reps)]
        for _ in range(warm):
            torch.mm(a, b, out=c)
        for s, e in events:
            s.record()
            torch.mm(a, b, out=c)
            e.record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in events]
        ms = statistics.median(times)
        gflops = 2 * n**3 / (ms * 1e6)
        best = 2 * n**3 / (min(times) * 1e6)
        print(f"| {n} | {gflops:.1f} | {best:.1f} | {ms:.3f} | {warm} | {'yes' if ok else 'NO'} ({rel:.1e}) |")
        passes = ",".join(f"{t:.5f}" for t in times)
        rows.append(f"cublas\tcublas-sgemm\t{n}\t{gflops:.3f}\tGFLOP/s\t{ms:.5f}\tCUDA events\t{str(ok).lower()}\t{passes}")
        if not ok:
            raise SystemExit(f"cuBLAS result at {n} failed the check")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
