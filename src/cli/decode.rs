//! `decode FILE NAME [--rows A:B] -o OUT.npy`: f32 values in logical row order, from a GGUF
//! tensor (ggml blocks) or a .ninfer object of any registry format (contiguous words, row-split
//! planes of ternary or grouped integer codes, NVFP4 block scales, FP8 row scales).

use crate::codec::parallel::{decode_rows_parallel, decode_to_vec_parallel};
use crate::codec::{fp8_row, grouped_int, nvfp4, Codec};
use crate::error::{Error, ErrorClass};
use crate::ninfer::{Artifact, ObjectView};
use crate::text::escape;

use std::path::Path;
use std::process::ExitCode;

/// Parses `--rows A:B` for a tensor of `n` rows (either side may be empty: `A:` runs to the
/// end, `:B` starts at 0). A malformed, reversed or out-of-bounds range is a `cli.usage` error
/// that says which of the three it is.
pub fn parse_rows(s: &str, n: u64) -> crate::Result<std::ops::Range<u64>> {
    let usage = |detail: String| Error::new(ErrorClass::CliUsage, "--rows", detail);
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| usage(format!("'{}' is not A:B", escape(s))))?;
    let bound = |t: &str, default: u64, which: &str| -> crate::Result<u64> {
        if t.is_empty() {
            return Ok(default);
        }
        t.parse()
            .map_err(|e| usage(format!("{which} '{}' is not a row number: {e}", escape(t))))
    };
    let a = bound(a, 0, "start")?;
    let b = bound(b, n, "end")?;
    if a > b {
        return Err(usage(format!(
            "{a}:{b} is reversed: the start must not exceed the end"
        )));
    }
    if b > n {
        return Err(usage(format!(
            "{a}:{b} is out of bounds: the tensor has rows 0:{n}"
        )));
    }
    Ok(a..b)
}

/// Values of a `contiguous-le-v1` tensor's rows `rows` (rows along the first dimension; a
/// scalar is one row): only those rows' bytes are read and decoded (BF16 / FP32 / I32 by the
/// plain codecs, on `threads` threads).
fn decode_contiguous_rows(
    name: &str,
    format: &str,
    shape: &[u64],
    bytes: &[u8],
    rows: Option<&str>,
    threads: usize,
) -> crate::Result<(Vec<u64>, Vec<f32>)> {
    let codec = match format {
        "BF16" => Codec::Bf16,
        "FP32" => Codec::F32,
        "I32" => Codec::I32,
        other => {
            return Err(super::usage(
                name,
                format!("contiguous format {other} is not decoded"),
            ))
        }
    };
    let word = codec.block_bytes();
    let shape = if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    };
    let n = shape[0];
    let per_row: u64 = shape[1..].iter().product();
    let range = match rows {
        Some(r) => parse_rows(r, n)?,
        None => 0..n,
    };
    // The directory check made shape x word == bytes, so these products fit; checked anyway.
    let overflow = |what: &str| Error::new(ErrorClass::NinferArithOverflow, name, what.to_string());
    let row_bytes = per_row
        .checked_mul(word as u64)
        .ok_or_else(|| overflow("row size overflows u64"))?;
    let at = |r: u64| -> crate::Result<usize> {
        let off = r
            .checked_mul(row_bytes)
            .ok_or_else(|| overflow("row offset overflows u64"))?;
        usize::try_from(off).map_err(|_| overflow("row offset exceeds the address space"))
    };
    let slice = bytes.get(at(range.start)?..at(range.end)?).ok_or_else(|| {
        Error::new(
            ErrorClass::NinferRangeBounds,
            name,
            "rows lie outside the object",
        )
    })?;
    let vals = decode_to_vec_parallel(codec, slice, threads)?;
    let mut out_shape = shape;
    if rows.is_some() {
        out_shape[0] = range.end - range.start;
    }
    Ok((out_shape, vals))
}

/// (shape, values) of rows `rows` of a GGUF tensor on `threads` threads (`0` = every core, `1` =
/// the calling thread only; the values are the same bytes for every thread count), type 42 as
/// the file decides ([`decode_gguf_with`] with [`Id42Layout::Auto`]).
#[cfg(test)]
pub fn decode_gguf_on(
    bytes: &[u8],
    name: &str,
    rows: Option<&str>,
    threads: usize,
) -> crate::Result<(Vec<u64>, Vec<f32>)> {
    decode_gguf_with(bytes, name, rows, threads, Id42Layout::Auto).map(|(s, v, _)| (s, v))
}

/// How `decode` reads ggml type 42 (`--id42`): mainline Q2_0 (64-element blocks, 18 B) or
/// legacy Prism Q2_0 (128-element blocks, 34 B); spec/ggml-types.md#id-42.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Id42Layout {
    /// Decide from the file's tensor spans; a tensor whose padded size fits both layouts
    /// follows the file's other id-42 tensors, else it is read as g64 with a note on stderr.
    #[default]
    Auto,
    /// Mainline Q2_0: 64-element blocks of 18 bytes.
    G64,
    /// Legacy Prism Q2_0: 128-element blocks of 34 bytes.
    G128,
}

/// What `decode` says on stderr when tensor `name` of type 42 was read in a layout it assumed
/// (its padded size fits both), naming the layout and the option that picks the other one;
/// `None` when nothing was assumed for this tensor.
pub fn id42_assumption_note(
    t: &crate::gguf::TensorInfo<'_>,
    warnings: &[String],
) -> Option<String> {
    if t.type_id != 42 || !warnings.iter().any(|w| w.contains("too small to tell")) {
        return None;
    }
    let (other, flag) = if t.ggml.block_elems == 128 {
        ("mainline Q2_0 (64-element blocks of 18 B)", "g64")
    } else {
        ("legacy Prism Q2_0 (128-element blocks of 34 B)", "g128")
    };
    Some(format!(
        "note: tensor '{}' has ggml type 42 and a size that fits both of its layouts, and no other \
         tensor of the file decides it: ASSUMED {} ({}-element blocks of {} B); if the file is {other}, \
         pass --id42 {flag}",
        escape(t.name),
        t.ggml.name,
        t.ggml.block_elems,
        t.ggml.block_bytes
    ))
}

/// [`decode_gguf_on`] with type 42 read as `id42` says; also returns the parser's warnings.
pub fn decode_gguf_with(
    bytes: &[u8],
    name: &str,
    rows: Option<&str>,
    threads: usize,
    id42: Id42Layout,
) -> crate::Result<(Vec<u64>, Vec<f32>, Vec<String>)> {
    let policy = match id42 {
        Id42Layout::Auto => crate::gguf::Id42Policy::Auto,
        Id42Layout::G64 => crate::gguf::Id42Policy::Mainline,
        Id42Layout::G128 => crate::gguf::Id42Policy::LegacyPrism,
    };
    let opts = crate::gguf::Options {
        mode: crate::gguf::Mode::Spec,
        id42: policy,
    };
    let g = crate::gguf::parse_with(bytes, opts)?;
    let t = g.require_tensor(name)?;
    let mut notes: Vec<String> = g.warnings.iter().map(|w| format!("warning: {w}")).collect();
    if id42 == Id42Layout::Auto {
        notes.extend(id42_assumption_note(t, &g.warnings));
    }
    let codec = Codec::for_ggml_type_checked(t.ggml)?;
    let k = t.ne[0];
    let n = t.n_elements / k;
    let row_bytes = codec.bytes_for(k as usize)? as u64;
    let data = g.tensor_data(t);
    let (range, shape) = match rows {
        Some(r) => {
            let r = parse_rows(r, n)?;
            (r.clone(), vec![r.end - r.start, k])
        }
        None => (0..n, t.dims().iter().rev().copied().collect()),
    };
    let slice = &data[(range.start * row_bytes) as usize..(range.end * row_bytes) as usize];
    Ok((shape, decode_to_vec_parallel(codec, slice, threads)?, notes))
}

/// (shape, values) of rows of a .ninfer object, decoded on every core.
pub fn decode_ninfer(
    bytes: &[u8],
    name: &str,
    rows: Option<&str>,
) -> crate::Result<(Vec<u64>, Vec<f32>)> {
    decode_ninfer_on(bytes, name, rows, 0)
}

/// [`decode_ninfer`] on `threads` threads (`0` = every core, `1` = the calling thread only):
/// ternary planes through [`decode_to_vec_parallel`] after reassembly, the other registry
/// formats by contiguous row sub-ranges ([`decode_rows_parallel`]); the same bytes for every
/// thread count.
pub fn decode_ninfer_on(
    bytes: &[u8],
    name: &str,
    rows: Option<&str>,
    threads: usize,
) -> crate::Result<(Vec<u64>, Vec<f32>)> {
    let a = Artifact::parse(bytes)?;
    match a.view(name)? {
        ObjectView::Contiguous {
            format,
            shape,
            bytes,
        } => decode_contiguous_rows(name, &format.name, &shape, bytes, rows, threads),
        ObjectView::RowSplit(v) => {
            let range = match rows {
                Some(r) => parse_rows(r, v.geom.n)?,
                None => 0..v.geom.n,
            };
            let shape = vec![range.end - range.start, v.geom.k];
            let Some(t) = v.format.ternary.as_ref() else {
                // Q4G64_F16S / Q5G64_F16S / Q6G64_F16S / W8G32_F16S: signed codes x f16 scales.
                let vals = decode_rows_parallel(range, v.geom.k, threads, |r| {
                    grouped_int::decode_rows(v.format, &v.geom, v.bytes, r)
                })?;
                return Ok((shape, vals));
            };
            let codec = Codec::from_name(&t.codec).ok_or_else(|| {
                Error::new(
                    ErrorClass::InternalInvariant,
                    "spec/formats.json",
                    format!("a ternary format names an unknown codec {}", t.codec),
                )
            })?;
            let blocks = v.ggml_rows(range.clone())?;
            Ok((shape, decode_to_vec_parallel(codec, &blocks, threads)?))
        }
        ObjectView::Opaque {
            format,
            layout,
            bytes,
        } => {
            let dims = a.object(name)?.shape().to_vec();
            let (n, k) = match dims[..] {
                [n, k] => (n, k),
                _ => {
                    return Err(Error::new(
                        ErrorClass::NinferDirShape,
                        name,
                        format!("{} in {layout} must be rank 2", format.name),
                    ))
                }
            };
            let range = match rows {
                Some(r) => parse_rows(r, n)?,
                None => 0..n,
            };
            let shape = vec![range.end - range.start, k];
            let vals = match format.name.as_str() {
                "NVFP4" => {
                    decode_rows_parallel(range, k, threads, |r| nvfp4::decode_rows(n, k, bytes, r))?
                }
                "FP8_E4M3FN_ROW_BF16S" => decode_rows_parallel(range, k, threads, |r| {
                    fp8_row::decode_rows(n, k, bytes, r)
                })?,
                other => {
                    return Err(Error::new(
                        ErrorClass::CodecUnsupported,
                        name,
                        format!("{other} in {layout} is not decoded by this suite"),
                    ))
                }
            };
            Ok((shape, vals))
        }
        ObjectView::Resource { .. } => Err(Error::new(
            ErrorClass::NinferObjectKind,
            name,
            "a raw-bytes resource, not a tensor",
        )),
    }
}

/// Runs `decode`: writes rows `rows` (all when `None`) of object or tensor `name` in `file`
/// as f32 to the `.npy` file `output`; a GGUF tensor of type 42 is read as `id42` says, and a
/// layout assumed for it is said on stderr with the option that picks the other one.
pub fn run(
    file: &Path,
    name: &str,
    rows: Option<&str>,
    output: &Path,
    force: bool,
    id42: Id42Layout,
) -> crate::Result<ExitCode> {
    super::check_output(output, force, &[file])?;
    let map = crate::fsio::map_file(file)?;
    let (shape, vals) = if map.starts_with(b"GGUF") {
        let (shape, vals, notes) = decode_gguf_with(&map, name, rows, 0, id42)?;
        for n in notes {
            eprintln!("{n}");
        }
        (shape, vals)
    } else {
        decode_ninfer(&map, name, rows)?
    };
    let mut buf = Vec::with_capacity(vals.len() * 4 + 128);
    crate::npy::write_f32(&mut buf, &shape, &vals)?;
    crate::fsio::write_bytes_atomic(output, &buf)?;
    println!(
        "wrote {} ({:?} f32, {} values)",
        escape(&output.display().to_string()),
        shape,
        vals.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::{decode_gguf_on, decode_ninfer, decode_ninfer_on};
    use crate::codec::parallel::split_small_inputs_for_tests;
    use crate::codec::Codec;
    use crate::corpus::observe::values_sha256;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The all-cores decode of the CLI equals the single-thread decode and the scalar reference,
    /// bit for bit: the nano model's token embedding (1031 x 128, big enough to split over
    /// threads) as a GGUF tensor and as a .ninfer object, whole and by row ranges, both ternary
    /// formats; and a contiguous object.
    #[test]
    fn all_cores_decode_equals_the_single_thread_reference() {
        use crate::synth::{model, template};
        let p = crate::spec::profile("bonsai-nano").unwrap();
        let tpl = template::template_bytes(&p).unwrap();
        for ty in [model::TernaryType::Pq2_0, model::TernaryType::Ptq1_0] {
            let g = model::model_bytes(&p, ty, 5).unwrap();
            let a = crate::pack::pack_bytes(&g, &tpl, &Default::default()).unwrap();
            let parsed = crate::gguf::parse(&g, crate::gguf::Mode::Spec).unwrap();
            let t = parsed.require_tensor("token_embd.weight").unwrap();
            let codec = Codec::for_ggml_type(t.ggml).unwrap();
            let data = parsed.tensor_data(t);
            let mut reference = vec![0f32; t.n_elements as usize];
            codec.decode_reference(data, &mut reference).unwrap();
            assert!(
                reference.len() >= 2 * split_small_inputs_for_tests(),
                "must split"
            );
            let k = t.ne[0] as usize;
            for rows in [None, Some("3:1000"), Some("1000:"), Some("7:8")] {
                let (shape, one) = decode_gguf_on(&g, "token_embd.weight", rows, 1).unwrap();
                let (lo, hi) = match rows {
                    None => (0, reference.len() / k),
                    Some(r) => {
                        let r = super::parse_rows(r, (reference.len() / k) as u64).unwrap();
                        (r.start as usize, r.end as usize)
                    }
                };
                assert_eq!(bits(&one), bits(&reference[lo * k..hi * k]), "{rows:?}");
                let (ashape, aone) = decode_ninfer_on(&a, "text/token_embedding", rows, 1).unwrap();
                assert_eq!((&ashape, bits(&aone)), (&shape, bits(&one)), "{rows:?}");
                for threads in [0, 2, 3] {
                    let (s2, many) =
                        decode_gguf_on(&g, "token_embd.weight", rows, threads).unwrap();
                    assert_eq!(
                        (&s2, bits(&many)),
                        (&shape, bits(&one)),
                        "{rows:?} {threads}"
                    );
                    let (s3, amany) =
                        decode_ninfer_on(&a, "text/token_embedding", rows, threads).unwrap();
                    assert_eq!(
                        (&s3, bits(&amany)),
                        (&shape, bits(&one)),
                        "{rows:?} {threads}"
                    );
                }
            }
            let one = decode_ninfer_on(&a, "text/final_norm", None, 1).unwrap();
            assert_eq!(
                decode_ninfer_on(&a, "text/final_norm", None, 0).unwrap(),
                one
            );
        }
    }

    /// `decode` of every non-ternary registry format against the corpus cases' independently
    /// computed digests (the generator's chosen codes x scales), whole and by row ranges.
    #[test]
    fn decode_matches_the_independent_registry_digests() {
        let cases = crate::corpus::families::registry::cases().unwrap();
        assert_eq!(cases.len(), 7);
        let mut formats = std::collections::BTreeSet::new();
        for c in cases {
            let bytes = c.bytes.as_ref().unwrap();
            let want = c.check.as_ref().unwrap()["objects"][0]["values_sha256"]
                .as_str()
                .unwrap()
                .to_string();
            let (shape, vals) = decode_ninfer(bytes, "q", None).unwrap();
            assert_eq!(values_sha256(&vals), want, "{}", c.name);
            assert_eq!(vals.len() as u64, shape[0] * shape[1]);
            let n = shape[0];
            let (s1, head) = decode_ninfer(bytes, "q", Some(&format!("0:{}", n / 2))).unwrap();
            let (_, tail) = decode_ninfer(bytes, "q", Some(&format!("{}:", n / 2))).unwrap();
            assert_eq!(s1[1], shape[1]);
            assert_eq!([head, tail].concat(), vals, "{}", c.name);
            formats.insert(
                c.features
                    .iter()
                    .find(|f| f.starts_with("format:"))
                    .unwrap()
                    .clone(),
            );
        }
        assert_eq!(formats.len(), 6);
    }
}
