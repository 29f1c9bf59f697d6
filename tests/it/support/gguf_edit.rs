//! Builders of edited GGUF inputs (a re-write with edited KVs and tensors), shared by the pack,
//! hostile-I/O and kernel tests of both test trees: the crate's unit tests
//! (`src/tests/fixtures.rs`) and the integration tests (`tests/it/common.rs`) include this file by
//! path; it uses only the public GGUF reader and writer, imported by the including module.

use super::{gguf, GgufWriter, MetaValue, Mode};

/// (name, ne, type id, data) of a tensor being re-written.
pub type EditTensor = (String, Vec<u64>, u32, Vec<u8>);

/// Re-writes a GGUF with edits to its KVs and tensors (name, dims, type, data).
pub fn rewrite_gguf(
    src: &[u8],
    edit: impl Fn(&mut Vec<(String, MetaValue)>, &mut Vec<EditTensor>),
) -> Vec<u8> {
    let g = gguf::parse(src, Mode::Strict).unwrap();
    let mut kvs: Vec<(String, MetaValue)> = g
        .kvs
        .iter()
        .map(|k| (k.key.to_string(), k.value.to_owned_value()))
        .collect();
    let mut ts: Vec<EditTensor> = g
        .tensors
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.dims().to_vec(),
                t.type_id,
                g.tensor_data(t).to_vec(),
            )
        })
        .collect();
    edit(&mut kvs, &mut ts);
    let mut w = GgufWriter::new();
    for (k, v) in kvs {
        w.kv(&k, v);
    }
    for (n, d, ty, data) in &ts {
        w.tensor_raw(gguf::WriterTensor {
            name: n.clone(),
            dims: d.clone(),
            type_id: *ty,
            nbytes: data.len() as u64,
            offset: None,
        });
    }
    let data: Vec<&[u8]> = ts.iter().map(|t| t.3.as_slice()).collect();
    w.to_bytes(&data).unwrap()
}
/// `src` with the tensor `name` changed by `edit` (see [`rewrite_gguf`]); the tensor must exist.
pub fn edit_tensor(src: &[u8], name: &str, edit: impl Fn(&mut EditTensor)) -> Vec<u8> {
    rewrite_gguf(src, |_, ts| {
        let t = ts
            .iter_mut()
            .find(|t| t.0 == name)
            .unwrap_or_else(|| panic!("no tensor {name}"));
        edit(t);
    })
}
