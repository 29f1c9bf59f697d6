//! Phase 2 of the reader: the key/value block, then the two keys the container itself
//! interprets (`general.alignment`, and in strict mode `general.architecture`).

use super::cursor::Cur;
use super::name_hash::NameMap;
use super::nul_twin::{check_nul_twins, NameKind};
use super::reader::Kv;
use super::value::{Value, ValueType};
use crate::error::{enforced, Error, ErrorClass as C, Result};

/// The KVs in file order with a by-key index.
pub(super) struct KvBlock<'a> {
    pub(super) kvs: Vec<Kv<'a>>,
    pub(super) index: NameMap<'a>,
}

impl<'a> KvBlock<'a> {
    fn get(&self, key: &str) -> Option<&Kv<'a>> {
        self.index.get(key).map(|&i| &self.kvs[i])
    }
}

/// Room for one more record in `v` and its name index, reserved fallibly: a file of millions
/// of tiny records (a KV can be 13 bytes on disk and ~100 on the heap) is refused with
/// `io.memory` at the record that needs memory the process cannot get, never aborted. The
/// vector grows by doubling (as `push` would), so memory follows the records actually read,
/// not the count a header declares.
pub(super) fn reserve_record<T>(
    v: &mut Vec<T>,
    index: &mut NameMap<'_>,
    at: u64,
    field: &dyn Fn() -> String,
) -> Result<()> {
    let read = v.len();
    let refuse = |what: &str| {
        Error::at(
            C::IoMemory,
            at,
            field(),
            format!(
                "out of memory for the {what} after {read} records ({} B each on the heap)",
                std::mem::size_of::<T>()
            ),
        )
    };
    if v.len() == v.capacity() {
        v.try_reserve(v.len().max(64))
            .map_err(|_| refuse("record list"))?;
    }
    index.try_reserve(1).map_err(|_| refuse("name index"))
}

pub(super) fn read_kvs<'a>(c: &mut Cur<'a>, kv_count: u64) -> Result<KvBlock<'a>> {
    let mut block = KvBlock {
        kvs: Vec::new(),
        index: NameMap::default(),
    };
    for i in 0..kv_count {
        let at = c.at();
        reserve_record(&mut block.kvs, &mut block.index, at, &|| format!("kv[{i}]"))?;
        let kv = read_kv(c, i, &block.index)?;
        block.index.insert(kv.key, block.kvs.len());
        block.kvs.push(kv);
    }
    Ok(block)
}

fn read_kv<'a>(c: &mut Cur<'a>, i: u64, seen: &NameMap<'a>) -> Result<Kv<'a>> {
    let rec = c.at();
    let key = c.string(&|| format!("kv[{i}].key"))?;
    planted!("gguf_key_256_buffer", {
        let mut buf = [0u8; 256];
        if key.len() <= 256 {
            buf[..key.len()].copy_from_slice(key.as_bytes());
            buf[std::hint::black_box(key.len())] = 0;
        }
        std::hint::black_box(buf);
    });
    if key.is_empty() && enforced(C::GgufKeyEmpty) {
        return Err(Error::at(
            C::GgufKeyEmpty,
            rec,
            format!("kv[{i}].key"),
            "metadata key is the empty string",
        ));
    }
    if let Some(&j) = seen.get(key).filter(|_| enforced(C::GgufKeyDuplicate)) {
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
    // No NUL in any key (every ordinary file): nothing to pair, no per-record copy.
    if !block.kvs.iter().any(|k| k.key.as_bytes().contains(&0)) {
        return Ok(());
    }
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
        Value::U32(a) if a != 0 && (a.is_power_of_two() || !enforced(C::GgufAlignmentValue)) => {
            Ok(a as u64)
        }
        // Rule switch (tests only): a 32-bit value of another integer type read as the U32.
        Value::I32(a) if a > 0 && !enforced(C::GgufAlignmentType) => Ok(a as u64),
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
        None if !enforced(C::GgufArchitectureMissing) => Ok(()),
        Some(kv) if kv.value.as_str().is_none() && !enforced(C::GgufMetadataType) => Ok(()),
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
