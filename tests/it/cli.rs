//! The command line end to end, on files the suite generates itself.

use crate::common::cli as bin;
use ninfer_ternary::gguf::{self, GgufWriter, Mode};
use std::path::Path;
use std::process::Output;

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The shape and values of the `.npy` (format 1.0, C-order `<f4`) that `decode -o` wrote, read
/// here by the format's own description (numpy's NEP 1), not by the writer's module.
fn npy(p: &Path) -> (Vec<u64>, Vec<f32>) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00", "npy 1.0 magic");
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hl]).unwrap();
    assert!(
        header.contains("'descr': '<f4'") && header.contains("'fortran_order': False"),
        "{header}"
    );
    let shape: Vec<u64> = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().parse().unwrap())
        .collect();
    let data = &b[10 + hl..];
    assert_eq!(
        data.len() as u64,
        4 * shape.iter().product::<u64>(),
        "data matches the shape"
    );
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (shape, values)
}

#[test]
fn synth_pack_inspect_decode_unpack() {
    let d = tempfile::tempdir().unwrap();
    let (g, t, a) = (
        d.path().join("m.gguf"),
        d.path().join("t.ninfer"),
        d.path().join("a.ninfer"),
    );
    ok(&["synth", "--format", "ptq1_0", "--seed", "3", "-o", s(&g)]);
    ok(&["synth-template", "-o", s(&t)]);
    ok(&["pack", "--gguf", s(&g), "--template", s(&t), "-o", s(&a)]);
    // Refuses to overwrite without --force (usage error = exit 2) and leaves the file alone.
    let before = std::fs::read(&a).unwrap();
    let o = run(&["pack", "--gguf", s(&g), "--template", s(&t), "-o", s(&a)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read(&a).unwrap(), before);
    let out = ok(&["inspect", s(&g)]);
    assert!(
        out.contains("GGUF v3")
            && out.contains("PTQ1_0")
            && out.contains("-> PTQ1_0_G128 [1031, 128]"),
        "{out}"
    );
    let out = ok(&["inspect", s(&a), "--json", "-"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["identity"]["weights_id"], "folded-ternary");
    assert!(j["objects"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["geometry"]["scale_offset"].is_u64()));
    // The same weights decoded from the GGUF tensor and from the artifact's planes agree.
    let (x, y) = (d.path().join("x.npy"), d.path().join("y.npy"));
    ok(&[
        "decode",
        s(&g),
        "token_embd.weight",
        "--rows",
        "5:9",
        "-o",
        s(&x),
    ]);
    ok(&[
        "decode",
        s(&a),
        "text/token_embedding",
        "--rows",
        "5:9",
        "-o",
        s(&y),
    ]);
    let (sx, vx) = npy(&x);
    assert_eq!(sx, vec![4, 128]);
    assert_eq!((sx, vx), npy(&y));
    // A permuted object: artifact row 8 of value_z is GGUF attn_qkv row qk + perm_row(8) = 256 + 16*8.
    ok(&[
        "decode",
        s(&a),
        "text/layers/0/gdn/value_z",
        "--rows",
        "8:9",
        "-o",
        s(&x),
        "--force",
    ]);
    ok(&[
        "decode",
        s(&g),
        "blk.0.attn_qkv.weight",
        "--rows",
        "384:385",
        "-o",
        s(&y),
        "--force",
    ]);
    assert_eq!(npy(&x), npy(&y));
    // Contiguous objects decode too.
    ok(&["decode", s(&a), "text/final_norm", "-o", s(&x), "--force"]);
    assert_eq!(npy(&x).0, vec![128]);
    let out = ok(&["unpack", s(&a), "--gguf", s(&g)]);
    assert!(
        out.contains("52/52 ternary tensors byte-identical"),
        "{out}"
    );
    let out = ok(&["pack", "--gguf", s(&g), "--check"]);
    assert!(out.contains(" 0 failed"), "{out}");
    assert_eq!(out.lines().last(), Some("RESULT: PASSED"), "{out}");
}

/// `pack --check` ends with its verdict; negative control: every PQ2_0 block scale made
/// negative fails the scale plausibility checks, and the last line says so.
#[test]
fn pack_check_ends_with_a_result_line() {
    let d = tempfile::tempdir().unwrap();
    let (g, bad) = (d.path().join("m.gguf"), d.path().join("bad.gguf"));
    ok(&["synth", "--format", "pq2_0", "--seed", "4", "-o", s(&g)]);
    let src = std::fs::read(&g).unwrap();
    let edited = crate::common::rewrite_gguf(&src, |_, ts| {
        for t in ts.iter_mut().filter(|t| t.2 == 142) {
            // PQ2_0 block: f16 scale d, then 32 bytes of codes (spec/codecs.md#pq2-0).
            for block in t.3.chunks_exact_mut(34) {
                block[1] |= 0x80;
            }
        }
    });
    std::fs::write(&bad, edited).unwrap();
    let o = run(&["pack", "--gguf", s(&bad), "--check"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.lines().any(|l| l.starts_with("FAIL scales ")), "{out}");
    assert_eq!(out.lines().last(), Some("RESULT: FAILED"), "{out}");
}

#[test]
fn transcode_between_formats_is_lossless_and_refuses_code_3() {
    let d = tempfile::tempdir().unwrap();
    let (p, t, back) = (
        d.path().join("p.gguf"),
        d.path().join("t.gguf"),
        d.path().join("back.gguf"),
    );
    let synth_t = d.path().join("synth_t.gguf");
    ok(&["synth", "--format", "pq2_0", "--seed", "9", "-o", s(&p)]);
    ok(&[
        "synth",
        "--format",
        "ptq1_0",
        "--seed",
        "9",
        "-o",
        s(&synth_t),
    ]);
    ok(&["transcode", s(&p), "--to", "ptq1_0", "-o", s(&t)]);
    ok(&["transcode", s(&t), "--to", "pq2_0", "-o", s(&back)]);
    let (pb, tb, bb, sb) = (
        std::fs::read(&p).unwrap(),
        std::fs::read(&t).unwrap(),
        std::fs::read(&back).unwrap(),
        std::fs::read(&synth_t).unwrap(),
    );
    assert_eq!(pb, bb, "PQ2_0 -> PTQ1_0 -> PQ2_0 is the identity");
    // The transcoded tensors equal the PTQ1_0 synthesized from the same seed, byte for byte.
    let (gt, gs) = (
        gguf::parse(&tb, Mode::Strict).unwrap(),
        gguf::parse(&sb, Mode::Strict).unwrap(),
    );
    for (a, b) in gt.tensors.iter().zip(&gs.tensors) {
        assert_eq!(gt.tensor_data(a), gs.tensor_data(b), "{}", a.name);
    }
    // A PQ2_0 block holding code 3 (+2d) has no trit encoding: refused, output not written.
    let g = gguf::parse(&pb, Mode::Strict).unwrap();
    let t0 = g.tensor("blk.0.ffn_gate.weight").unwrap();
    let mut bad = pb.clone();
    bad[t0.abs_offset as usize + 2] = 0xff;
    let (bp, bo) = (d.path().join("bad.gguf"), d.path().join("bad_out.gguf"));
    std::fs::write(&bp, &bad).unwrap();
    let o = run(&["transcode", s(&bp), "--to", "ptq1_0", "-o", s(&bo)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("blk.0.ffn_gate.weight"));
    assert!(!bo.exists());
}

#[test]
fn retag_42_is_header_only_and_inspect_warns() {
    let s_ = ninfer_ternary::spec::get();
    let legacy = s_.ggml_type_named("Q2_0_PRISM_LEGACY").unwrap();
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "qwen35");
    // Large enough that 34 B/128 and 18 B/64 spans cannot be confused (> 2048 weights).
    w.tensor_as("blk.0.ffn_up.weight", &[512, 8], legacy)
        .unwrap();
    w.tensor_as("blk.0.ffn_down.weight", &[256, 16], legacy)
        .unwrap();
    let data: Vec<Vec<u8>> = vec![
        (0..32 * 34).map(|i| i as u8).collect(),
        (0..32 * 34).map(|i| (i * 7) as u8).collect(),
    ];
    let bytes = w.to_bytes(&[&data[0], &data[1]]).unwrap();
    let d = tempfile::tempdir().unwrap();
    let (i, o) = (d.path().join("legacy.gguf"), d.path().join("retagged.gguf"));
    std::fs::write(&i, &bytes).unwrap();
    let out = ok(&["inspect", s(&i)]);
    assert!(
        out.contains("legacy Prism layout") && out.contains("retag to 142"),
        "{out}"
    );
    ok(&["transcode", s(&i), "--retag-42", "-o", s(&o)]);
    let after = std::fs::read(&o).unwrap();
    assert_eq!(after.len(), bytes.len());
    let diff: Vec<usize> = (0..bytes.len()).filter(|&k| bytes[k] != after[k]).collect();
    assert_eq!(
        diff.len(),
        2,
        "one byte per tensor: 42 (0x2a) -> 142 (0x8e)"
    );
    let g = gguf::parse(&after, Mode::Strict).unwrap();
    assert!(g
        .tensors
        .iter()
        .all(|t| t.type_id == 142 && t.ggml.name == "PQ2_0"));
    assert_eq!(std::fs::read(&i).unwrap(), bytes, "input untouched");
}

#[test]
fn hostile_input_is_a_clean_error_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    // The catalog's cases as the committed corpus holds them (the catalog is not public API).
    for c in crate::common::hostile_gguf_cases()
        .iter()
        .filter(|c| !c.decode_phase)
        .take(20)
    {
        let p = d.path().join(format!("{}.gguf", c.name));
        std::fs::write(&p, &c.bytes).unwrap();
        let o = run(&[
            "inspect",
            s(&p),
            "--mode",
            if c.strict { "strict" } else { "spec" },
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", c.name);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("[{}]", c.class)), "{}: {err}", c.name);
    }
}

#[test]
fn demo_runs_and_spec_renders() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("demo");
    let out = ok(&["demo", "--dir", s(&dir)]);
    assert!(out.contains("demo PASSED"), "{out}");
    // Its own folder again: refused without --force, replaced with it.
    let o = run(&["demo", "--dir", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("[io.output_exists]"));
    let out = ok(&["demo", "--dir", s(&dir), "--force"]);
    assert!(out.contains("demo PASSED"), "{out}");
    let out = ok(&["spec", "geometry"]);
    assert!(
        out.contains("| PQ2_0_G128 | [248320, 5120] | 337715200 |"),
        "{out}"
    );
}

/// `bench-decode --cols` is whole blocks of every format it times: 256 (the TQ1_0/TQ2_0 block,
/// the smallest width) runs all four; 128, a whole PQ2_0 block but half a TQ1_0 one, is
/// refused in the argument-mistakes table above.
#[test]
fn bench_decode_runs_on_the_smallest_width() {
    let out = ok(&[
        "bench-decode",
        "--rows",
        "1",
        "--cols",
        "256",
        "--repeat",
        "1",
    ]);
    for codec in ["pq2_0", "ptq1_0", "tq1_0", "tq2_0"] {
        let line = format!("\"codec\":\"{codec}\",\"weights\":256,");
        assert!(out.contains(&line), "{codec}: {out}");
    }
}

/// `demo` writes through the output rules (fsio::claim_output): a folder holding a user's file
/// is refused without --force (io.output_exists) and with it (io.foreign_output: never
/// replaced), and is left exactly as it was.
#[test]
fn demo_never_touches_a_folder_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let mine = d.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    for (force, class) in [(false, "[io.output_exists]"), (true, "[io.foreign_output]")] {
        let mut args = vec!["demo", "--dir", s(&mine)];
        if force {
            args.push("--force");
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "force {force}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(class), "force {force}: {err}");
        let left: Vec<_> = std::fs::read_dir(&mine).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "force {force}: {left:?}");
        assert_eq!(
            std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
            "keep"
        );
    }
}

/// A lone tiny id-42 tensor whose padded size fits both layouts (128 elements: 2 x 18 B or
/// 1 x 34 B, both padded to 64): `decode` reads it as g64, says on stderr that it ASSUMED that
/// layout and names `--id42 g128`; `--id42 g128` reads it as the legacy layout (equal to the same
/// bytes tagged 142, PQ2_0) and says nothing; `--id42 g64` is explicit and says nothing either.
#[test]
fn decode_says_when_it_assumed_the_id42_layout() {
    let s_ = ninfer_ternary::spec::get();
    let g64 = s_.ggml_type_named("Q2_0").unwrap();
    let pq2 = s_.ggml_type_named("PQ2_0").unwrap();
    let data: Vec<u8> = (0..36u32).map(|i| (i * 37 + 11) as u8).collect();
    let mut data = data;
    data[0..2].copy_from_slice(&[0x00, 0x3c]); // scale 1.0 in both readings of byte 0..2
    let file = |t, n: usize| {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "test");
        w.tensor_as("t", &[128], t).unwrap();
        w.to_bytes(&[&data[..n]]).unwrap()
    };
    let d = tempfile::tempdir().unwrap();
    let (f42, f142) = (d.path().join("id42.gguf"), d.path().join("id142.gguf"));
    std::fs::write(&f42, file(g64, 36)).unwrap();
    std::fs::write(&f142, file(pq2, 34)).unwrap(); // PQ2_0: the first 34 of the 36 bytes
    let dec = |f: &Path, extra: &[&str], out: &str| {
        let o = d.path().join(out);
        let mut args = vec!["decode", s(f), "t", "-o", s(&o), "--force"];
        args.extend_from_slice(extra);
        let r = run(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        (npy(&o).1, String::from_utf8(r.stderr).unwrap())
    };
    let (auto, note) = dec(&f42, &[], "auto.npy");
    assert!(
        note.contains("ASSUMED Q2_0 (64-element blocks of 18 B)") && note.contains("--id42 g128"),
        "{note}"
    );
    let (explicit, quiet) = dec(&f42, &["--id42", "g64"], "g64.npy");
    assert_eq!(auto, explicit);
    assert!(!quiet.contains("ASSUMED"), "{quiet}");
    let (legacy, quiet) = dec(&f42, &["--id42", "g128"], "g128.npy");
    assert!(!quiet.contains("ASSUMED"), "{quiet}");
    let (as142, _) = dec(&f142, &[], "142.npy");
    assert_eq!(legacy, as142, "g128 = the same bytes read as PQ2_0");
    assert_ne!(
        legacy, auto,
        "negative control: the two layouts differ on these bytes"
    );
}

/// `inspect --json` values are typed (numbers, strings, booleans, arrays with their count and
/// an explicit cut), the report names its schema and tool version, and a report file is
/// claimed like every output (an existing one needs --force; the input is never the report).
#[test]
fn inspect_json_is_typed_and_its_file_is_claimed() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("m.gguf");
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "llama");
    w.kv("x.count", 8u32);
    w.kv("x.ratio", 0.5f32);
    w.kv("x.flag", true);
    use ninfer_ternary::gguf::{MetaValue, ValueType};
    let arr = |t, v: Vec<MetaValue>| MetaValue::Array(t, v);
    w.kv(
        "x.small",
        arr(
            ValueType::I32,
            vec![1i32.into(), (-2i32).into(), 3i32.into()],
        ),
    );
    w.kv(
        "x.big",
        arr(ValueType::U32, (0..2000u32).map(MetaValue::from).collect()),
    );
    w.kv(
        "x.names",
        arr(ValueType::String, vec!["a".into(), "b".into()]),
    );
    w.tensor("t", &[32, 2], 0).unwrap();
    std::fs::write(&g, w.to_bytes(&[&[0u8; 256]]).unwrap()).unwrap();
    let out = ok(&["inspect", s(&g), "--json", "-"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["schema"], "ninfer-ternary/inspect-report/1");
    assert_eq!(j["tool_version"], env!("CARGO_PKG_VERSION"));
    let kv = |k: &str| {
        j["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == k)
            .unwrap_or_else(|| panic!("{k} in {j}"))
            .clone()
    };
    assert_eq!(kv("general.architecture")["value"], "llama");
    assert_eq!(kv("x.count")["value"], 8);
    assert_eq!(kv("x.count")["type"], "U32");
    assert_eq!(kv("x.ratio")["value"], 0.5);
    assert_eq!(kv("x.flag")["value"], true);
    let small = kv("x.small");
    assert_eq!(small["value"], serde_json::json!([1, -2, 3]));
    assert_eq!(
        (small["count"].clone(), small["truncated"].clone()),
        (3.into(), false.into())
    );
    let big = kv("x.big");
    assert_eq!(big["count"], 2000);
    assert_eq!(big["truncated"], true);
    assert_eq!(big["value"].as_array().unwrap().len(), 1024);
    assert_eq!(big["value"][1023], 1023);
    assert_eq!(kv("x.names")["value"], serde_json::json!(["a", "b"]));
    // To a file: the same document; an existing file needs --force; the input is refused.
    let r = d.path().join("r.json");
    ok(&["inspect", s(&g), "--json", s(&r)]);
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
    assert_eq!(again, j);
    let o = run(&["inspect", s(&g), "--json", s(&r)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("[io.output_exists]"));
    ok(&["inspect", s(&g), "--json", s(&r), "--force"]);
    let o = run(&["inspect", s(&g), "--json", s(&g), "--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("[io.same_file]"));
    assert!(std::fs::read(&g).unwrap().starts_with(b"GGUF"));
}

/// #31 item 6: `--timeout` must be finite, more than 0 and at most a day, `--jobs` 1..=256 —
/// usage errors before any work (they used to panic with exit 101, fail every case, or spawn a
/// million threads).
#[test]
fn timeouts_and_jobs_out_of_range_are_usage_errors() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance");
    let reader = ["check-reader", "--adapter", "true", "--corpus", corpus];
    let fuzz = [
        "corpus",
        "diff-fuzz",
        "--adapter",
        "true",
        "--corpus",
        corpus,
        "--out",
        "/nonexistent/x",
    ];
    let kernel = ["check-kernel", "--builtin"];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for t in ["-1", "nan", "inf", "1e300", "0", "86401", "x"] {
        for base in [&reader[..], &fuzz[..], &kernel[..]] {
            let mut v: Vec<String> = base.iter().map(|x| x.to_string()).collect();
            v.push(format!("--timeout={t}"));
            cases.push(v);
        }
    }
    for j in ["0", "257", "1000000"] {
        let mut v: Vec<String> = reader.iter().map(|x| x.to_string()).collect();
        v.push(format!("--jobs={j}"));
        cases.push(v);
    }
    cases.push(
        kernel
            .iter()
            .map(|x| x.to_string())
            .chain(["--timeout=0.5".into()])
            .collect(),
    );
    for args in &cases {
        let o = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("[cli.usage]"), "{args:?}: {err}");
    }
    // Negative control: in-range values run the check (one case, the reference adapter).
    let adapter = format!("'{}' reader-adapter", env!("CARGO_BIN_EXE_ninfer-ternary"));
    ok(&[
        "check-reader",
        "--adapter",
        &adapter,
        "--corpus",
        corpus,
        "--filter",
        "gguf/y_valid_small",
        "--timeout",
        "86400",
        "--jobs",
        "256",
    ]);
}

/// Every option and positional argument of every subcommand has a description in `--help`
/// (issue #35: `pack` and `decode` showed `-o` and `--force` bare). Negative control: an
/// argument without one is reported by the same walker.
#[test]
fn every_option_has_help_text() {
    let missing = ninfer_ternary::cli::undocumented_args(&ninfer_ternary::cli::command());
    assert!(missing.is_empty(), "options without help text: {missing:?}");
    let bare = clap::Command::new("t").subcommand(
        clap::Command::new("sub")
            .arg(clap::Arg::new("output").long("output").help("Where"))
            .arg(clap::Arg::new("force").long("force")),
    );
    assert_eq!(
        ninfer_ternary::cli::undocumented_args(&bare),
        vec!["sub --force"]
    );
}

/// Every subcommand, given an argument mistake (a missing option the command needs, an input
/// that does not exist, a directory where a file goes, an output under `/proc/nope`), stops
/// with the class of that mistake, never `internal.invariant` (which is kept for bugs of this
/// tool; its negative control is `cli::classify_tests` in the library). Each row names the
/// class the mistake must get and the exit code (`reader-adapter` answers a reject on stdout,
/// exit 1).
#[test]
fn argument_mistakes_of_every_command_are_classed() {
    let d = tempfile::tempdir().unwrap();
    let (dir, file) = (d.path().join("d"), d.path().join("f.txt"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(&file, "x").unwrap();
    let (dir, file, out) = (s(&dir), s(&file), d.path().join("o"));
    let (out, no) = (s(&out), "/nope/x");
    let bad_out = "/proc/nope/x";
    let rows: &[(&[&str], &str, i32)] = &[
        (&["inspect", no], "io.read", 2),
        (&["inspect", dir], "io.not_regular", 2),
        (&["inspect", "/dev/null"], "io.not_regular", 2),
        (&["inspect", file, "--json", bad_out], "io.write", 2),
        (&["decode", no, "t", "-o", out], "io.read", 2),
        (&["decode", dir, "t", "-o", out], "io.not_regular", 2),
        (&["decode", file, "t", "-o", bad_out], "io.write", 2),
        (&["transcode", no, "-o", out, "--to", "pq2_0"], "io.read", 2),
        (
            &["transcode", dir, "-o", out, "--to", "pq2_0"],
            "io.not_regular",
            2,
        ),
        (
            &["transcode", file, "-o", bad_out, "--to", "pq2_0"],
            "io.write",
            2,
        ),
        (&["transcode", file, "-o", out], "cli.usage", 2),
        (&["synth", "-o", bad_out], "io.write", 2),
        (&["synth", "-o", dir], "io.not_regular", 2),
        (&["synth", "--profile", "nope", "-o", out], "cli.usage", 2),
        (&["synth", "--layers", "zz", "-o", out], "cli.usage", 2),
        (&["synth-template", "-o", bad_out], "io.write", 2),
        (
            &["synth-template", "--with", "zz", "-o", out],
            "cli.usage",
            2,
        ),
        (&["oracle-gguf", "-o", bad_out], "io.write", 2),
        (&["pack"], "cli.usage", 2),
        (
            &["pack", "--gguf", no, "--template", no, "-o", out],
            "io.read",
            2,
        ),
        (&["pack", "--gguf", file], "cli.usage", 2),
        (
            &["pack", "--gguf", file, "--template", file],
            "cli.usage",
            2,
        ),
        (
            &["pack", "--gguf", dir, "--template", dir, "-o", out],
            "io.not_regular",
            2,
        ),
        (&["diff", no, no], "io.read", 2),
        (&["diff", dir, dir], "io.not_regular", 2),
        (&["diff", file, file, "--json", bad_out], "io.write", 2),
        (&["unpack", no, "--gguf", no], "io.read", 2),
        (&["unpack", dir, "--gguf", dir], "io.not_regular", 2),
        (
            &["unpack", file, "--gguf", file, "-o", bad_out],
            "io.write",
            2,
        ),
        (&["verify", no, "--gguf", no], "io.read", 2),
        (&["verify", dir, "--gguf", dir], "io.not_regular", 2),
        (
            &["verify", file, "--gguf", file, "--json", bad_out],
            "io.write",
            2,
        ),
        (&["mutate", file, "-o", out], "cli.usage", 2),
        (&["dump-reference", no, "-o", out], "io.read", 2),
        (&["dump-reference", file, "-o", bad_out], "io.write", 2),
        (&["bench-decode", "--cols", "128"], "cli.usage", 2),
        (&["bench-decode", "--cols", "0"], "cli.usage", 2),
        (
            &[
                "bench-decode",
                "--rows",
                "18446744073709551615",
                "--cols",
                "256",
            ],
            "cli.usage",
            2,
        ),
        (&["demo", "--dir", "/proc/nope"], "io.write", 2),
        (&["demo", "--dir", file], "io.not_regular", 2),
        (&["demo", "--profile", "nope", "--dir", out], "cli.usage", 2),
        (&["spec", "--check", "--dir", "/proc/nope"], "io.read", 2),
        (&["spec", "nope"], "cli.usage", 2),
        (
            &[
                "bench-decode",
                "--rows",
                "4",
                "--cols",
                "256",
                "--repeat",
                "1",
                "--write",
                bad_out,
            ],
            "io.write",
            2,
        ),
        (&["corpus", "generate", "-o", bad_out], "io.write", 2),
        (&["corpus", "generate", "-o", file], "io.not_regular", 2),
        (
            &[
                "corpus",
                "matrix",
                "--corpus",
                no,
                "--run",
                "a=/nope/a.json",
            ],
            "io.read",
            2,
        ),
        (
            &["corpus", "matrix", "--run", "a=x", "-o", bad_out],
            "io.write",
            2,
        ),
        (
            &[
                "corpus",
                "diff-fuzz",
                "--corpus",
                no,
                "--adapter",
                "x",
                "--out",
                out,
            ],
            "io.read",
            2,
        ),
        (
            &["check-reader", "--adapter", no, "--corpus", dir],
            "corpus.manifest",
            2,
        ),
        (&["reader-adapter", no], "io.read", 1),
        (&["reader-adapter", dir], "io.not_regular", 1),
        (&["check-kernel"], "cli.usage", 2),
        (
            &[
                "check-kernel",
                "--source",
                file,
                "--entry",
                "k",
                "--class",
                "x",
            ],
            "cli.usage",
            2,
        ),
        (
            &["check-kernel", "--source", file, "--abi", no],
            "io.read",
            2,
        ),
        (
            &["check-kernel", "--source", file, "--json", bad_out],
            "io.write",
            2,
        ),
    ];
    let mut wrong = Vec::new();
    for (args, class, code) in rows {
        let o = bin()
            .args(*args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("binary runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        if text.contains("internal.invariant")
            || !text.contains(&format!("[{class}]"))
            || o.status.code() != Some(*code)
        {
            wrong.push(format!(
                "{args:?} (want [{class}], exit {code}): {:?} {text}",
                o.status.code()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Correct but unusual: a profile name in another case is still a usage mistake with the
    // known names listed, not a crash.
    let o = run(&["synth", "--profile", "BONSAI-NANO", "-o", out]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("[cli.usage]") && err.contains("bonsai-nano"),
        "{err}"
    );
}
