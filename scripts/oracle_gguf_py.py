#!/usr/bin/env python3
"""Independent oracle: decode a GGUF written by ninfer-ternary with the PyPI package
gguf==0.19.0 (gguf-py's numpy dequantize) and require bit-identical f32 output from our
decoder (`ninfer-ternary decode`). Prints the count of tensors and values compared.

Usage: oracle_gguf_py.py BIN GGUF WORKDIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def differing(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Bit-identical f32, except that any NaN equals any NaN (payload bits are not a format fact)."""
    a, b = ours.view(np.uint32), ref.view(np.uint32)
    return (a != b) & ~(np.isnan(ours) & np.isnan(ref))


def negative_controls(ref: np.ndarray) -> list:
    """The comparison must catch a one-ulp change, a sign flip and a swapped pair."""
    broken = []
    finite = np.flatnonzero(np.isfinite(ref) & (ref != 0))
    i = int(finite[0])
    j = int(next(k for k in finite if ref[k] != ref[i]))
    ulp = ref.copy(); ulp.view(np.uint32)[i] ^= 1
    neg = ref.copy(); neg[i] = -neg[i]
    swp = ref.copy(); swp[[i, j]] = swp[[j, i]]
    for name, x in (("one ulp", ulp), ("sign flip", neg), ("swapped pair", swp)):
        if not differing(x, ref).any():
            broken.append(name)
    return broken


def main() -> int:
    np.seterr(all="ignore")
    binary, gguf_path, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    reader = GGUFReader(gguf_path)
    tensors = values = 0
    failures = []
    for t in reader.tensors:
        # gguf-py's view: t.data holds raw blocks (quantized) or typed values; dequantize
        # returns f32 (f16/bf16 widened exactly) in logical order, shape = reversed ne.
        ref = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(-1)
        out = work / (t.name.replace("/", "_") + ".npy")
        subprocess.run([binary, "decode", str(gguf_path), t.name, "-o", str(out), "--force"],
                       check=True, stdout=subprocess.DEVNULL)
        ours = np.load(out).reshape(-1)
        if ours.shape != ref.shape:
            failures.append(f"{t.name}: shape {ours.shape} vs gguf-py {ref.shape}")
            continue
        diff = differing(ours, ref)
        if diff.any():
            i = int(np.argmax(diff))
            failures.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} values differ; "
                            f"first at {i}: ours {ours[i]!r} ({a[i]:#010x}) vs gguf-py {ref[i]!r} ({b[i]:#010x})")
        tensors += 1
        values += ref.size
        print(f"  {t.name:<32} {t.tensor_type.name:<6} {ref.size:>9} values  {'OK' if not diff.any() else 'MISMATCH'}")
    survivors = negative_controls(ref)
    if survivors:
        failures.append(f"negative controls not detected by the comparison: {survivors}")
    else:
        print("  negative controls (one ulp, sign flip, swapped pair): all detected")
    kinds = sorted({t.tensor_type.name for t in reader.tensors})
    print(f"gguf-py oracle: {tensors} tensors, {values} values compared bit-for-bit ({', '.join(kinds)}); "
          f"{len(failures)} mismatching tensors")
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
