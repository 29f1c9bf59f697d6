//! A reader author's use of the library, through the default surface only (`internals` off):
//! every expectation of the checked-in corpus that a GGUF, `.ninfer` or codec reader must meet
//! is recomputed here from the case bytes with public items alone — `gguf::parse`,
//! `Codec::decode_to_vec`, `ninfer::Artifact`, `RowSplitView::ggml_rows`, the error accessors
//! and `corpus::manifest`. If a test needs something the surface lacks, it does not compile:
//! that is the point (the root crate's `cargo test` also builds without `internals`; this
//! crate shows the same surface suffices from a separate crate, as a user has it).

use std::path::{Path, PathBuf};

use ninfer_ternary::codec::Codec;
use ninfer_ternary::corpus::manifest::{CaseEntry, Manifest, Outcome};
use ninfer_ternary::gguf::{self, Mode};
use ninfer_ternary::ninfer::{Artifact, ObjectView};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
}

fn manifest() -> Manifest {
    Manifest::load(&corpus_root().join("MANIFEST.json"))
        .expect("the checked-in MANIFEST.json loads")
}

fn case_bytes(c: &CaseEntry) -> Vec<u8> {
    std::fs::read(corpus_root().join(&c.file)).unwrap_or_else(|e| panic!("{}: {e}", c.file))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// PROTOCOL.md §4.1's values digest: sha256 of the decoded values as f32 little-endian, after
/// canonicalisation (every NaN → `0x7fc00000`, `-0.0` → `+0.0`).
fn values_digest(values: &[f32]) -> String {
    let canonical = |v: f32| match v {
        v if v.is_nan() => 0x7fc0_0000u32,
        v if v == 0.0 => 0,
        v => v.to_bits(),
    };
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|&v| canonical(v).to_le_bytes())
        .collect();
    sha256_hex(&bytes)
}

fn cases<'m>(m: &'m Manifest, kind: &str, outcome: Outcome) -> Vec<&'m CaseEntry> {
    m.cases
        .iter()
        .filter(|c| c.kind == kind && c.expect.outcome == outcome)
        .collect()
}

fn observation(c: &CaseEntry) -> &Value {
    c.expect
        .observation
        .as_ref()
        .unwrap_or_else(|| panic!("{}: accepted case without observation", c.id))
}

fn mode_of(c: &CaseEntry) -> Option<Mode> {
    match c.params.get("mode").and_then(Value::as_str) {
        Some("strict") => Some(Mode::Strict),
        Some("spec") => Some(Mode::Spec),
        _ => None,
    }
}

/// The values digest of one GGUF tensor, recomputed; `None` for a type the public codecs
/// do not decode (types the suite only sizes).
fn tensor_values(g: &gguf::Gguf<'_>, t: &gguf::TensorInfo<'_>) -> Option<String> {
    Codec::for_ggml_type(t.ggml).map(|codec| {
        let v = codec
            .decode_to_vec(g.tensor_data(t))
            .unwrap_or_else(|e| panic!("{}: {e}", t.name));
        values_digest(&v)
    })
}

#[test]
fn every_accepted_gguf_case_reads_to_its_observation() {
    let m = manifest();
    let (mut checked, mut tensors, mut values) = (0, 0, 0);
    for c in cases(&m, "gguf", Outcome::Accept) {
        // Cases with request parameters beyond the mode (a consumer's view) are the runner's.
        let Some(mode) = mode_of(c).filter(|_| c.params.as_object().is_some_and(|p| p.len() == 1))
        else {
            continue;
        };
        let raw = case_bytes(c);
        // A big-endian file is read through its little-endian transcoding (PROTOCOL.md §4.2);
        // `data_sha256` stays the digest of the bytes as they are in the file.
        let bytes = if gguf::is_big_endian(&raw) {
            gguf::swap_byte_order(&raw, gguf::ByteOrder::Big)
                .unwrap_or_else(|e| panic!("{}: {e}", c.id))
        } else {
            raw.clone()
        };
        let g = gguf::parse(&bytes, mode).unwrap_or_else(|e| panic!("{}: refused: {e}", c.id));
        let obs = observation(c);
        let want = obs["tensors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no tensors", c.id));
        assert_eq!(g.tensors.len(), want.len(), "{}: tensor count", c.id);
        for (t, w) in g.tensors.iter().zip(want) {
            assert_eq!(w["name"], t.name, "{}", c.id);
            assert_eq!(w["type"], t.type_id, "{}: {}", c.id, t.name);
            let ne: Vec<u64> = w["ne"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            assert_eq!(ne, t.dims(), "{}: {} ne", c.id, t.name);
            let vals = tensor_values(&g, t);
            let data = sha256_hex(&raw[t.abs_offset as usize..(t.abs_offset + t.nbytes) as usize]);
            assert_eq!(w["data_sha256"], data.as_str(), "{}: {} data", c.id, t.name);
            if let (Some(want), Some(got)) = (w.get("values_sha256").and_then(Value::as_str), vals)
            {
                assert_eq!(want, got, "{}: {} values", c.id, t.name);
                values += 1;
            }
            tensors += 1;
        }
        checked += 1;
    }
    // Not vacuous: the corpus holds dozens of such cases, most with decodable tensors.
    assert!(
        checked >= 50 && tensors >= 100 && values >= 50,
        "{checked} cases, {tensors} tensors, {values} values"
    );
}

#[test]
fn every_gguf_case_refused_at_parse_is_refused_with_its_class() {
    let m = manifest();
    let mut checked = 0;
    for c in cases(&m, "gguf", Outcome::Reject) {
        if c.expect.phase.as_deref() != Some("parse") {
            continue;
        }
        let Some(mode) = mode_of(c) else { continue };
        let bytes = case_bytes(c);
        let Err(e) = gguf::parse(&bytes, mode) else {
            panic!("{}: accepted a must-reject file", c.id)
        };
        assert_eq!(
            Some(e.class().id()),
            c.expect.class.as_deref(),
            "{}: {e}",
            c.id
        );
        checked += 1;
    }
    assert!(checked >= 30, "{checked} parse-phase rejections checked");
}

#[test]
fn every_accepted_codec_case_decodes_to_its_digests_row_by_row() {
    let m = manifest();
    let mut checked = 0;
    for c in cases(&m, "codec", Outcome::Accept) {
        let name = c.params["codec"].as_str().unwrap();
        let codec =
            Codec::from_name(name).unwrap_or_else(|| panic!("{}: codec {name} not public", c.id));
        let rows = c.params["rows"].as_u64().unwrap() as usize;
        let bytes = case_bytes(c);
        let values = codec
            .decode_to_vec(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", c.id));
        let obs = observation(c);
        assert_eq!(obs["values"], values.len(), "{}", c.id);
        assert_eq!(obs["sha256"], values_digest(&values).as_str(), "{}", c.id);
        let per_row = values.len() / rows;
        for (r, want) in obs["rows_sha256"].as_array().unwrap().iter().enumerate() {
            let got = values_digest(&values[r * per_row..(r + 1) * per_row]);
            assert_eq!(want, got.as_str(), "{}: row {r}", c.id);
        }
        checked += 1;
    }
    assert!(checked >= 30, "{checked} codec cases checked");
}

#[test]
fn every_accepted_ninfer_case_lists_its_objects_and_decodes_its_ternary_planes() {
    let m = manifest();
    let (mut checked, mut ternary) = (0, 0);
    for c in cases(&m, "ninfer", Outcome::Accept) {
        let bytes = case_bytes(c);
        let a = Artifact::parse(&bytes).unwrap_or_else(|e| panic!("{}: refused: {e}", c.id));
        let obs = observation(c);
        assert_eq!(obs["payload_offset"], a.payload_offset, "{}", c.id);
        let want = obs["objects"].as_array().unwrap();
        assert_eq!(
            a.directory.objects.len(),
            want.len(),
            "{}: object count",
            c.id
        );
        for (o, w) in a.directory.objects.iter().zip(want) {
            assert_eq!(w["name"], o.name.as_str(), "{}", c.id);
            assert_eq!(w["kind"], o.kind(), "{}: {}", c.id, o.name);
            assert_eq!(
                w["sha256"],
                sha256_hex(a.object_bytes(o)).as_str(),
                "{}: {}",
                c.id,
                o.name
            );
            let Some(want_values) = w.get("values_sha256").and_then(Value::as_str) else {
                continue;
            };
            // Ternary row-split objects (the other registry formats' values are the reference
            // reader's business, not this surface's).
            let ObjectView::RowSplit(view) = a.view_object(o).unwrap() else {
                continue;
            };
            if let Some(info) = &view.format.ternary {
                // The format's codec (spec/formats.json), the rows as ggml blocks, then each
                // row cut from its padded width back to its logical one (PROTOCOL.md §4.3).
                let codec_name = &info.codec;
                let codec = Codec::from_name(codec_name).expect("a public codec");
                let (n, k, k_pad) = (view.geom.n, view.geom.k as usize, view.geom.k_pad as usize);
                let blocks = view
                    .ggml_rows(0..n)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", c.id, o.name));
                let padded = codec.decode_to_vec(&blocks).unwrap();
                let values: Vec<f32> = padded
                    .chunks(k_pad)
                    .flat_map(|row| row[..k].to_vec())
                    .collect();
                assert_eq!(
                    want_values,
                    values_digest(&values),
                    "{}: {} values",
                    c.id,
                    o.name
                );
                ternary += 1;
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 20 && ternary >= 20,
        "{checked} cases, {ternary} ternary objects decoded"
    );
}

#[test]
fn a_refused_file_says_what_where_and_why_through_the_accessors() {
    // The first accepted GGUF case, cut inside its header: refused, with a class, an offset and
    // a field a caller can branch on without parsing the message.
    let m = manifest();
    let c = cases(&m, "gguf", Outcome::Accept)[0];
    let bytes = case_bytes(c);
    let e = gguf::parse(&bytes[..20], Mode::Strict).expect_err("a cut header must be refused");
    assert!(e.class().id().starts_with("gguf."), "{e}");
    assert!(e.offset().is_some_and(|o| o <= 20), "{e}");
    assert!(
        !e.field().is_empty() && e.to_string().contains(e.class().id()),
        "{e}"
    );
}

#[test]
fn the_digest_comparisons_above_can_fail() {
    // Negative controls for the helpers every test above leans on: the digest follows
    // PROTOCOL.md §4.1's canonicalisation and nothing else, and one changed byte of a case
    // changes what it decodes to.
    assert_eq!(
        values_digest(&[-0.0, f32::NAN]),
        values_digest(&[0.0, f32::from_bits(0xffc0_0001)])
    );
    assert_ne!(
        values_digest(&[1.0]),
        values_digest(&[f32::from_bits(1.0f32.to_bits() + 1)])
    );
    let m = manifest();
    let c = cases(&m, "codec", Outcome::Accept)[0];
    let codec = Codec::from_name(c.params["codec"].as_str().unwrap()).unwrap();
    let mut bytes = case_bytes(c);
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    let values = codec.decode_to_vec(&bytes).unwrap();
    assert_ne!(
        observation(c)["sha256"],
        values_digest(&values).as_str(),
        "{}",
        c.id
    );
}
