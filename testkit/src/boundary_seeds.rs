//! Boundary seeds: valid (or exactly-one-step-invalid) files sitting on the length, count,
//! depth and alignment boundaries where parsers slip, so the fuzzer starts next to them
//! instead of having to grow there: keys, names and strings of 255/256/65,535 bytes; arrays
//! of 1,000, 1,001 and 4,096 entries; directory nesting at the JSON depth limit (128) ± 1;
//! every power-of-two alignment up to a page with a tensor that ends exactly at end of file;
//! row-split tensors of 3, 5 and 7 rows with a padded K.

use crate::mutate::ninfer::Model;
use ninfer_ternary::gguf::{GgufWriter, MetaValue};
use ninfer_ternary::ninfer::{self, writer, Identity, PlannedObject};
use ninfer_ternary::spec::LayoutId;
use serde_json::Value;

/// ggml type id of F32 (spec/ggml_types.json).
const F32: u32 = 0;

/// A GGUF with `kvs` (after `general.architecture`) and one 8-element F32 tensor `t` whose
/// data ends exactly at end of file (no padding after it).
fn gguf(alignment: Option<u32>, kvs: Vec<(String, MetaValue)>, tensor_name: &str) -> Vec<u8> {
    let mut w = GgufWriter::new();
    if let Some(a) = alignment {
        w.alignment(a).expect("a power-of-two alignment");
    }
    w.kv("general.architecture", MetaValue::str("fuzz"));
    for (k, v) in kvs {
        w.kv(&k, v);
    }
    w.tensor(tensor_name, &[8], F32).expect("an F32 tensor");
    let data: Vec<u8> = (0..32u8).collect();
    let mut bytes = w.to_bytes(&[&data]).expect("the writer writes it");
    let end = w.data_offset().expect("data offset") as usize
        + *w.offsets().expect("offsets").last().expect("one tensor") as usize
        + data.len();
    bytes.truncate(end);
    bytes
}

/// The GGUF boundary seeds (`gguf_parse`).
pub fn gguf_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for n in [255usize, 256] {
        out.push((
            format!("boundary-key-{n}"),
            gguf(None, vec![("k".repeat(n), MetaValue::from(1u32))], "t"),
        ));
    }
    for n in [255usize, 256, 65535] {
        out.push((
            format!("boundary-string-{n}"),
            gguf(
                None,
                vec![("s".into(), MetaValue::str(&"s".repeat(n)))],
                "t",
            ),
        ));
    }
    for n in [63usize, 64, 65, 255, 256] {
        out.push((
            format!("boundary-tensor-name-{n}"),
            gguf(None, vec![], &"t".repeat(n)),
        ));
    }
    for n in [1000usize, 1001, 4096] {
        let items: Vec<String> = (0..n).map(|i| (i % 10).to_string()).collect();
        out.push((
            format!("boundary-array-{n}-strings"),
            gguf(None, vec![("a".into(), MetaValue::array_str(&items))], "t"),
        ));
    }
    out.push((
        "boundary-array-65536-u8".into(),
        gguf(
            None,
            vec![("a".into(), MetaValue::array(&vec![7u8; 65536]))],
            "t",
        ),
    ));
    for shift in 0..=12 {
        out.push((
            format!("boundary-alignment-{}-tensor-at-eof", 1u32 << shift),
            gguf(Some(1 << shift), vec![], "t"),
        ));
    }
    out
}

fn artifact(objects: Vec<PlannedObject>, model_id: &str) -> Vec<u8> {
    let id = Identity {
        model_id: model_id.into(),
        weights_id: "boundary".into(),
    };
    let dir = ninfer::plan(id, objects).expect("a boundary plan");
    let payloads: Vec<Vec<u8>> = dir
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            (0..o.bytes)
                .map(|j| (j as u8).wrapping_mul(29).wrapping_add(i as u8))
                .collect()
        })
        .collect();
    writer::to_bytes(&dir, &payloads).expect("a boundary artifact")
}

/// `base` with the `shape` of its first object wrapped in arrays to `depth` levels of
/// nesting (the root object counts as one).
fn nested(base: &[u8], depth: usize) -> Vec<u8> {
    let mut m = Model::parse(base).expect("a boundary artifact frames");
    if let Some(o) = m.dir["objects"][0].as_object_mut() {
        let mut v = o.get("shape").cloned().unwrap_or(Value::Null);
        // root {, objects [, object {, shape [ = 4 levels before wrapping.
        for _ in 4..depth {
            v = Value::Array(vec![v]);
        }
        o.insert("shape".into(), v);
    }
    m.to_bytes()
}

/// The `.ninfer` boundary seeds (`ninfer_parse`, `ninfer_roundtrip`).
pub fn ninfer_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for n in [255usize, 256, 65535] {
        out.push((
            format!("boundary-name-{n}"),
            artifact(vec![PlannedObject::resource("n".repeat(n), 3)], "b"),
        ));
    }
    for n in [255usize, 256] {
        out.push((
            format!("boundary-model-id-{n}"),
            artifact(vec![PlannedObject::resource("r", 1)], &"m".repeat(n)),
        ));
    }
    for n in [1000usize, 1001] {
        let objects = (0..n)
            .map(|i| PlannedObject::resource(format!("r{i}"), 1))
            .collect();
        out.push((format!("boundary-objects-{n}"), artifact(objects, "b")));
    }
    for rows in [3u64, 5, 7] {
        for format in ["PQ2_0_G128", "PTQ1_0_G128"] {
            out.push((
                format!("boundary-rowsplit-{rows}x384-{format}").to_lowercase(),
                artifact(
                    vec![PlannedObject::tensor(
                        "w",
                        vec![rows, 384],
                        format,
                        LayoutId::RowSplitK128V1,
                    )],
                    "b",
                ),
            ));
        }
    }
    let base = artifact(
        vec![PlannedObject::tensor(
            "s",
            vec![2, 3],
            "FP32",
            LayoutId::ContiguousLeV1,
        )],
        "b",
    );
    for depth in [127usize, 128, 129] {
        out.push((format!("boundary-depth-{depth}"), nested(&base, depth)));
    }
    out
}
