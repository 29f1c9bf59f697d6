//! A lenient model of a GGUF file (v2/v3 little-endian layout) for field-level mutation.
//!
//! [`Model::parse`] reads header, key/values and tensor infos with every count bounded by the
//! bytes left (no allocation a header can inflate) but without the reader's rules, so files
//! the real reader refuses still parse here as long as their *framing* holds. [`Model::to_bytes`]
//! writes counts, string lengths and array counts from the model (or a deliberate lie), pads
//! to the file's own `general.alignment` and appends the data section unchanged, so tensor
//! offsets stay right when the header grows or shrinks.

use super::{boundary as b, dict, Dice};

/// GGUF value type ids (spec/gguf.json `value_types`).
const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// Bytes of a fixed-size value type; `None` for STRING, ARRAY and unknown ids.
fn fixed_size(ty: u32) -> Option<usize> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// A metadata value.
#[derive(Clone, Debug)]
pub enum Value {
    /// A fixed-size scalar: its type id and little-endian bytes.
    Scalar(u32, Vec<u8>),
    /// A STRING's bytes.
    Str(Vec<u8>),
    /// A STRING whose length prefix says something else than its bytes (a lying length).
    LyingStr(Vec<u8>, u64),
    /// An ARRAY: element type, elements (raw fixed bytes or string bytes), and a count to
    /// write instead of the real one (a lying header).
    Array(u32, Vec<Vec<u8>>, Option<u64>),
}

/// One key/value record.
#[derive(Clone, Debug)]
pub struct Kv {
    /// Key bytes (not necessarily UTF-8).
    pub key: Vec<u8>,
    /// The value.
    pub value: Value,
}

/// One tensor-info record.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// Name bytes.
    pub name: Vec<u8>,
    /// Dimensions, `ne[0]` first.
    pub dims: Vec<u64>,
    /// ggml type id.
    pub ty: u32,
    /// Offset into the data section.
    pub offset: u64,
}

/// A GGUF file as fields.
#[derive(Clone, Debug)]
pub struct Model {
    /// The 4 magic bytes and the version.
    pub magic: [u8; 4],
    /// Header version.
    pub version: u32,
    /// Key/value records in file order.
    pub kvs: Vec<Kv>,
    /// Tensor infos in file order.
    pub tensors: Vec<Tensor>,
    /// Counts written instead of the real ones (kv, tensor), for lying headers.
    pub lie: (Option<u64>, Option<u64>),
    /// The data section (from the aligned data offset to the end of the file).
    pub data: Vec<u8>,
}

struct Cur<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn left(&self) -> usize {
        self.b.len() - self.at
    }
    fn string(&mut self) -> Option<Vec<u8>> {
        let n = self.u64()?;
        if n > self.left() as u64 {
            return None;
        }
        Some(self.take(n as usize)?.to_vec())
    }
    fn value(&mut self, ty: u32) -> Option<Value> {
        match ty {
            STRING => Some(Value::Str(self.string()?)),
            ARRAY => {
                let elem = self.u32()?;
                let count = self.u64()?;
                let min = match elem {
                    STRING => 8,
                    e => fixed_size(e)?,
                };
                if count > (self.left() / min) as u64 {
                    return None;
                }
                let mut items = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    items.push(match elem {
                        STRING => self.string()?,
                        _ => self.take(min)?.to_vec(),
                    });
                }
                Some(Value::Array(elem, items, None))
            }
            t => Some(Value::Scalar(t, self.take(fixed_size(t)?)?.to_vec())),
        }
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

impl Value {
    fn type_id(&self) -> u32 {
        match self {
            Value::Scalar(t, _) => *t,
            Value::Str(_) | Value::LyingStr(..) => STRING,
            Value::Array(..) => ARRAY,
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Value::Scalar(_, bytes) => out.extend_from_slice(bytes),
            Value::Str(s) => put_str(out, s),
            Value::LyingStr(s, n) => {
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(s);
            }
            Value::Array(elem, items, lie) => {
                out.extend_from_slice(&elem.to_le_bytes());
                out.extend_from_slice(&lie.unwrap_or(items.len() as u64).to_le_bytes());
                for it in items {
                    match *elem {
                        STRING => put_str(out, it),
                        _ => out.extend_from_slice(it),
                    }
                }
            }
        }
    }

    fn size(&self) -> usize {
        match self {
            Value::Scalar(_, b) => b.len(),
            Value::Str(s) | Value::LyingStr(s, _) => 8 + s.len(),
            Value::Array(elem, items, _) => {
                12 + items
                    .iter()
                    .map(|i| i.len() + if *elem == STRING { 8 } else { 0 })
                    .sum::<usize>()
            }
        }
    }
}

impl Model {
    /// Reads `bytes` as GGUF framing; `None` when the framing does not hold (wrong magic
    /// length, v1 counts, a length past the end, an unknown value type, `n_dims` > 8).
    pub fn parse(bytes: &[u8]) -> Option<Model> {
        let mut c = Cur { b: bytes, at: 0 };
        let magic: [u8; 4] = c.take(4)?.try_into().ok()?;
        let version = c.u32()?;
        let n_tensors = c.u64()?;
        let n_kvs = c.u64()?;
        if n_kvs > (c.left() / 12) as u64 || n_tensors > (c.left() / 24) as u64 {
            return None;
        }
        let mut kvs = Vec::new();
        for _ in 0..n_kvs {
            let key = c.string()?;
            let ty = c.u32()?;
            let value = c.value(ty)?;
            kvs.push(Kv { key, value });
        }
        let mut tensors = Vec::new();
        for _ in 0..n_tensors {
            let name = c.string()?;
            let n_dims = c.u32()?;
            if n_dims > 8 {
                return None;
            }
            let mut dims = Vec::new();
            for _ in 0..n_dims {
                dims.push(c.u64()?);
            }
            let ty = c.u32()?;
            let offset = c.u64()?;
            tensors.push(Tensor {
                name,
                dims,
                ty,
                offset,
            });
        }
        let mut m = Model {
            magic,
            version,
            kvs,
            tensors,
            lie: (None, None),
            data: Vec::new(),
        };
        let start = align_up(c.at, m.alignment()).min(bytes.len());
        m.data = bytes[start..].to_vec();
        Some(m)
    }

    /// The alignment a reader would use: a U32 `general.alignment` that is a power of two, else 32.
    pub fn alignment(&self) -> usize {
        for kv in &self.kvs {
            if kv.key == b"general.alignment" {
                if let Value::Scalar(4, v) = &kv.value {
                    let a = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                    if a.is_power_of_two() && a <= 1 << 16 {
                        return a as usize;
                    }
                }
            }
        }
        32
    }

    /// The file: header, records, padding to the alignment, data section.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.header_size() + self.data.len() + 64);
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        let n_t = self.lie.1.unwrap_or(self.tensors.len() as u64);
        let n_kv = self.lie.0.unwrap_or(self.kvs.len() as u64);
        out.extend_from_slice(&n_t.to_le_bytes());
        out.extend_from_slice(&n_kv.to_le_bytes());
        for kv in &self.kvs {
            put_str(&mut out, &kv.key);
            out.extend_from_slice(&kv.value.type_id().to_le_bytes());
            kv.value.write(&mut out);
        }
        for t in &self.tensors {
            put_str(&mut out, &t.name);
            out.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
            for d in &t.dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&t.ty.to_le_bytes());
            out.extend_from_slice(&t.offset.to_le_bytes());
        }
        if !self.data.is_empty() {
            out.resize(align_up(out.len(), self.alignment()), 0);
            out.extend_from_slice(&self.data);
        }
        out
    }

    fn header_size(&self) -> usize {
        24 + self
            .kvs
            .iter()
            .map(|kv| 12 + kv.key.len() + kv.value.size())
            .sum::<usize>()
            + self
                .tensors
                .iter()
                .map(|t| 24 + t.name.len() + 8 * t.dims.len())
                .sum::<usize>()
    }

    /// The byte size of a tensor of `dims` and type `ty` from the spec's block table, if known
    /// and small.
    fn tensor_bytes(dims: &[u64], ty: u32) -> Option<u64> {
        let t = ninfer_ternary::spec::get().ggml_type(ty)?;
        let ne0 = *dims.first()?;
        let be = t.block_elems.max(1) as u64;
        let mut n = (ne0 / be).checked_mul(t.block_bytes as u64)?;
        for &d in &dims[1..] {
            n = n.checked_mul(d)?;
        }
        Some(n)
    }

    /// Offsets rewritten as the running sum of padded sizes and the data section cut or grown
    /// to end exactly after the last tensor: the layout a writer produces (one mutation away
    /// from every offset rule).
    fn relayout(&mut self, max_data: usize) {
        let a = self.alignment() as u64;
        let mut at = 0u64;
        for t in &mut self.tensors {
            t.offset = at;
            let n = Self::tensor_bytes(&t.dims, t.ty).unwrap_or(0);
            at = at.saturating_add(n);
            at = at.saturating_add((a - at % a) % a);
        }
        let end = self
            .tensors
            .last()
            .map(|t| {
                t.offset
                    .saturating_add(Self::tensor_bytes(&t.dims, t.ty).unwrap_or(0))
            })
            .unwrap_or(0);
        if end <= max_data as u64 {
            self.data.resize(end as usize, 0x5a);
        }
    }

    /// Applies one field mutation; `max_size` bounds what it may grow.
    pub fn mutate(&mut self, d: &mut Dice, max_size: usize) {
        let room = max_size.saturating_sub(self.header_size() + self.data.len() + 64);
        match d.below(15) {
            0 | 1 => self.mutate_kv_value(d, room),
            2 => self.mutate_key(d, room),
            3 => self.insert_kv(d, room),
            4 => {
                if !self.kvs.is_empty() {
                    let i = d.below(self.kvs.len());
                    match d.below(3) {
                        0 => {
                            self.kvs.remove(i);
                        }
                        1 => {
                            let kv = self.kvs[i].clone();
                            let j = d.below(self.kvs.len() + 1);
                            self.kvs.insert(j, kv);
                        }
                        _ => {
                            let j = d.below(self.kvs.len());
                            self.kvs.swap(i, j);
                        }
                    }
                }
            }
            5 | 6 => self.mutate_tensor(d, room),
            7 => self.tensor_count_change(d),
            8 => self.set_alignment(d),
            9 => self.relayout(max_size.saturating_sub(self.header_size() + 64)),
            10 => self.end_at_eof(d),
            11 => self.lie_about_counts(d),
            12 => {
                self.version = *d.pick(&[1, 2, 3, 4, 0, u32::MAX, 0x0300_0000]);
            }
            13 => self.large_array(d, room),
            _ => {
                // Truncate or extend the data section.
                let n = self.data.len();
                if d.one_in(2) && n > 0 {
                    self.data.truncate(d.below(n));
                } else {
                    let add = d.length(room).min(4096);
                    self.data.resize(n + add, 0);
                }
            }
        }
    }

    fn mutate_kv_value(&mut self, d: &mut Dice, room: usize) {
        if self.kvs.is_empty() {
            return self.insert_kv(d, room);
        }
        let i = d.below(self.kvs.len());
        let v = &mut self.kvs[i].value;
        match v {
            Value::Scalar(t, bytes) => {
                if d.one_in(4) {
                    *v = random_value(d, room);
                } else {
                    let x = d.boundary(b::INTEGERS);
                    let w = bytes.len();
                    bytes.copy_from_slice(&x.to_le_bytes()[..w]);
                    if *t == 7 && d.one_in(2) {
                        bytes[0] = *d.pick(&[0, 1, 2, 255]);
                    }
                }
            }
            Value::Str(s) if d.one_in(8) => {
                let n = if d.one_in(2) {
                    d.boundary(b::LYING_COUNTS)
                } else {
                    (s.len() as u64).wrapping_add(*d.pick(&[1, 7, 8, 9, u64::MAX]))
                };
                *v = Value::LyingStr(std::mem::take(s), n);
            }
            Value::Str(s) | Value::LyingStr(s, _) => resize_text(s, d, room),
            Value::Array(elem, items, lie) => match d.below(6) {
                0 | 1 => {
                    // Grow (or shrink) to a boundary count by repeating entries.
                    let per = items.first().map_or(8, |x| x.len() + 8);
                    let want = (d.boundary(b::COUNTS) as usize).min(room / per.max(1));
                    let proto = items.first().cloned().unwrap_or_else(|| {
                        if *elem == STRING {
                            b"a".to_vec()
                        } else {
                            vec![0; fixed_size(*elem).unwrap_or(1)]
                        }
                    });
                    items.resize(want, proto);
                }
                2 => *lie = Some(d.boundary(b::LYING_COUNTS)),
                3 => {
                    if !items.is_empty() {
                        let k = d.below(items.len());
                        if *elem == STRING {
                            resize_text(&mut items[k], d, room);
                        } else {
                            let x = d.boundary(b::INTEGERS).to_le_bytes();
                            let w = items[k].len();
                            items[k].copy_from_slice(&x[..w]);
                        }
                    }
                }
                4 => {
                    // Retype the elements (a type-confused array, or a nested array).
                    *elem = *d.pick(&[0, 4, 5, 6, 7, 8, 9, 10, 12, 13]);
                    let w = fixed_size(*elem).unwrap_or(1);
                    if *elem != STRING {
                        for it in items.iter_mut() {
                            it.resize(w, 0);
                        }
                    }
                }
                _ => *v = random_value(d, room),
            },
        }
    }

    /// A fresh key holding an array of a boundary count (around 1,000 and the powers of two
    /// near it) of short strings or integers, as many as fit.
    fn large_array(&mut self, d: &mut Dice, room: usize) {
        let (elem, item) = match d.below(3) {
            0 => (4u32, vec![7u8, 0, 0, 0]),
            _ => (STRING, b"t".repeat(d.below(3))),
        };
        let per = item.len() + if elem == STRING { 8 } else { 0 };
        let count = (d.boundary(&b::COUNTS[7..]) as usize).min(room / per.max(1));
        let key = format!("fuzz.array.{}", self.kvs.len()).into_bytes();
        let at = d.below(self.kvs.len() + 1);
        self.kvs.insert(
            at,
            Kv {
                key,
                value: Value::Array(elem, vec![item; count], None),
            },
        );
    }

    fn mutate_key(&mut self, d: &mut Dice, room: usize) {
        if self.kvs.is_empty() {
            return;
        }
        let i = d.below(self.kvs.len());
        let key = &mut self.kvs[i].key;
        match d.below(4) {
            0 => *key = d.pick(&dict::gguf_keys()).as_bytes().to_vec(),
            1 => {
                if let Some(j) = (0..self.kvs.len()).find(|&j| j != i) {
                    self.kvs[i].key = self.kvs[j].key.clone();
                    if d.one_in(2) {
                        self.kvs[i].key.push(0);
                    }
                }
            }
            _ => resize_text(key, d, room),
        }
    }

    fn insert_kv(&mut self, d: &mut Dice, room: usize) {
        let keys = dict::gguf_keys();
        let key = d.pick(&keys).as_bytes().to_vec();
        let value = if key == b"general.alignment" {
            Value::Scalar(4, (d.boundary(b::ALIGNMENTS) as u32).to_le_bytes().to_vec())
        } else {
            random_value(d, room)
        };
        let at = d.below(self.kvs.len() + 1);
        self.kvs.insert(at, Kv { key, value });
    }

    fn mutate_tensor(&mut self, d: &mut Dice, room: usize) {
        if self.tensors.is_empty() {
            return self.tensor_count_change(d);
        }
        let i = d.below(self.tensors.len());
        let t = &mut self.tensors[i];
        match d.below(7) {
            0 => resize_text(&mut t.name, d, room),
            1 => {
                let n = *d.pick(&[0usize, 1, 2, 3, 4, 5]);
                t.dims.resize(n, 1);
            }
            2 | 3 => {
                if !t.dims.is_empty() {
                    let k = d.below(t.dims.len());
                    t.dims[k] = d.boundary(b::DIMS);
                    if d.one_in(3) {
                        for x in t.dims.iter_mut() {
                            *x = d.boundary(b::DIMS);
                        }
                    }
                }
            }
            4 => t.ty = *d.pick(&dict::ggml_type_ids()),
            5 => {
                let a = 32u64;
                t.offset = match d.below(4) {
                    0 => t.offset.wrapping_add(1),
                    1 => t.offset.wrapping_add(a),
                    2 => t.offset.wrapping_sub(a),
                    _ => d.boundary(b::INTEGERS),
                };
            }
            _ => {
                if let Some(j) = (0..self.tensors.len()).find(|&j| j != i) {
                    self.tensors[i].name = self.tensors[j].name.clone();
                }
            }
        }
    }

    fn tensor_count_change(&mut self, d: &mut Dice) {
        if !self.tensors.is_empty() && d.one_in(2) {
            let i = d.below(self.tensors.len());
            self.tensors.remove(i);
        } else {
            let mut t = self.tensors.first().cloned().unwrap_or(Tensor {
                name: b"t".to_vec(),
                dims: vec![32, 1, 1],
                ty: 0,
                offset: 0,
            });
            t.name
                .extend_from_slice(format!(".{}", self.tensors.len()).as_bytes());
            if d.one_in(2) {
                t.dims = (0..3).map(|_| d.boundary(b::DIMS)).collect();
            }
            self.tensors.push(t);
        }
    }

    fn set_alignment(&mut self, d: &mut Dice) {
        let a = d.boundary(b::ALIGNMENTS) as u32;
        let value = Value::Scalar(4, a.to_le_bytes().to_vec());
        match self
            .kvs
            .iter_mut()
            .find(|kv| kv.key == b"general.alignment")
        {
            Some(kv) => kv.value = value,
            None => self.kvs.push(Kv {
                key: b"general.alignment".to_vec(),
                value,
            }),
        }
    }

    /// The last tensor's data made to end exactly at end of file (data section cut or padded).
    fn end_at_eof(&mut self, d: &mut Dice) {
        let Some(t) = self.tensors.iter().max_by_key(|t| t.offset) else {
            return;
        };
        if let Some(n) = Self::tensor_bytes(&t.dims, t.ty) {
            let end = t.offset.saturating_add(n);
            if end <= (self.data.len() + 4096) as u64 {
                self.data.resize(end as usize, 0);
            }
        }
        if d.one_in(3) {
            self.set_alignment(d);
        }
    }

    fn lie_about_counts(&mut self, d: &mut Dice) {
        let v = d.boundary(b::LYING_COUNTS);
        if d.one_in(2) {
            self.lie.0 = Some(v)
        } else {
            self.lie.1 = Some(v)
        }
    }
}

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a.max(1)) * a.max(1)
}

/// A text field resized to a boundary length (cut, or padded with a repeated byte), sometimes
/// with an invalid UTF-8 byte or a NUL inside.
fn resize_text(s: &mut Vec<u8>, d: &mut Dice, room: usize) {
    let n = d.length(room + s.len());
    let fill = *d.pick(b"a.0_");
    s.resize(n, fill);
    if !s.is_empty() && d.one_in(8) {
        let k = d.below(s.len());
        s[k] = *d.pick(&[0u8, 0xff, 0xc0, 0x80]);
    }
}

/// A fresh value of a random type (scalar, string or array).
fn random_value(d: &mut Dice, room: usize) -> Value {
    let ty = *d.pick(&[0u32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    match ty {
        STRING => {
            let mut s = Vec::new();
            resize_text(&mut s, d, room);
            Value::Str(s)
        }
        ARRAY => {
            let elem = *d.pick(&[4u32, 5, 6, 8, 10]);
            let n = (d.boundary(b::COUNTS) as usize).min(room / 12);
            let item = match elem {
                STRING => b"x".to_vec(),
                e => vec![1; fixed_size(e).unwrap_or(1)],
            };
            Value::Array(elem, vec![item; n], None)
        }
        t => {
            let w = fixed_size(t).unwrap_or(1);
            Value::Scalar(t, d.boundary(b::INTEGERS).to_le_bytes()[..w].to_vec())
        }
    }
}
