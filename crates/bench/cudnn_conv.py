"""cuDNN convolution reference for `cargo xtask bench conv` (run on an NVIDIA machine with PyTorch).

torch.nn.functional.conv2d in FP32 with TF32 off for both matmul and cuDNN — the same
arithmetic as the WGSL stages — and cudnn.benchmark on, so cuDNN picks its fastest algorithm
per shape. Same treatment as the WGSL benchmark: each of --runs whole runs times --reps calls
with CUDA events after warm-up and takes their median; the table gives the median over runs and
the fastest and slowest run. Every run's output is checked against a float64 CPU convolution
on a sample (first and last image, every filter) with the WGSL verification rule:
|got - ref| <= 2 * R*S*C * 2^-24 * sum|terms|.
Layout: --layout nchw (default, PyTorch's) or nhwc (channels_last, as the WGSL stages use).

Before each run's timed calls the convolution runs back to back for --warm-ms (default 500)
of wall time, so the GPU's clock has ramped up (as `bench conv` and the matmul benchmarks do).

Usage: python3 cudnn_conv.py [--runs 3] [--reps 10] [--warm-ms 500] [--layout nchw|nhwc]
       [--out cudnn_conv.tsv]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

# (name, N, C, H, W, K, R, stride, pad): the shapes, as in crates/bench/src/conv_bench.rs.
SHAPES = [
    ("1x64x56x56->64 3x3", 1, 64, 56, 56, 64, 3, 1, 1),
    ("32x64x56x56->64 3x3", 32, 64, 56, 56, 64, 3, 1, 1),
    ("8x128x28x28->128 3x3", 8, 128, 28, 28, 128, 3, 1, 1),
    ("1x256x14x14->256 3x3", 1, 256, 14, 14, 256, 3, 1, 1),
    ("1x3x224x224->64 7x7 s2", 1, 3, 224, 224, 64, 7, 2, 3),
    ("32x256x56x56->64 1x1", 32, 256, 56, 56, 64, 1, 1, 0),
]


def check(x, w, y, stride, pad):
    """Verdict and worst error/bound ratio of y against a float64 CPU conv of images 0 and N-1."""
    idx = sorted({0, x.shape[0] - 1})
    xs = x[idx].double().cpu()
    ws = w.double().cpu()
    ref = F.conv2d(xs, ws, stride=stride, padding=pad)
    mag = F.conv2d(xs.abs(), ws.abs(), stride=stride, padding=pad)
    got = y[idx].double().cpu()
    k = ws.shape[1] * ws.shape[2] * ws.shape[3]
    bound = 2.0 * k * 2.0**-24 * mag
    err = (got - ref).abs()
    finite = bool(torch.isfinite(got).all())
    ratio = float((err / bound.clamp_min(1e-300)).max())
    return finite and bool((err <= bound).all()), ratio


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warm-ms", type=float, default=500.0)
    p.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    p.add_argument("--out")
    args = p.parse_args()
    if args.runs < 3:
        p.error("--runs must be at least 3")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    fmt = torch.channels_last if args.layout == "nhwc" else torch.contiguous_format
    print(
        f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, "
        f"cuDNN {torch.backends.cudnn.version()}, TF32 off, benchmark on, {args.layout}"
    )
    print(f"{args.runs} whole runs per shape, each the median of {args.reps} timed calls")
    rows = ["shape\ttflops_median\tms_median\tms_min\tms_max\truns\tverified\terr_over_bound"]
    print("| shape | cuDNN TFLOP/s (median) | ms median | ms fastest–slowest run | spread | verified |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    failed = []
    for name, n, c, h, w_, k, r, stride, pad in SHAPES:
        g = torch.Generator(device=dev).manual_seed(1)
        x = (torch.rand((n, c, h, w_), device=dev, generator=g) * 2 - 1).to(memory_format=fmt)
        w = (torch.rand((k, c, r, r), device=dev, generator=g) * 2 - 1).to(memory_format=fmt)
        out_h = (h + 2 * pad - r) // stride + 1
        out_w = (w_ + 2 * pad - r) // stride + 1
        flops = 2.0 * n * out_h * out_w * k * c * r * r
        for _ in range(5):  # the first call also runs cuDNN's algorithm search
            y = F.conv2d(x, w, stride=stride, padding=pad)
        torch.cuda.synchronize()
        run_ms, ok, worst = [], True, 0.0
        for _ in range(args.runs):
            t0, n = time.perf_counter(), 0
            while time.perf_counter() - t0 < args.warm_ms / 1000.0:
                y = F.conv2d(x, w, stride=stride, padding=pad)
                n += 1
                if n % 8 == 0:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
            times = []
            for _ in range(args.reps):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                y = F.conv2d(x, w, stride=stride, padding=pad)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            run_ms.append(statistics.median(times))
            good, ratio = check(x, w, y, stride, pad)
            ok &= good
            worst = max(worst, ratio)
        med, lo, hi = statistics.median(run_ms), min(run_ms), max(run_ms)
        tflops = flops / (med * 1e9)
        print(
            f"| {name} | {tflops:.2f} | {med:.3f} | {lo:.3f}–{hi:.3f} | "
            f"{100 * (hi - lo) / med:.1f} % | {'yes' if ok else 'NO'} |"
        )
        rows.append(f"{name}\t{tflops:.4f}\t{med:.5f}\t{lo:.5f}\t{hi:.5f}\t{args.runs}\t{ok}\t{worst:.3e}")
        if not ok:
            failed.append(name)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"\nwrote {args.out}")
    if failed:
        raise SystemExit(f"failed verification: {', '.join(failed)}")


if __name__ == "__main__":
    main()
