//! A cold verify reads its long ranges direct from disk ([`crate::fsio::bulk`]) and must report
//! exactly what the same verify reports from memory, faults included.

use super::{report, verify, Options};
use crate::codec::ternary::TernaryType;
use crate::fsio::bulk::{self, tests::cold_file, DIRECT_BYTES};
use crate::pack::{pack_bytes, PackOptions};
use crate::synth::{model::model_bytes, template::template_bytes};
use std::sync::atomic::Ordering;

/// The report of `verify --template --sweep` over the three inputs, as files just written and
/// evicted from the page cache (cold), the bytes it read direct, and whether the artifact was
/// cold (tmpfs keeps evicted pages).
fn cold_report(dir: &std::path::Path, art: &[u8], gguf: &[u8], tpl: &[u8]) -> (String, u64, bool) {
    let paths = [
        dir.join("a.ninfer"),
        dir.join("m.gguf"),
        dir.join("t.ninfer"),
    ];
    for (p, bytes) in paths.iter().zip([art, gguf, tpl]) {
        cold_file(p, bytes);
    }
    let maps: Vec<_> = paths
        .iter()
        .map(|p| crate::fsio::map_file(p).unwrap())
        .collect();
    // As `verify` does: a fault reads its page, not the read-ahead window (the whole file).
    for m in &maps {
        m.advise_random();
    }
    let was_cold = !bulk::resident(&maps[0]);
    let before = DIRECT_BYTES.load(Ordering::Relaxed);
    let r = verify("a", &maps[0], "m", &maps[1], options(&maps[2])).unwrap();
    let direct = DIRECT_BYTES.load(Ordering::Relaxed) - before;
    (report::text(&r), direct, was_cold)
}

fn options(template: &[u8]) -> Options<'_> {
    Options {
        template: Some(template),
        sweep: true,
        ..Options::default()
    }
}

#[test]
fn a_cold_verify_reports_what_a_warm_one_does_faults_included() {
    // The nano model's objects are a few KiB: walk them direct all the same.
    bulk::set_min_direct_for_tests(4096);
    let p = crate::spec::profile("bonsai-nano").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let takes_direct = crate::fsio::bulk::tests::fs_takes_direct(dir.path());
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let gguf = model_bytes(&p, ty, 5).unwrap();
        let tpl = template_bytes(&p).unwrap();
        let art = pack_bytes(&gguf, &tpl, &PackOptions::default()).unwrap();
        // A fault the row gates must see, and one only provenance sees.
        let swapped = super::mutate::mutate_bytes(&art, "swap-two-rows").unwrap();
        let no_borrowed = super::mutate::mutate_bytes(&art, "missing-borrowed-object").unwrap();
        for (what, a) in [
            ("packed", &art),
            ("swapped", &swapped),
            ("missing", &no_borrowed),
        ] {
            let warm = verify("a", a, "m", &gguf, options(&tpl)).unwrap();
            let (cold, direct, was_cold) = cold_report(dir.path(), a, &gguf, &tpl);
            assert_eq!(
                cold,
                report::text(&warm),
                "{ty:?} {what}: cold and warm reports differ"
            );
            assert_eq!(warm.ok(), what == "packed", "{ty:?} {what}:\n{cold}");
            if takes_direct && was_cold {
                assert!(direct > 0, "{ty:?} {what}: nothing was read direct");
            }
        }
    }
}
