//! The deterministic seed corpus in `fuzz/seeds/<target>/`.
//!
//! Generated from the library's own catalogs, so the seeds follow the reader:
//! * `gguf_parse`: every `gguf_hostile::hostile_cases()` input (all of spec/gguf.md#gguf-hostile-inputs) as
//!   `hostile-<name>`, every `gguf_hostile::accepted_controls()` input as `control-<name>`;
//! * `ninfer_parse` and `ninfer_roundtrip`: every `ninfer_violations::cases()` input (their
//!   valid controls include `base_artifact()`), plus a few small valid artifacts;
//! * both: the boundary seeds of [`crate::boundary_seeds`] (lengths, counts, depth,
//!   alignments and tensors ending at end of file on the boundaries);
//! * `gguf_structured`: fixed pseudo-random byte strings (libFuzzer decodes them with
//!   `arbitrary`; any bytes are a valid description).
//!
//! `testkit/tests/fuzz/fuzz_regressions.rs` fails when the committed seeds differ from
//! [`all`] and regenerates them with
//! `(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --test fuzz fuzz_regressions::regenerate_seeds -- --ignored)`.

use crate::targets::TARGETS;
use ninfer_ternary::corpus::catalogs::{gguf_hostile, ninfer_violations};
use ninfer_ternary::ninfer::{self, Identity, PlannedObject};
use ninfer_ternary::spec::LayoutId;
use std::collections::BTreeMap;

/// A file name made of `[a-z0-9_.-]`.
fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn insert(out: &mut BTreeMap<String, Vec<u8>>, name: String, bytes: Vec<u8>) {
    let base = file_name(&name);
    let mut name = base.clone();
    let mut k = 2;
    while out.contains_key(&name) {
        name = format!("{base}-{k}");
        k += 1;
    }
    out.insert(name, bytes);
}

/// The seeds of one target: file name → bytes.
pub fn for_target(target: &str) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    match target {
        "gguf_parse" => {
            for c in gguf_hostile::hostile_cases() {
                insert(&mut out, format!("hostile-{}", c.name), c.bytes);
            }
            for c in gguf_hostile::accepted_controls() {
                insert(&mut out, format!("control-{}", c.name), c.bytes);
            }
            for (name, bytes) in crate::boundary_seeds::gguf_seeds() {
                insert(&mut out, name, bytes);
            }
        }
        "ninfer_parse" | "ninfer_roundtrip" => {
            for v in ninfer_violations::cases().expect("the catalog generates") {
                let kind = if v.class.is_some() {
                    "violation"
                } else {
                    "control"
                };
                insert(&mut out, format!("{kind}-{}", v.name), v.bytes);
            }
            for (name, dir, payloads) in small_artifacts() {
                let bytes = ninfer::writer::to_bytes(&dir, &payloads).expect("small artifact");
                insert(&mut out, format!("control-{name}"), bytes);
            }
            for (name, bytes) in crate::boundary_seeds::ninfer_seeds() {
                insert(&mut out, name, bytes);
            }
        }
        "gguf_structured" => {
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for (i, len) in [16usize, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
                .into_iter()
                .enumerate()
            {
                let bytes = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x >> 24) as u8
                    })
                    .collect();
                insert(&mut out, format!("random-{i:02}-{len}"), bytes);
            }
        }
        "codec_fast_vs_ref" => {
            // One seed per codec: its selector byte and four pseudo-random blocks.
            let mut x: u64 = 0x2545_F491_4F6C_DD1D;
            for (i, c) in ninfer_ternary::codec::Codec::ALL.iter().enumerate() {
                let mut bytes = vec![i as u8];
                bytes.extend((0..4 * c.block_bytes()).map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 32) as u8
                }));
                insert(&mut out, format!("codec-{}", c.name()), bytes);
            }
        }
        "pack_nano" => {
            // No edits (both formats), and one edit inside the tensor data of each.
            insert(&mut out, "unedited-pq2_0".into(), vec![0]);
            insert(&mut out, "unedited-ptq1_0".into(), vec![1]);
            insert(
                &mut out,
                "edit-pq2_0-data".into(),
                vec![0, 0x00, 0x40, 0x00, 0x00, 0x01],
            );
            insert(
                &mut out,
                "edit-ptq1_0-data".into(),
                vec![1, 0x00, 0x40, 0x00, 0x00, 0x01],
            );
        }
        "dumps_parse" => dumps_parse_seeds(&mut out),
        other => panic!("unknown fuzz target {other}"),
    }
    out
}

/// dump-reference output of the nano artifacts as bundles (`verify::dump_bundle`): the native
/// embedding and oracle directories and the engine embedding dump, per ternary format.
fn dumps_parse_seeds(out: &mut BTreeMap<String, Vec<u8>>) {
    use ninfer_ternary::codec::TernaryType;
    use ninfer_ternary::verify::{dump_bundle::encode, dumps, engine_dump, reference};
    for (tag, ty) in [
        ("pq2_0", TernaryType::Pq2_0),
        ("ptq1_0", TernaryType::Ptq1_0),
    ] {
        let art = crate::nano::packed(ty, 0).artifact;
        let a = ninfer_ternary::ninfer::Artifact::parse(&art).expect("artifact");
        let files = reference::reference_files(&a, None, 0, Default::default()).expect("dumps");
        for dir in ["embedding", "oracles"] {
            let one: BTreeMap<String, Vec<u8>> = files
                .iter()
                .filter_map(|(path, b)| {
                    let name = path.strip_prefix(dir).ok()?.to_str()?.to_string();
                    Some((name, b.clone()))
                })
                .collect();
            insert(out, format!("{tag}-{dir}"), encode(&one));
        }
        let (ids, k, h) = dumps::reference_embedding(&a, None).expect("embedding");
        let engine = BTreeMap::from([(
            "embedding.bin".to_string(),
            engine_dump::write(&ids, k, &h, false),
        )]);
        insert(out, format!("{tag}-engine"), encode(&engine));
    }
}

/// Every target's seeds.
pub fn all() -> BTreeMap<&'static str, BTreeMap<String, Vec<u8>>> {
    TARGETS
        .iter()
        .map(|t| (t.name, for_target(t.name)))
        .collect()
}

type Small = (&'static str, ninfer::Directory, Vec<Vec<u8>>);

/// Small valid artifacts: one per layout family, and an empty one.
fn small_artifacts() -> Vec<Small> {
    let id = || Identity {
        model_id: "seed".into(),
        weights_id: "folded-ternary".into(),
    };
    let one = |name: &'static str, objects: Vec<PlannedObject>| -> Small {
        let dir = ninfer::plan(id(), objects).expect("seed plan");
        let payloads = dir
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| {
                (0..o.bytes)
                    .map(|j| (j as u8).wrapping_mul(13).wrapping_add(i as u8))
                    .collect()
            })
            .collect();
        (name, dir, payloads)
    };
    vec![
        one("empty", vec![]),
        one(
            "pq2_1x128",
            vec![PlannedObject::tensor(
                "w",
                vec![1, 128],
                "PQ2_0_G128",
                LayoutId::RowSplitK128V1,
            )],
        ),
        one(
            "ptq1_2x256",
            vec![PlannedObject::tensor(
                "w",
                vec![2, 256],
                "PTQ1_0_G128",
                LayoutId::RowSplitK128V1,
            )],
        ),
        one(
            "resource_and_fp32",
            vec![
                PlannedObject::resource("r", 3),
                PlannedObject::tensor("s", vec![2, 3], "FP32", LayoutId::ContiguousLeV1),
            ],
        ),
    ]
}
