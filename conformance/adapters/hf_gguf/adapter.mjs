// hf_gguf adapter: @huggingface/gguf (the parser the Hugging Face Hub runs over uploaded GGUF
// files), speaking conformance/PROTOCOL.md. Only glue lives here: `gguf(path, {allowLocalFile,
// typedMetadata})` frames the file; the observation is assembled from what it returns. The
// package is a metadata parser: it has no dequantizer, so the adapter turns the bytes the reader
// located (tensorDataOffset + offset) into values only for the plain types F32/F16/BF16/I32,
// and declares the quantized types it cannot decode unsupported (capabilities.json).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { BLOCK } from "../ggml_sizes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "../../../readers/npm/node_modules/@huggingface/gguf/dist/index.js");

class Reject extends Error {
  constructor(cls, msg) { super(msg); this.cls = cls; }
}
class Unsupported extends Error {}

const sha = (b) => createHash("sha256").update(b).digest("hex");

function valuesSha256(f32) {
  const out = Buffer.alloc(f32.length * 4);
  for (let i = 0; i < f32.length; i++) {
    const x = f32[i];
    if (Number.isNaN(x)) out.writeUInt32LE(0x7fc00000, 4 * i);
    else if (x === 0) out.writeUInt32LE(0, 4 * i);
    else out.writeFloatLE(x, 4 * i);
  }
  return sha(out);
}

function f16(h) {
  const s = h >> 15 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// Plain-type values from the tensor's bytes, in the byte order the reader detected
// (`littleEndian` of its result).
function decodePlain(type, b, le) {
  const n = { 0: 4, 1: 2, 30: 2, 26: 4 }[type];
  if (n === undefined) return null;
  const u16 = (o) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const v = new Float32Array(Math.floor(b.length / n));
  for (let i = 0; i < v.length; i++) {
    if (type === 0) v[i] = le ? b.readFloatLE(4 * i) : b.readFloatBE(4 * i);
    else if (type === 1) v[i] = f16(u16(2 * i));
    else if (type === 30) { const t = Buffer.alloc(4); t.writeUInt32LE(u16(2 * i) << 16 >>> 0); v[i] = t.readFloatLE(0); }
    else v[i] = le ? b.readInt32LE(4 * i) : b.readInt32BE(4 * i);
  }
  return v;
}

const VT = ["U8", "I8", "U16", "I16", "U32", "I32", "F32", "BOOL", "STRING", "ARRAY", "U64", "I64", "F64"];

// One value as GGUF serializes it (PROTOCOL §4.2), from the reader's typed metadata.
function ser(type, sub, v, out) {
  const b = (n, f) => { const x = Buffer.alloc(n); f(x); out.push(x); };
  switch (type) {
    case 0: return b(1, (x) => x.writeUInt8(v));
    case 1: return b(1, (x) => x.writeInt8(v));
    case 2: return b(2, (x) => x.writeUInt16LE(v));
    case 3: return b(2, (x) => x.writeInt16LE(v));
    case 4: return b(4, (x) => x.writeUInt32LE(v));
    case 5: return b(4, (x) => x.writeInt32LE(v));
    case 6: return b(4, (x) => x.writeFloatLE(v));
    case 7: return b(1, (x) => x.writeUInt8(v ? 1 : 0));
    case 8: { const s = Buffer.from(v, "utf8"); b(8, (x) => x.writeBigUInt64LE(BigInt(s.length))); out.push(s); return; }
    case 9: {
      b(4, (x) => x.writeUInt32LE(sub ?? 0));
      b(8, (x) => x.writeBigUInt64LE(BigInt(v.length)));
      // Nested arrays: the reader keeps only the outer element type.
      for (const e of v) ser(sub, undefined, e, out);
      return;
    }
    case 10: return b(8, (x) => x.writeBigUInt64LE(BigInt(v)));
    case 11: return b(8, (x) => x.writeBigInt64LE(BigInt(v)));
    case 12: return b(8, (x) => x.writeDoubleLE(v));
  }
}

async function observeGguf(path, params) {
  const { gguf } = await import(pkg);
  const r = await gguf(path, { allowLocalFile: true, typedMetadata: true });
  const typed = r.typedMetadata;
  const pseudo = new Set(["version", "tensor_count", "kv_count"]);
  const keys = Object.keys(typed).filter((k) => !pseudo.has(k));
  const c = params.consumer;
  if (c) {
    if (c.op === "array_as" || c.op === "scalar_as") {
      const e = typed[c.key];
      if (!e || pseudo.has(c.key)) throw new Reject("gguf.metadata_missing", `key ${c.key} missing`);
      const ok = c.op === "array_as" ? e.type === 9 && VT[e.subType] === c.elem : VT[e.type] === c.type;
      if (!ok) throw new Reject("gguf.metadata_type", `${c.key}: type ${VT[e.type]}`);
    } else {
      const t = r.tensorInfos.find((t) => t.name === c.name);
      if (!t) throw new Reject("gguf.tensor_missing", `tensor ${c.name} missing`);
      if (c.op === "tensor_shape") {
        const ne = t.shape.map(Number);
        const want = { F32: 0, F16: 1, BF16: 30, I32: 26 }[c.type];
        if (JSON.stringify(ne) !== JSON.stringify(c.ne) || t.dtype !== want)
          throw new Reject("gguf.tensor_shape", `tensor ${c.name} is ${ne} type ${t.dtype}`);
      }
    }
  }
  const meta = [];
  for (const k of keys) {
    const e = typed[k];
    const kb = Buffer.from(k, "utf8");
    const h = Buffer.alloc(8); h.writeBigUInt64LE(BigInt(kb.length)); meta.push(h, kb);
    const t = Buffer.alloc(4); t.writeUInt32LE(e.type); meta.push(t);
    ser(e.type, e.subType, e.value, meta);
  }
  const file = readFileSync(path);
  const tensors = [];
  for (const t of r.tensorInfos) {
    const geo = BLOCK[t.dtype];
    if (!geo) { // a type without ggml geometry that the reader still accepted
      tensors.push({ name: t.name, type: t.dtype, ne: t.shape.map(Number) });
      continue;
    }
    const nelem = t.shape.reduce((a, x) => a * x, 1n);
    const nbytes = (nelem / BigInt(geo[0])) * BigInt(geo[1]);
    const start = r.tensorDataOffset + t.offset;
    // Like a consumer that trusts the parser: the bytes at the reader's offsets, as far as the file goes.
    const s = start > BigInt(file.length) ? file.length : Number(start);
    const e = start + nbytes > BigInt(file.length) ? file.length : Number(start + nbytes);
    const bytes = file.subarray(s, e);
    const o = { name: t.name, type: t.dtype, ne: t.shape.map(Number), data_sha256: sha(bytes) };
    const v = decodePlain(t.dtype, bytes, r.littleEndian);
    if (v) o.values_sha256 = valuesSha256(v);
    tensors.push(o);
  }
  return {
    version: r.metadata.version, alignment: Number(typed["general.alignment"]?.value ?? 32),
    kv_count: keys.length, keys, metadata_sha256: sha(Buffer.concat(meta)), tensors,
  };
}

async function main() {
  let input = "";
  try { input = readFileSync(0, "utf8"); } catch { /* no request: use argv */ }
  const req = input ? JSON.parse(input) : {};
  const path = process.argv[2] ?? req.file;
  let ans, code = 0;
  try {
    if (req.kind !== "gguf") throw new Unsupported(`kind:${req.kind}`);
    ans = { result: "accept", observation: await observeGguf(path, req.params ?? {}) };
  } catch (e) {
    if (e instanceof Unsupported) ans = { result: "unsupported", feature: e.message };
    else {
      // The package signals malformed files by throwing (Error, RangeError, TypeError, ...).
      ans = { result: "reject", class: e instanceof Reject ? e.cls : null, message: `${e?.name}: ${e?.message}`.slice(0, 500) };
      code = 1;
    }
  }
  process.stdout.write(JSON.stringify(ans) + "\n");
  process.exitCode = code;
}

main();
