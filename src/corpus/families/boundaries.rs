//! The `boundaries` family: exact-boundary values of the `.ninfer` framing rules (one below, at,
//! one above a limit) that the other families leave untested. Each case was found by mutation
//! testing of an independent reader (`scripts/reader_mutants.py`): a reader mutant with a
//! shifted comparison or constant passed every other case, and this case fails it.

use crate::corpus::catalogs::ninfer_violations::try_base_artifact;
use crate::corpus::{Bytes, Case};
use crate::error::ErrorClass;
use crate::ninfer::writer::{header_bytes, plan, to_bytes};
use crate::ninfer::{Directory, Identity, PlannedObject};
use crate::spec::LayoutId;

fn case(name: &str, bytes: Vec<u8>, recipe: &str) -> Case {
    let anchor = if name.contains("range") {
        "ninfer-ranges"
    } else if name.contains("rowsplit") {
        "ninfer-layouts"
    } else if name.contains("directory") {
        "ninfer-directory"
    } else {
        "ninfer-framing"
    };
    Case::new("boundaries", name, "ninfer", "ninfer", bytes)
        .feature("ninfer:boundary")
        .spec(format!("spec/ninfer-container.md#{anchor}"))
        .recipe(recipe.to_string())
}

fn valid_base() -> crate::Result<(Directory, Vec<u8>)> {
    let (dir, payloads) = try_base_artifact()?;
    let bytes = to_bytes(&dir, &payloads).map_err(|e| super::bug("base artifact", e))?;
    Ok((dir, bytes))
}

/// A valid file's magic, a directory of the given text, padding to 4096, and its payload.
fn with_directory(valid: &[u8], json: &str) -> Vec<u8> {
    // `valid` is valid_base()'s own output (16-byte header at least); a shorter one would give
    // wrong bytes, which generate()'s reference check of every case refuses.
    let old_len = valid
        .get(8..16)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| u64::from_le_bytes(*b));
    let payload_at = (16 + old_len).div_ceil(4096) * 4096;
    let mut out = valid[..8].to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    out.resize(((16 + json.len() as u64).div_ceil(4096) * 4096) as usize, 0);
    out.extend_from_slice(&valid[payload_at as usize..]);
    out
}

/// Every case of the `boundaries` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let (dir, valid) = valid_base()?;
    let mut v = Vec::new();

    v.push(
        case(
            "n_magic_prefix_7_bytes",
            valid[..7].to_vec(),
            "the first 7 bytes of a valid file: one byte short of the 8-byte magic",
        )
        .reject(ErrorClass::NinferTruncated),
    );

    // Exactly the 8-byte magic, a wrong one: the length check lets it through to the magic
    // check (reader mutants `len < 8` -> `<= 8` and `< 9` call it truncated).
    let mut b = valid[..8].to_vec();
    b[5] ^= 0x20;
    v.push(
        case(
            "n_magic_bad_exactly_8_bytes",
            b,
            "8 bytes: a wrong magic and nothing else; refused for the magic, which is read first",
        )
        .reject(ErrorClass::NinferMagic),
    );

    // Exactly the 16-byte prefix, json_bytes = u64::MAX: the overflow of 16 + json_bytes is
    // found before the missing directory (reader mutants `len < 16` -> `<= 16` and `< 17` call
    // it truncated).
    let mut b = valid[..16].to_vec();
    b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    v.push(
        case(
            "n_json_bytes_overflow_exactly_16_bytes",
            b,
            "16 bytes: the magic and json_bytes = 2^64 - 1 (16 + json_bytes overflows u64)",
        )
        .reject(ErrorClass::NinferArithOverflow),
    );

    let mut b = valid.clone();
    b[8..16].copy_from_slice(&(u64::MAX - 16).to_le_bytes());
    v.push(
        case(
            "n_json_end_exactly_u64_max",
            b,
            "json_bytes = 2^64 - 17: 16 + json_bytes is exactly u64::MAX (no overflow; past EOF)",
        )
        .reject(ErrorClass::NinferTruncated),
    );

    let mut d = dir.clone();
    d.objects[0].offset = u64::MAX - d.objects[0].bytes; // the resource: alignment 1
    let mut b = header_bytes(&d);
    let payload_at = header_bytes(&dir).len();
    b.extend_from_slice(&valid[payload_at..]);
    v.push(
        case(
            "n_range_end_exactly_u64_max",
            b,
            "the resource's offset = u64::MAX - bytes: offset + bytes is exactly u64::MAX (no overflow; past the payload)",
        )
        .reject(ErrorClass::NinferRangeBounds),
    );

    // Exactly at the limit (PROTOCOL §4.3: 128 levels or deeper are refused; 127 is the deepest
    // accepted nesting, serde_json's recursion limit in the reference).
    v.push(
        case(
            "n_directory_depth_128",
            with_directory(&valid, &format!("{}{}", "[".repeat(128), "]".repeat(128))),
            "[[...]]: exactly 128 levels, the first refused depth",
        )
        .reject(ErrorClass::NinferJsonSyntax),
    );

    // One level below the limit: the deepest nesting the JSON layer takes, so the refusal is the
    // schema's (the root is not an object), not the depth limit's. A depth counter that starts
    // at 1 refuses it as json_syntax (reader mutant `depth = best = 0` -> `1`).
    v.push(
        case(
            "n_directory_depth_127",
            with_directory(&valid, &format!("{}{}", "[".repeat(127), "]".repeat(127))),
            "[[...]]: exactly 127 levels, the deepest accepted nesting; refused only because the root is an array",
        )
        .reject(ErrorClass::NinferDirType),
    );

    // Exactly the first refused depth, reached after an inner array closed: a counter that goes
    // down by two on a close sees 127 and lets it through (reader mutant `depth -= 1` -> `-= 2`;
    // the 129-level case below leaves that mutant at 128, still refused).
    v.push(
        case(
            "n_directory_depth_128_after_close",
            with_directory(
                &valid,
                &format!("[[],{}{}]", "[".repeat(127), "]".repeat(127)),
            ),
            "[[],[[...]]]: 128 levels reached after an inner array closed",
        )
        .reject(ErrorClass::NinferJsonSyntax),
    );

    // One level past the limit, reached only after
    // an earlier inner array closed: a depth counter must go back down by exactly one.
    v.push(
        case(
            "n_directory_depth_129_after_close",
            with_directory(
                &valid,
                &format!("[[],{}{}]", "[".repeat(128), "]".repeat(128)),
            ),
            "[[],[[...]]]: 129 levels reached after an inner array closed",
        )
        .reject(ErrorClass::NinferJsonSyntax),
    );

    // The same depth reached inside a member value: a depth counter must still count after a
    // string (an escape flag that never clears would hide everything behind the first string).
    v.push(
        case(
            "n_directory_depth_129_after_string",
            with_directory(
                &valid,
                &format!("{{\"k\":{}{}}}", "[".repeat(128), "]".repeat(128)),
            ),
            "{\"k\":[[...]]}: 129 levels after a string",
        )
        .reject(ErrorClass::NinferJsonSyntax),
    );

    // A rank-2 row-split shape with a zero dimension, either one.
    for (i, name) in [(0usize, "rows"), (1, "cols")] {
        let mut d = dir.clone();
        let t = d
            .objects
            .iter_mut()
            .find(|o| o.name == "w/pq2")
            .ok_or_else(|| super::bug("boundaries", "the base artifact has no w/pq2"))?;
        if let crate::ninfer::ObjectBody::Tensor { shape, .. } = &mut t.body {
            shape[i] = 0;
        }
        let mut b = header_bytes(&d);
        b.extend_from_slice(&valid[header_bytes(&dir).len()..]);
        v.push(
            case(
                &format!("n_rowsplit_zero_{name}"),
                b,
                &format!("w/pq2 (PQ2_0_G128, row-split) with shape[{i}] = 0"),
            )
            .reject(ErrorClass::NinferDirShape),
        );
    }

    // A container with no objects whose directory ends exactly at the 4096-byte payload offset
    // and whose file ends there: json_end == payload_offset == file length.
    let head =
        "{\"identity\":{\"model_id\":\"corpus-boundaries\",\"weights_id\":\"w\"},\"objects\":[]}";
    let json = format!("{head}{}", " ".repeat(4096 - 16 - head.len()));
    let mut b = valid[..8].to_vec();
    b.extend_from_slice(&(json.len() as u64).to_le_bytes());
    b.extend_from_slice(json.as_bytes());
    v.push(case(
        "y_empty_directory_ends_at_eof",
        b,
        "no objects; 16 + json_bytes = 4096 = payload offset = file length",
    ));

    // Brackets inside strings are not nesting, an escaped quote does not end a string.
    let deep_name = format!("x\\\"{}", "[".repeat(200));
    let json = dir.to_json().replace("corpus-model", &deep_name);
    v.push(case(
        "y_directory_brackets_in_strings",
        with_directory(&valid, &json),
        "model_id is x\\\" followed by 200 '[': string content, not nesting",
    ));

    // K = 129 (one above a multiple of 128): the row-split geometry pads K to 256.
    let mut r = Bytes::new(0xb0_0129);
    let spec = crate::spec::get();
    for k in [129u64, 1] {
        let (format, layout, shape) = ("W8G32_F16S", LayoutId::RowSplitK128V1, vec![2u64, k]);
        let size = crate::ninfer::layout::encoded_size(
            spec.layout(layout),
            spec.format(format)
                .ok_or_else(|| super::bug("boundaries format", format))?,
            &shape,
            "x",
        )
        .map_err(|e| super::bug("size", e))?;
        let d = plan(
            Identity {
                model_id: "corpus-boundaries".into(),
                weights_id: "groupwise-int".into(),
            },
            vec![PlannedObject::tensor("q", shape, format, layout)],
        )
        .map_err(|e| super::bug("plan", e))?;
        v.push(
        case(
            &format!("y_rowsplit_w8g32_2x{k}"),
            to_bytes(&d, &[r.fill(size as usize)]).map_err(|e| super::bug("write", e))?,
            &format!("a W8G32_F16S tensor [2, {k}] ({size} bytes): K one above a multiple of 128 (or 1) pads up"),
        )
        .feature(format!("format:{format}")),
    );
    }
    Ok(v)
}
