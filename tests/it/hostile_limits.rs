//! The address-space-cap tier: every command on large *sparse* hostile inputs (a small header
//! declaring huge arrays, keys, tensors or sign tables; the rest of the file a hole) under
//! RLIMIT_AS = input size + 1 GiB. The only acceptable outcomes are success or a clean
//! refusal (exit 1 or 2 with a registered `[class]` on stderr) — never an abort, a signal,
//! a Rust panic (exit 101) or a hang. Memory must be bounded by what the work needs, not by
//! what a header declares (README "Guarantees").
//!
//! Run: `cargo test --test hostile_limits`. The files are sparse: they take almost no disk.

use ninfer_ternary::error::ErrorClass;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;
/// Per command; a hostile header must not make any command slow either. Generous for two
/// loaded cores: the slowest case (a 1 GiB key, condensed by SHA-256 in the name indexes,
/// `src/gguf/name_hash.rs`) takes ~2 s of CPU in the debug binary (SipHash took ~15 s a hash).
const TIMEOUT: Duration = Duration::from_secs(120);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ninfer-ternary")
}

/// How a capped run ended.
#[derive(Debug)]
enum Outcome {
    Success,
    /// Exit 1 or 2 with `[class]` of the registry on stderr.
    CleanRefusal(String),
    /// Anything else: the reason.
    Bad(String),
}

/// Runs `prog args` with RLIMIT_AS = `cap` bytes ([`super::common::run_capped`]) and judges
/// the outcome.
fn run_capped(prog: &str, args: &[&str], cap: u64) -> Outcome {
    let mut cmd = Command::new(prog);
    cmd.args(args);
    let r = super::common::run_capped(cmd, cap, TIMEOUT);
    let Some(status) = r.status else {
        return Outcome::Bad(format!("still running after {TIMEOUT:?}"));
    };
    match judge(status, &r.stderr) {
        // `verify` exits 1 for a failed gate and names the rule in its report on stdout.
        Outcome::Bad(_) if status.code() == Some(1) && r.stdout.starts_with("FAIL:") => {
            match report_class(&r.stdout) {
                Some(class) => Outcome::CleanRefusal(class),
                None => Outcome::Bad(format!(
                    "a failed gate with no error class: {}",
                    tail(&r.stdout)
                )),
            }
        }
        other => other,
    }
}

/// The first registered `[id]` anywhere in a verify report.
fn report_class(stdout: &str) -> Option<String> {
    stdout
        .split('[')
        .skip(1)
        .filter_map(|l| l.split_once(']'))
        .map(|(id, _)| id)
        .find(|id| ErrorClass::from_id(id).is_some())
        .map(str::to_string)
}

fn judge(status: std::process::ExitStatus, stderr: &str) -> Outcome {
    if let Some(sig) = status.signal() {
        return Outcome::Bad(format!("killed by signal {sig}: {}", tail(stderr)));
    }
    match status.code() {
        Some(0) => Outcome::Success,
        Some(c @ (1 | 2)) => match registered_class(stderr) {
            Some(class) => Outcome::CleanRefusal(class),
            None => Outcome::Bad(format!("exit {c} without an error class: {}", tail(stderr))),
        },
        c => Outcome::Bad(format!("exit {c:?}: {}", tail(stderr))),
    }
}

/// The first `[id]` on an `error:` line of stderr that is a registered class.
fn registered_class(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("error: ["))
        .filter_map(|l| l.split_once(']'))
        .map(|(id, _)| id)
        .find(|id| ErrorClass::from_id(id).is_some())
        .map(str::to_string)
}

fn tail(s: &str) -> String {
    let t: String = s.chars().rev().take(400).collect();
    t.chars().rev().collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- hostile GGUF builders (little-endian GGUF v3, written here from the GGUF document) ----

fn gstr(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as u64).to_le_bytes());
    b.extend_from_slice(s);
}

fn header(b: &mut Vec<u8>, tensors: u64, kvs: u64) {
    b.extend_from_slice(b"GGUF");
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&tensors.to_le_bytes());
    b.extend_from_slice(&kvs.to_le_bytes());
}

fn kv_arch(b: &mut Vec<u8>) {
    gstr(b, b"general.architecture");
    b.extend_from_slice(&8u32.to_le_bytes()); // STRING
    gstr(b, b"qwen35");
}

/// Writes `head`, then a hole of `hole` bytes, then `rest`; returns the file size.
fn write_sparse(path: &Path, head: &[u8], hole: u64, rest: &[u8]) -> u64 {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(head).unwrap();
    f.seek(SeekFrom::Current(hole as i64)).unwrap();
    f.write_all(rest).unwrap();
    let len = head.len() as u64 + hole + rest.len() as u64;
    f.set_len(len).unwrap();
    len
}

/// A BOOL array of 2^26 elements (zeros, valid) in a 64 MiB hole; no tensors. Materialized
/// as one value object per element (tens of bytes each) it would need several GiB.
fn huge_array(path: &Path) -> u64 {
    let mut b = Vec::new();
    header(&mut b, 0, 2);
    kv_arch(&mut b);
    gstr(&mut b, b"hostile.flags");
    b.extend_from_slice(&9u32.to_le_bytes()); // ARRAY
    b.extend_from_slice(&7u32.to_le_bytes()); // of BOOL
    b.extend_from_slice(&(1u64 << 26).to_le_bytes());
    write_sparse(path, &b, 1 << 26, &[0; 64])
}

/// A metadata key of 2^30 - 4096 NUL bytes (valid UTF-8, under the 1 GiB string limit).
fn huge_key(path: &Path) -> u64 {
    let klen = GIB - 4096;
    let mut b = Vec::new();
    header(&mut b, 0, 2);
    kv_arch(&mut b);
    b.extend_from_slice(&klen.to_le_bytes());
    let mut rest = Vec::new();
    rest.extend_from_slice(&4u32.to_le_bytes()); // UINT32
    rest.extend_from_slice(&7u32.to_le_bytes());
    rest.extend_from_slice(&[0; 64]);
    write_sparse(path, &b, klen, &rest)
}

/// One PQ2_0 tensor of 4096 x 2^20 weights (1.1 GiB of zero blocks, 16 GiB as f32).
fn big_tensor(path: &Path) -> u64 {
    let (k, rows) = (4096u64, 1u64 << 20);
    let bytes = k / 128 * 34 * rows;
    let mut b = Vec::new();
    header(&mut b, 1, 1);
    kv_arch(&mut b);
    gstr(&mut b, b"big.weight");
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&k.to_le_bytes());
    b.extend_from_slice(&rows.to_le_bytes());
    b.extend_from_slice(&142u32.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    while b.len() % 32 != 0 {
        b.push(0);
    }
    write_sparse(path, &b, bytes, &[])
}

/// The synthetic nano GGUF with `prism.hadamard.sign_values` declaring ~10^9 entries: the
/// array's count is raised and a hole of the extra bytes inserted after its data (a multiple
/// of 32, so the tensor data stays aligned).
fn huge_sign_values(nano: &Path, path: &Path) -> u64 {
    let bytes = std::fs::read(nano).unwrap();
    let key = b"prism.hadamard.sign_values";
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .expect("synth writes prism.hadamard.sign_values");
    let after_key = at + key.len();
    let ty = u32::from_le_bytes(bytes[after_key..after_key + 4].try_into().unwrap());
    assert_eq!(ty, 9, "sign_values is an array");
    let elem = u32::from_le_bytes(bytes[after_key + 4..after_key + 8].try_into().unwrap());
    assert!(
        elem == 5 || elem == 4,
        "sign_values holds 32-bit integers (type {elem})"
    );
    let count_at = after_key + 8;
    let old = u64::from_le_bytes(bytes[count_at..count_at + 8].try_into().unwrap());
    let extra_elems = (1_000_000_000 - old) / 8 * 8;
    let new = old + extra_elems;
    let data_end = count_at + 8 + old as usize * 4;
    let mut head = bytes[..data_end].to_vec();
    head[count_at..count_at + 8].copy_from_slice(&new.to_le_bytes());
    write_sparse(path, &head, extra_elems * 4, &bytes[data_end..])
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn p(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

fn ok(args: &[&str]) {
    let o = Command::new(bin()).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let f = Fixture { _dir: dir, root };
    let (g, t, a) = (f.p("nano.gguf"), f.p("tpl.ninfer"), f.p("nano.ninfer"));
    ok(&["synth", "-o", s(&g)]);
    ok(&["synth-template", "-o", s(&t)]);
    ok(&["pack", "--gguf", s(&g), "--template", s(&t), "-o", s(&a)]);
    huge_array(&f.p("array.gguf"));
    huge_key(&f.p("key.gguf"));
    big_tensor(&f.p("tensor.gguf"));
    huge_sign_values(&g, &f.p("signs.gguf"));
    // A real artifact followed by 4 GiB of hole.
    let big_a = f.p("padded.ninfer");
    std::fs::copy(&a, &big_a).unwrap();
    let len = std::fs::metadata(&big_a).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big_a)
        .unwrap()
        .set_len(len + 4 * GIB)
        .unwrap();
    f
}

/// Every case: (label, args with `{name}` placeholders for fixture files, inputs to size the cap).
fn cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("inspect array", vec!["inspect", "{array.gguf}"]),
        (
            "inspect --json array",
            vec!["inspect", "--json", "-", "{array.gguf}"],
        ),
        (
            "inspect spec array",
            vec!["inspect", "--mode", "spec", "{array.gguf}"],
        ),
        ("inspect key", vec!["inspect", "{key.gguf}"]),
        (
            "inspect --json key",
            vec!["inspect", "--json", "-", "{key.gguf}"],
        ),
        ("inspect tensor", vec!["inspect", "{tensor.gguf}"]),
        ("inspect signs", vec!["inspect", "{signs.gguf}"]),
        (
            "inspect padded artifact",
            vec!["inspect", "{padded.ninfer}"],
        ),
        (
            "decode array",
            vec!["decode", "{array.gguf}", "x", "-o", "{out}"],
        ),
        (
            "decode --rows tensor",
            vec![
                "decode",
                "{tensor.gguf}",
                "big.weight",
                "--rows",
                "0:2",
                "-o",
                "{out}",
            ],
        ),
        (
            "decode whole tensor",
            vec!["decode", "{tensor.gguf}", "big.weight", "-o", "{out}"],
        ),
        (
            "decode --rows padded artifact",
            vec![
                "decode",
                "{padded.ninfer}",
                "text/final_norm",
                "--rows",
                "0:1",
                "-o",
                "{out}",
            ],
        ),
        (
            "transcode array",
            vec!["transcode", "{array.gguf}", "--to", "pq2_0", "-o", "{out}"],
        ),
        (
            "transcode --retag-42 array",
            vec!["transcode", "{array.gguf}", "--retag-42", "-o", "{out}"],
        ),
        (
            "transcode --retag-42 tensor",
            vec!["transcode", "{tensor.gguf}", "--retag-42", "-o", "{out}"],
        ),
        (
            "pack --check array",
            vec!["pack", "--gguf", "{array.gguf}", "--check"],
        ),
        (
            "pack --check signs",
            vec!["pack", "--gguf", "{signs.gguf}", "--check"],
        ),
        (
            "pack signs",
            vec![
                "pack",
                "--gguf",
                "{signs.gguf}",
                "--template",
                "{tpl.ninfer}",
                "-o",
                "{out}",
            ],
        ),
        (
            "pack array",
            vec![
                "pack",
                "--gguf",
                "{array.gguf}",
                "--template",
                "{tpl.ninfer}",
                "-o",
                "{out}",
            ],
        ),
        (
            "verify signs",
            vec!["verify", "{nano.ninfer}", "--gguf", "{signs.gguf}"],
        ),
        (
            "verify padded artifact",
            vec!["verify", "{padded.ninfer}", "--gguf", "{nano.gguf}"],
        ),
        (
            "unpack signs",
            vec!["unpack", "{nano.ninfer}", "--gguf", "{signs.gguf}"],
        ),
        (
            "unpack padded artifact",
            vec!["unpack", "{padded.ninfer}", "--gguf", "{nano.gguf}"],
        ),
        (
            "mutate padded artifact",
            vec![
                "mutate",
                "{padded.ninfer}",
                "--kind",
                "perm48-on-rows",
                "-o",
                "{out}",
            ],
        ),
        (
            "dump-reference padded artifact",
            vec!["dump-reference", "{padded.ninfer}", "-o", "{outdir}"],
        ),
    ]
}

/// Cases that still abort on this branch, each with the defect and who fixes it (issue #11,
/// "Memory"). A listed case that runs clean fails the test, so the list only shrinks: remove
/// the entry when its fix lands.
const KNOWN_ABORTS: &[(&str, &str)] = &[];

#[test]
fn every_command_on_sparse_hostile_inputs_refuses_cleanly_under_an_address_space_cap() {
    let f = fixture();
    let mut bad = Vec::new();
    let t0 = Instant::now();
    for (i, (label, args)) in cases().into_iter().enumerate() {
        let mut input_bytes = 0u64;
        let args: Vec<String> = args
            .iter()
            .map(
                |a| match a.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
                    Some("out") => s(&f.p(&format!("out{i}"))).to_string(),
                    Some("outdir") => s(&f.p(&format!("outdir{i}"))).to_string(),
                    Some(name) => {
                        let p = f.p(name);
                        input_bytes += std::fs::metadata(&p).unwrap().len();
                        s(&p).to_string()
                    }
                    None => a.to_string(),
                },
            )
            .collect();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let t = Instant::now();
        let outcome = run_capped(bin(), &argv, input_bytes + GIB);
        eprintln!("{label:32} {:6.2}s {outcome:?}", t.elapsed().as_secs_f64());
        let known = KNOWN_ABORTS.iter().find(|(l, _)| *l == label);
        match (outcome, known) {
            (Outcome::Bad(_), Some((_, why))) => eprintln!("  known abort: {why}"),
            (Outcome::Bad(why), None) => bad.push(format!("{label}: {why}")),
            (_, Some(_)) => bad.push(format!(
                "{label}: runs clean now; remove it from KNOWN_ABORTS"
            )),
            (_, None) => {}
        }
    }
    eprintln!("tier wall time {:.1}s", t0.elapsed().as_secs_f64());
    assert!(
        bad.is_empty(),
        "{} case(s) not clean:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn harness_catches_aborts_signals_panics_and_classless_errors() {
    let sh = "/bin/sh";
    type Expect = fn(&Outcome) -> bool;
    let cases: [(&str, Expect); 4] = [
        (
            "kill -ABRT $$",
            |o| matches!(o, Outcome::Bad(w) if w.contains("signal 6")),
        ),
        (
            "exit 101",
            |o| matches!(o, Outcome::Bad(w) if w.contains("101")),
        ),
        (
            "echo 'error: no class here' >&2; exit 2",
            |o| matches!(o, Outcome::Bad(w) if w.contains("without an error class")),
        ),
        ("echo 'error: [not.a.class] x' >&2; exit 2", |o| {
            matches!(o, Outcome::Bad(_))
        }),
    ];
    for (script, expect) in cases {
        let o = run_capped(sh, &["-c", script], 4 * GIB);
        assert!(expect(&o), "{script}: {o:?}");
    }
    // The cap is applied: a shell under it reports it (ulimit -v is in KiB).
    let o = run_capped(sh, &["-c", "test \"$(ulimit -v)\" = 4194304"], 4 * GIB);
    assert!(matches!(o, Outcome::Success), "{o:?}");
    // Positive controls: the harness accepts a clean refusal and a success.
    let o = run_capped(
        sh,
        &["-c", "echo 'error: [gguf.magic] x' >&2; exit 2"],
        4 * GIB,
    );
    assert!(
        matches!(o, Outcome::CleanRefusal(ref c) if c == "gguf.magic"),
        "{o:?}"
    );
    assert!(matches!(
        run_capped(sh, &["-c", "true"], 4 * GIB),
        Outcome::Success
    ));
}

/// Four printable ASCII bytes, distinct for every `i < 95^4`: the shortest unique keys and
/// names a file of millions of records can use.
fn tiny_name(mut i: u64) -> [u8; 4] {
    let mut n = [0u8; 4];
    for b in &mut n {
        *b = 0x20 + (i % 95) as u8;
        i /= 95;
    }
    n
}

/// A GGUF of `n` tiny KVs (4-byte key, U8 value: 17 bytes each on disk).
fn tiny_kvs(path: &Path, n: u64) -> u64 {
    let mut b = Vec::with_capacity(64 + 17 * n as usize);
    header(&mut b, 0, n + 1);
    kv_arch(&mut b);
    for i in 0..n {
        gstr(&mut b, &tiny_name(i));
        b.extend_from_slice(&0u32.to_le_bytes()); // UINT8
        b.push(1);
    }
    std::fs::write(path, &b).unwrap();
    b.len() as u64
}

/// A GGUF of `n` tiny tensor infos (4-byte name, one F32 element each, 36 bytes of info and
/// 32 of aligned data per tensor).
fn tiny_tensors(path: &Path, n: u64) -> u64 {
    let mut b = Vec::with_capacity(64 + 36 * n as usize);
    header(&mut b, n, 1);
    kv_arch(&mut b);
    for i in 0..n {
        gstr(&mut b, &tiny_name(i));
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&1u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes()); // F32
        b.extend_from_slice(&(32 * i).to_le_bytes());
    }
    b.resize(b.len().div_ceil(32) * 32, 0);
    write_sparse(path, &b, 32 * n, &[])
}

/// Millions of tiny records (issue #11: 80-120 B of heap per 13-36 B record): the parser's
/// record lists grow fallibly, so a cap they do not fit in is refused with `io.memory` at the
/// record that needed the memory, and the normal cap (input + 1 GiB) parses them. Before, the
/// tight cap aborted the process ("memory allocation of ... failed").
#[test]
fn millions_of_tiny_records_parse_or_are_refused_with_io_memory() {
    let d = tempfile::tempdir().unwrap();
    let (kv, t) = (d.path().join("kvs.gguf"), d.path().join("tensors.gguf"));
    let files = [
        (&kv, tiny_kvs(&kv, 2_000_000)),
        (&t, tiny_tensors(&t, 1_000_000)),
    ];
    for (path, size) in files {
        // ~290 MiB of records: more than a quarter GiB above the file.
        let tight = run_capped(
            bin(),
            &["pack", "--check", "--gguf", s(path)],
            size + GIB / 4,
        );
        eprintln!("{} under +256 MiB: {tight:?}", path.display());
        assert!(
            matches!(tight, Outcome::CleanRefusal(ref c) if c == "io.memory"),
            "{}: {tight:?}",
            path.display()
        );
        // The normal cap holds them: inspect lists every record, as text and as JSON (which
        // is streamed record by record; built whole, the 2 M-KV document aborted here).
        for args in [vec!["inspect"], vec!["inspect", "--json", "-"]] {
            let args = [&args[..], &[s(path)]].concat();
            let normal = run_capped(bin(), &args, size + GIB);
            eprintln!("{args:?} under +1 GiB: {normal:?}");
            assert!(matches!(normal, Outcome::Success), "{args:?}: {normal:?}");
        }
    }
}

/// Whether the `[profile.release]` table of a Cargo.toml text sets `overflow-checks = true`.
fn release_overflow_checks(toml: &str) -> bool {
    let mut in_release = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_release = line == "[profile.release]";
        } else if in_release {
            let l: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if l == "overflow-checks=true" {
                return true;
            }
        }
    }
    false
}

/// The second line of defence behind checked arithmetic (issue #11): release builds keep
/// overflow checks. Control: the reader of the profile is not vacuous.
#[test]
fn the_release_profile_keeps_overflow_checks_on() {
    let toml = std::fs::read_to_string(super::common::repo_root().join("Cargo.toml")).unwrap();
    assert!(
        release_overflow_checks(&toml),
        "[profile.release] lost overflow-checks = true"
    );
    for without in [
        "[profile.release]\ndebug = 1\n",
        "[profile.release]\noverflow-checks = false\n",
        "[profile.dev]\noverflow-checks = true\n[profile.release]\n",
    ] {
        assert!(!release_overflow_checks(without), "{without}");
    }
}

/// A `.ninfer` whose directory lists `n` one-byte resources (~90 B of JSON each) over a
/// sparse payload of `n` bytes; returns the file size.
fn tiny_objects(path: &Path, n: u64) -> u64 {
    let c = &ninfer_ternary::spec::get().container;
    let mut j = String::from(r#"{"identity":{"model_id":"m","weights_id":"w"},"objects":["#);
    for i in 0..n {
        if i > 0 {
            j.push(',');
        }
        j.push_str(&format!(
            r#"{{"name":"r{i}","kind":"resource","encoding":"raw-bytes-v1","offset":{i},"bytes":1}}"#
        ));
    }
    j.push_str("]}");
    let mut b: Vec<u8> = (0..c.magic_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&c.magic_hex[i..i + 2], 16).unwrap())
        .collect();
    b.extend_from_slice(&(j.len() as u64).to_le_bytes());
    b.extend_from_slice(j.as_bytes());
    b.resize(
        b.len().div_ceil(c.payload_alignment as usize) * c.payload_alignment as usize,
        0,
    );
    write_sparse(path, &b, n, &[])
}

/// 1 M tiny directory objects (issue #11): every growth of the directory's JSON tree and of
/// the parsed object list is fallible, so a cap they do not fit in (+256 MiB, half of what 1 M
/// objects need) is refused with `io.memory` (before, "memory allocation of 12 bytes failed"
/// and SIGABRT), and input + 1 GiB parses them (~510 B of heap per object, measured; ~940 B
/// before) for `inspect` and `--json`. (2 M objects took the debug binary past the 120 s
/// timeout on a loaded 2-core CI machine.)
#[test]
fn millions_of_tiny_ninfer_objects_parse_or_are_refused_with_io_memory() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("objects.ninfer");
    let size = tiny_objects(&path, 1_000_000);
    let tight = run_capped(bin(), &["inspect", s(&path)], size + GIB / 4);
    eprintln!("under +256 MiB: {tight:?}");
    assert!(
        matches!(tight, Outcome::CleanRefusal(ref c) if c == "io.memory"),
        "{tight:?}"
    );
    for args in [vec!["inspect"], vec!["inspect", "--json", "-"]] {
        let args = [&args[..], &[s(&path)]].concat();
        let normal = run_capped(bin(), &args, size + GIB);
        eprintln!("{args:?} under +1 GiB: {normal:?}");
        assert!(matches!(normal, Outcome::Success), "{args:?}: {normal:?}");
    }
}
