#!/usr/bin/env python3
"""Side-by-side decode throughput: ninfer-ternary's fast paths vs gguf-py 0.19.0's numpy
dequantize, on the same bytes, in the same run, single thread, plus the machine's copy bandwidth.

Usage: bench_vs_gguf_py.py BIN [ROWS COLS]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from gguf import GGUFReader  # noqa: E402
from gguf.quants import dequantize  # noqa: E402


def main() -> int:
    binary = sys.argv[1]
    rows, cols = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("4096", "5120")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "slabs.gguf")
        out = subprocess.run([binary, "bench-decode", "--rows", rows, "--cols", cols, "--write", path],
                             check=True, capture_output=True, text=True).stdout
        ours = [json.loads(line) for line in out.splitlines()]
        reader = GGUFReader(path)
        peer = {}
        for t in reader.tensors:
            codec = t.name.split(".", 1)[1]
            try:
                best = min(timed(lambda: dequantize(t.data, t.tensor_type)) for _ in range(3))
            except (NotImplementedError, ValueError, KeyError) as e:
                peer[codec] = None
                print(f"gguf-py cannot decode {codec}: {type(e).__name__}")
                continue
            peer[codec] = t.n_elements / best / 1e9
    bw = next(r for r in ours if "memcpy_bytes" in r)
    print(f"machine copy bandwidth: {bw['copy_gb_per_s']:.1f} GB/s copied ({bw['traffic_gb_per_s']:.1f} GB/s read+write)")
    in_bytes = {"pq2_0": 34 / 128, "ptq1_0": 28 / 128, "tq1_0": 54 / 256, "tq2_0": 66 / 256}
    print(f"{'codec':<8} {'ours G w/s':>11} {'gguf-py G w/s':>14} {'ratio':>7} {'ours traffic GB/s':>18} {'of copy traffic':>15}")
    for r in ours:
        if "codec" not in r:
            continue
        p = peer.get(r["codec"])
        gbs = r["gweights_per_s"] * (4 + in_bytes[r["codec"]])  # f32 written + blocks read, per weight
        ratio = f"{r['gweights_per_s'] / p:7.1f}" if p else "    n/a"
        ptxt = f"{p:14.3f}" if p else f"{'unsupported':>14}"
        print(f"{r['codec']:<8} {r['gweights_per_s']:11.3f} {ptxt} {ratio} {gbs:18.1f} {gbs / bw['traffic_gb_per_s']:15.2f}")
    return 0


def timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
