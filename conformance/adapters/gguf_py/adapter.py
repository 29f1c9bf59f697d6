#!/usr/bin/env python3
"""gguf_py adapter: the PyPI package gguf==0.19.0 (ggml-org/llama.cpp gguf-py), a real
third-party GGUF reader, speaking conformance/PROTOCOL.md.

Only glue lives here: GGUFReader parses the container, gguf.quants.dequantize decodes; the
observation is assembled from what they return. Everything gguf-py raises is reported as a
reject (it has no error taxonomy, so its capabilities declare lenient error classes); types it
cannot decode are reported as `unsupported`.
"""
import hashlib
import json
import sys

import numpy as np


def values_sha256(vals):
    v = np.ascontiguousarray(vals, dtype=np.float32).reshape(-1).copy()
    bits = v.view(np.uint32)
    bits[np.isnan(v)] = 0x7FC00000
    bits[v == 0] = 0
    return hashlib.sha256(bits.astype("<u4").tobytes()).hexdigest()


class Unsupported(Exception):
    pass


class Reject(Exception):
    def __init__(self, cls, msg):
        super().__init__(msg)
        self.cls = cls


def to_f32(data, qtype):
    from gguf import GGMLQuantizationType as T
    from gguf.quants import dequantize
    if qtype in (T.I8, T.I16, T.I32, T.I64):
        return np.asarray(data).astype(np.float32)
    try:
        return np.asarray(dequantize(data, qtype), dtype=np.float32)
    except NotImplementedError:
        raise Unsupported(f"codec:{qtype.name.lower()}")


CODEC_TYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i32": "I32", "q8_0": "Q8_0", "tq1_0": "TQ1_0",
               "tq2_0": "TQ2_0", "q1_0": "Q1_0"}


def observe_codec(data, p):
    from gguf import GGMLQuantizationType as T, GGML_QUANT_SIZES
    name = CODEC_TYPES.get(p["codec"])
    if name is None:
        raise Unsupported(f"codec:{p['codec']}")
    qtype = T[name]
    be, bb = GGML_QUANT_SIZES[qtype]
    rows, cols = p["rows"], p["cols"]
    if (rows * cols) % be or (rows * cols) // be * bb != len(data):
        raise Reject(None, "length does not match rows x cols")
    raw = np.frombuffer(data, dtype=np.uint8)
    if name in ("F32", "F16", "I32"):
        arr = raw.view({"F32": np.float32, "F16": np.float16, "I32": np.int32}[name])
    else:
        arr = raw.reshape(-1, bb)
    v = to_f32(arr, qtype).reshape(-1)
    return {"values": int(v.size), "sha256": values_sha256(v),
            "rows_sha256": [values_sha256(r) for r in v.reshape(rows, cols)]}


def consumer(reader, c):
    from gguf import GGUFValueType as V
    op = c["op"]
    if op in ("array_as", "scalar_as"):
        f = reader.fields.get(c["key"])
        if f is None:
            raise Reject("gguf.metadata_missing", f"key {c['key']} missing")
        want = [V.ARRAY, V[c["elem"]]] if op == "array_as" else [V[c["type"]]]
        if list(f.types) != want:
            raise Reject("gguf.metadata_type", f"{c['key']} has types {f.types}, wanted {want}")
    else:
        t = next((t for t in reader.tensors if t.name == c["name"]), None)
        if t is None:
            raise Reject("gguf.tensor_missing", f"tensor {c['name']} missing")
        if op == "tensor_shape" and (list(map(int, t.shape)) != c["ne"] or t.tensor_type.name != c["type"]):
            raise Reject("gguf.tensor_shape", f"tensor {c['name']} is {t.shape} {t.tensor_type.name}")


def observe_gguf(path, p):
    from gguf import GGUFReader
    reader = GGUFReader(path)
    if "consumer" in p:
        consumer(reader, p["consumer"])
    meta = bytearray()
    keys = []
    version = None
    for name, f in reader.fields.items():
        if name == "GGUF.version":
            version = int(f.parts[0][0])
            continue
        if name.startswith("GGUF."):
            continue
        keys.append(name)
        for part in f.parts:  # key length, key, type, value parts: the KV as gguf-py parsed it
            part = np.ascontiguousarray(part)  # serialized little-endian (PROTOCOL.md §4.2)
            meta += part.astype(part.dtype.newbyteorder("<")).tobytes()
    tensors = []
    for t in reader.tensors:
        raw = np.ascontiguousarray(t.data).tobytes()
        o = {"name": t.name, "type": int(t.tensor_type), "ne": [int(x) for x in t.shape],
             "data_sha256": hashlib.sha256(raw).hexdigest()}
        data = np.asarray(t.data)
        if data.dtype.byteorder == ">":  # a big-endian file: GGUFReader returns big-endian views
            data = data.astype(data.dtype.newbyteorder("<"))
        try:
            o["values_sha256"] = values_sha256(to_f32(data, t.tensor_type))
        except Unsupported:
            pass
        tensors.append(o)
    return {"version": version, "alignment": int(reader.alignment), "kv_count": len(keys), "keys": keys,
            "metadata_sha256": hashlib.sha256(bytes(meta)).hexdigest(), "tensors": tensors}


def answer(req, path):
    """The answer (dict) and exit code for one request on the case file `path`."""
    kind, params = req.get("kind"), req.get("params", {})
    try:
        if kind == "gguf":
            return {"result": "accept", "observation": observe_gguf(path, params)}, 0
        if kind == "codec":
            with open(path, "rb") as f:
                return {"result": "accept", "observation": observe_codec(f.read(), params)}, 0
        raise Unsupported(f"kind:{kind}")
    except Unsupported as e:
        return {"result": "unsupported", "feature": str(e)}, 0
    except Reject as e:
        return {"result": "reject", "class": e.cls, "message": str(e)}, 1
    except Exception as e:  # gguf-py signals every malformed file with an exception
        return {"result": "reject", "class": None, "message": f"{type(e).__name__}: {e}"[:500]}, 1


def serve_persistent(real_stdout):
    """PROTOCOL.md §4.6: a handshake line, then one answer line (with the request's id) per
    request line until EOF."""
    real_stdout.write(json.dumps({"protocol": 3, "persistent": True}) + "\n")
    real_stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        ans, _ = answer(req, req.get("file"))
        ans["id"] = req.get("id")
        real_stdout.write(json.dumps(ans) + "\n")
        real_stdout.flush()
    return 0


def main(argv):
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # keep library chatter off the answer channel
    np.seterr(all="ignore")
    if len(argv) > 1 and argv[1] == "--persistent":
        return serve_persistent(real_stdout)
    req = json.loads(sys.stdin.read() or "{}")
    path = argv[1] if len(argv) > 1 else req.get("file")
    ans, code = answer(req, path)
    real_stdout.write(json.dumps(ans) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
