//! The `.ninfer` family (PROTOCOL.md §3.3): valid containers for every layout and for
//! resources (ternary payloads are real planes assembled from encoded blocks, with padded
//! shapes), and `corpus::catalogs::ninfer_violations::cases()`: every directory/range rule violated once,
//! v1/v3/part-file magics included.

use crate::codec::Codec;
use crate::corpus::{Bytes, Case};
use crate::geometry::row_split_geometry;
use crate::ninfer::{plan, writer::to_bytes, Identity, PlannedObject};
use crate::planes::{assemble, BlockLayout};
use crate::spec::LayoutId;

fn ninfer_case(name: String, bytes: Vec<u8>) -> Case {
    Case::new("ninfer", name, "ninfer", "ninfer", bytes)
}

/// Every case of the `ninfer` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    let base = "ninfer/y_valid_all_layouts";
    for x in crate::corpus::catalogs::ninfer_violations::cases()? {
        let mut c = ninfer_case(
            format!("{}_{}", if x.class.is_some() { "n" } else { "y" }, x.name),
            x.bytes,
        )
        .spec("spec/ninfer-container.md#ninfer-directory (container v2, directory rules)");
        c = match x.class {
            Some(class) => c
                .reject(class)
                .feature("ninfer:violation")
                .derived(base, x.rule),
            None => c.feature("ninfer:control").recipe(x.rule),
        };
        v.push(c);
    }
    v.extend(layout_cases()?);
    v.extend(super::registry::cases()?);
    Ok(v)
}

/// Row-split payload of a ternary tensor [n, k]: random trit blocks, assembled into planes.
fn ternary_payload(format: &str, n: u64, k: u64, r: &mut Bytes) -> crate::Result<Vec<u8>> {
    let spec = crate::spec::get();
    let f = spec
        .format(format)
        .ok_or_else(|| super::bug("ninfer format", format))?;
    let geom = row_split_geometry(f, n, k).map_err(|e| super::bug("geometry", e))?;
    let layout = BlockLayout::for_format(f).map_err(|e| super::bug("ternary", e))?;
    let codec = f
        .ternary
        .as_ref()
        .and_then(|t| Codec::from_name(&t.codec))
        .ok_or_else(|| super::bug("ternary codec", format))?;
    let k_pad = geom.k_pad;
    let x: Vec<f32> = (0..n * k_pad)
        .map(|i| {
            if i % k_pad >= k {
                0.0
            } else {
                (r.unit() - 0.5) * 0.2
            }
        })
        .collect();
    let ggml = codec
        .quantize_to_vec(&x)
        .map_err(|e| super::bug("quantize", e))?;
    assemble(&layout, &geom, &ggml).map_err(|e| super::bug("assemble", e))
}

fn layout_cases() -> crate::Result<Vec<Case>> {
    let spec = crate::spec::get();
    let mut v = Vec::new();
    let mut r = Bytes::new(0x1a7045);
    let id = |w: &str| Identity {
        model_id: "corpus-layouts".into(),
        weights_id: w.into(),
    };
    let mut one = |name: &str,
                   objects: Vec<PlannedObject>,
                   payloads: Vec<Vec<u8>>,
                   features: &[&str],
                   recipe: &str|
     -> crate::Result<()> {
        let dir = plan(id("folded-ternary"), objects).map_err(|e| super::bug("plan", e))?;
        let bytes = to_bytes(&dir, &payloads).map_err(|e| super::bug("write", e))?;
        let mut c = ninfer_case(name.into(), bytes)
            .feature("ninfer:layout")
            .spec("spec/ninfer-container.md#ninfer-layouts")
            .recipe(recipe.to_string());
        for f in features {
            c = c.feature(*f);
        }
        v.push(c);
        Ok(())
    };
    // Ternary row-split tensors, padded and unpadded shapes.
    for (format, shapes) in [
        (
            "PQ2_0_G128",
            &[[1u64, 128], [3, 128], [2, 256], [5, 384], [4, 1024]][..],
        ),
        (
            "PTQ1_0_G128",
            &[[1, 128], [2, 256], [3, 384], [6, 640], [1, 5120]][..],
        ),
    ] {
        for s in shapes {
            let payload = ternary_payload(format, s[0], s[1], &mut r)?;
            let lname = format.to_lowercase();
            one(
                &format!("y_rowsplit_{lname}_{}x{}", s[0], s[1]),
                vec![PlannedObject::tensor("w", s.to_vec(), format, LayoutId::RowSplitK128V1)],
                vec![payload],
                &[&format!("format:{format}"), "ninfer:ternary"],
                &format!("one {format} tensor {s:?}: random values quantized, blocks split into base/high/scale planes (planes padded to 256 bytes)"),
            )?;
        }
    }
    // Two ternary tensors of both formats in one file, after a resource.
    let p1 = ternary_payload("PQ2_0_G128", 4, 256, &mut r)?;
    let p2 = ternary_payload("PTQ1_0_G128", 4, 256, &mut r)?;
    let res = r.fill(37);
    one(
        "y_ternary_both_formats_and_resource",
        vec![
            PlannedObject::resource("frontend/blob", 37),
            PlannedObject::tensor(
                "text/a",
                vec![4, 256],
                "PQ2_0_G128",
                LayoutId::RowSplitK128V1,
            ),
            PlannedObject::tensor(
                "text/b",
                vec![4, 256],
                "PTQ1_0_G128",
                LayoutId::RowSplitK128V1,
            ),
        ],
        vec![res, p1, p2],
        &[
            "format:PQ2_0_G128",
            "format:PTQ1_0_G128",
            "ninfer:ternary",
            "ninfer:resource",
        ],
        "a 37-byte resource, then a PQ2_0 and a PTQ1_0 tensor (payload offsets 0, 256, ...)",
    )?;
    // Contiguous tensors: every direct format, ranks 0, 1, 3 and 16.
    for (format, word) in [("BF16", 2usize), ("FP32", 4), ("I32", 4)] {
        let shapes: Vec<Vec<u64>> = vec![vec![], vec![7], vec![2, 3, 5], vec![1; 16]];
        let objects: Vec<PlannedObject> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                PlannedObject::tensor(format!("t{i}"), s.clone(), format, LayoutId::ContiguousLeV1)
            })
            .collect();
        let payloads: Vec<Vec<u8>> = shapes
            .iter()
            .map(|s| r.fill(s.iter().product::<u64>() as usize * word))
            .collect();
        one(
            &format!("y_contiguous_{}", format.to_lowercase()),
            objects,
            payloads,
            &[&format!("format:{format}")],
            &format!("{format} tensors of rank 0, 1, 3 and 16 (C order, little-endian words)"),
        )?;
    }
    // Other registry formats: geometry only (bytes compared raw).
    for (format, layout, shape) in [
        ("Q4G64_F16S", LayoutId::RowSplitK128V1, vec![3u64, 200]),
        ("Q5G64_F16S", LayoutId::RowSplitK128V1, vec![2, 130]),
        ("Q6G64_F16S", LayoutId::RowSplitK128V1, vec![2, 64]),
        ("W8G32_F16S", LayoutId::RowSplitK128V1, vec![1, 33]),
        ("NVFP4", LayoutId::BlockscaleK16M128x4V1, vec![128, 64]),
        ("FP8_E4M3FN_ROW_BF16S", LayoutId::RowScaleV1, vec![2, 4]),
    ] {
        let f = spec
            .format(format)
            .ok_or_else(|| super::bug("ninfer format", format))?;
        let l = spec.layout(layout);
        let size = crate::ninfer::layout::encoded_size(l, f, &shape, "x")
            .map_err(|e| super::bug("encoded size", e))?;
        one(
            &format!("y_layout_{}", format.to_lowercase()),
            vec![PlannedObject::tensor("q", shape.clone(), format, layout)],
            vec![r.fill(size as usize)],
            &[&format!("format:{format}")],
            &format!("one {format} tensor {shape:?} in {layout} ({size} bytes: the reader must compute this size)"),
        )?;
    }
    // Resources only.
    let sizes = [1u64, 4096, 5, 300];
    let objects: Vec<PlannedObject> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| PlannedObject::resource(format!("frontend/r{i}"), s))
        .collect();
    let payloads: Vec<Vec<u8>> = sizes.iter().map(|&s| r.fill(s as usize)).collect();
    one(
        "y_resources_only",
        objects,
        payloads,
        &["ninfer:resource"],
        "four raw-bytes-v1 resources (1, 4096, 5, 300 bytes) packed at alignment 1",
    )?;
    // Identity carried through exactly (T-13) with non-ASCII text.
    let dir = plan(
        Identity {
            model_id: "qwen3.8-27b/ünïcödé".into(),
            weights_id: "groupwise-int".into(),
        },
        vec![PlannedObject::resource("r", 3)],
    )
    .map_err(|e| super::bug("plan", e))?;
    v.push(
        ninfer_case(
            "y_identity_unicode".into(),
            to_bytes(&dir, &[vec![1, 2, 3]]).map_err(|e| super::bug("write", e))?,
        )
        .feature("ninfer:identity")
        .spec("spec/ninfer-container.md#ninfer-directory (identity: non-empty strings)")
        .recipe("model_id with non-ASCII characters, weights_id groupwise-int"),
    );
    Ok(v)
}
