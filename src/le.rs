//! The one bounds-checked little-endian reader for byte layouts the crate parses outside the
//! GGUF header (dump files, case bundles, `.npy`, block payloads): every read checks the bytes
//! that remain, and a short read is a located [`Error`] of the caller's class, never a panic.
//!
//! Fixed-size decoders that already hold an exact-size chunk (`&[u8; N]`, e.g. from
//! `slice::as_chunks`) use [`u16_of`] / [`u32_of`] / … and need no check at all.

use crate::error::{Error, ErrorClass, Result};

/// A read position over `bytes`, reporting offsets relative to `base` (the absolute file
/// offset of `bytes[0]`) and errors of `class`.
#[derive(Clone, Debug)]
pub struct LeReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    class: ErrorClass,
}

impl<'a> LeReader<'a> {
    /// A reader at the start of `bytes`; a short read is an error of `class`.
    pub fn new(bytes: &'a [u8], class: ErrorClass) -> Self {
        LeReader {
            bytes,
            pos: 0,
            base: 0,
            class,
        }
    }

    /// Offsets in errors are reported as `base + position` (for a slice cut out of a file).
    #[cfg(any(test, feature = "internals"))]
    pub fn with_base(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// The absolute offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next `n` bytes, or an error naming `field`, where it starts and how many bytes remain.
    pub fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        let rem = self.remaining();
        if n > rem {
            return Err(Error::at(
                self.class,
                self.offset(),
                field,
                format!("needs {n} bytes, {rem} remain"),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let s = self.take(N, field)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Skips `n` bytes (checked like [`LeReader::take`]).
    #[cfg(feature = "internals")]
    pub fn skip(&mut self, n: usize, field: &str) -> Result<()> {
        self.take(n, field).map(|_| ())
    }

    /// A `u8`.
    #[cfg(any(test, feature = "internals"))]
    pub fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.array::<1>(field)?[0])
    }

    /// A little-endian `u16`.
    #[cfg(any(test, feature = "internals"))]
    pub fn u16(&mut self, field: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }

    /// A little-endian `u32`.
    #[cfg(any(test, feature = "internals"))]
    pub fn u32(&mut self, field: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    /// A little-endian `u64`.
    #[cfg(feature = "internals")]
    pub fn u64(&mut self, field: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    /// A little-endian `i32`.
    pub fn i32(&mut self, field: &str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(field)?))
    }

    /// A little-endian `f32`.
    #[cfg(any(test, feature = "internals"))]
    pub fn f32(&mut self, field: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array(field)?))
    }

    /// `n` little-endian `f32`s (the byte count is checked before anything is allocated).
    #[cfg(any(test, feature = "internals"))]
    pub fn f32s(&mut self, n: usize, field: &str) -> Result<Vec<f32>> {
        let bytes = n.checked_mul(4).ok_or_else(|| {
            Error::at(
                self.class,
                self.offset(),
                field,
                format!("{n} f32 values overflow usize"),
            )
        })?;
        let s = self.take(bytes, field)?;
        Ok(f32s_of(s))
    }
}

/// A `u16` from exactly two little-endian bytes.
#[cfg(feature = "internals")]
pub fn u16_of(b: &[u8; 2]) -> u16 {
    u16::from_le_bytes(*b)
}

/// A `u32` from exactly four little-endian bytes.
#[cfg(feature = "internals")]
pub fn u32_of(b: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*b)
}

/// A `u64` from exactly eight little-endian bytes.
pub fn u64_of(b: &[u8; 8]) -> u64 {
    u64::from_le_bytes(*b)
}

/// The `f32`s of `bytes` (whole little-endian words; a trailing partial word is ignored, so
/// callers pass a length they checked).
#[cfg(any(test, feature = "internals"))]
pub fn f32s_of(bytes: &[u8]) -> Vec<f32> {
    let (words, _) = bytes.as_chunks::<4>();
    words.iter().map(|w| f32::from_le_bytes(*w)).collect()
}

/// The `u16` at byte `at` of `bytes`, if two bytes are there.
#[cfg(any(test, feature = "internals"))]
pub fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    let end = at.checked_add(2)?;
    let b: &[u8; 2] = bytes.get(at..end)?.try_into().ok()?;
    Some(u16::from_le_bytes(*b))
}

/// The `u32` at byte `at` of `bytes`, if four bytes are there.
pub fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let end = at.checked_add(4)?;
    let b: &[u8; 4] = bytes.get(at..end)?.try_into().ok()?;
    Some(u32::from_le_bytes(*b))
}

/// The `u64` at byte `at` of `bytes`, if eight bytes are there.
pub fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let end = at.checked_add(8)?;
    let b: &[u8; 8] = bytes.get(at..end)?.try_into().ok()?;
    Some(u64::from_le_bytes(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_order_and_a_short_read_is_located() {
        let b = [1u8, 0, 2, 0, 0, 0, 0, 0, 0x80, 0x3f, 9];
        let mut r = LeReader::new(&b, ErrorClass::DumpFormat).with_base(100);
        assert_eq!(r.u16("a").unwrap(), 1);
        assert_eq!(r.u32("b").unwrap(), 2);
        assert_eq!(r.f32("c").unwrap(), 1.0);
        assert_eq!(r.offset(), 110);
        let e = r.u32("d").unwrap_err();
        assert_eq!(e.class(), ErrorClass::DumpFormat);
        assert_eq!(e.offset(), Some(110));
        assert_eq!(e.field(), "d");
        assert!(e.detail().contains("needs 4 bytes, 1 remain"), "{e}");
        // The failed read consumed nothing.
        assert_eq!(r.u8("e").unwrap(), 9);
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let mut r = LeReader::new(&[0u8; 8], ErrorClass::DumpFormat);
        assert!(r.f32s(usize::MAX / 2, "x").is_err());
        assert!(r.f32s(3, "x").is_err());
        assert_eq!(r.f32s(2, "x").unwrap(), vec![0.0, 0.0]);
    }

    #[test]
    fn at_helpers_refuse_out_of_range() {
        let b = [0xffu8, 0x01, 0, 0];
        assert_eq!(u16_at(&b, 0), Some(0x01ff));
        assert_eq!(u16_at(&b, 3), None);
        assert_eq!(u32_at(&b, 0), Some(0x1ff));
        assert_eq!(u32_at(&b, usize::MAX), None);
        assert_eq!(u64_at(&b, 0), None);
    }
}
