#!/usr/bin/env python3
"""Turns criterion's results (target/criterion/**/new/{benchmark,estimates}.json) into the
benches/RESULTS.md tables: measured / bound / ratio per issue-#14 target, every bench id.

Usage:
  scripts/bench-report.py [--run] [--gguf-py] [--criterion DIR] [-o FILE]

  --run      first run `cargo bench --benches` (recording `uptime` before and after), so the
             tables come from one run; without it the existing results are read.
  --gguf-py  also run scripts/bench_vs_gguf_py.py (needs .venv from scripts/setup-python.sh) on
             the release binary right after the benches, and append its table.
  -o FILE    write the Markdown there (default: stdout).

Medians of criterion's estimates are used throughout. Bounds, all from the same run:
  decode l2        12 G weights/s per thread (issue #14 target 1)
  decode dram      traffic = G w/s x (4 B written + input bytes per weight read), against the
                   copy traffic of memcpy/copy_from_slice/dram (2 x bytes copied); target >= 0.90
  parallel dram    decode/*/parallel ÷ the best single-thread dram row; target >= 1.8 on two
                   cores, shown with the real bound memcpy/parallel_copy ÷ copy_from_slice
  gathers, planes, fingerprints: GB/s against memcpy in the same run
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Input bytes per weight of each codec (Codec::block_bytes / block_elems), checked against
# spec/ggml_types.json below wherever the spec names the codec.
IN_BYTES = {
    "f32": (4, 1), "f16": (2, 1), "bf16": (2, 1), "i32": (4, 1), "q8_0": (34, 32),
    "pq2_0": (34, 128), "q2_0_g64": (18, 64), "ptq1_0": (28, 128), "tq1_0": (54, 256),
    "tq2_0": (66, 256), "q1_0": (18, 128), "q2_0s_planar": (10, 32),
}
TERNARY = ["pq2_0", "q2_0_g64", "ptq1_0", "tq1_0", "tq2_0"]
SIZES = ["l1", "l2", "l3", "dram"]


def cpu_vendor():
    """The vendor_id line of /proc/cpuinfo (what `simd::cpu_vendor` reads with CPUID)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def check_in_bytes():
    spec = json.loads((ROOT / "spec" / "ggml_types.json").read_text())
    for t in spec["types"] + spec.get("variants", []):
        c = t.get("codec")
        if c in IN_BYTES and "block_bytes" in t and "block_elems" in t:
            want = IN_BYTES[c]
            got = (t["block_bytes"], t["block_elems"])
            if got != want:
                sys.exit(f"bench-report: {c} is {got} in spec/ggml_types.json, {want} here")


def load(crit: Path):
    """{(group, function, value): (median ns per iteration, throughput dict)}"""
    out = {}
    for bj in crit.glob("**/new/benchmark.json"):
        b = json.loads(bj.read_text())
        e = json.loads((bj.parent / "estimates.json").read_text())
        key = (b["group_id"], b.get("function_id") or "", b.get("value_str") or "")
        out[key] = (e["median"]["point_estimate"], b.get("throughput") or {})
    return out


def rate(r, key):
    """Per-second throughput of bench `key` (elements or bytes per s), or None."""
    v = r.get(key)
    if not v:
        return None
    ns, tp = v
    n = tp.get("Elements") or tp.get("Bytes") or tp.get("BytesDecimal")
    return n / (ns * 1e-9) if n else None


def f(x, d=2):
    return "—" if x is None else f"{x:.{d}f}"


def decode_tables(r, lines):
    paths = []
    for (g, fn, _v) in r:
        if g == "decode" and "/" in fn:
            p = fn.split("/", 1)[1]
            if p not in paths:
                paths.append(p)
    order = ["reference", "scalar", "sse2", "avx2", "avx512", "neon", "parallel", "dispatch"]
    paths.sort(key=lambda p: (order.index(p.split("+")[0]) if p.split("+")[0] in order else 99, p))
    lines += ["## Decode, G weights/s (`decode/{codec}/{path}/{size}`)", "",
              "| codec | path | l1 | l2 | l3 | dram |", "|---|---|--:|--:|--:|--:|"]
    codecs = TERNARY + [c for c in IN_BYTES if c not in TERNARY]
    for c in codecs:
        for p in paths:
            vals = [rate(r, ("decode", f"{c}/{p}", s)) for s in SIZES]
            if any(v is not None for v in vals):
                lines.append(f"| {c} | {p} | " + " | ".join(f(v and v / 1e9) for v in vals) + " |")
    lines.append("")
    lines.append("`+stream` = non-temporal stores at dram; the per-path rows store ordinarily "
                 "(results up to 2026-12-02 02:10 UTC used the opposite labels, `+cached` for "
                 "ordinary stores and streaming from 16 MiB under `Auto`); "
                 "`parallel` = `decode_parallel(…, 0)`, stores as `Stores::Auto` picks them "
                 f"on this machine (CPU vendor {cpu_vendor()}: `StorePolicy` streams outputs "
                 "from 16 MiB on Intel, stores ordinarily elsewhere"
                 + (f"; `NINFER_STORES={os.environ['NINFER_STORES']}` was set" if os.environ.get("NINFER_STORES") else "")
                 + ").")
    lines.append("")


def memcpy_table(r, lines):
    lines += ["## Machine bound in the same run (`memcpy/*`)", "",
              "| bench | size | GB/s copied | traffic GB/s (read + write) |", "|---|---|--:|--:|"]
    for fn in ["copy_from_slice", "parallel_copy"]:
        for s in SIZES:
            v = rate(r, ("memcpy", fn, s))
            if v:
                lines.append(f"| {fn} | {s} | {v / 1e9:.2f} | {2 * v / 1e9:.2f} |")
    lines.append("")


def targets_table(r, lines):
    copy = rate(r, ("memcpy", "copy_from_slice", "dram"))
    pcopy = rate(r, ("memcpy", "parallel_copy", "dram"))
    lines += ["## Targets (issue #14.1): measured / bound / ratio", "",
              "| codec | best l2 G w/s (path) | ÷ 12 | best single dram G w/s (path) | dram traffic GB/s "
              "| copy traffic GB/s | ratio (≥ 0.90) | parallel dram G w/s | parallel ÷ single (≥ 1.8) "
              "| parallel traffic ÷ parallel copy traffic |",
              "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    par_l3 = []
    for c in TERNARY:
        l3 = {fn.split("/")[1]: rate(r, k) for k in r if k[0] == "decode"
              for fn in [k[1]] if fn.startswith(c + "/") and k[2] == "l3"
              and "parallel" not in fn and "reference" not in fn}
        l3 = {k: v for k, v in l3.items() if v}
        pl3 = rate(r, ("decode", f"{c}/parallel", "l3"))
        if l3 and pl3:
            best = max(l3, key=l3.get)
            par_l3.append((c, l3[best], best, pl3))
        l2 = {fn.split("/")[1]: rate(r, k) for k in r if k[0] == "decode"
              for fn in [k[1]] if fn.startswith(c + "/") and k[2] == "l2" and "reference" not in fn}
        dram = {fn.split("/")[1]: rate(r, k) for k in r if k[0] == "decode"
                for fn in [k[1]] if fn.startswith(c + "/") and k[2] == "dram"
                and "parallel" not in fn}
        l2 = {k: v for k, v in l2.items() if v}
        dram = {k: v for k, v in dram.items() if v}
        if not l2 and not dram:
            continue
        bl2 = max(l2, key=l2.get) if l2 else None
        bd = max(dram, key=dram.get) if dram else None
        l2v, dv = l2.get(bl2), dram.get(bd)
        b, e = IN_BYTES[c]
        per_w = 4 + b / e
        traffic = dv and dv * per_w
        par = rate(r, ("decode", f"{c}/parallel", "dram"))
        lines.append(
            f"| {c} | {f(l2v and l2v / 1e9)} ({bl2}) | {f(l2v and l2v / 12e9)} | {f(dv and dv / 1e9)} ({bd}) "
            f"| {f(traffic and traffic / 1e9, 1)} | {f(copy and 2 * copy / 1e9, 1)} "
            f"| {f(traffic and copy and traffic / (2 * copy))} "
            f"| {f(par and par / 1e9)} | {f(par and dv and par / dv)} "
            f"| {f(par and pcopy and par * per_w / (2 * pcopy))} |")
    lines.append("")
    if copy and pcopy:
        lines.append(f"Two-core copy ÷ one-core copy at dram in this run: {pcopy / copy:.2f} "
                     "(the ceiling of any memory-bound parallel speed-up on this machine).")
        lines.append("")
    if par_l3:
        copy3 = rate(r, ("memcpy", "copy_from_slice", "l3"))
        pcopy3 = rate(r, ("memcpy", "parallel_copy", "l3"))
        lines += ["Every core on an L3-resident slab (2 Mi weights, 8 MiB out), where DRAM does not "
                  "cap the split:", "",
                  "| codec | best single l3 G w/s (path) | parallel l3 G w/s | parallel ÷ single (≥ 1.8) |",
                  "|---|--:|--:|--:|"]
        for c, v, best, p in par_l3:
            lines.append(f"| {c} | {v / 1e9:.2f} ({best}) | {p / 1e9:.2f} | {p / v:.2f} |")
        lines.append("")
        if copy3 and pcopy3:
            lines.append(f"Two-core copy ÷ one-core copy at l3 in this run: {pcopy3 / copy3:.2f}.")
            lines.append("")


def simple_table(r, lines, group, title, elem_unit, bound=None):
    """One row per bench of `group`: median time and throughput (GB/s for byte throughput,
    G `elem_unit`/s for element throughput, runs/s without one), and ÷ memcpy dram (GB/s)."""
    rows = sorted(k for k in r if k[0] == group)
    if not rows:
        return
    head = "| bench | input | median | throughput |" + (" ÷ memcpy dram copy |" if bound else "")
    lines += [f"## {title} (`{group}/*`)", "", head,
              "|---|---|--:|--:|" + ("--:|" if bound else "")]
    for k in rows:
        ns, tp = r[k]
        v = rate(r, k)
        t = f"{ns / 1e6:.3f} ms" if ns < 1e9 else f"{ns / 1e9:.2f} s"
        if "Bytes" in tp or "BytesDecimal" in tp:
            thr, ratio = f"{v / 1e9:.3f} GB/s", f(bound and v / bound)
        elif "Elements" in tp:
            thr, ratio = f"{v / 1e9:.3f} G {elem_unit}/s", "—"
        else:
            thr, ratio = f"{1e9 / ns:.1f} runs/s", "—"
        row = f"| {k[1]} | {k[2]} | {t} | {thr} |"
        if bound:
            row += f" {ratio} |"
        lines.append(row)
    lines.append("")


def directory_table(r, lines):
    rows = sorted((k for k in r if k[0] == "directory"), key=lambda k: (k[1], int(k[2] or 0)))
    if not rows:
        return
    lines += ["## `.ninfer` directory parse (`directory/*`): objects/s (flat = linear)", "",
              "| bench | objects | median | M objects/s |", "|---|--:|--:|--:|"]
    for k in rows:
        v = rate(r, k)
        lines.append(f"| {k[1]} | {k[2]} | {r[k][0] / 1e6:.2f} ms | {f(v and v / 1e6, 3)} |")
    lines.append("")


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime unavailable"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--gguf-py", action="store_true")
    ap.add_argument("--criterion", default=str(ROOT / "target" / "criterion"))
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    check_in_bytes()
    lines = ["# Benchmark results", ""]
    if a.run:
        before = uptime()
        subprocess.run(["cargo", "bench", "--benches"], cwd=ROOT, check=True)
        after = uptime()
        lines += [f"One `cargo bench --benches` run. `uptime` before: `{before}`; after: `{after}`.", ""]
    else:
        lines += [f"From existing results in `{a.criterion}` (report written at `{uptime()}`).", ""]
    r = load(Path(a.criterion))
    if not r:
        sys.exit(f"bench-report: no criterion results under {a.criterion}")
    copy = rate(r, ("memcpy", "copy_from_slice", "dram"))
    targets_table(r, lines)
    memcpy_table(r, lines)
    decode_tables(r, lines)
    simple_table(r, lines, "parallel_overhead", "Fixed cost of a split (scoped spawn + join)", "elem")
    simple_table(r, lines, "split_crossover", "One thread against two, split forced (sets MIN_ELEMS_PER_THREAD)", "weights")
    simple_table(r, lines, "quantize", "Quantize (reference quantizers)", "weights")
    simple_table(r, lines, "planes", "Plane assemble / disassemble", "elem", copy)
    simple_table(r, lines, "gather", "Row gathers (27B shapes)", "rows", copy)
    simple_table(r, lines, "fingerprint", "Row fingerprints", "elem", copy)
    simple_table(r, lines, "hadamard", "Hadamard transform", "butterflies")
    simple_table(r, lines, "gguf_header", "GGUF header parse, 27B (851 tensors)", "elem")
    simple_table(r, lines, "verify_gate", "Verify gates on the nano artifact", "elem")
    simple_table(r, lines, "corpus", "Corpus generation", "elem")
    directory_table(r, lines)
    if a.gguf_py:
        binary = ROOT / "target" / "release" / "ninfer-ternary"
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
        py = ROOT / ".venv" / "bin" / "python"
        out = subprocess.run([str(py), str(ROOT / "scripts" / "bench_vs_gguf_py.py"), str(binary)],
                             check=True, capture_output=True, text=True).stdout
        lines += ["## Side by side with gguf-py (same bytes, same run)", "", "```", out.rstrip(), "```",
                  f"`uptime` after: `{uptime()}`", ""]
    text = "\n".join(lines) + "\n"
    if a.output:
        Path(a.output).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
