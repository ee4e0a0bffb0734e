"""Tables for crates/bench/h200/conv_paths.sh (docs/benchmarks.md, "Conv on the visitors' paths").

--dir R: reads R/{cudnn,trusted,checked,dawn}.tsv (cudnn_conv.py's and `bench conv`'s TSVs; the
Dawn runner writes `bench conv`'s columns) and prints, per shape and stage, TFLOP/s of the median
run with the fastest-slowest run on each path, % of cuDNN, the browser paths as % of trusted,
whether every run verified; then the best stage per shape and path against cuDNN and the
issue's goal (>= 90 % of cuDNN at every ResNet shape through Dawn).

--tint FILE...: counts in Tint's SPIR-V as Dawn's dump_shaders printed it (one kernel per file,
tint_<kernel>.txt): GLSL.std.450 UMin (clamps, plus the source's own min() calls), those inside
loops (between an OpLoopMerge's header and its merge block), loops, and Tint's loop counters
(tint_loop_idx variables).
"""
import csv
import os
import re
import sys

PATHS = [("trusted", "wgpu trusted"), ("checked", "wgpu checked"), ("dawn", "Dawn")]
# The five ResNet layers (bench conv's shapes 1-5); the 6th is the extra 1x1 layer.
RESNET = ["1x64x56x56->64 3x3", "32x64x56x56->64 3x3", "8x128x28x28->128 3x3",
          "1x256x14x14->256 3x3", "1x3x224x224->64 7x7 s2"]
GOAL = 0.90


def read(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def tflops(flops_per_ms, ms):
    return flops_per_ms / ms / 1e9


def main_dir(d):
    cudnn = {r["shape"]: r for r in read(os.path.join(d, "cudnn.tsv"))}
    paths = {}
    for key, _ in PATHS:
        for r in read(os.path.join(d, key + ".tsv")):
            stage = r["stage"].split(" ")[0]
            paths.setdefault((r["shape"], stage), {})[key] = r
    shapes = []
    for (shape, _) in paths:
        if shape not in shapes:
            shapes.append(shape)
    print("TFLOP/s of the median run (fastest-slowest run); % of cuDNN; checked and Dawn also as % of trusted.")
    print("Every run of every cell verified unless marked NOT VERIFIED.\n")
    print("| shape | stage (block, split-K) | cuDNN | wgpu trusted | wgpu checked | Dawn | checked / trusted | Dawn / trusted |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    best = {}
    for shape in shapes:
        c = cudnn.get(shape)
        ctf = float(c["tflops_median"]) if c else None
        cstr = "–"
        if c:
            work = ctf * float(c["ms_median"]) * 1e9  # flops
            cstr = f"{ctf:.2f} ({tflops(work, float(c['ms_max'])):.2f}–{tflops(work, float(c['ms_min'])):.2f})"
            if c.get("verified", "True") not in ("True", "true", "1"):
                cstr += " NOT VERIFIED"
        for (s, stage), per in paths.items():
            if s != shape:
                continue
            label = next(iter(per.values()))["stage"]
            cells = []
            tf = {}
            for key, _ in PATHS:
                r = per.get(key)
                if not r:
                    cells.append("–")
                    continue
                g = float(r["gflops_median"]) / 1e3
                work = g * float(r["ms_median"]) * 1e9
                lo, hi = tflops(work, float(r["ms_max"])), tflops(work, float(r["ms_min"]))
                tf[key] = g
                txt = f"{g:.2f} ({lo:.2f}–{hi:.2f})"
                if ctf:
                    txt += f" **{100 * g / ctf:.0f} %**" if stage == "conv-implicit-gemm" else f" {100 * g / ctf:.0f} %"
                if r["verified"] not in ("true", "True"):
                    txt += " NOT VERIFIED"
                cells.append(txt)
                if r["verified"] in ("true", "True"):
                    b = best.setdefault((shape, key), (0.0, ""))
                    if g > b[0]:
                        best[(shape, key)] = (g, label)
            ratio = lambda k: f"{100 * tf[k] / tf['trusted']:.0f} %" if k in tf and "trusted" in tf else "–"
            print(f"| {shape} | {label} | {cstr} | {' | '.join(cells)} | {ratio('checked')} | {ratio('dawn')} |")
    print("\nBest verified stage per shape and path, % of cuDNN:\n")
    print("| shape | cuDNN TFLOP/s | " + " | ".join(n for _, n in PATHS) + " |")
    print("| --- | ---: | " + " | ".join("---" for _ in PATHS) + " |")
    goal = []
    for shape in shapes:
        c = cudnn.get(shape)
        ctf = float(c["tflops_median"]) if c else None
        cells = []
        for key, _ in PATHS:
            g, label = best.get((shape, key), (0.0, ""))
            if not g:
                cells.append("–")
                continue
            pct = f" {100 * g / ctf:.0f} %" if ctf else ""
            cells.append(f"{g:.2f}{pct} ({label})")
            if key == "dawn" and ctf and shape in RESNET:
                goal.append((shape, g / ctf))
        print(f"| {shape} | {ctf:.2f} | " if ctf else f"| {shape} | – | ", end="")
        print(" | ".join(cells) + " |")
    if len(goal) == len(RESNET):
        ok = all(p >= GOAL for _, p in goal)
        print(f"\nGoal (>= {GOAL:.0%} of cuDNN at every ResNet shape through Dawn): "
              f"{'REACHED' if ok else 'NOT reached'}: " + ", ".join(f"{100 * p:.0f} %" for _, p in goal))
    else:
        print(f"\nGoal: not judged ({len(goal)} of {len(RESNET)} ResNet shapes have both cuDNN and Dawn figures)")


def main_tint(files):
    print("Tint's SPIR-V (Dawn dump_shaders, robustness on)\n")
    print("| kernel | UMin | UMin in loops | loops | tint_loop_idx counters |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for f in sorted(files):
        k = os.path.basename(f)[len("tint_"):-len(".txt")]
        umin = in_loops = loops = counters = 0
        open_merges = []
        for line in open(f, errors="replace"):
            m = re.search(r"OpLoopMerge (%\S+)", line)
            if m:
                loops += 1
                open_merges.append(m.group(1))
                continue
            m = re.match(r"\s*(%\S+) = OpLabel", line)
            if m and m.group(1) in open_merges:
                open_merges.remove(m.group(1))
                continue
            if re.search(r"OpExtInst \S+ \S+ UMin ", line):
                umin += 1
                in_loops += bool(open_merges)
            if re.match(r"\s*%tint_loop_idx\w* = OpVariable", line):
                counters += 1
        print(f"| {k} | {umin} | {in_loops} | {loops} | {counters} |")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--dir":
        main_dir(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "--tint":
        main_tint(sys.argv[2:])
    else:
        sys.exit(__doc__)
