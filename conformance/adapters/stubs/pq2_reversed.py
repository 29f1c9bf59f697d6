#!/usr/bin/env python3
"""Stub 'pq2_reversed': a PQ2_0 reader with the classic reversed 2-bit order -- element j of a
block read from bits 6-2*(j%4) of byte j//4 instead of bits 2*(j%4), LSB first
(spec/codecs.md#pq2-0). Used by tests/it/check_reader_localize.rs to show check-reader's failure
localisation (PROTOCOL.md §4.7).

It decodes PQ2_0 and Q2_0-g64 codec vectors and type-142 GGUF tensors itself; every other request
is forwarded to the reference adapter (`ninfer-ternary reader-adapter`, binary from $NINFER_BIN or
target/release), so only those cases fail. It answers the optional `localize` request member with
its own values (f32 bit patterns) and per-row digests.

`--bug unknown` swaps the reversed order for a bug no known decoder reproduces (element 7 of every
block read at half scale): the negative control of the "looks like" line. Standard library only.
"""
import hashlib
import json
import math
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("NINFER_BIN") or os.path.join(HERE, "..", "..", "..", "target", "release", "ninfer-ternary")
BUG = "reversed"


def f16(b):
    return struct.unpack("<e", bytes(b))[0]


def dec_pq2(data, block_elems):
    bb = 2 + block_elems // 4
    out = []
    for o in range(0, len(data), bb):
        d = f16(data[o:o + 2])
        qs = data[o + 2:o + bb]
        for j in range(block_elems):
            if BUG == "reversed":
                code = (qs[j // 4] >> (6 - 2 * (j % 4))) & 3
                out.append((code - 1) * d)
            else:
                code = (qs[j // 4] >> (2 * (j % 4))) & 3
                out.append((code - 1) * d * (0.5 if j == 7 else 1.0))
    return out


def bits(v):
    if math.isnan(v):
        return 0x7FC00000
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    return 0 if b == 0x80000000 else b


def digest(vals):
    return hashlib.sha256(b"".join(struct.pack("<I", bits(v)) for v in vals)).hexdigest()


def localize(vals, cols, tensor):
    rows = [digest(vals[i:i + cols]) for i in range(0, len(vals), cols)] if cols else []
    raw = [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
    return {"tensor": tensor, "rows_sha256": rows, "f32_bits": raw}


def reference(req, path):
    p = subprocess.run([BIN, "reader-adapter", path], input=json.dumps(req), capture_output=True, text=True)
    return p.stdout, p.returncode


def gguf_tensors(data):
    """(name, type, ne, bytes) of every tensor of a little-endian GGUF v2/v3 file."""
    pos = 8
    n_t, n_kv = struct.unpack_from("<QQ", data, pos)
    pos += 16
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    align = 32

    def string(pos):
        n = struct.unpack_from("<Q", data, pos)[0]
        return data[pos + 8:pos + 8 + n].decode("utf-8", "replace"), pos + 8 + n

    def value(t, pos):
        if t == 8:
            return string(pos)
        if t == 9:
            et, cnt = struct.unpack_from("<IQ", data, pos)
            pos += 12
            for _ in range(cnt):
                _, pos = value(et, pos)
            return None, pos
        v = data[pos:pos + sizes[t]]
        return v, pos + sizes[t]

    for _ in range(n_kv):
        key, pos = string(pos)
        t = struct.unpack_from("<I", data, pos)[0]
        v, pos = value(t, pos + 4)
        if key == "general.alignment" and t == 4:
            align = struct.unpack("<I", v)[0]
    infos = []
    for _ in range(n_t):
        name, pos = string(pos)
        nd = struct.unpack_from("<I", data, pos)[0]
        ne = list(struct.unpack_from("<%dQ" % nd, data, pos + 4))
        pos += 4 + 8 * nd
        t, off = struct.unpack_from("<IQ", data, pos)
        pos += 12
        infos.append((name, t, ne, off))
    base = (pos + align - 1) // align * align
    out = []
    for name, t, ne, off in infos:
        n = 1
        for x in ne:
            n *= x
        nbytes = n // 128 * 34 if t == 142 else 0
        out.append((name, t, ne, data[base + off:base + off + nbytes]))
    return out


def answer(req, path):
    kind, params = req.get("kind"), req.get("params", {})
    with open(path, "rb") as f:
        data = f.read()
    if kind == "codec" and params.get("codec") in ("pq2_0", "q2_0_g64"):
        be = 128 if params["codec"] == "pq2_0" else 64
        rows, cols = params["rows"], params["cols"]
        if rows * cols % be or rows * cols // be * (2 + be // 4) != len(data):
            return {"result": "reject", "class": "codec.length", "message": "size"}, 1
        vals = dec_pq2(data, be)
        obs = {"values": len(vals), "sha256": digest(vals),
               "rows_sha256": [digest(vals[i:i + cols]) for i in range(0, len(vals), cols)] if cols else []}
        if "localize" in req:
            obs["localize"] = localize(vals, cols, None)
        return {"result": "accept", "observation": obs}, 0
    ref_req = {k: v for k, v in req.items() if k != "localize"}
    out, code = reference(ref_req, path)
    if kind != "gguf" or code != 0 or data[:4] != b"GGUF":
        return out, code
    ans = json.loads(out)
    want = (req.get("localize") or {}).get("tensor")
    try:
        tensors = gguf_tensors(data)
    except Exception:  # not ours to judge: keep the reference's answer
        return out, code
    for name, t, ne, raw in tensors:
        if t != 142:
            continue
        vals = dec_pq2(raw, 128)
        for o in ans["observation"].get("tensors", []):
            if o.get("name") == name:
                o["values_sha256"] = digest(vals)
        if name == want:
            ans["observation"]["localize"] = localize(vals, ne[0], name)
    return ans, 0


def main(argv):
    global BUG
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--bug":
        BUG = args[1]
        args = args[2:]
    if not args:
        sys.stderr.write("usage: pq2_reversed.py [--bug reversed|unknown] CASEFILE\n")
        return 2
    req = json.loads(sys.stdin.read() or "{}")
    ans, code = answer(req, args[-1])
    sys.stdout.write((ans if isinstance(ans, str) else json.dumps(ans)).rstrip("\n") + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
