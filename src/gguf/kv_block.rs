//! Phase 2 of the reader: the key/value block, then the two keys the container itself
//! interprets (`general.alignment`, and in strict mode `general.architecture`).

use super::cursor::Cur;
use super::nul_twin::{check_nul_twins, NameKind};
use super::reader::Kv;
use super::value::{Value, ValueType};
use crate::error::{Error, ErrorClass as C, Result};
use std::collections::HashMap;

/// The KVs in file order with a by-key index.
pub(super) struct KvBlock<'a> {
    pub(super) kvs: Vec<Kv<'a>>,
    pub(super) index: HashMap<&'a str, usize>,
}

impl<'a> KvBlock<'a> {
    fn get(&self, key: &str) -> Option<&Kv<'a>> {
        self.index.get(key).map(|&i| &self.kvs[i])
    }
}

pub(super) fn read_kvs<'a>(c: &mut Cur<'a>, kv_count: u64) -> Result<KvBlock<'a>> {
    // Counts are bounded by the file size (header phase); capacity is still capped so a small
    // count of large records does not reserve per-record memory up front.
    let mut block = KvBlock {
        kvs: Vec::with_capacity(kv_count.min(1024) as usize),
        index: HashMap::new(),
    };
    for i in 0..kv_count {
        let kv = read_kv(c, i, &block.index)?;
        block.index.insert(kv.key, block.kvs.len());
        block.kvs.push(kv);
    }
    Ok(block)
}

fn read_kv<'a>(c: &mut Cur<'a>, i: u64, seen: &HashMap<&'a str, usize>) -> Result<Kv<'a>> {
    let rec = c.at();
    let key = c.string(&|| format!("kv[{i}].key"))?;
    if key.is_empty() {
        return Err(Error::at(
            C::GgufKeyEmpty,
            rec,
            format!("kv[{i}].key"),
            "metadata key is the empty string",
        ));
    }
    if let Some(&j) = seen.get(key) {
        return Err(Error::at(
            C::GgufKeyDuplicate,
            rec,
            format!("kv[{i}].key"),
            format!("key '{key}' already appeared as kv[{j}]; keys must be unique"),
        ));
    }
    let field = || format!("kv[{i}]('{key}').value");
    let tpos = c.at();
    let type_id = c.u32(&field)?;
    let Some(t) = ValueType::from_id(type_id) else {
        return Err(Error::at(
            C::GgufValueType,
            tpos,
            field(),
            format!("value type {type_id} is not a GGUF value type (0..=12)"),
        ));
    };
    let value = c.value(t, &field)?;
    Ok(Kv {
        key,
        value,
        offset: rec,
        value_offset: tpos,
    })
}

/// Strict mode: no two keys equal up to a NUL byte (`gguf.name_nul_twin`).
pub(super) fn check_key_nul_twins(block: &KvBlock<'_>) -> Result<()> {
    let keys: Vec<&str> = block.kvs.iter().map(|k| k.key).collect();
    let at: Vec<u64> = block.kvs.iter().map(|k| k.offset).collect();
    check_nul_twins(&keys, &at, NameKind::Key)
}

/// `general.alignment`: absent → the default; else a U32 that is a non-zero power of two.
pub(super) fn alignment_of(block: &KvBlock<'_>) -> Result<u64> {
    let g = &crate::spec::get().gguf;
    let Some(kv) = block.get(g.alignment_key.as_str()) else {
        return Ok(g.default_alignment as u64);
    };
    match kv.value {
        Value::U32(a) if a != 0 && a.is_power_of_two() => Ok(a as u64),
        Value::U32(a) => Err(Error::at(
            C::GgufAlignmentValue,
            kv.value_offset,
            kv.key,
            format!("alignment {a} is not a non-zero power of two"),
        )),
        ref v => Err(Error::at(
            C::GgufAlignmentType,
            kv.value_offset,
            kv.key,
            format!("general.alignment is {}, must be U32", v.value_type()),
        )),
    }
}

/// Strict mode: `general.architecture` must be present and a STRING.
pub(super) fn check_architecture(block: &KvBlock<'_>) -> Result<()> {
    let g = &crate::spec::get().gguf;
    if !g.strict.architecture_required {
        return Ok(());
    }
    match block.get(g.architecture_key.as_str()) {
        None => Err(Error::at(
            C::GgufArchitectureMissing,
            16,
            g.architecture_key.as_str(),
            "general.architecture is required (strict mode)",
        )),
        Some(kv) if kv.value.as_str().is_none() => Err(Error::at(
            C::GgufMetadataType,
            kv.value_offset,
            kv.key,
            format!(
                "general.architecture is {}, must be STRING",
                kv.value.value_type()
            ),
        )),
        Some(_) => Ok(()),
    }
}
