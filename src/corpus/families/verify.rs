//! The verify family (PROTOCOL.md §8): every mutation of `spec/gates.json` applied to the
//! `bonsai-micro` artifacts (the smallest Bonsai-shaped model, so twelve whole artifacts fit the
//! corpus budget), healthy controls with and without dumps, good and broken reference dumps, and
//! the engine's own embedding dump file (correct and transposed; bundled as `embedding.bin`),
//! and the engine harness directory (correct and signs-after-rotation; bundled as `oracles/`).
//! Each case's observation is the verifier's per-gate verdict; the generator also checks that
//! the failing set equals the mutation's `must_fail` list.
//!
//! Dump directories travel as one file each: a `.ninfer` v2 container whose `raw-bytes-v1`
//! resources are the dump files, named by their path relative to the dump root
//! (`embedding/manifest.json`, `oracles/plain_t1.x.f32`, …).

use crate::corpus::Case;
use crate::ninfer::{plan, writer::to_bytes, Artifact, Identity, PlannedObject};
use crate::pack::{pack_bytes, PackOptions};
use crate::synth::model::{model_bytes, TernaryType};
use crate::synth::template::template_bytes;
use std::path::Path;

const PROFILE: &str = "bonsai-micro";

/// Packs every file under `root` into a dump bundle.
pub fn bundle_dir(root: &Path) -> crate::Result<Vec<u8>> {
    let io = |p: &Path| {
        let what = p.display().to_string();
        move |e: std::io::Error| {
            crate::Error::new(crate::ErrorClass::IoRead, what.clone(), e.to_string())
        }
    };
    let mut files = Vec::new();
    for sub in ["embedding", "oracles"] {
        let d = root.join(sub);
        if !d.is_dir() {
            continue;
        }
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .map_err(io(&d))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(io(&d))?;
        names.sort();
        for n in names {
            let p = d.join(&n);
            files.push((
                format!("{sub}/{}", n.to_string_lossy()),
                crate::fsio::read_input(&p)?,
            ));
        }
    }
    let objects = files
        .iter()
        .map(|(n, b)| PlannedObject::resource(n.clone(), b.len() as u64))
        .collect();
    let dir = plan(
        Identity {
            model_id: "dump-bundle".into(),
            weights_id: "reference-dumps".into(),
        },
        objects,
    )?;
    let payloads: Vec<Vec<u8>> = files.into_iter().map(|(_, b)| b).collect();
    to_bytes(&dir, &payloads)
}

/// Unpacks a dump bundle into `root` (the inverse of [`bundle_dir`]).
pub fn unbundle(bytes: &[u8], root: &Path) -> crate::Result<()> {
    let a = Artifact::parse(bytes)?;
    for o in &a.directory.objects {
        let rel = Path::new(&o.name);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(crate::Error::new(
                crate::ErrorClass::NinferDirName,
                o.name.clone(),
                "dump bundle names must be relative paths without '..'",
            ));
        }
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| crate::Error::io(crate::ErrorClass::IoWrite, parent, e))?;
        }
        // create_new: a name listed twice, or a link in the way, is an error, never followed.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, a.object_bytes(o)))
            .map_err(|e| crate::Error::io(crate::ErrorClass::IoWrite, &p, e))?;
    }
    Ok(())
}

/// A private scratch folder (mkdtemp: random name, 0700), removed when dropped.
fn scratch(tag: &str) -> crate::Result<crate::fsio::Scratch> {
    crate::fsio::scratch_dir(tag)
}

/// The verifier's verdict on `artifact`, as a case observation.
pub fn observe(
    artifact: &[u8],
    gguf: &[u8],
    template: Option<&[u8]>,
    dumps: Option<&[u8]>,
) -> crate::Result<serde_json::Value> {
    use crate::verify::{self, Options};
    let scratch = scratch("dumps")?;
    let root = scratch.path();
    (|| {
        if let Some(b) = dumps {
            unbundle(b, root)?;
        }
        let (emb, ora) = (root.join("embedding"), root.join("oracles"));
        // An engine-format embedding dump travels as the single file `embedding.bin`.
        let engine = root.join("embedding.bin");
        let emb = if engine.is_file() { engine } else { emb };
        let opts = Options {
            template,
            sweep: true,
            dump: emb.exists().then_some(emb.as_path()),
            oracle_dump: ora.is_dir().then_some(ora.as_path()),
            oracle_object: None,
            profile: None,
            dump_format: None,
            minimal: false,
        };
        // The verifier's own class travels as it is (a malformed case is verify.input, not cli.usage).
        let r = verify::verify("artifact", artifact, "gguf", gguf, opts)?;
        let gates: serde_json::Map<String, serde_json::Value> = r
            .findings
            .iter()
            .map(|f| (f.step.clone(), f.status.word().into()))
            .collect();
        Ok(serde_json::json!({"ok": r.ok(), "gates": gates}))
    })()
}

/// A bundle holding only the engine's embedding dump file (`embedding.bin`), written correctly
/// or with the transposed layout (k*T + t).
fn engine_dump_bundle(artifact: &[u8], transposed: bool) -> crate::Result<Vec<u8>> {
    let scratch = scratch("engine")?;
    let root = scratch.path();
    let a = Artifact::parse(artifact).map_err(|e| super::bug("healthy artifact", e))?;
    let f = root.join("embedding.bin");
    crate::verify::dumps::write_engine_embedding(&a, &f, None, transposed)
        .map_err(|e| super::bug("engine dump", e))?;
    let b = crate::fsio::read_input(&f)?;
    drop(scratch);
    let dir = plan(
        Identity {
            model_id: "dump-bundle".into(),
            weights_id: "reference-dumps".into(),
        },
        vec![PlannedObject::resource("embedding.bin", b.len() as u64)],
    )
    .map_err(|e| super::bug("bundle plan", e))?;
    to_bytes(&dir, &[b]).map_err(|e| super::bug("bundle", e))
}

/// A bundle whose `oracles/` is an engine harness directory (no manifest): the six rotation
/// cases and the gemm oracle of `text/layers/{first_gdn}/gdn/query_key`.
fn harness_bundle(
    artifact: &[u8],
    fault: crate::verify::harness::HarnessFault,
) -> crate::Result<Vec<u8>> {
    use crate::verify::{self, harness};
    let scratch = scratch("harness")?;
    let root = scratch.path();
    let a = Artifact::parse(artifact).map_err(|e| super::bug("healthy artifact", e))?;
    let p = verify::profile_for_artifact(&a).map_err(|e| super::bug("profile", e))?;
    let layers = verify::artifact_layers(&a);
    let obj = verify::resolve_name(
        &p,
        &layers,
        &crate::spec::dumps().harness.gemm.gemm_object,
        None,
    )
    .map_err(|e| super::bug("gemm object", e))?;
    let d = root.join("oracles");
    harness::write_rotation(&d, fault).map_err(|e| super::bug("rotation harness", e))?;
    harness::write_gemm(&a, &d, &obj, fault).map_err(|e| super::bug("gemm oracle", e))?;
    bundle_dir(root)
}

fn write_dumps(artifact: &[u8], mutation: Option<&str>) -> crate::Result<Vec<u8>> {
    let scratch = scratch("gen")?;
    // A fresh folder inside the scratch: the dump writer renames its directory into place.
    let root = scratch.path().join("dumps");
    let a = Artifact::parse(artifact).map_err(|e| super::bug("healthy artifact", e))?;
    match mutation {
        None => crate::verify::dumps::write_reference(&a, &root, None, 0, Default::default())
            .map_err(|e| super::bug("reference dumps", e))?,
        Some(kind) => crate::verify::mutate::mutate_dumps(&a, kind, &root, 0)
            .map_err(|e| super::bug("dump mutation", e))?,
    }
    bundle_dir(&root)
}

/// Every case of the `verify` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let p = crate::spec::profile(PROFILE).ok_or_else(|| super::bug("micro profile", PROFILE))?;
    let mut v = Vec::new();
    let template_file = "verify/y_micro_template.ninfer";
    v.push(
        Case::new(
            "verify",
            "y_micro_template",
            "ninfer",
            "ninfer",
            template_bytes(&p).map_err(|e| super::bug("template", e))?,
        )
        .feature("ninfer:template")
        .recipe(format!("synth::template::template_bytes({PROFILE})")),
    );
    let template = template_bytes(&p).map_err(|e| super::bug("template", e))?;
    let mut artifacts = Vec::new();
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let tn = ty.name().to_lowercase();
        let gguf = model_bytes(&p, ty, 0).map_err(|e| super::bug("micro model", e))?;
        let art = pack_bytes(&gguf, &template, &PackOptions::default())
            .map_err(|e| super::bug("pack", e))?;
        let (gf, af, df) = (
            format!("verify/y_micro_{tn}.gguf"),
            format!("verify/y_micro_{tn}_artifact.ninfer"),
            format!("verify/y_micro_{tn}_dumps.ninfer"),
        );
        v.push(
            Case::new("verify", format!("y_micro_{tn}"), "gguf", "gguf", gguf)
                .param("mode", "strict")
                .feature(format!("ggml_type:{}", ty.type_id()))
                .recipe(format!(
                    "synth::model::model_bytes({PROFILE}, {}, seed 0)",
                    ty.name()
                )),
        );
        v.push(
            Case::new(
                "verify",
                format!("y_micro_{tn}_artifact"),
                "ninfer",
                "ninfer",
                art.clone(),
            )
            .feature("ninfer:ternary")
            .derived(gf.clone(), "pack onto verify/y_micro_template.ninfer"),
        );
        v.push(
            Case::new(
                "verify",
                format!("y_micro_{tn}_dumps"),
                "ninfer",
                "ninfer",
                write_dumps(&art, None)?,
            )
            .feature("ninfer:dump-bundle")
            .derived(
                af.clone(),
                "dump-reference (f64 reference math), bundled as raw-bytes resources",
            ),
        );
        let verify_case = |name: String, file: Option<Vec<u8>>, dumps: Option<&str>| {
            let mut c = match file {
                Some(b) => Case::new("verify", name, "verify", "ninfer", b),
                None => Case::shared("verify", name, "verify", af.clone()),
            };
            c = c
                .param("gguf", gf.clone())
                .input(gf.clone())
                .param("template", template_file)
                .input(template_file)
                .param("sweep", true);
            if let Some(d) = dumps {
                c = c.param("dumps", d).input(d);
            }
            c.feature(format!(
                "format:{}",
                if ty == TernaryType::Pq2_0 {
                    "PQ2_0_G128"
                } else {
                    "PTQ1_0_G128"
                }
            ))
            .spec("spec/verifier.md#gates (the ten gates), spec/gates.json")
        };
        v.push(
            verify_case(format!("y_verify_{tn}_healthy"), None, Some(&df))
                .recipe("healthy artifact with reference dumps: every gate passes"),
        );
        v.push(
            verify_case(format!("y_verify_{tn}_no_dumps"), None, None)
                .recipe("healthy artifact without dumps: embedding and engine_oracles SKIP"),
        );
        // The engine's own embedding dump file (bf16, token-major under [hidden, T] extents):
        // correct, and transposed (must fail the embedding gate).
        for (suffix, transposed) in [("engine", false), ("engine_transposed", true)] {
            let bundle = format!("y_dumps_{suffix}_{tn}");
            let bf = format!("verify/{bundle}.ninfer");
            v.push(
                Case::new(
                    "verify",
                    bundle,
                    "ninfer",
                    "ninfer",
                    engine_dump_bundle(&art, transposed)?,
                )
                .feature("ninfer:dump-bundle")
                .derived(
                    af.clone(),
                    if transposed {
                        "dump-reference --format engine, activations stored (k, t) at k*T + t"
                    } else {
                        "dump-reference --format engine (embedding.bin)"
                    },
                ),
            );
            let mut c = verify_case(format!("y_verify_{tn}_{suffix}_dump"), None, Some(&bf))
                .feature("dump:engine")
                .recipe(if transposed {
                    "healthy artifact, engine dump written transposed: embedding FAILS"
                } else {
                    "healthy artifact, engine-format embedding dump: embedding passes, engine_oracles SKIP"
                });
            if transposed {
                c = c.param("must_fail", vec!["embedding".to_string()]);
            }
            v.push(c);
        }
        // The engine tooling's harness directory (rotation harness + gemm oracle), correct and
        // with the signs applied after the rotation (must fail engine_oracles).
        if ty == TernaryType::Pq2_0 {
            use crate::verify::harness::HarnessFault;
            for (suffix, fault) in [
                ("harness", HarnessFault::None),
                (
                    "harness_signs_after_rotation",
                    HarnessFault::SignsAfterRotation,
                ),
            ] {
                let bundle = format!("y_dumps_{suffix}_{tn}");
                let bf = format!("verify/{bundle}.ninfer");
                v.push(
                    Case::new(
                        "verify",
                        bundle,
                        "ninfer",
                        "ninfer",
                        harness_bundle(&art, fault)?,
                    )
                    .feature("ninfer:dump-bundle")
                    .derived(
                        af.clone(),
                        if fault == HarnessFault::None {
                            "dump-reference --format harness (oracles/: six rotation-harness cases + gemm oracle)"
                        } else {
                            "dump-reference --format harness, outputs computed with the signs after the rotation"
                        },
                    ),
                );
                let mut c = verify_case(format!("y_verify_{tn}_{suffix}_dump"), None, Some(&bf))
                    .feature("dump:harness")
                    .spec("spec/dumps.md#harness-dumps");
                c = if fault == HarnessFault::None {
                    c.recipe("healthy artifact, engine harness directory as the oracle dump: engine_oracles passes (7 cases), embedding SKIP")
                } else {
                    c.recipe("healthy artifact, harness outputs with signs after the rotation: engine_oracles FAILS")
                        .param("must_fail", vec!["engine_oracles".to_string()])
                };
                v.push(c);
            }
        }
        artifacts.push((ty, tn, art, af.clone(), df.clone()));
    }
    // Every mutation once; artifact mutations alternate between the two formats.
    for (i, m) in crate::spec::gates().mutations.iter().enumerate() {
        let (ty, tn, art, af, df) = &artifacts[i % 2];
        let kind = m.kind.as_str();
        let name = format!("y_mutant_{}_{tn}", kind.replace('-', "_"));
        let fmt = if *ty == TernaryType::Pq2_0 {
            "PQ2_0_G128"
        } else {
            "PTQ1_0_G128"
        };
        let gf = format!("verify/y_micro_{tn}.gguf");
        let base = Case::shared("verify", name.clone(), "verify", af.clone());
        let mut c = if m.target == "artifact" {
            let bytes = crate::verify::mutate::mutate_bytes(art, kind)
                .map_err(|e| super::bug("mutation", e))?;
            let mut c = Case::new("verify", name, "verify", "ninfer", bytes)
                .param("dumps", df.clone())
                .input(df.clone());
            c = c.derived(af.clone(), format!("mutate --kind {kind}: {}", m.doc));
            c
        } else {
            let bundle_name = format!("y_dumps_{}_{tn}", kind.replace('-', "_"));
            let bf = format!("verify/{bundle_name}.ninfer");
            v.push(
                Case::new(
                    "verify",
                    bundle_name,
                    "ninfer",
                    "ninfer",
                    write_dumps(art, Some(kind))?,
                )
                .feature("ninfer:dump-bundle")
                .derived(df.clone(), format!("mutate --kind {kind}: {}", m.doc)),
            );
            base.param("dumps", bf.clone()).input(bf).derived(
                df.clone(),
                format!("healthy artifact, broken dumps ({kind})"),
            )
        };
        c = c
            .param("gguf", gf.clone())
            .input(gf)
            .param("template", template_file)
            .input(template_file)
            .param("sweep", true)
            .param("must_fail", m.must_fail.clone())
            .feature(format!("format:{fmt}"))
            .feature(format!("mutation:{kind}"))
            .spec("spec/verifier.md#negative-controls, spec/gates.json mutations");
        v.push(c);
    }
    Ok(v)
}
