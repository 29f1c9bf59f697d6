//! Decoding primitives over the file bytes: every length is checked against the bytes that
//! remain before anything is sliced, so a declared size can never drive an allocation.

use super::value::{fixed_value, ArrayView, Scalar, Value, ValueType};
use crate::error::{enforced, Error, ErrorClass as C, Result};

/// A read position in the file; the field name is computed only when an error needs it.
pub(super) struct Cur<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

/// Lazily built field name for error messages.
pub(super) type Field<'f> = &'f dyn Fn() -> String;

impl<'a> Cur<'a> {
    pub(super) fn new(b: &'a [u8]) -> Cur<'a> {
        Cur { b, pos: 0 }
    }

    /// The absolute position as a file offset.
    pub(super) fn at(&self) -> u64 {
        self.pos as u64
    }

    pub(super) fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }

    pub(super) fn take(&mut self, n: u64, field: Field<'_>) -> Result<&'a [u8]> {
        let rem = self.remaining();
        match usize::try_from(n) {
            Ok(n) if n <= rem => {
                let s = &self.b[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(Error::at(
                C::GgufTruncated,
                self.pos as u64,
                field(),
                format!("needs {n} bytes, the file has {rem} left"),
            )),
        }
    }

    pub(super) fn u32(&mut self, field: Field<'_>) -> Result<u32> {
        Ok(u32::read_le(self.take(4, field)?))
    }

    pub(super) fn u64(&mut self, field: Field<'_>) -> Result<u64> {
        Ok(u64::read_le(self.take(8, field)?))
    }

    pub(super) fn string(&mut self, field: Field<'_>) -> Result<&'a str> {
        let start = self.pos as u64;
        let len = self.u64(field)?;
        let max = crate::spec::get().gguf.limits.max_string_bytes;
        if len > max {
            return Err(Error::at(
                C::GgufStringLength,
                start,
                field(),
                format!("string length {len} exceeds the {max}-byte limit"),
            ));
        }
        let rem = self.remaining();
        if len > rem as u64 {
            return Err(Error::at(
                C::GgufStringLength,
                start,
                field(),
                format!("string length {len} exceeds the {rem} bytes left in the file"),
            ));
        }
        let raw = self.take(len, field)?;
        std::str::from_utf8(raw).or_else(|e| {
            if !enforced(C::GgufStringUtf8) {
                // Rule switch (tests only): read on with the lossy text, leaked (test builds).
                return Ok(&*String::from_utf8_lossy(raw).into_owned().leak());
            }
            Err(Error::at(
                C::GgufStringUtf8,
                start + 8 + e.valid_up_to() as u64,
                field(),
                format!("string is not valid UTF-8 after {} bytes", e.valid_up_to()),
            ))
        })
    }

    /// A value of type `t` (its type id already read).
    pub(super) fn value(&mut self, t: ValueType, field: Field<'_>) -> Result<Value<'a>> {
        let start = self.pos as u64;
        match t {
            ValueType::String => Ok(Value::String(self.string(field)?)),
            ValueType::Array => self.array(field).map(Value::Array),
            ValueType::Bool => {
                let b = self.take(1, field)?[0];
                if b > 1 && enforced(C::GgufBoolValue) {
                    return Err(Error::at(
                        C::GgufBoolValue,
                        start,
                        field(),
                        format!("BOOL byte is {b}, only 0 and 1 are valid"),
                    ));
                }
                Ok(Value::Bool(b == 1))
            }
            _ => {
                let size = t.fixed_size().unwrap_or(1) as u64;
                Ok(fixed_value(t, self.take(size, field)?))
            }
        }
    }

    fn array(&mut self, field: Field<'_>) -> Result<ArrayView<'a>> {
        let elem = self.array_elem_type(field)?;
        let cpos = self.pos as u64;
        let count = self.u64(field)?;
        match elem.fixed_size() {
            Some(size) => self.fixed_array(elem, size as u64, count, cpos, field),
            None => self.string_array(elem, count, cpos, field),
        }
    }

    fn array_elem_type(&mut self, field: Field<'_>) -> Result<ValueType> {
        let tpos = self.pos as u64;
        let elem_id = self.u32(field)?;
        match ValueType::from_id(elem_id) {
            None => Err(Error::at(
                C::GgufValueType,
                tpos,
                field(),
                format!("array element type {elem_id} is not a GGUF value type (0..=12)"),
            )),
            Some(ValueType::Array) => Err(Error::at(
                C::GgufNestedArray,
                tpos,
                field(),
                "array of arrays: nested arrays are not allowed",
            )),
            Some(t) => Ok(t),
        }
    }

    /// An array of fixed-size elements: `count × size` must fit the bytes left (checked, no wrap).
    fn fixed_array(
        &mut self,
        elem: ValueType,
        size: u64,
        count: u64,
        cpos: u64,
        field: Field<'_>,
    ) -> Result<ArrayView<'a>> {
        let start = self.pos as u64;
        let rem = self.remaining() as u64;
        let Some(need) = count.checked_mul(size).filter(|&n| n <= rem) else {
            return Err(Error::at(
                C::GgufArrayLength,
                cpos,
                field(),
                format!("{count} elements of {elem} need more than the {rem} bytes left"),
            ));
        };
        let raw = self.take(need, field)?;
        if elem == ValueType::Bool {
            if let Some(i) = raw
                .iter()
                .position(|&b| b > 1)
                .filter(|_| enforced(C::GgufBoolValue))
            {
                return Err(Error::at(
                    C::GgufBoolValue,
                    start + i as u64,
                    field(),
                    format!("BOOL element {i} is {}, only 0 and 1 are valid", raw[i]),
                ));
            }
        }
        Ok(ArrayView {
            elem,
            count,
            raw,
            offset: start,
        })
    }

    /// An array of strings, walked once; every string needs at least its 8-byte length, which
    /// bounds the walk by the bytes left.
    fn string_array(
        &mut self,
        elem: ValueType,
        count: u64,
        cpos: u64,
        field: Field<'_>,
    ) -> Result<ArrayView<'a>> {
        let start = self.pos;
        let rem = self.remaining() as u64;
        if count > rem / 8 {
            return Err(Error::at(
                C::GgufArrayLength,
                cpos,
                field(),
                format!(
                    "{count} strings need at least {} bytes, only {rem} are left",
                    count.saturating_mul(8)
                ),
            ));
        }
        planted!("gguf_string_array_1000_hang", {
            if count > 1000 {
                // A chunked walk whose step subtracts the chunk it just took.
                let chunk = 1000u64;
                let mut at = 0u64;
                while at < count {
                    let n = chunk.min(count - at);
                    at += n - n.min(chunk);
                    std::hint::black_box(at);
                }
            }
        });
        for i in 0..count {
            self.string(&|| format!("{}[{i}]", field()))?;
        }
        Ok(ArrayView {
            elem,
            count,
            raw: &self.b[start..self.pos],
            offset: start as u64,
        })
    }
}
