//! Messages: `.ninfer` directory errors name the absolute file offset of the offending value
//! (not the directory's start), and text from files never reaches the terminal raw.
//!
//! Expected offsets are found by plain substring search in the directory text the test itself
//! wrote, independently of the parser's structured locator.

use crate::common::is_unsafe_char;
use ninfer_ternary::ninfer::directory::{parse_directory, validate, DIRECTORY_OFFSET};
use ninfer_ternary::ninfer::reader::Artifact;
use ninfer_ternary::ninfer::writer::{plan, to_bytes, PlannedObject};
use ninfer_ternary::ninfer::{Directory, Identity};
use ninfer_ternary::spec::LayoutId;
use ninfer_ternary::{Error, ErrorClass};
use std::process::Command;

/// The valid base artifact of the `.ninfer` violation catalog (a resource and one tensor of
/// every layout), built here through the public writer as the catalog builds it (the catalog
/// is not public API).
fn try_base_artifact() -> ninfer_ternary::Result<(Directory, Vec<Vec<u8>>)> {
    let objects = vec![
        PlannedObject::resource("frontend/tokenizer.json", 13),
        PlannedObject::tensor("w/bf16", vec![4, 8], "BF16", LayoutId::ContiguousLeV1),
        PlannedObject::tensor("w/scalar", vec![], "FP32", LayoutId::ContiguousLeV1),
        PlannedObject::tensor(
            "w/pq2",
            vec![3, 128],
            "PQ2_0_G128",
            LayoutId::RowSplitK128V1,
        ),
        PlannedObject::tensor(
            "w/ptq1",
            vec![2, 256],
            "PTQ1_0_G128",
            LayoutId::RowSplitK128V1,
        ),
        PlannedObject::tensor("w/q4", vec![2, 130], "Q4G64_F16S", LayoutId::RowSplitK128V1),
        PlannedObject::tensor(
            "w/nvfp4",
            vec![128, 64],
            "NVFP4",
            LayoutId::BlockscaleK16M128x4V1,
        ),
        PlannedObject::tensor(
            "w/fp8",
            vec![2, 4],
            "FP8_E4M3FN_ROW_BF16S",
            LayoutId::RowScaleV1,
        ),
    ];
    let dir = plan(
        Identity {
            model_id: "corpus-model".into(),
            weights_id: "folded-ternary".into(),
        },
        objects,
    )?;
    let payloads = dir
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            (0..o.bytes)
                .map(|j| (j as u8).wrapping_mul(31).wrapping_add(i as u8))
                .collect()
        })
        .collect();
    Ok((dir, payloads))
}

/// A container whose directory is `json`, over the base artifact's payload.
fn with_json(json: &str) -> Vec<u8> {
    let (dir, payloads) = try_base_artifact().unwrap();
    let valid = to_bytes(&dir, &payloads).unwrap();
    let old_len = u64::from_le_bytes(valid[8..16].try_into().unwrap());
    let payload = &valid[(16 + old_len).div_ceil(4096) as usize * 4096..];
    let mut out = valid[..8].to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    out.resize(out.len().div_ceil(4096) * 4096, 0);
    out.extend_from_slice(payload);
    out
}

fn base_json() -> String {
    try_base_artifact().unwrap().0.to_json()
}

/// Byte index of the `nth` occurrence of `needle` in `hay`, searching from `from`.
fn find_after(hay: &str, from: &str, needle: &str) -> usize {
    let start = hay.find(from).expect("anchor present");
    start + hay[start..].find(needle).expect("needle present")
}

/// The error must be of `class` and point exactly at `want` (an index into the directory).
fn check(e: &Error, class: ErrorClass, want: usize) -> Result<(), String> {
    if e.class() != class {
        return Err(format!("class {} instead of {class}: {e}", e.class()));
    }
    let want = DIRECTORY_OFFSET + want as u64;
    if e.offset() != Some(want) {
        return Err(format!("offset {:?} instead of {want}: {e}", e.offset()));
    }
    Ok(())
}

fn open_err(json: &str) -> Error {
    match Artifact::parse(&with_json(json)) {
        Ok(_) => panic!("accepted: {json}"),
        Err(e) => e,
    }
}

/// (edited directory, class, expected index of the offending value) for several rules.
fn cases() -> Vec<(String, ErrorClass, usize)> {
    let j = base_json();
    let mut out = Vec::new();
    // Unknown format: the offending value is the format string of `w/scalar`.
    let t = j.replacen(r#""format":"FP32""#, r#""format":"FP33""#, 1);
    out.push((
        t.clone(),
        ErrorClass::NinferDirFormat,
        t.find(r#""FP33""#).unwrap(),
    ));
    // Negative shape dimension (a type error inside an array).
    let t = j.replacen(r#""shape":[4,8]"#, r#""shape":[4,-8]"#, 1);
    out.push((t.clone(), ErrorClass::NinferDirType, t.find("-8]").unwrap()));
    // Wrong byte count of the third tensor.
    let at = find_after(&j, r#""name":"w/pq2""#, r#""bytes":"#) + r#""bytes":"#.len();
    let end = at + j[at..].find('}').unwrap();
    let t = format!("{}{}{}", &j[..at], "1", &j[end..]);
    out.push((t, ErrorClass::NinferDirBytes, at));
    // A duplicated object name: the second occurrence is the offending one.
    let t = j.replacen(r#""name":"w/scalar""#, r#""name":"w/bf16""#, 1);
    out.push((
        t.clone(),
        ErrorClass::NinferDirDuplicateName,
        t.rfind(r#""w/bf16""#).unwrap(),
    ));
    // An unexpected member, written with whitespace around the colon.
    let t = j.replacen(
        r#""weights_id":"folded-ternary""#,
        r#""weights_id":"folded-ternary", "extra" :  5"#,
        1,
    );
    out.push((
        t.clone(),
        ErrorClass::NinferDirMembers,
        t.find(" 5}").unwrap() + 1,
    ));
    // An empty identity.
    let t = j.replacen(r#""model_id":"corpus-model""#, r#""model_id":"""#, 1);
    out.push((
        t.clone(),
        ErrorClass::NinferDirIdentity,
        t.find(r#""""#).unwrap(),
    ));
    // A misaligned offset (range check, after parsing).
    let at = find_after(&j, r#""name":"w/pq2""#, r#""offset":"#) + r#""offset":"#.len();
    let end = at + j[at..].find(',').unwrap();
    let moved = j[at..end].parse::<u64>().unwrap() + 1;
    let t = format!("{}{moved}{}", &j[..at], &j[end..]);
    out.push((t, ErrorClass::NinferRangeAlignment, at));
    out
}

#[test]
fn directory_errors_point_at_the_offending_value() {
    for (json, class, want) in cases() {
        let e = open_err(&json);
        check(&e, class, want).unwrap();
        assert!(
            e.to_string().contains(&format!("at byte {}", 16 + want)),
            "{e}"
        );
    }
}

/// Negative control: the same assertion fails on the errors as the pre-fix code reported them
/// (the directory-start offset that `validate` without the text still gives), so the test
/// above cannot pass by accident.
#[test]
fn negative_control_directory_start_offsets_fail_the_check() {
    let mut failed = 0;
    for (json, class, want) in cases() {
        let Ok(dir) = parse_directory(&json) else {
            continue; // parse-phase cases: covered by the test above
        };
        let e = validate(&dir, u64::MAX / 2).unwrap_err();
        assert_eq!(e.offset(), Some(DIRECTORY_OFFSET));
        assert!(check(&e, class, want).is_err());
        failed += 1;
    }
    assert!(failed >= 4, "only {failed} validate-phase cases");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"))
}

/// No raw control, bidi or format character other than the output's own line ends, and no
/// line injected by a name (the hostile names contain "\nFAKE LINE").
fn assert_clean(what: &str, out: &[u8]) {
    let s = String::from_utf8_lossy(out);
    if let Some(c) = s.chars().find(|&c| c != '\n' && is_unsafe_char(c)) {
        panic!("{what} printed a raw {:?}: {s}", c);
    }
    if s.lines().any(|l| l.starts_with("FAKE LINE")) {
        panic!("{what} let a name start a new line: {s}");
    }
}

const HOSTILE: &str = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\nFAKE LINE\u{202e}txt.exe";

fn hostile_container(dir: &std::path::Path) -> std::path::PathBuf {
    let d: Directory = plan(
        Identity {
            model_id: format!("m{HOSTILE}"),
            weights_id: "w\u{2066}x\u{2069}".into(),
        },
        vec![
            PlannedObject::resource(HOSTILE, 2),
            PlannedObject::tensor(
                format!("t{HOSTILE}"),
                vec![2, 2],
                "FP32",
                LayoutId::ContiguousLeV1,
            ),
        ],
    )
    .unwrap();
    let bytes = to_bytes(&d, &[vec![1, 2], vec![0; 16]]).unwrap();
    let p = dir.join("hostile.ninfer");
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn inspect_escapes_object_names_and_identity() {
    let dir = tempfile::tempdir().unwrap();
    let p = hostile_container(dir.path());
    // Negative control: the names really are in the file, raw.
    let raw = std::fs::read(&p).unwrap();
    assert!(String::from_utf8_lossy(&raw).contains('\u{202e}'));
    let text = bin().arg("inspect").arg(&p).output().unwrap();
    assert!(text.status.success());
    assert_clean("inspect", &text.stdout);
    let shown = String::from_utf8(text.stdout).unwrap();
    assert!(shown.contains("evil\\u{001b}[2J"), "{shown}");
    assert!(shown.contains("\\nFAKE LINE\\u{202e}txt.exe"), "{shown}");
    assert!(shown.contains("w\\u{2066}x\\u{2069}"), "{shown}");
    let json = bin()
        .args(["inspect", "--json", "-"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(json.status.success());
    assert_clean("inspect --json", &json.stdout);
    // The JSON escapes are lossless: the exact names come back.
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["objects"][0]["name"], HOSTILE);
    assert_eq!(v["identity"]["weights_id"], "w\u{2066}x\u{2069}");
}

#[test]
fn errors_that_name_file_text_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let p = hostile_container(dir.path());
    let out = dir.path().join("o.npy");
    // A name given on the command line that matches nothing, and a resource decoded as a tensor.
    for name in [format!("x{HOSTILE}"), HOSTILE.to_string()] {
        let r = bin()
            .arg("decode")
            .arg(&p)
            .arg(&name)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2));
        assert_clean("decode error", &r.stderr);
        assert!(String::from_utf8_lossy(&r.stderr).contains("\\u{202e}"));
    }
    // A directory error naming a hostile duplicate object.
    let mut json = base_json();
    // (ESC written as a JSON escape: raw controls are a syntax error before any name is read)
    json = json.replacen("w/bf16", "d\\u001b\u{202e}", 1);
    json = json.replacen("w/scalar", "d\\u001b\u{202e}", 1);
    let bad = dir.path().join("dup.ninfer");
    std::fs::write(&bad, with_json(&json)).unwrap();
    let r = bin().arg("inspect").arg(&bad).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("ninfer.dir_duplicate_name"), "{err}");
    assert_clean("inspect error", &r.stderr);
    let e = open_err(&json);
    assert!(e.to_string().contains("d\\u{001b}\\u{202e}"), "{e}");
    // Negative control: the same check fails on the raw text these outputs were built from.
    assert!(std::panic::catch_unwind(|| assert_clean("raw", HOSTILE.as_bytes())).is_err());
}

/// A minimal GGUF v3 with `kvs` as (key, value bytes with type tag) and one F32 tensor.
fn gguf(kvs: &[(&str, Vec<u8>)], tensor: &str) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.extend((kvs.len() as u64).to_le_bytes());
    for (k, v) in kvs {
        b.extend((k.len() as u64).to_le_bytes());
        b.extend(k.as_bytes());
        b.extend(v);
    }
    b.extend((tensor.len() as u64).to_le_bytes());
    b.extend(tensor.as_bytes());
    b.extend(1u32.to_le_bytes()); // n_dims
    b.extend(4u64.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // F32
    b.extend(0u64.to_le_bytes()); // offset
    b.resize(b.len().div_ceil(32) * 32, 0);
    b.extend([0u8; 16]);
    b
}

fn gguf_string(s: &str) -> Vec<u8> {
    let mut v = 8u32.to_le_bytes().to_vec();
    v.extend((s.len() as u64).to_le_bytes());
    v.extend(s.as_bytes());
    v
}

#[test]
fn inspect_gguf_escapes_keys_values_and_tensor_names() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.gguf");
    let file = gguf(
        &[
            ("general.architecture", gguf_string("llama")),
            (&format!("k{HOSTILE}"), gguf_string(HOSTILE)),
        ],
        &format!("t{HOSTILE}"),
    );
    std::fs::write(&p, file).unwrap();
    for args in [
        &["inspect", "--mode", "spec"][..],
        &["inspect", "--mode", "spec", "--json", "-"],
    ] {
        let r = bin().args(args).arg(&p).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert_clean("inspect gguf", &r.stdout);
        assert!(String::from_utf8_lossy(&r.stdout).contains("FAKE LINE"));
    }
}
