#!/usr/bin/env python3
"""py_ninfer: an independent, minimal reader of `.ninfer` v2 and the ternary block codecs.

Written from the specification (spec/codecs.md, spec/ninfer-container.md, spec/geometry.md,
spec/permutations.md) and conformance/PROTOCOL.md, not from the Rust code. numpy only. It reads the
format registry from spec/formats.json (the registry is data, spec/ninfer-container.md#ninfer-container).

Protocol: `reader.py [--bug NAME] CASEFILE`, request JSON on stdin, one answer JSON line on
stdout; exit 0 for accept/unsupported, 1 for reject. `reader.py [--bug NAME] --persistent`:
persistent mode (PROTOCOL.md §4.6), request lines on stdin, answer lines with their id on stdout.

`--bug NAME` turns it into a deliberately wrong reader (the stub readers of the meta-test):
  flip_trit         decode one trit per ternary block wrongly (-1 <-> +1 at element 5)
  no_perm           ignore the head permutation (rows rules perm_row / tiled_to_grouped = identity)
  scale_at_0        read a PTQ1_0 scale at byte 0 of the block / the scale plane at object offset 0
  drop_high         ignore the PTQ1_0 high plane / qh bytes (read as zero bytes)
  ptq1_sequential   read PTQ1_0 trits sequentially (byte e//5, digit e%5) instead of staged
"""
import hashlib
import json
import os
import sys

import numpy as np

BUG = None
SPEC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "spec")
U64_MAX = (1 << 64) - 1


class Reject(Exception):
    def __init__(self, cls, msg):
        super().__init__(msg)
        self.cls = cls


class Unsupported(Exception):
    pass


# ---------------------------------------------------------------- digests (PROTOCOL §4.1)

def values_sha256(vals):
    v = np.ascontiguousarray(vals, dtype=np.float32).reshape(-1).copy()
    bits = v.view(np.uint32)
    bits[np.isnan(v)] = 0x7FC00000
    bits[v == 0] = 0
    return hashlib.sha256(bits.astype("<u4").tobytes()).hexdigest()


def f16(lo_hi):
    """(..., 2) uint8 little-endian -> float32."""
    a = np.ascontiguousarray(lo_hi, dtype=np.uint8)
    return a.view("<f2")[..., 0].astype(np.float32)


# ---------------------------------------------------------------- codecs (spec/codecs.md#block-codecs)

def trit_digit(b, n):
    """Digit n of base-3 byte b: ((u8)(b * 3^n) * 3) >> 8, the u8 multiply wrapping."""
    x = (b.astype(np.uint16) * (3 ** n)) & 0xFF
    return ((x * 3) >> 8).astype(np.int8)


def staged_trits(qs, qh, w1, w2, wh):
    """Base-3 staged order: w1 bytes x 5 digits, then w2 bytes x 5 digits, then wh bytes x 4."""
    nb = qs.shape[0]
    if BUG == "ptq1_sequential" and w1 == 16:
        out = np.zeros((nb, 128), dtype=np.int8)
        for e in range(120):
            out[:, e] = trit_digit(qs[:, e // 5], e % 5)
        for e in range(120, 128):
            out[:, e] = trit_digit(qh[:, (e - 120) // 4], (e - 120) % 4)
        return out
    parts = []
    for n in range(5):
        parts.append(trit_digit(qs[:, :w1], n))
    for n in range(5):
        parts.append(trit_digit(qs[:, w1:w1 + w2], n))
    for n in range(4):
        parts.append(trit_digit(qh[:, :wh], n))
    return np.concatenate(parts, axis=1)


def flip(t, elem):
    if BUG == "flip_trit":
        t = t.copy()
        t[:, elem] = 2 - t[:, elem]
    return t


def ternary_values(codes_minus_1, d):
    return codes_minus_1.astype(np.float32) * d[:, None]


def dec_ptq1_parts(qs, qh, d):
    """PTQ1_0 from its parts: qs (nb, 24), qh (nb, 2), d float32 (nb,)."""
    if BUG == "drop_high":
        qh = np.zeros_like(qh)
    t = flip(staged_trits(qs, qh, 16, 8, 2), 5)
    return ternary_values(t.astype(np.int16) - 1, d)


def dec_ptq1(b):
    d = f16(b[:, 0:2]) if BUG == "scale_at_0" else f16(b[:, 26:28])
    return dec_ptq1_parts(b[:, 0:24], b[:, 24:26], d)


def dec_tq1(b):
    t = flip(staged_trits(b[:, 0:48], b[:, 48:52], 32, 16, 4), 5)
    return ternary_values(t.astype(np.int16) - 1, f16(b[:, 52:54]))


def pq2_codes(qs):
    """Element j -> byte j//4, bits 2*(j%4), LSB first."""
    sh = np.array([0, 2, 4, 6], dtype=np.uint8)
    return ((qs[:, :, None] >> sh) & 3).reshape(qs.shape[0], -1).astype(np.int8)


def dec_pq2_parts(qs, d):
    c = flip(pq2_codes(qs), 5)
    return ternary_values(c.astype(np.int16) - 1, d)


def dec_pq2(b):
    return dec_pq2_parts(b[:, 2:], f16(b[:, 0:2]))


def dec_tq2(b):
    qs, d = b[:, 0:64], f16(b[:, 64:66])
    e = np.arange(256)
    byte = (e // 128) * 32 + e % 32
    shift = 2 * ((e % 128) // 32)
    c = flip(((qs[:, byte] >> shift.astype(np.uint8)) & 3).astype(np.int8), 5)
    return ternary_values(c.astype(np.int16) - 1, d)


def dec_q1_0(b):
    d, qs = f16(b[:, 0:2]), b[:, 2:18]
    j = np.arange(128)
    bit = (qs[:, j // 8] >> (j % 8).astype(np.uint8)) & 1
    return np.where(bit == 1, d[:, None], -d[:, None]).astype(np.float32)


def dec_q8_0(b):
    d, q = f16(b[:, 0:2]), b[:, 2:34].view(np.int8)
    return q.astype(np.float32) * d[:, None]


def dec_q2s_planar(b):
    d, qs = f16(b[:, 0:2]), b[:, 2:10]
    j = np.arange(32)
    c = (qs[:, j % 8] >> (2 * (j // 8)).astype(np.uint8)) & 3
    return (c.astype(np.float32) - 2.0) * d[:, None]


def dec_direct(dtype):
    def f(b):
        v = np.ascontiguousarray(b).view(dtype).reshape(-1)
        if dtype == "<u2":  # bf16
            return (v.astype(np.uint32) << 16).view(np.float32)
        return v.astype(np.float32)
    return f


# name: (block elems, block bytes, decoder)
CODECS = {
    "pq2_0": (128, 34, dec_pq2),
    "q2_0_g64": (64, 18, dec_pq2),
    "ptq1_0": (128, 28, dec_ptq1),
    "tq1_0": (256, 54, dec_tq1),
    "tq2_0": (256, 66, dec_tq2),
    "q1_0": (128, 18, dec_q1_0),
    "q8_0": (32, 34, dec_q8_0),
    "q2_0s_planar": (32, 10, dec_q2s_planar),
    "f32": (1, 4, dec_direct("<f4")),
    "f16": (1, 2, dec_direct("<f2")),
    "bf16": (1, 2, dec_direct("<u2")),
    "i32": (1, 4, dec_direct("<i4")),
}


def decode(codec, data):
    be, bb, fn = CODECS[codec]
    if len(data) % bb:
        raise Reject("codec.length", f"{len(data)} bytes is not a whole number of {bb}-byte {codec} blocks")
    blocks = np.frombuffer(data, dtype=np.uint8).reshape(-1, bb)
    return fn(blocks).reshape(-1)


def observe_codec(data, params):
    codec, rows, cols = params["codec"], params["rows"], params["cols"]
    if codec not in CODECS:
        raise Unsupported(f"codec:{codec}")
    be, bb, _ = CODECS[codec]
    if (rows * cols) % be or (rows * cols) // be * bb != len(data):
        raise Reject("codec.length", f"{rows}x{cols} {codec} values do not fit {len(data)} bytes")
    v = decode(codec, data)
    return {
        "values": int(v.size),
        "sha256": values_sha256(v),
        "rows_sha256": [values_sha256(r) for r in v.reshape(rows, cols)] if cols else [],
    }


# ---------------------------------------------------------------- rows (spec/permutations.md#row-permutations)

def observe_rows(data, p):
    rows, rb, rule = p["rows"], p["row_bytes"], p["rule"]
    if rows * rb != len(data):
        raise Reject("perm.shape", "rows x row_bytes != file length")
    m = np.frombuffer(data, dtype=np.uint8).reshape(rows, rb)
    tile, group = p.get("tile", 3), p.get("group", 16)
    perm48 = lambda h: (h % tile) * group + h // tile  # noqa: E731  gather: out[h] = in[perm48(h)]
    if BUG == "no_perm" and rule in ("perm_row", "tiled_to_grouped"):
        perm48 = lambda h: h  # noqa: E731
    if rule == "tiled_to_grouped":
        if rows != tile * group:
            raise Reject("perm.shape", f"{rows} rows is not {tile * group} heads")
        order = [perm48(i) for i in range(rows)]
    elif rule == "perm_row":
        hd = p.get("head_dim", 128)
        if rows != tile * group * hd:
            raise Reject("perm.shape", f"{rows} rows is not {tile * group} heads x {hd}")
        order = [perm48(i // hd) * hd + i % hd for i in range(rows)]
    elif rule in ("attn_q_query", "attn_q_gate"):
        br = p.get("block_rows", 256)
        if rows % (2 * br):
            raise Reject("perm.shape", f"attn_q: {rows} rows is not a multiple of {2 * br}")
        par = 0 if rule == "attn_q_query" else 1
        order = [(2 * h + par) * br + r for h in range(rows // (2 * br)) for r in range(br)]
    else:
        raise Unsupported(f"rows:{rule}")
    out = m[np.array(order, dtype=np.int64)]
    return {"rows": len(order), "sha256": hashlib.sha256(out.tobytes()).hexdigest()}


# ---------------------------------------------------------------- .ninfer v2 (spec/ninfer-container.md#ninfer-layouts)

MAGIC = bytes.fromhex("4e494e4645520002")
OTHER_MAGICS = {
    bytes.fromhex("4e494e4645520001"): ("ninfer.magic_v1", "container v1 must be migrated to v2"),
    bytes.fromhex("4e494e4645520003"): ("ninfer.magic_v3", "container v3 is not v2"),
    bytes.fromhex("4e494e5052540003"): ("ninfer.magic_part", "a v3 part file is not a v2 container"),
}


def align_up(x, a):
    return (x + a - 1) // a * a


def load_registry():
    with open(os.path.join(SPEC_DIR, "formats.json"), encoding="utf-8") as f:
        t = json.load(f)
    return {x["name"]: x for x in t["formats"]}, {x["name"]: x for x in t["layouts"]}


class DupKey(Exception):
    pass


def pairs_hook(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise DupKey(k)
        d[k] = v
    return d


def bad_constant(name):
    raise ValueError(f"{name} is not JSON")


MAX_DEPTH = 128  # PROTOCOL.md §4.3: directories nested this deep or deeper are refused (json_syntax)


def nesting_depth(text):
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def is_uint(v):
    return type(v) is int and v >= 0


def exact_members(obj, want, where):
    if type(obj) is not dict:
        raise Reject("ninfer.dir_type", f"{where} is not an object")
    for k in obj:
        if k not in want:
            raise Reject("ninfer.dir_members", f"{where}: unexpected member {k!r}")
    for k in want:
        if k not in obj:
            raise Reject("ninfer.dir_members", f"{where}: missing member {k!r}")


def uint_member(o, k, where):
    v = o[k]
    if not is_uint(v):
        raise Reject("ninfer.dir_type", f"{where}.{k} must be a non-negative integer, got {v!r}")
    return v


def row_split_geometry(fmt, n, k):
    g = fmt["group_size"]
    k_pad = align_up(k, 128)
    groups = k_pad // g
    base_row, high_row, scale_row = groups * fmt["base_bytes_per_group"], groups * fmt["high_bytes_per_group"], groups * 2
    base_bytes = n * base_row
    high_offset = align_up(base_bytes, 256)
    high_bytes = n * high_row
    scale_offset = high_offset + align_up(high_bytes, 256)
    return dict(n=n, k=k, k_pad=k_pad, groups=groups, base_row=base_row, high_row=high_row, scale_row=scale_row,
                high_offset=high_offset, scale_offset=scale_offset, payload=scale_offset + n * scale_row)


def encoded_size(fmt, layout, shape, where):
    kinds = layout["accepts_kinds"]
    if fmt["kind"] not in kinds:
        raise Reject("ninfer.dir_layout", f"{where}: layout {layout['name']} does not accept {fmt['name']}")
    if fmt["kind"] == "direct":
        if len(shape) > layout.get("max_rank", 16):
            raise Reject("ninfer.dir_shape", f"{where}: rank {len(shape)} > 16")
        if any(d == 0 for d in shape):
            raise Reject("ninfer.dir_shape", f"{where}: zero dimension")
        n = 1
        for d in shape:
            n *= d
        size = n * fmt["word_bytes"]
    else:
        if len(shape) != 2 or shape[0] == 0 or shape[1] == 0:
            raise Reject("ninfer.dir_shape", f"{where}: {layout['name']} needs a positive rank-2 shape")
        n, k = shape
        if fmt["kind"] == "grouped":
            size = row_split_geometry(fmt, n, k)["payload"]
        elif fmt["kind"] == "blockscale":
            if n % fmt["row_multiple"] or k % fmt["k_multiple"]:
                raise Reject("ninfer.dir_shape", f"{where}: NVFP4 needs N % 128 == 0 and K % 64 == 0")
            size = align_up(n * k // 2, 256) + n * k // fmt["block_elems"] + fmt["divisor_bytes"]
        else:  # row_scaled
            size = align_up(n * k * fmt["code_bytes"], 256) + n * fmt["scale_bytes_per_row"]
    if size > U64_MAX:
        raise Reject("ninfer.arith_overflow", f"{where}: encoded size overflows u64")
    return size


def parse_ninfer(data):
    if len(data) < 8:
        raise Reject("ninfer.truncated", "file shorter than the 8-byte magic")
    magic = data[:8]
    if magic != MAGIC:
        if magic in OTHER_MAGICS:
            raise Reject(*OTHER_MAGICS[magic])
        raise Reject("ninfer.magic", f"magic {magic.hex()} is not NINFER\\0\\2")
    if len(data) < 16:
        raise Reject("ninfer.truncated", "file ends inside the 16-byte prefix")
    json_bytes = int.from_bytes(data[8:16], "little")
    json_end = 16 + json_bytes
    if json_end > U64_MAX:
        raise Reject("ninfer.arith_overflow", "16 + json_bytes overflows u64")
    if json_end > len(data):
        raise Reject("ninfer.truncated", "directory runs past the end of the file")
    payload_offset = align_up(json_end, 4096)
    if payload_offset > U64_MAX:
        raise Reject("ninfer.arith_overflow", "payload offset overflows u64")
    if payload_offset > len(data):
        raise Reject("ninfer.truncated", f"file must reach the payload offset {payload_offset}")
    try:
        text = data[16:json_end].decode("utf-8")
    except UnicodeDecodeError as e:
        raise Reject("ninfer.json_syntax", f"directory is not UTF-8: {e}")
    if nesting_depth(text) >= MAX_DEPTH:
        raise Reject("ninfer.json_syntax", f"directory nests {MAX_DEPTH} levels or deeper")
    try:
        root = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=bad_constant)
    except DupKey as e:
        raise Reject("ninfer.dir_members", f"duplicate member {e}")
    except RecursionError:
        raise Reject("ninfer.json_syntax", "directory nesting too deep")
    except ValueError as e:
        raise Reject("ninfer.json_syntax", f"directory is not JSON: {e}")
    formats, layouts = load_registry()
    exact_members(root, ("identity", "objects"), "root")
    ident = root["identity"]
    exact_members(ident, ("model_id", "weights_id"), "identity")
    for k in ("model_id", "weights_id"):
        if type(ident[k]) is not str:
            raise Reject("ninfer.dir_type", f"identity.{k} is not a string")
    objects = root["objects"]
    if type(objects) is not list:
        raise Reject("ninfer.dir_type", "objects is not an array")
    parsed = []
    for i, o in enumerate(objects):
        where = f"objects[{i}]"
        if type(o) is not dict:
            raise Reject("ninfer.dir_type", f"{where} is not an object")
        if "kind" not in o:
            raise Reject("ninfer.dir_members", f"{where}: missing member 'kind'")
        kind = o["kind"]
        if kind == "tensor":
            exact_members(o, ("name", "kind", "shape", "format", "layout", "offset", "bytes"), where)
        elif kind == "resource":
            exact_members(o, ("name", "kind", "encoding", "offset", "bytes"), where)
        elif type(kind) is not str:
            raise Reject("ninfer.dir_type", f"{where}.kind is not a string")
        else:
            raise Reject("ninfer.dir_kind", f"{where}.kind {kind!r} is neither tensor nor resource")
        for k in o:
            if o[k] is None:
                raise Reject("ninfer.dir_type", f"{where}.{k} is null")
        if type(o["name"]) is not str:
            raise Reject("ninfer.dir_type", f"{where}.name is not a string")
        off, nb = uint_member(o, "offset", where), uint_member(o, "bytes", where)
        if kind == "tensor":
            shape = o["shape"]
            if type(shape) is not list:
                raise Reject("ninfer.dir_type", f"{where}.shape is not an array")
            for d in shape:
                if not is_uint(d):
                    raise Reject("ninfer.dir_type", f"{where}.shape holds {d!r}")
            for k in ("format", "layout"):
                if type(o[k]) is not str:
                    raise Reject("ninfer.dir_type", f"{where}.{k} is not a string")
        else:
            if type(o["encoding"]) is not str:
                raise Reject("ninfer.dir_type", f"{where}.encoding is not a string")
        parsed.append(o)
    # Semantic rules.
    if not ident["model_id"] or not ident["weights_id"]:
        raise Reject("ninfer.dir_identity", "identity strings must be non-empty")
    seen = set()
    for i, o in enumerate(parsed):
        where = f"objects[{i}]"
        if not o["name"]:
            raise Reject("ninfer.dir_name", f"{where}: empty name")
        if o["name"] in seen:
            raise Reject("ninfer.dir_duplicate_name", f"duplicate object name: {o['name']}")
        seen.add(o["name"])
        if o["kind"] == "tensor":
            if o["format"] not in formats:
                raise Reject("ninfer.dir_format", f"unknown numeric format: {o['format']!r}")
            if o["layout"] not in layouts:
                raise Reject("ninfer.dir_layout", f"unknown layout: {o['layout']!r}")
            need = encoded_size(formats[o["format"]], layouts[o["layout"]], o["shape"], where)
            if need != o["bytes"]:
                raise Reject("ninfer.dir_bytes", f"tensor {o['name']} stores {o['bytes']} bytes; layout requires {need}")
        else:
            if o["encoding"] != "raw-bytes-v1":
                raise Reject("ninfer.dir_encoding", f"{where}: encoding {o['encoding']!r}")
            if o["bytes"] == 0:
                raise Reject("ninfer.dir_resource_empty", f"{where}: resource of 0 bytes")
    payload_bytes = len(data) - payload_offset
    cursor = 0
    for i, o in enumerate(parsed):
        where = f"objects[{i}]"
        align = layouts[o["layout"]]["alignment"] if o["kind"] == "tensor" else 1
        if o["offset"] < cursor:
            raise Reject("ninfer.range_order", f"{where}: offset {o['offset']} < cursor {cursor}")
        if o["offset"] % align:
            raise Reject("ninfer.range_alignment", f"{where}: offset {o['offset']} not a multiple of {align}")
        end = o["offset"] + o["bytes"]
        if end > U64_MAX:
            raise Reject("ninfer.arith_overflow", f"{where}: offset + bytes overflows u64")
        if end > payload_bytes:
            raise Reject("ninfer.range_bounds", f"{where}: ends at {end}, payload holds {payload_bytes}")
        cursor = end
    return json_bytes, payload_offset, ident, parsed, formats


TERNARY = {"PQ2_0_G128", "PTQ1_0_G128"}


def ternary_values_from_planes(fmt, shape, obj):
    n, k = shape
    g = row_split_geometry(fmt, n, k)
    groups, bpg, hpg = g["groups"], fmt["base_bytes_per_group"], fmt["high_bytes_per_group"]
    buf = np.frombuffer(obj, dtype=np.uint8)
    base = buf[0:n * g["base_row"]].reshape(n * groups, bpg)
    scale_at = 0 if BUG == "scale_at_0" and fmt["name"] == "PTQ1_0_G128" else g["scale_offset"]
    d = f16(buf[scale_at:scale_at + n * g["scale_row"]].reshape(n * groups, 2))
    if fmt["name"] == "PQ2_0_G128":
        vals = dec_pq2_parts(base, d)
    else:
        high = buf[g["high_offset"]:g["high_offset"] + n * g["high_row"]].reshape(n * groups, hpg)
        vals = dec_ptq1_parts(base, high, d)
    return vals.reshape(n, g["k_pad"])[:, :k]


# ------------------------------------------- other registry formats (spec/formats.json _note)

GROUPED_BITS = {"Q4G64_F16S": 4, "Q5G64_F16S": 5, "Q6G64_F16S": 6, "W8G32_F16S": 8}


def grouped_values(fmt, shape, obj):
    """Signed b-bit codes (base nibbles even-low/odd-high, W8 one byte a lane; high bits a
    lane-major little-endian bit stream) times the group's binary16 multiplier."""
    n, k = shape
    g = row_split_geometry(fmt, n, k)
    bits, gs, groups = GROUPED_BITS[fmt["name"]], fmt["group_size"], g["groups"]
    buf = np.frombuffer(obj, dtype=np.uint8)
    base = buf[0:n * g["base_row"]].reshape(n * groups, fmt["base_bytes_per_group"])
    if bits == 8:
        u = base.astype(np.int32)
    else:
        u = np.empty((n * groups, gs), dtype=np.int32)
        u[:, 0::2] = base & 0x0F
        u[:, 1::2] = base >> 4
        per = bits - 4
        if per:
            high = buf[g["high_offset"]:g["high_offset"] + n * g["high_row"]].reshape(n * groups, fmt["high_bytes_per_group"])
            stream = np.unpackbits(high, axis=1, bitorder="little").astype(np.int32).reshape(n * groups, gs, per)
            for j in range(per):
                u |= stream[:, :, j] << (4 + j)
    q = np.where(u < (1 << (bits - 1)), u, u - (1 << bits)).astype(np.float32)
    d = f16(buf[g["scale_offset"]:g["scale_offset"] + n * g["scale_row"]].reshape(n * groups, 2))
    return (d[:, None] * q).reshape(n, g["k_pad"])[:, :k]


def e4m3fn_table():
    c = np.arange(256)
    e, m = (c >> 3) & 15, (c & 7).astype(np.float64)
    v = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where(c & 0x80, -v, v)
    v[(c & 0x7F) == 0x7F] = np.nan
    return v.astype(np.float32)


def nvfp4_values(shape, obj):
    n, k = shape
    buf = np.frombuffer(obj, dtype=np.uint8)
    soff = align_up(n * k // 2, 256)
    doff = soff + n * k // 16
    cb = buf[0:n * k // 2]
    codes = np.empty(n * k, dtype=np.uint8)
    codes[0::2], codes[1::2] = cb & 0x0F, cb >> 4
    mag = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)
    e2 = np.where(codes & 8, -mag[codes & 7], mag[codes & 7]).reshape(n, k)
    row, grp = np.arange(n)[:, None], np.arange(k // 16)[None, :]
    off = (row // 128 * (k // 64) + grp // 4) * 512 + (row % 128 % 32) * 16 + (row % 128 // 32) * 4 + grp % 4
    s = e4m3fn_table()[buf[soff + off]]
    div = np.frombuffer(buf[doff:doff + 4].tobytes(), dtype="<f4")[0]
    return (e2 * np.repeat(s, 16, axis=1)) / div


def fp8_row_values(shape, obj):
    n, k = shape
    buf = np.frombuffer(obj, dtype=np.uint8)
    soff = align_up(n * k, 256)
    sc = (buf[soff:soff + 2 * n].view("<u2").astype(np.uint32) << 16).view(np.float32)
    return e4m3fn_table()[buf[0:n * k]].reshape(n, k) * sc[:, None]


def registry_values(fmt, shape, obj):
    if fmt["name"] in GROUPED_BITS:
        return grouped_values(fmt, shape, obj)
    if fmt["name"] == "NVFP4":
        return nvfp4_values(shape, obj)
    if fmt["name"] == "FP8_E4M3FN_ROW_BF16S":
        return fp8_row_values(shape, obj)
    return None


def observe_ninfer(data):
    json_bytes, payload_offset, ident, objs, formats = parse_ninfer(data)
    out = []
    for o in objs:
        raw = data[payload_offset + o["offset"]:payload_offset + o["offset"] + o["bytes"]]
        m = {"name": o["name"], "kind": o["kind"]}
        if o["kind"] == "tensor":
            m.update(shape=o["shape"], format=o["format"], layout=o["layout"])
        else:
            m["encoding"] = o["encoding"]
        m.update(offset=o["offset"], bytes=o["bytes"], sha256=hashlib.sha256(raw).hexdigest())
        if o["kind"] == "tensor" and o["format"] in TERNARY:
            m["values_sha256"] = values_sha256(ternary_values_from_planes(formats[o["format"]], o["shape"], raw))
        elif o["kind"] == "tensor":
            with np.errstate(all="ignore"):
                rv = registry_values(formats[o["format"]], o["shape"], raw)
            if rv is not None:
                m["values_sha256"] = values_sha256(rv)
        out.append(m)
    return {"json_bytes": json_bytes, "payload_offset": payload_offset,
            "identity": {"model_id": ident["model_id"], "weights_id": ident["weights_id"]}, "objects": out}


# ---------------------------------------------------------------- protocol

def answer(req, path):
    """The answer (dict) and exit code for one request on the case file `path`."""
    kind, params = req.get("kind"), req.get("params", {})
    try:
        with open(path, "rb") as f:
            data = f.read()
        if kind == "codec":
            return {"result": "accept", "observation": observe_codec(data, params)}, 0
        if kind == "ninfer":
            return {"result": "accept", "observation": observe_ninfer(data)}, 0
        if kind == "rows":
            return {"result": "accept", "observation": observe_rows(data, params)}, 0
        raise Unsupported(f"kind:{kind}")
    except Reject as e:
        return {"result": "reject", "class": e.cls, "message": str(e)}, 1
    except Unsupported as e:
        return {"result": "unsupported", "feature": str(e)}, 0


def serve_persistent():
    """PROTOCOL.md §4.6: a handshake line, then one answer line (with the request's id) per
    request line until EOF."""
    out = sys.stdout
    out.write(json.dumps({"protocol": 3, "persistent": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        ans, _ = answer(req, req.get("file"))
        ans["id"] = req.get("id")
        out.write(json.dumps(ans) + "\n")
        out.flush()
    return 0


def main(argv):
    global BUG
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--bug":
        BUG, args = args[1], args[2:]
    np.seterr(all="ignore")
    if args and args[0] == "--persistent":
        return serve_persistent()
    req = json.loads(sys.stdin.read() or "{}")
    path = args[0] if args else req.get("file")
    ans, code = answer(req, path)
    print(json.dumps(ans))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
