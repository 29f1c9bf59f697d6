#!/usr/bin/env python3
"""Stub 'planted': a reader author's ternary reader with one bug planted by `--bug NAME` (the
six-bug demo of conformance/README.md and tests/it/planted_readers.rs). Standard library only.

It decodes PQ2_0 and PTQ1_0 itself -- codec vectors, type-142/143 GGUF tensors and the
PQ2_0_G128/PTQ1_0_G128 objects of a `.ninfer` file -- and forwards everything else (and the
container facts) to the reference adapter (`ninfer-ternary reader-adapter`, binary from
$NINFER_BIN or target/release), overriding the digests of what it decoded. Like a reader that
sends what it has, every GGUF tensor and `.ninfer` object carries its per-row digests
(`rows_sha256`, PROTOCOL.md §4.7); the `localize` request member is answered with the values.

`--no-rows` leaves `rows_sha256` out of GGUF tensors and `.ninfer` objects (the control of the
row localisation).

Bugs (`--bug none` is the correct reader, the control):
  reversed_trits   PTQ1_0 base-3 digits read in reverse (digit n of a byte read as digit 4-n; qh 3-n)
  bf16_scale       the f16 scale read as bf16 (its two bytes the top half of an f32)
  last_block       the last block of every row skipped (left zero)
  unaligned_offset the GGUF data section taken to start right after the tensor infos (not aligned)
  code3_as_d       PQ2_0 code 3 decoded as +d (the spec: (code - 1) * d = +2d)
  swap_planes      the PTQ1_0 high and scale planes of a .ninfer object swapped (each read at the
                   other's offset); in a GGUF block or codec vector the qh and d fields exchanged
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("NINFER_BIN") or os.path.join(HERE, "..", "..", "..", "target", "release", "ninfer-ternary")
BUGS = ("none", "reversed_trits", "bf16_scale", "last_block", "unaligned_offset", "code3_as_d", "swap_planes")
BUG = "none"
ROWS = True
# codec -> (block elements, block bytes); the GGUF type ids (spec/ggml-types.md).
CODECS = {"pq2_0": (128, 34), "ptq1_0": (128, 28)}
GGUF_TYPES = {142: "pq2_0", 143: "ptq1_0"}
NINFER_FORMATS = {"PQ2_0_G128": "pq2_0", "PTQ1_0_G128": "ptq1_0"}


def scale(two):
    if BUG == "bf16_scale":
        return struct.unpack("<f", b"\x00\x00" + bytes(two))[0]
    return struct.unpack("<e", bytes(two))[0]


def digit(b, n):
    return (((b * 3 ** n) & 0xFF) * 3) >> 8


def dec_pq2(blk, _swapped_fields):
    d = scale(blk[0:2])
    out = []
    for j in range(128):
        code = (blk[2 + j // 4] >> (2 * (j % 4))) & 3
        out.append(d if BUG == "code3_as_d" and code == 3 else (code - 1) * d)
    return out


def dec_ptq1(blk, swapped_fields):
    qs, qh, d = blk[0:24], blk[24:26], blk[26:28]
    if swapped_fields:
        qh, d = d, qh
    rev = BUG == "reversed_trits"
    trits = []
    for lo, hi in ((0, 16), (16, 24)):
        for n in range(5):
            trits += [digit(b, 4 - n if rev else n) for b in qs[lo:hi]]
    for n in range(4):
        trits += [digit(b, 3 - n if rev else n) for b in qh]
    d = scale(d)
    return [(t - 1) * d for t in trits]


def decode(codec, data, row_blocks, planes=False):
    """The values of whole blocks; with `last_block`, the last block of each row left zero.
    `planes`: the blocks were assembled from `.ninfer` planes (a swap already happened there)."""
    swapped = BUG == "swap_planes" and not planes
    be, bb = CODECS[codec]
    f = dec_pq2 if codec == "pq2_0" else dec_ptq1
    out = []
    for i in range(len(data) // bb):
        if BUG == "last_block" and row_blocks and i % row_blocks == row_blocks - 1:
            out += [0.0] * be
        else:
            out += f(data[i * bb:(i + 1) * bb], swapped)
    return out


def bits(v):
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    if v != v:
        return 0x7FC00000
    return 0 if b == 0x80000000 else b


def digest(vals):
    return hashlib.sha256(b"".join(struct.pack("<I", bits(v)) for v in vals)).hexdigest()


def rows_of(vals, cols):
    return [digest(vals[i:i + cols]) for i in range(0, len(vals), cols)] if cols else []


def localize(vals, cols, tensor):
    raw = [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
    return {"tensor": tensor, "rows_sha256": rows_of(vals, cols), "f32_bits": raw}


def reference(req, path):
    p = subprocess.run([BIN, "reader-adapter", path], input=json.dumps(req), capture_output=True, text=True)
    return p.stdout, p.returncode


def gguf_tensors(data):
    """(name, codec or None, ne, raw bytes) of every tensor of a little-endian GGUF v2/v3 file."""
    n_t, n_kv = struct.unpack_from("<QQ", data, 8)
    pos, align = 24, 32
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

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
        return data[pos:pos + sizes[t]], pos + sizes[t]

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
        infos.append((name, GGUF_TYPES.get(t), ne, off))
    base = pos if BUG == "unaligned_offset" else (pos + align - 1) // align * align
    out = []
    for name, codec, ne, off in infos:
        n = 1
        for x in ne:
            n *= x
        nbytes = n // CODECS[codec][0] * CODECS[codec][1] if codec else 0
        out.append((name, codec, ne, data[base + off:base + off + nbytes]))
    return out


def align_up(x, a):
    return (x + a - 1) // a * a


def ninfer_blocks(codec, n, k, obj):
    """The ggml blocks of a row-split object (spec/geometry.md#block-plane), and k_pad."""
    k_pad = align_up(k, 128)
    groups = k_pad // 128
    bpg, hpg = (32, 0) if codec == "pq2_0" else (24, 2)
    high_at = align_up(n * groups * bpg, 256)
    scale_at = high_at + align_up(n * groups * hpg, 256)
    if BUG == "swap_planes" and codec == "ptq1_0":
        high_at, scale_at = scale_at, high_at
    out = bytearray()
    for g in range(n * groups):
        base = obj[g * bpg:(g + 1) * bpg]
        high = obj[high_at + g * hpg:high_at + (g + 1) * hpg]
        sc = obj[scale_at + 2 * g:scale_at + 2 * g + 2]
        out += sc + base if codec == "pq2_0" else base + high + sc
    return bytes(out), k_pad


def answer_codec(req, data, params):
    codec = params["codec"]
    be, bb = CODECS[codec]
    rows, cols = params["rows"], params["cols"]
    if rows * cols % be or rows * cols // be * bb != len(data):
        return {"result": "reject", "class": "codec.length", "message": "size"}, 1
    vals = decode(codec, data, cols // be)
    obs = {"values": len(vals), "sha256": digest(vals), "rows_sha256": rows_of(vals, cols)}
    if "localize" in req:
        obs["localize"] = localize(vals, cols, None)
    return {"result": "accept", "observation": obs}, 0


def patch_gguf(ans, data, want):
    for name, codec, ne, raw in gguf_tensors(data):
        if codec is None:
            continue
        vals = decode(codec, raw, ne[0] // 128)
        for o in ans["observation"].get("tensors", []):
            if o.get("name") == name:
                o.update(data_sha256=hashlib.sha256(raw).hexdigest(), values_sha256=digest(vals))
                if ROWS:
                    o["rows_sha256"] = rows_of(vals, ne[0])
        if name == want:
            ans["observation"]["localize"] = localize(vals, ne[0], name)


def patch_ninfer(ans, data, want):
    obs = ans["observation"]
    for o in obs.get("objects", []):
        codec = NINFER_FORMATS.get(o.get("format"))
        if codec is None:
            continue
        n, k = o["shape"]
        start = obs["payload_offset"] + o["offset"]
        blocks, k_pad = ninfer_blocks(codec, n, k, data[start:start + o["bytes"]])
        padded = decode(codec, blocks, k_pad // 128, planes=True)
        vals = [v for r in range(n) for v in padded[r * k_pad:r * k_pad + k]]
        o.update(values_sha256=digest(vals))
        if ROWS:
            o["rows_sha256"] = rows_of(vals, k)
        if o["name"] == want:
            obs["localize"] = localize(vals, k, o["name"])


def answer(req, path):
    kind, params = req.get("kind"), req.get("params", {})
    with open(path, "rb") as f:
        data = f.read()
    if kind == "codec" and params.get("codec") in CODECS:
        return answer_codec(req, data, params)
    ref_req = {k: v for k, v in req.items() if k != "localize"}
    out, code = reference(ref_req, path)
    if kind not in ("gguf", "ninfer") or code != 0:
        return out, code
    ans = json.loads(out)
    want = (req.get("localize") or {}).get("tensor")
    try:
        (patch_gguf if kind == "gguf" else patch_ninfer)(ans, data, want)
    except Exception:  # a file this small reader cannot walk: keep the reference's answer
        return out, code
    return ans, 0


def main(argv):
    global BUG, ROWS
    args = argv[1:]
    if args and args[0] == "--no-rows":
        ROWS, args = False, args[1:]
    if len(args) >= 2 and args[0] == "--bug":
        BUG, args = args[1], args[2:]
    if BUG not in BUGS or not args:
        sys.stderr.write("usage: planted.py [--no-rows] [--bug %s] CASEFILE\n" % "|".join(BUGS))
        return 2
    req = json.loads(sys.stdin.read() or "{}")
    ans, code = answer(req, args[-1])
    sys.stdout.write((ans if isinstance(ans, str) else json.dumps(ans)).rstrip("\n") + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
