"""cuBLAS SGEMM reference for `cargo xtask bench matmul` (run on an NVIDIA machine with PyTorch).

FP32 matmul with TF32 off — the same arithmetic as the WGSL ladder — at square sizes, timed
with CUDA events: best of several repetitions after warm-up, like the WGSL benchmark.
Usage: python3 cublas_sgemm.py --sizes 256,1024,4096 [--reps 5] [--out cublas.tsv]
"""
import argparse

import torch


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="256,512,1024,2048,4096,8192")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, TF32 off")
    rows = ["size\tgflops\tms"]
    print("| size | cuBLAS SGEMM GFLOP/s | ms |")
    print("| ---: | ---: | ---: |")
    for n in [int(s) for s in args.sizes.split(",")]:
        g = torch.Generator(device=dev).manual_seed(1)
        a = torch.rand((n, n), device=dev, generator=g) * 2 - 1
        b = torch.rand((n, n), device=dev, generator=g) * 2 - 1
        for _ in range(3):
            torch.mm(a, b)
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(args.reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.mm(a, b)
            end.record()
            torch.cuda.synchronize()
            best = min(best, start.elapsed_time(end))
        gflops = 2 * n**3 / (best * 1e6)
        print(f"| {n} | {gflops:.1f} | {best:.3f} |")
        rows.append(f"{n}\t{gflops:.3f}\t{best:.5f}")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
