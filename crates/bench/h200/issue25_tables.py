"""Markdown tables for crates/bench/h200/issue25.sh (docs/benchmarks.md, "Issue 25 §1–2 in one run").

Usage: python3 issue25_tables.py --dir R

Reads from R, each file only if present (a phase that did not run leaves a "not measured" line):
  mm_{cublas,trusted,checked,dawn}N.tsv   `bench summarise`'s columns, one file per whole run
  cudnn.tsv                                cudnn_conv.py
  stem_{trusted,checked,dawn}.tsv          `bench conv` columns (the Dawn runner writes the same)
  conv_{trusted,checked,dawn}.tsv          idem, every stage
  mlp/*.tsv                                mlp.sh (bench mlp, dawn/mlp.mjs)
  cnn/{wgpu,wgpu_checked,dawn}.tsv         cnn.sh (bench cnn, bench cnn --checked, dawn/cnn.mjs)
  naga_clamps.md, tint_clamps.md           copied as they are
Every figure: the median whole run, the fastest and slowest in brackets; a cell whose runs did
not all verify says NOT VERIFIED and never counts as a best.
"""
import csv
import glob
import os
import statistics
import sys

PATHS = [("trusted", "wgpu trusted"), ("checked", "wgpu checked (Firefox)"), ("dawn", "Dawn (Chrome)")]
RESNET = ["1x64x56x56->64 3x3", "32x64x56x56->64 3x3", "8x128x28x28->128 3x3",
          "1x256x14x14->256 3x3", "1x3x224x224->64 7x7 s2"]
CONV_GOAL = 0.90
MATMUL_GOAL = 0.90


def read(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if any(v for v in r.values())]


def ok(v):
    return str(v).lower() in ("true", "yes", "1")


def num(x):
    """Three significant digits at least; thousands separated."""
    if x != x:
        return "NaN"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def fmt_spread(mid, lo, hi):
    return f"{num(mid)} ({num(lo)}–{num(hi)})"


def matmul(d):
    runs = {}
    for key in ("cublas", "trusted", "checked", "dawn"):
        for f in sorted(glob.glob(os.path.join(d, f"mm_{key}[0-9]*.tsv"))):
            for r in read(f):
                if r.get("unit", "GFLOP/s") != "GFLOP/s" and "copy" in r.get("kernel", ""):
                    continue
                cell = runs.setdefault((key, r["kernel"], r["size"]), [])
                cell.append((float(r["rate"]), ok(r["verified"])))
    if not runs:
        print("Matmul: not measured (no mm_*.tsv).\n")
        return
    sizes = sorted({s for (_, _, s) in runs}, key=int)
    for size in sizes:
        cub = [v for (k, kern, s), v in runs.items() if k == "cublas" and s == size]
        cub_rate = statistics.median([x for x, _ in cub[0]]) if cub else None
        print(f"**Matmul at {size}³**, GFLOP/s: the median of {max(len(v) for v in runs.values())} whole runs "
              "(slowest–fastest), % of cuBLAS's median.")
        if cub:
            rates = [x for x, _ in cub[0]]
            print(f"cuBLAS SGEMM (TF32 off): {fmt_spread(cub_rate, min(rates), max(rates))}"
                  f"{'' if all(v for _, v in cub[0]) else ' NOT VERIFIED'}.\n")
        else:
            print("cuBLAS: not measured.\n")
        kernels = []
        for (k, kern, s) in runs:
            if s == size and k != "cublas" and kern not in kernels:
                kernels.append(kern)
        print("| kernel | " + " | ".join(n for _, n in PATHS) + " |")
        print("| --- | " + " | ".join("---:" for _ in PATHS) + " |")
        best = {}
        for kern in kernels:
            cells = []
            for key, _ in PATHS:
                v = runs.get((key, kern, size))
                if not v:
                    cells.append("–")
                    continue
                rates = [x for x, _ in v]
                med = statistics.median(rates)
                verified = all(y for _, y in v)
                txt = fmt_spread(med, min(rates), max(rates))
                if cub_rate:
                    txt += f" {100 * med / cub_rate:.0f} %"
                if not verified:
                    txt += " NOT VERIFIED"
                elif med > best.get(key, (0, ""))[0]:
                    best[key] = (med, kern)
                cells.append(txt)
            print(f"| `{kern}` | " + " | ".join(cells) + " |")
        print()
        for key, name in PATHS:
            if key in best:
                med, kern = best[key]
                pct = f", {100 * med / cub_rate:.0f} % of cuBLAS" if cub_rate else ""
                print(f"- best through {name}: `{kern}` {num(med)} GFLOP/s{pct}")
        if cub_rate and "dawn" in best:
            p = best["dawn"][0] / cub_rate
            print(f"\nGoal (≥ {MATMUL_GOAL:.0%} of cuBLAS through Dawn): "
                  f"{'REACHED' if p >= MATMUL_GOAL else 'NOT reached'}, {100 * p:.0f} %.\n")
        else:
            print("\nGoal: not judged (no cuBLAS or no Dawn figure).\n")


def conv_rows(d, prefix):
    """(shape, label) -> {path: row}, in file order."""
    out = {}
    for key, _ in PATHS:
        for r in read(os.path.join(d, f"{prefix}_{key}.tsv")):
            out.setdefault((r["shape"], r["stage"]), {})[key] = r
    return out


def conv_cell(r, ctf):
    g = float(r["gflops_median"]) / 1e3
    work = g * float(r["ms_median"])
    lo, hi = work / float(r["ms_max"]), work / float(r["ms_min"])
    txt = fmt_spread(g, lo, hi)
    if ctf:
        txt += f" {100 * g / ctf:.0f} %"
    if not ok(r["verified"]):
        txt += " NOT VERIFIED"
    return g, txt


def conv_table(title, rows, cudnn, best):
    if not rows:
        print(f"{title} not measured.\n")
        return
    print(f"{title} TFLOP/s of the median run (slowest–fastest run), % of cuDNN; checked and Dawn "
          "also as % of trusted.\n")
    print("| shape | stage (block, split-K) | cuDNN | " + " | ".join(n for _, n in PATHS)
          + " | checked / trusted | Dawn / trusted |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in PATHS) + " | ---: | ---: |")
    for (shape, label), per in rows.items():
        c = cudnn.get(shape)
        ctf = float(c["tflops_median"]) if c else None
        cstr = num(ctf) if ctf else "–"
        cells, tf = [], {}
        for key, _ in PATHS:
            r = per.get(key)
            if not r:
                cells.append("–")
                continue
            g, txt = conv_cell(r, ctf)
            tf[key] = g
            cells.append(txt)
            if ok(r["verified"]) and g > best.get((shape, key), (0.0, ""))[0]:
                best[(shape, key)] = (g, label)
        ratio = lambda k: f"{100 * tf[k] / tf['trusted']:.0f} %" if k in tf and tf.get("trusted") else "–"
        print(f"| {shape} | {label} | {cstr} | " + " | ".join(cells)
              + f" | {ratio('checked')} | {ratio('dawn')} |")
    print()


def conv(d):
    cudnn = {r["shape"]: r for r in read(os.path.join(d, "cudnn.tsv"))}
    if cudnn:
        print("cuDNN (TF32 off, NCHW), TFLOP/s of the median run (slowest–fastest run): " + "; ".join(
            f"{s} {num(float(r['tflops_median']))}" + (" NOT VERIFIED" if not ok(r.get("verified", "True")) else "")
            for s, r in cudnn.items()) + ".\n")
    else:
        print("cuDNN: not measured.\n")
    best, own = {}, {}
    conv_table("**The 7×7 stem: implicit GEMM blocks and split-K slices forced**:", conv_rows(d, "stem"), cudnn, best)
    conv_table("**Every conv stage (the runtime's own plans)**:", conv_rows(d, "conv"), cudnn, own)
    for k, v in own.items():
        if v[0] > best.get(k, (0.0, ""))[0]:
            best[k] = v
    shapes = []
    for (shape, _key) in best:
        if shape not in shapes:
            shapes.append(shape)
    if not shapes:
        return
    print("**Best verified configuration per shape and path** (stem rows included), % of cuDNN:\n")
    print("| shape | cuDNN | " + " | ".join(n for _, n in PATHS) + " |")
    print("| --- | ---: | " + " | ".join("---" for _ in PATHS) + " |")
    goal, goal_own = [], []
    for shape in shapes:
        c = cudnn.get(shape)
        ctf = float(c["tflops_median"]) if c else None
        cells = []
        for key, _ in PATHS:
            g, label = best.get((shape, key), (0.0, ""))
            if not g:
                cells.append("–")
                continue
            pct = f" **{100 * g / ctf:.0f} %**" if ctf else ""
            cells.append(f"{num(g)}{pct} ({label})")
            if key == "dawn" and ctf and shape in RESNET:
                goal.append((shape, g / ctf))
                if (shape, key) in own:
                    goal_own.append((shape, own[(shape, key)][0] / ctf))
        print(f"| {shape} | {num(ctf) if ctf else '–'} | " + " | ".join(cells) + " |")
    for name, g in (("with the runtime's own plans", goal_own),
                    ("if the runtime picked the best forced stem configuration", goal)):
        if len(g) == len(RESNET):
            reached = all(p >= CONV_GOAL for _, p in g)
            print(f"\nGoal (≥ {CONV_GOAL:.0%} of cuDNN at every ResNet shape through Dawn), {name}: "
                  f"{'REACHED' if reached else 'NOT reached'}: " + ", ".join(f"{100 * p:.0f} %" for _, p in g) + ".")
        else:
            print(f"\nConv goal {name}: not judged ({len(g)} of {len(RESNET)} ResNet shapes have cuDNN and Dawn).")
    print()


def mlp(d):
    rows = []
    for f in sorted(glob.glob(os.path.join(d, "mlp", "*.tsv"))):
        rows += read(f)
    if not rows:
        print("MLP training step: not measured.\n")
        return
    name = {"wgpu-default": {"trusted": "wgpu trusted", "checked": "wgpu checked (Firefox)"},
            "dawn": {"dawn": "Dawn (Chrome)"}}
    cols = []
    for r in rows:
        c = (int(r["batch"]), int(r["per_submit"]))
        if c not in cols:
            cols.append(c)
    cols.sort(key=lambda c: (-c[0], c[1]))
    print("**MLP training step** (2-16-16-2, Adam), µs per step, wall clock, median of "
          f"{rows[0]['runs']} runs (fastest–slowest); verified: worst gap / bound against the CPU twin.\n")
    print("| path | " + " | ".join(f"batch {b:,}, {k} per submit" for b, k in cols) + " |")
    print("| --- | " + " | ".join("---:" for _ in cols) + " |")
    order = ["wgpu trusted", "wgpu checked (Firefox)", "Dawn (Chrome)"]
    paths = []
    for r in rows:
        p = name.get(r["path"], {}).get(r["checks"], f"{r['path']} {r['checks']}")
        if p not in paths:
            paths.append(p)
    paths.sort(key=lambda p: order.index(p) if p in order else len(order))
    for p in paths:
        cells = []
        for b, k in cols:
            r = next((r for r in rows if name.get(r["path"], {}).get(r["checks"], f"{r['path']} {r['checks']}") == p
                      and int(r["batch"]) == b and int(r["per_submit"]) == k), None)
            if not r:
                cells.append("–")
                continue
            w = float(r["worst_over_bound"])
            v = "" if w <= 1.0 else " NOT VERIFIED"
            cells.append(fmt_spread(float(r["median_us"]), float(r["min_us"]), float(r["max_us"]))
                         + f" [{w:.3f}]{v}")
        print(f"| {p} | " + " | ".join(cells) + " |")
    print()


def cnn(d):
    rows = []
    for f, p in (("wgpu.tsv", "wgpu trusted"), ("wgpu_checked.tsv", "wgpu checked (Firefox)"),
                 ("dawn.tsv", "Dawn (Chrome)")):
        for r in read(os.path.join(d, "cnn", f)):
            if r["what"].endswith("-step"):
                rows.append((p, r))
    if not rows:
        print("CNN training step: not measured.\n")
        return
    batches = sorted({int(r["batch"]) for _, r in rows})
    print("**CNN training step** (the page's default network), ms per step, median of the runs "
          "(fastest–slowest); each batch verified in lockstep with the CPU twin first.\n")
    print("| path | " + " | ".join(f"batch {b}" for b in batches) + " |")
    print("| --- | " + " | ".join("---:" for _ in batches) + " |")
    for p in dict.fromkeys(p for p, _ in rows):
        cells = []
        for b in batches:
            r = next((r for q, r in rows if q == p and int(r["batch"]) == b), None)
            if not r or r["median"] in ("NaN", ""):
                cells.append("–" if not r else f"NOT MEASURED ({r['extra']})")
                continue
            v = "" if r["extra"].startswith("verified") else f" {r['extra']}"
            cells.append(fmt_spread(float(r["median"]), float(r["min"]), float(r["max"])) + v)
        print(f"| {p} | " + " | ".join(cells) + " |")
    print()


def clamps(d):
    for f, title in (("naga_clamps.md", "naga (wgpu): what the runtime checks add"),
                     ("tint_clamps.md", "Tint (Dawn), robustness on")):
        p = os.path.join(d, f)
        if os.path.exists(p):
            print(f"**Clamps, {title}:**\n")
            print("".join(l for l in open(p) if l.startswith("|")))


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "--dir":
        sys.exit(__doc__)
    d = sys.argv[2]
    matmul(d)
    conv(d)
    mlp(d)
    cnn(d)
    clamps(d)


if __name__ == "__main__":
    main()
