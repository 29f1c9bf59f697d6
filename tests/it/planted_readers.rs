//! A reader author's planted bugs through the adapter protocol (issue #35): the stub
//! `conformance/adapters/stubs/planted.py --bug NAME` (standard library only) decodes PQ2_0 and
//! PTQ1_0 itself with one bug and forwards the rest to the reference adapter.
//!
//! - a plane swap of a `.ninfer` PTQ1_0 object gets a "looks like" line naming the planes
//!   (`spec/geometry.md#block-plane`'s names), and no other planted bug does;
//! - the per-row digests a reader sends with a GGUF tensor or `.ninfer` object name the first
//!   differing row without the element-level opt-in; element-level stays opt-in.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ninfer-ternary");
const STUB: &str = "conformance/adapters/stubs/planted.py";
/// Every bug of the stub (`none`: the correct reader).
const BUGS: &[&str] = &[
    "none",
    "reversed_trits",
    "bf16_scale",
    "last_block",
    "unaligned_offset",
    "code3_as_d",
    "swap_planes",
];
const NINFER_CASE: &str = "ninfer/y_rowsplit_ptq1_0_g128_2x256";
const GGUF_CASE: &str = "gguf/y_type_ptq1_0";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `check-reader --json -` over `cases` with `adapter`: case id -> result object.
fn results(adapter: &str, caps: Option<&str>, cases: &[&str]) -> Vec<(String, Value)> {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(root())
        .env("NINFER_BIN", BIN)
        .args(["check-reader", "--jobs", "2", "--timeout", "20"])
        .args(["--adapter", adapter, "--json", "-"]);
    for c in cases {
        cmd.args(["--filter", c]);
    }
    if let Some(c) = caps {
        cmd.args(["--capabilities", c]);
    }
    let out = cmd.output().expect("run check-reader");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let rows: Vec<(String, Value)> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r.clone()))
        .collect();
    assert_eq!(rows.len(), cases.len(), "{v}");
    rows
}

fn detail(r: &Value) -> &str {
    r["detail"].as_str().unwrap_or("")
}

#[test]
fn a_plane_swap_gets_a_hint_naming_the_planes_and_no_other_bug_does() {
    for bug in BUGS {
        let adapter = format!("{STUB} --bug {bug}");
        for (id, r) in results(&adapter, None, &[NINFER_CASE, GGUF_CASE]) {
            let d = detail(&r);
            let named = d.contains("looks like: planes high and scale swapped");
            if *bug == "swap_planes" {
                assert_eq!(r["status"], "fail", "{id}: {r}");
                assert!(named, "{id}: {d}");
                assert!(d.contains("spec/geometry.md#block-plane"), "{id}: {d}");
                let l = &r["localization"];
                assert!(
                    l["looks_like"].as_str().unwrap().starts_with("planes high"),
                    "{l}"
                );
            } else {
                // Negative control: the other planted bugs (and the correct reader) never
                // get the plane line.
                assert!(!named && !d.contains("planes"), "{bug} {id}: {d}");
            }
            if *bug == "none" {
                assert_eq!(r["status"], "pass", "{id}: {r}");
            }
        }
    }
}

#[test]
fn row_digests_name_the_row_without_the_opt_in_and_elements_stay_opt_in() {
    // reversed_trits matches no known bug, so nothing but the reader's row digests can
    // give the row.
    let adapter = format!("{STUB} --bug reversed_trits");
    for (id, r) in results(&adapter, None, &[NINFER_CASE, GGUF_CASE]) {
        let l = &r["localization"];
        assert_eq!(r["status"], "fail", "{id}: {r}");
        assert_eq!(l["row"].as_u64(), Some(0), "{id}: {l}");
        assert!(l.get("element").is_none(), "{id}: {l}");
        assert!(l.get("looks_like").is_none(), "{id}: {l}");
        assert!(
            detail(&r).contains("first differing row 0 (declare"),
            "{id}"
        );
    }
    // Negative control: the same reader without its row digests is not located to a row.
    let adapter = format!("{STUB} --no-rows --bug reversed_trits");
    for (id, r) in results(&adapter, None, &[NINFER_CASE, GGUF_CASE]) {
        let l = &r["localization"];
        assert!(l.get("row").is_none(), "{id}: {l}");
        assert!(!detail(&r).contains("first differing row"), "{id}");
    }
    // With the opt-in, the element and both values.
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps.json");
    std::fs::write(&caps, r#"{"reader": "planted", "localize": true}"#).unwrap();
    let adapter = format!("{STUB} --bug reversed_trits");
    let c = caps.display().to_string();
    for (id, r) in results(&adapter, Some(&c), &[NINFER_CASE, GGUF_CASE]) {
        let l = &r["localization"];
        assert!(l["element"].as_u64().is_some(), "{id}: {l}");
        assert!(l.get("reader_bits").is_some(), "{id}: {l}");
    }
}

/// The row named is the first whose digest differs, checked against the reference's values.
#[test]
fn the_first_differing_row_is_found_in_the_digests_not_assumed() {
    // last_block zeroes the last block of every row: the first differing row is the first
    // whose last block is not already zero, computed here from the reference's values.
    let case = "ninfer/y_rowsplit_ptq1_0_g128_6x640";
    let adapter = format!("{STUB} --bug last_block");
    let want = first_row_with_nonzero_tail(case, 640);
    let (_, r) = results(&adapter, None, &[case]).remove(0);
    assert_eq!(r["localization"]["row"].as_u64(), Some(want), "{r}");
}

/// The first row of `case`'s object `w` whose last 128-element block holds a nonzero value,
/// from the reference adapter's values (its `localize` answer).
fn first_row_with_nonzero_tail(case: &str, k: usize) -> u64 {
    let file = root().join("conformance").join(format!("{case}.ninfer"));
    let mut child = Command::new(BIN)
        .args(["reader-adapter", file.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"kind":"ninfer","params":{},"localize":{"tensor":"w"}}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bits: Vec<u64> = v["observation"]["localize"]["f32_bits"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let tail = k - (k - 1) % 128 - 1;
    bits.chunks(k)
        .position(|row| row[tail..].iter().any(|&b| b & 0x7fff_ffff != 0))
        .expect("some row has a nonzero tail") as u64
}

/// The six-bug demo of conformance/README.md: (bug, the case that shows it).
const DEMO: &[(&str, &str)] = &[
    ("reversed_trits", "gguf/y_type_ptq1_0"),
    ("bf16_scale", "gguf/y_type_pq2_0"),
    ("last_block", "gguf/y_type_pq2_0"),
    ("unaligned_offset", "gguf/y_type_pq2_0"),
    ("code3_as_d", "codec/y_pq2_0_random"),
    ("swap_planes", NINFER_CASE),
];
const DEMO_BEGIN: &str = "<!-- six-bug-demo:begin (generated by tests/it/planted_readers.rs) -->\n";
const DEMO_END: &str = "<!-- six-bug-demo:end -->\n";
const README: &str = "conformance/README.md";

/// One bug's screen: the command a reader author types and the suite's standard output.
fn demo_screen(bug: &str, case: &str) -> String {
    let out = Command::new(BIN)
        .current_dir(root())
        .env("NINFER_BIN", BIN)
        .args(["check-reader", "--jobs", "1", "--timeout", "20"])
        .args(["--adapter", &format!("{STUB} --bug {bug}")])
        .args([
            "--capabilities",
            "conformance/adapters/stubs/planted.capabilities.json",
        ])
        .args(["--filter", case])
        .output()
        .expect("run check-reader");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{bug}: the planted bug must fail the run"
    );
    format!(
        "$ ninfer-ternary check-reader --adapter \"$S/planted.py --bug {bug}\" \\\n    \
         --capabilities $S/planted.capabilities.json --filter {case}\n{}",
        String::from_utf8_lossy(&out.stdout)
    )
}

/// The generated block: one fenced screen per bug.
fn demo_block() -> String {
    let mut s = String::from(DEMO_BEGIN);
    for (bug, case) in DEMO {
        s.push_str(&format!(
            "\n`{bug}`:\n\n```\n{}```\n",
            demo_screen(bug, case)
        ));
    }
    s.push('\n');
    s.push_str(DEMO_END);
    s
}

/// Where the README's block differs from `generated` (`None`: identical).
fn demo_mismatch(readme: &str, generated: &str) -> Option<String> {
    let Some(a) = readme.find(DEMO_BEGIN) else {
        return Some("no six-bug-demo:begin marker".into());
    };
    let Some(b) = readme[a..].find(DEMO_END).map(|b| a + b + DEMO_END.len()) else {
        return Some("no six-bug-demo:end marker".into());
    };
    let have = &readme[a..b];
    (have != generated).then(|| {
        let line = have
            .lines()
            .zip(generated.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(have.lines().count().min(generated.lines().count()));
        format!(
            "{README}: the six-bug demo differs from the real runs at block line {}: \
             regenerate with UPDATE_SIX_BUG_DEMO=1 cargo test --test it planted_readers::",
            line + 1
        )
    })
}

/// Rows a text takes on an 80-column terminal.
fn rows80(text: &str) -> usize {
    text.lines()
        .map(|l| l.chars().count().div_ceil(80).max(1))
        .sum()
}

/// The first line of `text` over 160 characters or cut to fit (ending in `…`): a failure line
/// must hold its where, got/want, hint and anchor whole.
fn cut_or_long(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.chars().count() > 160 || l.ends_with('…'))
        .map(|l| format!("{} chars: {l}", l.chars().count()))
}

/// Every line of the generated demo block is whole and at most 160 characters; a 161-character
/// line and a line cut with `…` are caught, a line of exactly 160 is not.
#[test]
fn every_demo_line_is_whole_and_at_most_160_characters() {
    let block = demo_block();
    assert_eq!(cut_or_long(&block), None);
    assert!(block.lines().filter(|l| l.starts_with("FAIL")).count() >= 6);
    // The swap_planes line ends with its anchor (it was cut at 160 before).
    let swap = block
        .lines()
        .find(|l| l.starts_with("FAIL  ninfer/"))
        .expect("the plane-swap line");
    assert!(
        swap.contains("object 'w' row ") && swap.ends_with("; spec/geometry.md#block-plane"),
        "{swap}"
    );
    assert!(swap.contains("; qh/d swapped: planes;"), "{swap}");
    // Negative controls and an unusual-but-right line.
    let long = format!("FAIL  {}", "x".repeat(155));
    assert_eq!(long.chars().count(), 161);
    assert!(cut_or_long(&format!("{block}{long}\n")).is_some());
    assert!(cut_or_long(&format!("{block}FAIL  cut…\n")).is_some());
    let exact = format!("FAIL  {}", "x".repeat(154));
    assert_eq!(cut_or_long(&format!("{block}{exact}\n")), None);
}

/// The README shows the six planted bugs with the suite's actual output, each on one
/// 80x24 screen with lines of at most 160 characters, a "looks like" or generic hint for at
/// least four; the block is regenerated from real runs here, so it cannot go stale.
#[test]
fn the_six_bug_demo_is_the_real_output_and_fits_one_screen_each() {
    let generated = demo_block();
    let mut hinted = 0;
    for (bug, case) in DEMO {
        let screen = demo_screen(bug, case);
        assert!(
            rows80(&screen) <= 24,
            "{bug}: {} rows\n{screen}",
            rows80(&screen)
        );
        assert_eq!(cut_or_long(&screen), None, "{bug}:\n{screen}");
        let fail = screen
            .lines()
            .find(|l| l.starts_with("FAIL"))
            .expect("FAIL line");
        assert!(fail.contains(case), "{fail}");
        // Located: the tensor or vector and the row.
        assert!(fail.contains(" row "), "{bug}: {fail}");
        let hint = [
            ": planes",
            ": digit order",
            ": decoder",
            ": offset",
            ": tail",
            ": scale",
            ": code map",
        ];
        if hint.iter().any(|h| fail.contains(h)) {
            hinted += 1;
        }
    }
    assert!(hinted >= 4, "only {hinted} of six bugs got a hint");
    let path = root().join(README);
    let readme = std::fs::read_to_string(&path).unwrap();
    if std::env::var_os("UPDATE_SIX_BUG_DEMO").is_some() {
        let a = readme.find(DEMO_BEGIN).expect("begin marker");
        let b = a + readme[a..].find(DEMO_END).expect("end marker") + DEMO_END.len();
        let new = format!("{}{generated}{}", &readme[..a], &readme[b..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    if let Some(e) = demo_mismatch(&readme, &generated) {
        panic!("{e}");
    }
    // Negative control: one character of the block edited is caught.
    let a = readme.find(DEMO_BEGIN).unwrap() + DEMO_BEGIN.len() + 3;
    let mut edited = readme.clone();
    edited.replace_range(a..a + 1, "#");
    assert!(demo_mismatch(&edited, &generated).is_some());
}
