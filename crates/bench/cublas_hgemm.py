"""cuBLAS half-precision GEMM reference for the Tensor Core stage (`matmul-tensor-core`).

Three modes, each at square sizes, measured exactly like `cublas_sgemm.py` and the WGSL
kernels: inputs uniform in [-1, 1) rounded to f16, warm-up calls for at least --warm-ms of
GPU time, then --reps timed calls each between its own CUDA events; this run's figure is the
MEDIAN call.
- `cublas-hgemm`: f16 in, f16 out, PyTorch's defaults (f32 accumulation; split-K partial sums
  may be reduced in f16: `allow_fp16_reduced_precision_reduction`), what `torch.mm` on f16
  tensors runs and what "cuBLAS HGEMM" means in the issue (635 TFLOP/s at 4096³).
- `cublas-hgemm-f32reduce`: the same with reduced-precision reduction off.
- `cublas-hgemm-f32out`: f16 in, f32 accumulation AND f32 out — the Tensor Core stage's own
  arithmetic — through `torch.mm(…, out_dtype=torch.float32)` where this PyTorch has it;
  otherwise the row says so and is not measured.
Each result is checked first: 4,096 sampled elements against an f64 reference of the same
(f16) inputs, with a bound derived like the WGSL stage's: sums in f32 possibly truncated,
4·K·2⁻²⁴·Σ|a·b| (×2 safety), plus, for f16 output, the output's rounding 2⁻¹¹·|c| and one
f16 rounding of a partial sum 2⁻¹¹·Σ|a·b|.
Usage: python3 cublas_hgemm.py --sizes 1024,4096 [--reps 5] [--warm-ms 500]
       [--modes hgemm,f32reduce,f32out] [--out cublas_hgemm.tsv]
Writes the TSV of `bench summarise` (path "cublas").
"""
import argparse
import math
import statistics

import torch

HEADER = "path\tkernel\tsize\trate\tunit\tms\ttiming\tverified\tpass_ms"
U16 = 2.0**-11
U32 = 2.0**-24


def check(a, b, c, n, gen, f16_out, samples=4096):
    """Sampled elements of c against f64 products of the same (f16) rows and columns."""
    idx = torch.randint(0, n * n, (samples,), generator=gen, device="cpu")
    rows, cols = (idx // n).to(a.device), (idx % n).to(a.device)
    a64, b64 = a.double(), b.double()
    terms = a64[rows, :] * b64[:, cols].T
    ref = terms.sum(dim=1)
    mag = terms.abs().sum(dim=1)
    got = c[rows, cols].double()
    bound = 2.0 * 4.0 * n * U32 * mag
    if f16_out:
        bound = bound + 2.0 * U16 * (ref.abs() + mag)
    err = (got - ref).abs()
    ok = bool(torch.isfinite(got).all()) and bool((err <= bound).all())
    return ok, float((err / mag.clamp_min(1e-300)).max())


def make_call(mode, a, b, n, dev):
    """The timed call of a mode and its output tensor, or (None, reason)."""
    if mode == "f32out":
        c = torch.full((n, n), float("nan"), device=dev, dtype=torch.float32)
        try:
            torch.mm(a, b, out_dtype=torch.float32)
        except (TypeError, RuntimeError) as e:
            return None, None, f"torch.mm has no f16 -> f32 out_dtype here ({type(e).__name__}: {e})"
        return (lambda: torch.mm(a, b, out_dtype=torch.float32)), c, None
    c = torch.full((n, n), float("nan"), device=dev, dtype=torch.float16)
    return (lambda: torch.mm(a, b, out=c)), c, None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warm-ms", type=float, default=500.0)
    p.add_argument("--modes", default="hgemm,f32reduce,f32out")
    p.add_argument("--out")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    rows = [HEADER]
    print("| mode | size | TFLOP/s (median call) | best call | ms | warm-up calls | verified (max rel. error) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for mode in args.modes.split(","):
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = mode == "hgemm"
        kernel = {"hgemm": "cublas-hgemm", "f32reduce": "cublas-hgemm-f32reduce",
                  "f32out": "cublas-hgemm-f32out"}[mode]
        for n in [int(s) for s in args.sizes.split(",")]:
            g = torch.Generator(device=dev).manual_seed(1)
            a = (torch.rand((n, n), device=dev, generator=g) * 2 - 1).half()
            b = (torch.rand((n, n), device=dev, generator=g) * 2 - 1).half()
            call, c, why = make_call(mode, a, b, n, dev)
            if call is None:
                print(f"| {mode} | {n} | not measured: {why} | | | | |")
                continue
            if mode == "f32out":
                c = call()
            else:
                call()
            torch.cuda.synchronize()
            ok, rel = check(a, b, c, n, torch.Generator().manual_seed(n), mode != "f32out")
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            call()
            e.record()
            torch.cuda.synchronize()
            warm = max(2, min(5000, math.ceil(args.warm_ms / max(s.elapsed_time(e), 1e-3))))
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(args.reps)]
            for _ in range(warm):
                call()
            for s, e in events:
                s.record()
                call()
                e.record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in events]
            ms = statistics.median(times)
            gflops = 2 * n**3 / (ms * 1e6)
            best = 2 * n**3 / (min(times) * 1e6)
            print(f"| {mode} | {n} | {gflops / 1e3:.1f} | {best / 1e3:.1f} | {ms:.4f} | {warm} | "
                  f"{'yes' if ok else 'NO'} ({rel:.1e}) |")
            passes = ",".join(f"{t:.5f}" for t in times)
            rows.append(f"cublas\t{kernel}\t{n}\t{gflops:.3f}\tGFLOP/s\t{ms:.5f}\tCUDA events\t"
                        f"{str(ok).lower()}\t{passes}")
            if not ok:
                raise SystemExit(f"cuBLAS {mode} at {n} failed the check")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
