//! Phase 1 of the reader: the 24-byte header (magic, version, counts), with both counts bounded
//! by the bytes that remain before anything is sized by them (CVE-2024-23605).

use super::cursor::Cur;
use crate::error::{enforced, Error, ErrorClass as C, Result};

/// Smallest possible KV record: u64 key length + u32 type + a 1-byte value. Used to bound
/// `kv_count` by the bytes that remain before anything is sized by it (CVE-2024-23605).
pub const MIN_KV_BYTES: u64 = 8 + 4 + 1;
/// Smallest possible tensor-info record: name length, n_dims, one dim, type, offset.
pub const MIN_TENSOR_INFO_BYTES: u64 = 8 + 4 + 8 + 4 + 8;

/// The decoded header.
pub(super) struct Header {
    pub(super) version: u32,
    pub(super) tensor_count: u64,
    pub(super) kv_count: u64,
}

pub(super) fn read_header(c: &mut Cur<'_>) -> Result<Header> {
    check_magic(c)?;
    let version = read_version(c)?;
    let tensor_count = c.u64(&|| "header.tensor_count".into())?;
    let kv_count = c.u64(&|| "header.kv_count".into())?;
    check_counts_fit(tensor_count, kv_count, c.remaining() as u64)?;
    Ok(Header {
        version,
        tensor_count,
        kv_count,
    })
}

fn check_magic(c: &mut Cur<'_>) -> Result<()> {
    let g = &crate::spec::get().gguf;
    let magic = c.take(4, &|| "header.magic".into())?;
    let want_magic: Vec<u8> = (0..g.magic_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(g.magic_hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    if magic != want_magic.as_slice() && enforced(C::GgufMagic) {
        return Err(Error::at(
            C::GgufMagic,
            0,
            "header.magic",
            format!("first bytes are {magic:02x?}, expected {want_magic:02x?} ('GGUF')"),
        ));
    }
    Ok(())
}

fn read_version(c: &mut Cur<'_>) -> Result<u32> {
    let g = &crate::spec::get().gguf;
    let version = c.u32(&|| "header.version".into())?;
    if g.versions_readable.contains(&version) {
        return Ok(version);
    }
    if version == g.big_endian_version_marker || g.versions_readable.contains(&version.swap_bytes())
    {
        if !enforced(C::GgufBigEndian) {
            return Ok(version.swap_bytes()); // rule switch (tests): the field read byte-swapped
        }
        return Err(Error::at(
            C::GgufBigEndian,
            4,
            "header.version",
            format!("big-endian GGUF: version reads as {version:#010x} (= {} byte-swapped); only little-endian files are supported", version.swap_bytes()),
        ));
    }
    if !enforced(C::GgufVersion) {
        return Ok(version); // rule switch (tests): read on as the newest layout
    }
    Err(Error::at(
        C::GgufVersion,
        4,
        "header.version",
        format!(
            "version {version} is not readable (readable: {:?})",
            g.versions_readable
        ),
    ))
}

/// Each tensor info and each KV needs a minimum number of bytes, so the counts are bounded by
/// `rem` (the bytes after the header); the products below cannot wrap after the divisions.
pub(super) fn check_counts_fit(tensor_count: u64, kv_count: u64, rem: u64) -> Result<()> {
    if tensor_count > rem / MIN_TENSOR_INFO_BYTES {
        return Err(Error::at(
            C::GgufCountOverflow,
            8,
            "header.tensor_count",
            format!("tensor_count {tensor_count} cannot fit: each tensor info needs >= {MIN_TENSOR_INFO_BYTES} bytes and {rem} are left"),
        ));
    }
    let after_infos = rem - tensor_count * MIN_TENSOR_INFO_BYTES;
    if kv_count > after_infos / MIN_KV_BYTES {
        return Err(Error::at(
            C::GgufCountOverflow,
            16,
            "header.kv_count",
            format!("kv_count {kv_count} cannot fit: each KV needs >= {MIN_KV_BYTES} bytes and {after_infos} are left after the tensor infos' minimum"),
        ));
    }
    Ok(())
}
