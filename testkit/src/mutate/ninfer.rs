//! A model of a `.ninfer` v2 file (prefix, JSON directory, payload) for field-level mutation.
//!
//! The directory is held as a JSON value (member order kept), so a mutation can touch any
//! member — names, shapes, formats, layouts, offsets, sizes, identity, nesting — and
//! [`Model::to_bytes`] writes the prefix's `json_bytes` and the payload padding from the new
//! text: lengthening a name no longer breaks the framing. `relayout` recomputes every
//! object's `bytes` and `offset` the way the planner does and fits the payload, so a changed
//! shape or format lands on a file that passes every range rule and reaches the object views.

use super::{boundary as b, dict, Dice};
use ninfer_ternary::ninfer::layout;
use serde_json::{json, Map, Value};

/// Offset of the payload: the prefix and directory rounded up to this (spec/container.json).
const PAYLOAD_ALIGNMENT: usize = 4096;

/// A `.ninfer` file as fields.
#[derive(Clone, Debug)]
pub struct Model {
    /// The 8-byte magic.
    pub magic: [u8; 8],
    /// The directory.
    pub dir: Value,
    /// A `json_bytes` written instead of the real length (a lying prefix).
    pub lie: Option<u64>,
    /// The payload (from the payload offset to the end of the file).
    pub payload: Vec<u8>,
    /// Length of the directory text as read: the mutations' size estimate, so that sizing a
    /// change does not serialize the whole directory again.
    pub text_len: usize,
}

impl Model {
    /// Reads the prefix, the directory as JSON and the payload; `None` when the framing does
    /// not hold or the directory is not JSON.
    pub fn parse(bytes: &[u8]) -> Option<Model> {
        let magic: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
        let n = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
        let end = 16usize.checked_add(usize::try_from(n).ok()?)?;
        let text = bytes.get(16..end)?;
        let dir: Value = serde_json::from_slice(text).ok()?;
        let start = end.div_ceil(PAYLOAD_ALIGNMENT) * PAYLOAD_ALIGNMENT;
        let payload = bytes.get(start..).unwrap_or(&[]).to_vec();
        Some(Model {
            magic,
            dir,
            lie: None,
            payload,
            text_len: text.len(),
        })
    }

    /// Prefix, compact directory, zero padding to the payload offset, payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let text = serde_json::to_vec(&self.dir).unwrap_or_default();
        let mut out = Vec::with_capacity(PAYLOAD_ALIGNMENT + text.len() + self.payload.len());
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.lie.unwrap_or(text.len() as u64).to_le_bytes());
        out.extend_from_slice(&text);
        out.resize(out.len().div_ceil(PAYLOAD_ALIGNMENT) * PAYLOAD_ALIGNMENT, 0);
        out.extend_from_slice(&self.payload);
        out
    }

    fn objects(&mut self) -> Option<&mut Vec<Value>> {
        self.dir.get_mut("objects")?.as_array_mut()
    }

    fn size(&self) -> usize {
        PAYLOAD_ALIGNMENT + self.text_len + self.payload.len()
    }

    /// Applies one field mutation; `max_size` bounds what it may grow.
    pub fn mutate(&mut self, d: &mut Dice, max_size: usize) {
        let room = max_size.saturating_sub(self.size());
        match d.below(13) {
            0 | 1 => self.object_name(d, room),
            2 | 3 => self.object_number(d),
            4 => self.object_word(d),
            5 => self.object_members(d),
            6 => self.object_list(d, room),
            7 | 8 => {
                if d.one_in(2) {
                    self.shape(d);
                }
                self.relayout(max_size);
            }
            9 => self.identity(d, room),
            10 => self.nest(d),
            11 => {
                self.lie = Some(match d.below(3) {
                    0 => self.text_len as u64 + 1,
                    1 => (self.text_len as u64).saturating_sub(1),
                    _ => d.boundary(b::INTEGERS),
                })
            }
            _ => {
                let n = self.payload.len();
                if d.one_in(2) && n > 0 {
                    self.payload.truncate(d.below(n));
                } else {
                    let add = d.length(room).min(8192);
                    self.payload.resize(n + add, 0);
                }
            }
        }
    }

    /// One object (or `None` when there are none): its index.
    fn some_object(&mut self, d: &mut Dice) -> Option<&mut Map<String, Value>> {
        let objs = self.objects()?;
        if objs.is_empty() {
            return None;
        }
        let i = d.below(objs.len());
        objs[i].as_object_mut()
    }

    fn object_name(&mut self, d: &mut Dice, room: usize) {
        let Some(o) = self.some_object(d) else {
            return;
        };
        let name = match d.below(4) {
            0 => dict::ninfer_words()[d.below(dict::ninfer_words().len())].clone(),
            _ => {
                let n = d.length(room + 8);
                let mut s = "n".repeat(n);
                if n > 0 && d.one_in(8) {
                    s.replace_range(0..1, *d.pick(&["\u{0}", "\u{e9}", "/", "\""]));
                }
                s
            }
        };
        o.insert("name".into(), Value::String(name));
    }

    /// A numeric member (offset, bytes, a shape dimension) set to a boundary value, a negative
    /// number, a fraction, or a value of the wrong JSON type.
    fn object_number(&mut self, d: &mut Dice) {
        let Some(o) = self.some_object(d) else {
            return;
        };
        let member = *d.pick(&["offset", "bytes", "shape", "shape"]);
        let v = match d.below(8) {
            0 => json!(-1),
            1 => json!(1.5),
            2 => json!("12"),
            3 => Value::Null,
            _ => json!(d.boundary(b::INTEGERS)),
        };
        if member == "shape" {
            if let Some(Value::Array(dims)) = o.get_mut("shape") {
                if !dims.is_empty() {
                    let k = d.below(dims.len());
                    dims[k] = if d.one_in(2) {
                        json!(d.boundary(b::DIMS))
                    } else {
                        v
                    };
                }
            }
        } else {
            o.insert(member.into(), v);
        }
    }

    /// `kind`, `format`, `layout` or `encoding` set to a registry word (or a near miss).
    fn object_word(&mut self, d: &mut Dice) {
        let words = dict::ninfer_words();
        let Some(o) = self.some_object(d) else {
            return;
        };
        let member = *d.pick(&["kind", "format", "layout", "encoding"]);
        let mut w = words[d.below(words.len())].clone();
        if d.one_in(6) {
            w = w.to_lowercase();
        }
        o.insert(member.into(), Value::String(w));
    }

    /// A member removed, renamed to another member name, or an unknown member added.
    fn object_members(&mut self, d: &mut Dice) {
        let words = dict::ninfer_words();
        let w = words[d.below(words.len())].clone();
        let Some(o) = self.some_object(d) else {
            return;
        };
        let keys: Vec<String> = o.keys().cloned().collect();
        if keys.is_empty() {
            return;
        }
        let k = keys[d.below(keys.len())].clone();
        match d.below(3) {
            0 => {
                o.shift_remove(&k);
            }
            1 => {
                if let Some(v) = o.shift_remove(&k) {
                    o.insert(w, v);
                }
            }
            _ => {
                o.insert(w, json!(0));
            }
        }
    }

    /// Objects cloned (to a boundary count, with fresh names), removed or swapped.
    fn object_list(&mut self, d: &mut Dice, room: usize) {
        let Some(objs) = self.objects() else {
            return;
        };
        let n = objs.len();
        match d.below(4) {
            0 if n > 0 => {
                objs.remove(d.below(n));
            }
            1 if n > 1 => {
                let (i, j) = (d.below(n), d.below(n));
                objs.swap(i, j);
            }
            _ if n > 0 => {
                let proto = objs[d.below(n)].clone();
                let per = proto.to_string().len() + 8;
                let want = (d.boundary(b::COUNTS) as usize).clamp(n, n + room / per);
                for k in n..want {
                    let mut o = proto.clone();
                    if let Some(m) = o.as_object_mut() {
                        m.insert("name".into(), json!(format!("o{k}")));
                    }
                    objs.push(o);
                }
            }
            _ => {}
        }
    }

    /// A tensor's shape changed: a dimension to a small block multiple or a boundary value,
    /// or the rank changed.
    fn shape(&mut self, d: &mut Dice) {
        let Some(o) = self.some_object(d) else {
            return;
        };
        let Some(Value::Array(dims)) = o.get_mut("shape") else {
            return;
        };
        match d.below(4) {
            0 => dims.resize(*d.pick(&[0usize, 1, 2, 3]), json!(1)),
            1 if !dims.is_empty() => {
                let k = d.below(dims.len());
                dims[k] = json!(d.boundary(b::DIMS));
            }
            _ => {
                for x in dims.iter_mut() {
                    *x = json!(*d.pick(&[1u64, 2, 3, 5, 7, 128, 256, 384, 640]));
                }
            }
        }
    }

    /// Every object's `bytes` and `offset` recomputed as the planner would (tensor sizes from
    /// the layout's size formula, offsets at the next multiple of each object's alignment)
    /// and the payload fitted; objects whose size cannot be computed keep theirs. It reads the
    /// JSON itself instead of calling the planner: a mutator must not run the parser code the
    /// target checks (a bug there would crash the mutator, leaving no reproducer).
    fn relayout(&mut self, max_size: usize) {
        let s = ninfer_ternary::spec::get();
        let Some(objs) = self.objects() else {
            return;
        };
        let mut cursor = 0u64;
        for o in objs.iter_mut() {
            let Some(m) = o.as_object_mut() else { continue };
            let (bytes, align) = match (m.get("format"), m.get("layout"), m.get("shape")) {
                (Some(Value::String(f)), Some(Value::String(l)), Some(Value::Array(dims))) => {
                    let shape: Option<Vec<u64>> = dims.iter().map(|d| d.as_u64()).collect();
                    let (Some(format), Some(layout), Some(shape)) =
                        (s.format(f), s.layout_named(l), shape)
                    else {
                        continue;
                    };
                    let Ok(n) = layout::encoded_size(layout, format, &shape, "relayout") else {
                        continue;
                    };
                    (n, layout.alignment.max(1))
                }
                _ => match m.get("bytes").and_then(|b| b.as_u64()) {
                    Some(n) => (n, s.container.directory.resource_alignment.max(1)),
                    None => continue,
                },
            };
            let Some(at) = cursor.checked_next_multiple_of(align) else {
                return;
            };
            m.insert("offset".into(), json!(at));
            m.insert("bytes".into(), json!(bytes));
            cursor = at.saturating_add(bytes);
        }
        let text_room = max_size.saturating_sub(PAYLOAD_ALIGNMENT + self.text_len);
        if cursor <= text_room as u64 {
            let old = self.payload.len();
            let mut fill = 0x11u8;
            self.payload.resize(cursor as usize, 0);
            // Fresh bytes where the old payload ended: a varied pattern, not all zeros.
            for x in self.payload.iter_mut().skip(old) {
                *x = fill;
                fill = fill.wrapping_mul(31).wrapping_add(7);
            }
        }
    }

    fn identity(&mut self, d: &mut Dice, room: usize) {
        let member = *d.pick(&["model_id", "weights_id"]);
        let n = d.length(room);
        if let Some(Value::Object(id)) = self.dir.get_mut("identity") {
            match d.below(4) {
                0 => {
                    id.shift_remove(member);
                }
                1 => {
                    id.insert(member.into(), json!(7));
                }
                _ => {
                    id.insert(member.into(), json!("i".repeat(n)));
                }
            }
        }
    }

    /// A value wrapped in arrays to a boundary depth (the JSON nesting limit ± 1).
    fn nest(&mut self, d: &mut Dice) {
        let depth = *d.pick(&[1usize, 2, 126, 127, 128, 129]);
        let Some(o) = self.some_object(d) else {
            return;
        };
        let member = *d.pick(&["shape", "name", "offset"]);
        if let Some(v) = o.get_mut(member) {
            let mut x = v.take();
            for _ in 0..depth {
                x = Value::Array(vec![x]);
            }
            *v = x;
        }
    }
}
