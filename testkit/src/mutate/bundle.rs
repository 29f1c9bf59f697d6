//! A model of a dump bundle (`verify::dump_bundle`: records of `u16` name length, name, `u32`
//! data length, data) for field-level mutation: a file cut or grown by whole elements, a
//! manifest member set to a boundary value or nudged by one, a file dropped, duplicated or
//! renamed — and every record's lengths written back consistent, so a change to one array
//! file reaches the length checks instead of breaking the framing.

use super::{boundary as b, Dice};
use serde_json::Value;

/// The records of a bundle, in order.
#[derive(Clone, Debug)]
pub struct Model {
    /// (name, data) per record.
    pub files: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Model {
    /// Reads every record that fits; `None` when there is none.
    pub fn parse(mut bytes: &[u8]) -> Option<Model> {
        let mut files = Vec::new();
        loop {
            let Some(n) = bytes.get(..2) else { break };
            let n = u16::from_le_bytes([n[0], n[1]]) as usize;
            let Some(name) = bytes.get(2..2 + n) else {
                break;
            };
            let Some(d) = bytes.get(2 + n..6 + n) else {
                break;
            };
            let d = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as usize;
            let Some(data) = bytes.get(6 + n..6 + n + d) else {
                break;
            };
            files.push((name.to_vec(), data.to_vec()));
            bytes = &bytes[6 + n + d..];
        }
        (!files.is_empty()).then_some(Model { files })
    }

    /// The records, lengths from the data.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in &self.files {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(data);
        }
        out
    }

    /// Applies one field mutation; `max_size` bounds what it may grow.
    pub fn mutate(&mut self, d: &mut Dice, max_size: usize) {
        let size: usize = self.files.iter().map(|(n, x)| 6 + n.len() + x.len()).sum();
        let room = max_size.saturating_sub(size);
        let i = d.below(self.files.len());
        let is_json = serde_json::from_slice::<Value>(&self.files[i].1).is_ok();
        match d.below(6) {
            0..=2 if is_json => self.manifest_member(i, d),
            0..=2 => {
                // An array file cut or grown by one or a few 4-byte elements, or emptied.
                let data = &mut self.files[i].1;
                let step = 4 * (1 + d.below(3) * d.below(2));
                match d.below(5) {
                    0 => data.clear(),
                    1 | 2 => data.truncate(data.len().saturating_sub(step)),
                    _ if step <= room => data.extend(std::iter::repeat_n(0x3f, step)),
                    _ => {}
                }
            }
            3 => {
                let f = self.files.remove(i);
                if d.one_in(2) {
                    self.files.insert(d.below(self.files.len() + 1), f.clone());
                    self.files.push(f);
                }
            }
            4 => {
                let j = d.below(self.files.len());
                let name = self.files[j].0.clone();
                self.files[i].0 = name;
            }
            _ => {
                let n = d.length(room.min(300));
                self.files[i].0.resize(n, b'f');
            }
        }
    }

    /// A numeric member of a JSON manifest set to a boundary value or nudged by one (also
    /// inside case lists), or a member removed.
    fn manifest_member(&mut self, i: usize, d: &mut Dice) {
        let Ok(mut v) = serde_json::from_slice::<Value>(&self.files[i].1) else {
            return;
        };
        let mut numbers = Vec::new();
        collect_numbers(&mut v, &mut numbers);
        if numbers.is_empty() {
            return;
        }
        let k = d.below(numbers.len());
        let x = numbers[k].as_u64().unwrap_or(0);
        *numbers[k] = match d.below(4) {
            0 => Value::from(x.wrapping_add(1)),
            1 => Value::from(x.saturating_sub(1)),
            2 => Value::from(x.wrapping_mul(2)),
            _ => Value::from(d.boundary(b::INTEGERS)),
        };
        self.files[i].1 = serde_json::to_vec(&v).unwrap_or_default();
    }
}

fn collect_numbers<'a>(v: &'a mut Value, out: &mut Vec<&'a mut Value>) {
    match v {
        Value::Number(_) => out.push(v),
        Value::Array(a) => a.iter_mut().for_each(|x| collect_numbers(x, out)),
        Value::Object(m) => m.values_mut().for_each(|x| collect_numbers(x, out)),
        _ => {}
    }
}
