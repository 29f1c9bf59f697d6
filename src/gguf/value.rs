//! GGUF metadata values: the 13 value types, zero-copy borrowed values and owned values for writing.

use crate::error::{Error, ErrorClass, Result};

/// A GGUF metadata value type (ids 0..=12; `spec/gguf.json` `value_types`, a test keeps them equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// GGUF value type U8.
    U8,
    /// GGUF value type I8.
    I8,
    /// GGUF value type U16.
    U16,
    /// GGUF value type I16.
    I16,
    /// GGUF value type U32.
    U32,
    /// GGUF value type I32.
    I32,
    /// GGUF value type F32.
    F32,
    /// GGUF value type BOOL.
    Bool,
    /// GGUF value type STRING.
    String,
    /// GGUF value type ARRAY.
    Array,
    /// GGUF value type U64.
    U64,
    /// GGUF value type I64.
    I64,
    /// GGUF value type F64.
    F64,
}

impl ValueType {
    /// Every type, in id order.
    pub const ALL: [ValueType; 13] = [
        ValueType::U8,
        ValueType::I8,
        ValueType::U16,
        ValueType::I16,
        ValueType::U32,
        ValueType::I32,
        ValueType::F32,
        ValueType::Bool,
        ValueType::String,
        ValueType::Array,
        ValueType::U64,
        ValueType::I64,
        ValueType::F64,
    ];

    /// The type with this id, `None` for ids >= 13.
    pub fn from_id(id: u32) -> Option<ValueType> {
        Self::ALL.get(id as usize).copied()
    }

    /// The GGUF type id (0..=12).
    pub fn id(self) -> u32 {
        self as u32
    }

    /// The spec's name, e.g. `U32`.
    pub fn name(self) -> &'static str {
        match self {
            ValueType::U8 => "U8",
            ValueType::I8 => "I8",
            ValueType::U16 => "U16",
            ValueType::I16 => "I16",
            ValueType::U32 => "U32",
            ValueType::I32 => "I32",
            ValueType::F32 => "F32",
            ValueType::Bool => "BOOL",
            ValueType::String => "STRING",
            ValueType::Array => "ARRAY",
            ValueType::U64 => "U64",
            ValueType::I64 => "I64",
            ValueType::F64 => "F64",
        }
    }

    /// Byte size of a fixed-size type; `None` for STRING and ARRAY.
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            ValueType::U8 | ValueType::I8 | ValueType::Bool => Some(1),
            ValueType::U16 | ValueType::I16 => Some(2),
            ValueType::U32 | ValueType::I32 | ValueType::F32 => Some(4),
            ValueType::U64 | ValueType::I64 | ValueType::F64 => Some(8),
            ValueType::String | ValueType::Array => None,
        }
    }
}

impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fixed-size scalar that can be read from a GGUF value or array element.
pub trait Scalar: Sized + Copy {
    /// The GGUF value type of `Self`.
    const TYPE: ValueType;
    /// Decodes from exactly `TYPE.fixed_size()` little-endian bytes.
    fn read_le(b: &[u8]) -> Self;
    /// Extracts from a value of exactly this type.
    fn from_value(v: &Value<'_>) -> Option<Self>;
}

macro_rules! scalar {
    ($t:ty, $vt:ident) => {
        impl Scalar for $t {
            const TYPE: ValueType = ValueType::$vt;
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn from_value(v: &Value<'_>) -> Option<Self> {
                match v {
                    Value::$vt(x) => Some(*x),
                    _ => None,
                }
            }
        }
    };
}
scalar!(u8, U8);
scalar!(i8, I8);
scalar!(u16, U16);
scalar!(i16, I16);
scalar!(u32, U32);
scalar!(i32, I32);
scalar!(f32, F32);
scalar!(u64, U64);
scalar!(i64, I64);
scalar!(f64, F64);

impl Scalar for bool {
    const TYPE: ValueType = ValueType::Bool;
    fn read_le(b: &[u8]) -> Self {
        // The reader refuses bytes other than 0/1, so non-zero is exactly 1 here.
        b[0] != 0
    }
    fn from_value(v: &Value<'_>) -> Option<Self> {
        match v {
            Value::Bool(x) => Some(*x),
            _ => None,
        }
    }
}

/// A metadata value borrowed from the file bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// A U8 value (borrowed).
    U8(u8),
    /// A I8 value (borrowed).
    I8(i8),
    /// A U16 value (borrowed).
    U16(u16),
    /// A I16 value (borrowed).
    I16(i16),
    /// A U32 value (borrowed).
    U32(u32),
    /// A I32 value (borrowed).
    I32(i32),
    /// A F32 value (borrowed).
    F32(f32),
    /// A BOOL value (borrowed).
    Bool(bool),
    /// A STRING value (borrowed).
    String(&'a str),
    /// A ARRAY value (borrowed).
    Array(ArrayView<'a>),
    /// A U64 value (borrowed).
    U64(u64),
    /// A I64 value (borrowed).
    I64(i64),
    /// A F64 value (borrowed).
    F64(f64),
}

impl<'a> Value<'a> {
    /// The value's GGUF type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// The value as `T` if it has exactly that type (no widening).
    pub fn as_scalar<T: Scalar>(&self) -> Option<T> {
        T::from_value(self)
    }

    /// The string, when this is a STRING.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The array view, when this is an ARRAY.
    pub fn as_array(&self) -> Option<ArrayView<'a>> {
        match self {
            Value::Array(a) => Some(*a),
            _ => None,
        }
    }

    /// Any unsigned or non-negative signed integer widened to u64 (for counts written with
    /// varying integer types by different writers).
    pub fn as_u64_lossless(&self) -> Option<u64> {
        match *self {
            Value::U8(x) => Some(x as u64),
            Value::U16(x) => Some(x as u64),
            Value::U32(x) => Some(x as u64),
            Value::U64(x) => Some(x),
            Value::I8(x) => u64::try_from(x).ok(),
            Value::I16(x) => u64::try_from(x).ok(),
            Value::I32(x) => u64::try_from(x).ok(),
            Value::I64(x) => u64::try_from(x).ok(),
            _ => None,
        }
    }

    /// An owned copy, e.g. to re-emit the value with [`super::GgufWriter`].
    pub fn to_owned_value(&self) -> MetaValue {
        match *self {
            Value::U8(x) => MetaValue::U8(x),
            Value::I8(x) => MetaValue::I8(x),
            Value::U16(x) => MetaValue::U16(x),
            Value::I16(x) => MetaValue::I16(x),
            Value::U32(x) => MetaValue::U32(x),
            Value::I32(x) => MetaValue::I32(x),
            Value::F32(x) => MetaValue::F32(x),
            Value::Bool(x) => MetaValue::Bool(x),
            Value::String(s) => MetaValue::String(s.to_owned()),
            Value::Array(a) => a.to_owned_value(),
            Value::U64(x) => MetaValue::U64(x),
            Value::I64(x) => MetaValue::I64(x),
            Value::F64(x) => MetaValue::F64(x),
        }
    }
}

/// A zero-copy view of an ARRAY value: element type, count and the raw element bytes
/// (for STRING elements: the concatenated length-prefixed strings, already validated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArrayView<'a> {
    /// The element type (never ARRAY).
    pub elem: ValueType,
    /// The element count, as declared and checked against the bytes.
    pub count: u64,
    /// The element bytes, starting right after the u64 count.
    pub raw: &'a [u8],
    /// Absolute byte offset of `raw` in the file (for error locations).
    pub offset: u64,
}

impl<'a> ArrayView<'a> {
    fn type_error(&self, want: ValueType) -> Error {
        Error::at(
            ErrorClass::GgufMetadataType,
            self.offset,
            "array",
            format!(
                "array elements are declared {}, but the consumer reads them as {}",
                self.elem, want
            ),
        )
    }

    /// The elements as `T`; `gguf.metadata_type` unless the declared element type is exactly `T`
    /// (a U8 array is never reinterpreted as 4-byte integers).
    pub fn as_vec<T: Scalar>(&self) -> Result<Vec<T>> {
        if self.elem != T::TYPE {
            return Err(self.type_error(T::TYPE));
        }
        let size = T::TYPE.fixed_size().unwrap_or(1);
        // `raw` holds exactly count * size bytes (checked at parse time), so this never
        // allocates more than the file holds.
        Ok(self.raw.chunks_exact(size).map(T::read_le).collect())
    }

    /// The elements of a U8 array.
    pub fn as_u8s(&self) -> Result<Vec<u8>> {
        self.as_vec()
    }
    /// The elements of an I8 array.
    pub fn as_i8s(&self) -> Result<Vec<i8>> {
        self.as_vec()
    }
    /// The elements of a U16 array.
    pub fn as_u16s(&self) -> Result<Vec<u16>> {
        self.as_vec()
    }
    /// The elements of an I16 array.
    pub fn as_i16s(&self) -> Result<Vec<i16>> {
        self.as_vec()
    }
    /// The elements of a U32 array.
    pub fn as_u32s(&self) -> Result<Vec<u32>> {
        self.as_vec()
    }
    /// The elements of an I32 array.
    pub fn as_i32s(&self) -> Result<Vec<i32>> {
        self.as_vec()
    }
    /// The elements of an F32 array.
    pub fn as_f32s(&self) -> Result<Vec<f32>> {
        self.as_vec()
    }
    /// The elements of a BOOL array.
    pub fn as_bools(&self) -> Result<Vec<bool>> {
        self.as_vec()
    }
    /// The elements of a U64 array.
    pub fn as_u64s(&self) -> Result<Vec<u64>> {
        self.as_vec()
    }
    /// The elements of an I64 array.
    pub fn as_i64s(&self) -> Result<Vec<i64>> {
        self.as_vec()
    }
    /// The elements of an F64 array.
    pub fn as_f64s(&self) -> Result<Vec<f64>> {
        self.as_vec()
    }

    /// Iterates STRING elements; `gguf.metadata_type` if the elements are not strings.
    pub fn strs(&self) -> Result<StrIter<'a>> {
        if self.elem != ValueType::String {
            return Err(self.type_error(ValueType::String));
        }
        Ok(StrIter {
            raw: self.raw,
            left: self.count,
        })
    }

    /// All STRING elements collected.
    pub fn as_strs(&self) -> Result<Vec<&'a str>> {
        Ok(self.strs()?.collect())
    }

    /// An owned copy of the array.
    pub fn to_owned_value(&self) -> MetaValue {
        let items: Vec<MetaValue> = match self.elem {
            ValueType::String => StrIter {
                raw: self.raw,
                left: self.count,
            }
            .map(|s| MetaValue::String(s.to_owned()))
            .collect(),
            t => {
                let size = t.fixed_size().unwrap_or(1);
                self.raw
                    .chunks_exact(size)
                    .map(|b| fixed_value(t, b).to_owned_value())
                    .collect()
            }
        };
        MetaValue::Array(self.elem, items)
    }
}

/// Decodes one fixed-size element (caller guarantees `b.len() == t.fixed_size()`).
pub(crate) fn fixed_value(t: ValueType, b: &[u8]) -> Value<'static> {
    match t {
        ValueType::U8 => Value::U8(u8::read_le(b)),
        ValueType::I8 => Value::I8(i8::read_le(b)),
        ValueType::U16 => Value::U16(u16::read_le(b)),
        ValueType::I16 => Value::I16(i16::read_le(b)),
        ValueType::U32 => Value::U32(u32::read_le(b)),
        ValueType::I32 => Value::I32(i32::read_le(b)),
        ValueType::F32 => Value::F32(f32::read_le(b)),
        ValueType::Bool => Value::Bool(bool::read_le(b)),
        ValueType::U64 => Value::U64(u64::read_le(b)),
        ValueType::I64 => Value::I64(i64::read_le(b)),
        // STRING/ARRAY are never fixed-size; callers only pass fixed types.
        ValueType::F64 | ValueType::String | ValueType::Array => Value::F64(f64::read_le(b)),
    }
}

/// Iterator over the strings of a STRING array. The bytes were validated by the reader; the
/// walk is still bounds-checked and simply stops if they were not.
#[derive(Clone, Debug)]
pub struct StrIter<'a> {
    raw: &'a [u8],
    left: u64,
}

impl<'a> Iterator for StrIter<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 || self.raw.len() < 8 {
            return None;
        }
        let len = u64::read_le(&self.raw[..8]);
        let rest = &self.raw[8..];
        let len = usize::try_from(len).ok().filter(|&l| l <= rest.len())?;
        let s = std::str::from_utf8(&rest[..len]).ok()?;
        self.raw = &rest[len..];
        self.left -= 1;
        Some(s)
    }
}

/// An owned metadata value, for [`super::GgufWriter`].
#[derive(Clone, Debug, PartialEq)]
pub enum MetaValue {
    /// A U8 value (owned).
    U8(u8),
    /// A I8 value (owned).
    I8(i8),
    /// A U16 value (owned).
    U16(u16),
    /// A I16 value (owned).
    I16(i16),
    /// A U32 value (owned).
    U32(u32),
    /// A I32 value (owned).
    I32(i32),
    /// A F32 value (owned).
    F32(f32),
    /// A BOOL value (owned).
    Bool(bool),
    /// A STRING value (owned).
    String(String),
    /// Element type and items. Items are written without their own type tag; an item whose type
    /// differs from the element type is written as-is (the escape hatch for hostile files).
    Array(ValueType, Vec<MetaValue>),
    /// A U64 value (owned).
    U64(u64),
    /// A I64 value (owned).
    I64(i64),
    /// A F64 value (owned).
    F64(f64),
    /// Any type id followed by verbatim bytes (hostile files: type 13, BOOL byte 2, nested arrays).
    Raw {
        /// The type id written before the bytes (need not be a valid GGUF type).
        type_id: u32,
        /// The bytes written after it, unchanged.
        bytes: Vec<u8>,
    },
}

impl MetaValue {
    /// A STRING value.
    pub fn str(s: &str) -> MetaValue {
        MetaValue::String(s.to_owned())
    }

    /// An array of scalars.
    pub fn array<T: Scalar + Into<MetaValue>>(items: &[T]) -> MetaValue {
        MetaValue::Array(T::TYPE, items.iter().map(|&x| x.into()).collect())
    }

    /// An array of strings.
    pub fn array_str<S: AsRef<str>>(items: &[S]) -> MetaValue {
        MetaValue::Array(
            ValueType::String,
            items.iter().map(|s| MetaValue::str(s.as_ref())).collect(),
        )
    }

    /// The type id written before this value.
    pub fn type_id(&self) -> u32 {
        match self {
            MetaValue::U8(_) => 0,
            MetaValue::I8(_) => 1,
            MetaValue::U16(_) => 2,
            MetaValue::I16(_) => 3,
            MetaValue::U32(_) => 4,
            MetaValue::I32(_) => 5,
            MetaValue::F32(_) => 6,
            MetaValue::Bool(_) => 7,
            MetaValue::String(_) => 8,
            MetaValue::Array(..) => 9,
            MetaValue::U64(_) => 10,
            MetaValue::I64(_) => 11,
            MetaValue::F64(_) => 12,
            MetaValue::Raw { type_id, .. } => *type_id,
        }
    }

    /// Appends the value's payload (without its type id).
    pub fn write_payload(&self, out: &mut Vec<u8>) {
        match self {
            MetaValue::U8(x) => out.push(*x),
            MetaValue::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::Bool(x) => out.push(*x as u8),
            MetaValue::String(s) => {
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            MetaValue::Array(elem, items) => {
                out.extend_from_slice(&elem.id().to_le_bytes());
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                for it in items {
                    it.write_payload(out);
                }
            }
            MetaValue::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
            MetaValue::Raw { bytes, .. } => out.extend_from_slice(bytes),
        }
    }
}

macro_rules! meta_from {
    ($t:ty, $v:ident) => {
        impl From<$t> for MetaValue {
            fn from(x: $t) -> MetaValue {
                MetaValue::$v(x)
            }
        }
    };
}
meta_from!(u8, U8);
meta_from!(i8, I8);
meta_from!(u16, U16);
meta_from!(i16, I16);
meta_from!(u32, U32);
meta_from!(i32, I32);
meta_from!(f32, F32);
meta_from!(bool, Bool);
meta_from!(u64, U64);
meta_from!(i64, I64);
meta_from!(f64, F64);
meta_from!(String, String);

impl From<&str> for MetaValue {
    fn from(s: &str) -> MetaValue {
        MetaValue::str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_types_match_the_spec_table() {
        let spec = crate::spec::get();
        assert_eq!(spec.gguf.value_types.len(), ValueType::ALL.len());
        for (row, t) in spec.gguf.value_types.iter().zip(ValueType::ALL) {
            assert_eq!(row.id, t.id());
            assert_eq!(row.name, t.name());
            assert_eq!(row.size, t.fixed_size().map(|s| s as u64));
        }
        assert_eq!(ValueType::from_id(13), None);
    }
}
