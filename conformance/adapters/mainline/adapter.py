#!/usr/bin/env python3
"""Mainline adapter (conformance/PROTOCOL.md §6.1): the JSON protocol around driver.c, which
calls llama.cpp's gguf_init_from_file (ggml/src/gguf.cpp) and ggml's type_traits to_float,
built by scripts/setup-mainline.sh from the pinned PyPI llama-cpp-python sdist.

Usage: adapter.py [--alloc] CASEFILE   (request JSON on stdin)
  default  no_alloc=true, as llama.cpp's model loader calls gguf_init_from_file
  --alloc  no_alloc=false: gguf.cpp also reads the tensor data

Every accept/reject verdict is gguf.cpp's. This wrapper only turns the driver's dump into the
observation of PROTOCOL.md §4.2 (digests); it validates nothing. Where ggml has no to_float
(F32, I32) it decodes those two trivially (F32 as is, I32 cast to f32). gguf.cpp has no consumer
step, so params.consumer (decode-phase cases, rule layer `loader`) is not run."""
import hashlib
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DRIVER = os.environ.get("MAINLINE_DRIVER",
                        os.path.join(ROOT, "target", "mainline", "bin", "gguf-mainline"))
F32, I32 = 0, 26


def answer(obj, code):
    print(json.dumps(obj, separators=(",", ":")))
    sys.exit(code)


def canonical_values(raw):
    """PROTOCOL.md §4.1: f32 LE, every NaN -> 0x7fc00000, -0.0 -> +0.0."""
    out = bytearray()
    for (bits,) in struct.iter_unpack("<I", raw):
        if (bits & 0x7F800000) == 0x7F800000 and (bits & 0x007FFFFF):
            bits = 0x7FC00000
        elif bits == 0x80000000:
            bits = 0
        out += struct.pack("<I", bits)
    return bytes(out)


def main():
    args = sys.argv[1:]
    alloc = "--alloc" in args
    args = [a for a in args if a != "--alloc"]
    req = json.loads(sys.stdin.read() or "{}")
    kind = req.get("kind")
    if kind != "gguf":
        answer({"result": "unsupported", "feature": f"kind:{kind}"}, 0)
    params = req.get("params") or {}
    if params.get("mode", "strict") != "strict":
        answer({"result": "unsupported", "feature": "gguf:mode-spec"}, 0)
    path = args[-1] if args else req.get("file")
    p = subprocess.run([DRIVER, "0" if alloc else "1", path], capture_output=True)
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    if p.returncode == 1 and p.stdout.strip() == b"reject":
        msg = " | ".join(err[-3:]) or "gguf_init_from_file returned NULL"
        answer({"result": "reject", "class": None, "message": msg}, 1)
    if p.returncode != 0:
        # A crash of the driver (gguf.cpp or ggml) is a crash of this reader: die the same way.
        sys.stderr.write(p.stderr.decode("utf-8", "replace"))
        sys.stderr.flush()
        if p.returncode < 0:
            os.kill(os.getpid(), -p.returncode)
        sys.exit(128 + 6)
    lines = p.stdout.decode("ascii").splitlines()
    head = lines[0].split()
    assert head[0] == "gguf", head
    version, alignment = int(head[1]), int(head[2])
    records, keys, tensors = [], [], []
    for line in lines[1:]:
        f = line.split(" ")
        if f[0] == "kv":
            rec = bytes.fromhex(f[1])
            n = struct.unpack_from("<Q", rec, 0)[0]
            key = rec[8:8 + n]
            records.append((key, rec))
            keys.append(key.decode("utf-8", "replace"))
        elif f[0] == "tensor":
            name = bytes.fromhex(f[1]).decode("utf-8", "replace")
            ttype = int(f[2])
            ne = [int(x) for x in f[3:7]]
            t = {"name": name, "type": ttype, "ne": ne}
            data = None if f[9] == "-" else bytes.fromhex(f[9])
            if data is None:
                t["data"] = "outside the file"
            else:
                t["data_sha256"] = hashlib.sha256(data).hexdigest()
                if f[10] != "-":
                    vals = bytes.fromhex(f[10])
                elif ttype == F32:
                    vals = data
                elif ttype == I32:
                    vals = b"".join(struct.pack("<f", float(x)) for (x,) in struct.iter_unpack("<i", data))
                else:
                    vals = None
                if vals is not None:
                    t["values_sha256"] = hashlib.sha256(canonical_values(vals)).hexdigest()
            tensors.append(t)
    ordered = b"".join(r for _, r in records)
    unordered = b"".join(r for _, r in sorted(records, key=lambda x: x[0]))
    obs = {
        "version": version,
        "alignment": alignment,
        "kv_count": len(records),
        "keys": keys,
        "metadata_sha256": hashlib.sha256(ordered).hexdigest(),
        "metadata_unordered_sha256": hashlib.sha256(unordered).hexdigest(),
        "tensors": tensors,
    }
    answer({"result": "accept", "observation": obs}, 0)


if __name__ == "__main__":
    main()
