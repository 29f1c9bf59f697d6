#!/usr/bin/env python3
"""gguf_inspect adapter: PyPI gguf-inspect==0.1.0 (a from-scratch, stdlib-only GGUF parser),
speaking conformance/PROTOCOL.md.

Only glue lives here: `gguf_inspect.parse_gguf` frames the file (header, typed metadata,
tensor infos, alignment, tensor_data_offset, per-tensor nbytes); the observation is assembled
from what it returns. The package reports suspicious files through `GGUFFile.warnings` and still
returns them: a returned file is an accept (that is what its API tells a caller), an exception is
a reject. It has no dequantizer: the adapter decodes only F32/F16/BF16/I32 from the bytes at the
reader's offsets; quantized types are declared unsupported in capabilities.json.
"""
import hashlib
import json
import struct
import sys

import numpy as np

VT = ["U8", "I8", "U16", "I16", "U32", "I32", "F32", "BOOL", "STRING", "ARRAY", "U64", "I64", "F64"]
FMT = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}


class Reject(Exception):
    def __init__(self, cls, msg):
        super().__init__(msg)
        self.cls = cls


class Unsupported(Exception):
    pass


def values_sha256(v):
    v = np.ascontiguousarray(v, dtype=np.float32).reshape(-1).copy()
    bits = v.view(np.uint32)
    bits[np.isnan(v)] = 0x7FC00000
    bits[v == 0] = 0
    return hashlib.sha256(bits.astype("<u4").tobytes()).hexdigest()


def ser(t, v, out):
    """One value as GGUF serializes it (PROTOCOL §4.2), from the reader's typed GGUFValue parts."""
    if t == 8:
        b = v.encode("utf-8", "surrogateescape")
        out += struct.pack("<Q", len(b)) + b
    elif t == 7:
        out += struct.pack("<B", 1 if v else 0)
    elif t in FMT:
        out += struct.pack(FMT[t], v)
    else:
        raise Reject(None, f"value type {t}")


def ser_value(gv, out):
    if gv.type == 9:
        out += struct.pack("<IQ", gv.elem_type, len(gv.value))
        for e in gv.value:
            if gv.elem_type == 9:
                ser_value(e, out)
            else:
                ser(gv.elem_type, e, out)
    else:
        ser(gv.type, gv.value, out)


PLAIN = {0: "<f4", 1: "<f2", 26: "<i4"}


def decode_plain(t, raw):
    if t in PLAIN:
        return np.frombuffer(raw[: len(raw) // np.dtype(PLAIN[t]).itemsize * np.dtype(PLAIN[t]).itemsize],
                             dtype=PLAIN[t]).astype(np.float32)
    if t == 30:
        u = np.frombuffer(raw[: len(raw) // 2 * 2], dtype="<u2").astype(np.uint32) << 16
        return u.view(np.float32)
    return None


TYPE_IDS = {"F32": 0, "F16": 1, "BF16": 30, "I32": 26}


def observe_gguf(path, p):
    from gguf_inspect import parse_gguf
    f = parse_gguf(path)
    c = p.get("consumer")
    if c:
        if c["op"] in ("array_as", "scalar_as"):
            gv = f.metadata.get(c["key"])
            if gv is None:
                raise Reject("gguf.metadata_missing", f"key {c['key']} missing")
            ok = (gv.type == 9 and VT[gv.elem_type] == c["elem"]) if c["op"] == "array_as" else \
                (gv.type < len(VT) and VT[gv.type] == c["type"])
            if not ok:
                raise Reject("gguf.metadata_type", f"{c['key']} is {gv.type_name}")
        else:
            t = next((t for t in f.tensors if t.name == c["name"]), None)
            if t is None:
                raise Reject("gguf.tensor_missing", f"tensor {c['name']} missing")
            if c["op"] == "tensor_shape" and (list(t.dims) != c["ne"] or t.ggml_type != TYPE_IDS.get(c["type"])):
                raise Reject("gguf.tensor_shape", f"tensor {t.name} is {t.dims} type {t.ggml_type}")
    meta = bytearray()
    for k, gv in f.metadata.items():
        kb = k.encode("utf-8", "surrogateescape")
        meta += struct.pack("<Q", len(kb)) + kb + struct.pack("<I", gv.type)
        ser_value(gv, meta)
    with open(path, "rb") as fh:
        data = fh.read()
    tensors = []
    for t in f.tensors:
        o = {"name": t.name, "type": t.ggml_type, "ne": list(t.dims)}
        n = t.nbytes
        if n is not None:
            start = f.tensor_data_offset + t.offset
            raw = data[start:start + n]  # a consumer trusting the parser's offsets
            o["data_sha256"] = hashlib.sha256(raw).hexdigest()
            v = decode_plain(t.ggml_type, raw)
            if v is not None:
                o["values_sha256"] = values_sha256(v)
        tensors.append(o)
    return {"version": f.version, "alignment": f.alignment, "kv_count": len(f.metadata),
            "keys": list(f.metadata), "metadata_sha256": hashlib.sha256(bytes(meta)).hexdigest(),
            "tensors": tensors}


def main(argv):
    req = json.loads(sys.stdin.read() or "{}")
    path = argv[1] if len(argv) > 1 else req.get("file")
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    np.seterr(all="ignore")
    code = 0
    try:
        if req.get("kind") != "gguf":
            raise Unsupported(f"kind:{req.get('kind')}")
        ans = {"result": "accept", "observation": observe_gguf(path, req.get("params", {}))}
    except Unsupported as e:
        ans = {"result": "unsupported", "feature": str(e)}
    except Reject as e:
        ans, code = {"result": "reject", "class": e.cls, "message": str(e)}, 1
    except Exception as e:  # GGUFError and anything else the parser raises on a malformed file
        ans, code = {"result": "reject", "class": None, "message": f"{type(e).__name__}: {e}"[:500]}, 1
    real_stdout.write(json.dumps(ans) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
