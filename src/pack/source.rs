//! The packer's view of the source GGUF: which profile it is, its ternary type, the
//! `prism.hadamard.*` metadata, and float access to small tensors.

use crate::codec::Codec;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{ArrayView, Gguf, TensorInfo};

#[cfg(feature = "internals")]
pub use crate::mapping::profile::held_layers;
pub use crate::mapping::profile::{resolve_profile, ternary_format};

/// Decodes a small non-ternary tensor to f32 (F32, F16, BF16).
pub fn floats(g: &Gguf<'_>, t: &TensorInfo<'_>) -> Result<Vec<f32>> {
    let c = Codec::for_ggml_type_checked(t.ggml)?;
    c.decode_to_vec(g.tensor_data(t))
}

/// A sign-value array as i32, whatever numeric element type the file declares (writers
/// emit INT32 from Python ints, FLOAT32 from float tensors; spec/hadamard.json). Every element
/// must be exactly ±1; anything else (2, 0.5, NaN) is refused with its index.
pub fn sign_values_of(key: &str, arr: ArrayView<'_>) -> Result<Vec<i32>> {
    use crate::gguf::ValueType as T;
    let bad = |field: String, d: String| Error::at(ErrorClass::PackHadamard, arr.offset, field, d);
    let as_f64: Vec<f64> = match arr.elem {
        T::I8 => arr
            .as_vec::<i8>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U8 => arr
            .as_vec::<u8>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::I16 => arr
            .as_vec::<i16>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U16 => arr
            .as_vec::<u16>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::I32 => arr
            .as_vec::<i32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U32 => arr
            .as_vec::<u32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        // 64-bit ints: any value that is not ±1 is refused below, so the lossy cast is harmless
        // as long as it cannot turn a large value into ±1 (it cannot: |x| >= 2 stays >= 2).
        T::I64 => arr
            .as_vec::<i64>()
            .map(|v| v.into_iter().map(|x| x as f64).collect()),
        T::U64 => arr
            .as_vec::<u64>()
            .map(|v| v.into_iter().map(|x| x as f64).collect()),
        T::F32 => arr
            .as_vec::<f32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::F64 => arr.as_vec::<f64>(),
        other => {
            return Err(bad(
                key.into(),
                format!("elements are {other}; sign values must be numeric (±1)"),
            ))
        }
    }
    .map_err(|e| bad(key.into(), e.detail().to_string()))?;
    as_f64
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v == 1.0 || v == -1.0 {
                Ok(v as i32)
            } else {
                Err(bad(format!("{key}[{i}]"), format!("value {v} is not ±1")))
            }
        })
        .collect()
}
