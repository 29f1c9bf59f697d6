//! The pack family (PROTOCOL.md §3.4): the nano GGUF in both ternary formats, the nano
//! template, the artifacts the packer must produce from them (as `ninfer` cases with their
//! directory and decoded digests, and as `pack` cases with the artifact digest), and the
//! row-permutation rules of the mapping (spec/permutations.md#row-permutations) as `rows` cases.

use crate::corpus::{Bytes, Case};
use crate::error::ErrorClass;
use crate::pack::{pack_bytes, PackOptions};
use crate::synth::model::{model_bytes, TernaryType};
use crate::synth::template::template_bytes;

const PROFILE: &str = "bonsai-nano";
const TEMPLATE: &str = "pack/y_nano_template.ninfer";

/// Every case of the `pack` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    let p = crate::spec::profile(PROFILE).ok_or_else(|| super::bug("nano profile", PROFILE))?;
    let template = template_bytes(&p).map_err(|e| super::bug("template", e))?;
    v.push(
        Case::new(
            "pack",
            "y_nano_template",
            "ninfer",
            "ninfer",
            template.clone(),
        )
        .feature("ninfer:template")
        .spec("spec/mapping.md#template (template: container v2, weights_id groupwise-int)")
        .recipe(format!("synth::template::template_bytes({PROFILE})")),
    );
    let mut artifacts = Vec::new();
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let tn = ty.name().to_lowercase();
        let gguf = model_bytes(&p, ty, 0).map_err(|e| super::bug("nano model", e))?;
        let gguf_file = format!("pack/y_nano_{tn}.gguf");
        v.push(
            Case::new("pack", format!("y_nano_{tn}"), "gguf", "gguf", gguf.clone())
                .param("mode", "strict")
                .feature(format!("ggml_type:{}", ty.type_id()))
                .feature("gguf:model")
                .spec("spec/mapping.md#source-model (qwen35 tensors, prism.hadamard.* metadata)")
                .recipe(format!(
                    "synth::model::model_bytes({PROFILE}, {}, seed 0)",
                    ty.name()
                )),
        );
        let art = pack_bytes(&gguf, &template, &PackOptions::default())
            .map_err(|e| super::bug("pack", e))?;
        let fmt = if ty == TernaryType::Pq2_0 {
            "PQ2_0_G128"
        } else {
            "PTQ1_0_G128"
        };
        v.push(
            Case::new(
                "pack",
                format!("y_nano_{tn}_artifact"),
                "ninfer",
                "ninfer",
                art.clone(),
            )
            .feature(format!("format:{fmt}"))
            .feature("ninfer:ternary")
            .feature("ninfer:resource")
            .spec("spec/ninfer-container.md#ninfer-container, spec/geometry.md#row-split-geometry, spec/mapping.md#mapping-rules")
            .derived(
                format!("pack/y_pack_{tn}"),
                "the artifact `pack` writes for this GGUF and template",
            ),
        );
        artifacts.push(format!("pack/y_nano_{tn}_artifact.ninfer"));
        v.push(
            Case::shared("pack", format!("y_pack_{tn}"), "pack", gguf_file.clone())
                .param("template", TEMPLATE)
                .input(TEMPLATE)
                .feature(format!("ggml_type:{}", ty.type_id()))
                .spec("spec/mapping.md#mapping-rules (mapping), spec/mapping.json")
                .recipe("pack the GGUF (file) onto the template (params.template); the artifact must be byte-identical"),
        );
    }
    // Packing onto a ternary artifact instead of the groupwise-int template is refused.
    v.push(
        Case::shared(
            "pack",
            "n_pack_template_is_ternary_artifact",
            "pack",
            "pack/y_nano_pq2_0.gguf",
        )
        .param("template", artifacts[0].clone())
        .input(artifacts[0].clone())
        .reject(ErrorClass::PackTemplate)
        .spec("spec/mapping.md#template (template weights_id groupwise-int)")
        .recipe("params.template names a folded-ternary artifact"),
    );
    v.extend(rows_cases());
    Ok(v)
}

fn rows_case(name: &str, rows: u64, row_bytes: u64, rule: &str, seed: u64) -> Case {
    let mut r = Bytes::new(seed);
    Case::new(
        "pack",
        name.to_string(),
        "rows",
        "rows",
        r.fill((rows * row_bytes) as usize),
    )
    .param("rule", rule)
    .param("rows", rows)
    .param("row_bytes", row_bytes)
    .feature(format!("rows:{rule}"))
    .spec("spec/permutations.md#row-permutations, spec/permutations.json")
}

fn rows_cases() -> Vec<Case> {
    vec![
        rows_case("y_rows_perm_row_6144", 6144, 8, "perm_row", 1)
            .param("head_dim", 128)
            .param("tile", 3)
            .param("group", 16)
            .recipe("6144 random rows (48 heads x 128) gathered by perm_row(i) = perm48(i/128)*128 + i%128")
            .note("trap T-4: perm48 on row indices is not a bijection"),
        rows_case("y_rows_tiled_to_grouped_48", 48, 16, "tiled_to_grouped", 2)
            .param("tile", 3)
            .param("group", 16)
            .recipe("48 head rows gathered tiled (3,16) -> grouped (16,3): out[g*3+t] = in[t*16+g]")
            .note("trap T-5: the scatter 3*(i%16)+i/16 used as a gather reverses the direction"),
        rows_case("y_rows_attn_q_query_2048", 2048, 4, "attn_q_query", 3)
            .param("block_rows", 256)
            .recipe("query rows of an interleaved attn_q: even 256-row blocks"),
        rows_case("y_rows_attn_q_gate_2048", 2048, 4, "attn_q_gate", 3)
            .param("block_rows", 256)
            .recipe("gate rows of an interleaved attn_q: odd 256-row blocks"),
        rows_case("n_rows_attn_q_not_multiple_of_512", 1280, 4, "attn_q_query", 4)
            .param("block_rows", 256)
            .reject(ErrorClass::PermShape)
            .recipe("1280 rows: not a multiple of 512"),
        rows_case("n_rows_perm_row_wrong_rows", 6016, 4, "perm_row", 5)
            .param("head_dim", 128)
            .param("tile", 3)
            .param("group", 16)
            .reject(ErrorClass::PermShape)
            .recipe("6016 rows is not 48 heads x 128"),
    ]
}
