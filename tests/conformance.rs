//! The conformance corpus through the reference reader, one trial per case (libtest-mimic).
//!
//! Every case of `conformance/MANIFEST.json` is answered in-process by the reference adapter
//! (`corpus::protocol::respond`, the code behind `ninfer-ternary reader-adapter`) and judged
//! with strict error classes. Pending families are listed as ignored trials, decided before the
//! run. One more trial regenerates the corpus in memory and byte-compares it with the files.

use libtest_mimic::{Arguments, Failed, Trial};
use ninfer_ternary::corpus::{self, manifest::Manifest, protocol};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// Lower-case hex sha256, as the manifest writes it (computed here with `sha2`, as a reader
/// author would: the crate's own digest helper is not public API).
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let manifest = Manifest::load(&root.join("MANIFEST.json")).expect("conformance/MANIFEST.json");
    let mut trials = Vec::new();
    for case in manifest.cases.clone() {
        let root = root.clone();
        let id = case.id.clone();
        let layer = case.layer.clone();
        trials.push(
            Trial::test(id, move || {
                let file = std::fs::read(root.join(&case.file))
                    .map_err(|e| Failed::from(format!("{}: {e}", case.file)))?;
                let sha = sha256_hex(&file);
                if sha != case.sha256 {
                    return Err(
                        format!("{} sha256 {sha} differs from the manifest", case.file).into(),
                    );
                }
                let input = |name: &str| -> ninfer_ternary::Result<Vec<u8>> {
                    std::fs::read(root.join(name)).map_err(|e| {
                        ninfer_ternary::Error::io(
                            ninfer_ternary::ErrorClass::IoRead,
                            &root.join(name),
                            e,
                        )
                    })
                };
                let answer = protocol::respond(&case.kind, &case.params, &file, &input);
                match protocol::judge(&case, &answer, protocol::ClassCheck::Strict) {
                    protocol::Judgement::Pass => Ok(()),
                    protocol::Judgement::Fail(why) => Err(why.into()),
                    protocol::Judgement::Unsupported(f) => {
                        Err(format!("reference answered unsupported: {f}").into())
                    }
                }
            })
            .with_kind(layer),
        );
    }
    for p in &manifest.pending {
        trials.push(
            Trial::test(format!("{}/(pending)", p.family), || Ok(()))
                .with_kind(p.family.clone())
                .with_ignored_flag(true),
        );
    }
    trials.push(Trial::test("corpus/regenerates_byte_identical", move || {
        let c = corpus::generate().map_err(|e| Failed::from(e.to_string()))?;
        let cmp = c.compare(&root).map_err(|e| Failed::from(e.to_string()))?;
        if cmp.identical() {
            Ok(())
        } else {
            Err(format!(
                "conformance/ is stale: differ {:?} missing {:?} extra {:?}; run `ninfer-ternary corpus generate -o conformance`",
                cmp.differ, cmp.missing, cmp.extra
            )
            .into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
